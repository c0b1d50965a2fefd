import FoundationEssentials
import GeoAlarmCore

/// Who may use the map: a request must name the address the server listens on (no DNS
/// rebinding: a foreign site's name resolving to 127.0.0.1 is still refused) and carry the
/// token printed with the address, in the page's address once and then in a cookie; a change
/// must also carry the token in a header, which a page of another site cannot set.
public struct MapAccess: Sendable {
    /// The secret in the printed address.
    public let token: String
    /// The `Host` values accepted (lower case): the listen address, and `localhost` for a loopback one.
    public let hosts: Set<String>

    /// The cookie that holds the token once the page is open.
    static let cookieName = "geoalarm_map"
    /// The header a change carries the token in.
    static let tokenHeader = "X-GeoAlarm-Token"

    /// Access to a server on `host` (as it listens: `127.0.0.1`, `::1`, a name) and `port`.
    public init(token: String, host: String, port: Int) {
        self.token = token
        let shown = host.contains(":") ? "[\(host)]" : host
        var hosts: Set<String> = ["\(shown.lowercased()):\(port)"]
        if host == "127.0.0.1" || host == "::1" || host.lowercased() == "localhost" { hosts.insert("localhost:\(port)") }
        self.hosts = hosts
    }

    /// A token of 32 random bytes, as 64 hexadecimal digits.
    public static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined()
    }

    /// What a request says of who sent it.
    public struct Request: Sendable {
        public var isChange: Bool
        public var host: String?
        public var cookie: String?
        /// The `token` of the address's query.
        public var queryToken: String?
        /// The token header's value.
        public var headerToken: String?
        /// The `Origin` header, which browsers send with changes and WebSocket handshakes.
        public var origin: String?

        public init(isChange: Bool, host: String?, cookie: String?, queryToken: String?, headerToken: String?, origin: String?) {
            self.isChange = isChange
            self.host = host
            self.cookie = cookie
            self.queryToken = queryToken
            self.headerToken = headerToken
            self.origin = origin
        }
    }

    public enum Verdict: Sendable, Equatable {
        case allowed
        /// Allowed by the token in the address: the answer sets the cookie.
        case allowedByAddress
        case refused(status: Int, reason: String)
    }

    public func check(_ request: Request) -> Verdict {
        guard let host = request.host?.lowercased(), hosts.contains(host) else {
            return .refused(status: 421, reason: "this map answers only as http://\(hosts.sorted().first ?? "")")
        }
        if let origin = request.origin, origin.lowercased() != "http://\(host)" {
            return .refused(status: 403, reason: "requests from other sites are refused")
        }
        if request.isChange {
            guard let given = request.headerToken, Self.same(given, token) else {
                return .refused(status: 403, reason: "a change needs the map's token in its \(Self.tokenHeader) header")
            }
            return .allowed
        }
        if let cookie = request.cookie, let given = Self.cookieValue(in: cookie), Self.same(given, token) { return .allowed }
        if let given = request.queryToken, Self.same(given, token) { return .allowedByAddress }
        return .refused(status: 403, reason: "open the address geoalarm map printed, with its token")
    }

    /// The `Set-Cookie` value that keeps the token for this page: never sent by other sites'
    /// requests, never read by scripts.
    var cookie: String { "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict" }

    /// Our cookie's value in a `Cookie` header.
    static func cookieValue(in header: String) -> String? {
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmingWhitespace() == cookieName {
                return pair[1].trimmingWhitespace()
            }
        }
        return nil
    }

    /// Whether two tokens are equal, in a time that does not depend on where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
