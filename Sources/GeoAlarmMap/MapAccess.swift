import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

/// Who may use the map.
///
/// Every request must name the server as its `Host` (no DNS rebinding: a foreign site's name
/// resolving to this machine is refused) and, when it comes from a page, that page's own origin.
/// The page and its files are public; its data and its changes (`/api/...`) need the token in a
/// header, which no page of another site can set. The token never travels in a cookie (a cookie
/// goes to every server on the host, whatever its port: a local tile server would receive it with
/// every tile) nor in a URL the browser sends: the printed address carries it after `#`, which
/// stays in the browser, and the page keeps it for its tab.
public struct MapAccess: Sendable {
    /// The secret in the printed address.
    public let token: String
    private let hosts: Hosts

    /// The header a request for data or a change carries the token in.
    static let tokenHeader = "X-GeoAlarm-Token"

    /// Which `Host` values name this server.
    enum Hosts: Sendable, Equatable {
        /// These (lower case, with the port).
        case exactly(Set<String>)
        /// Listening on every address: any IP address, `localhost` and the machine's own names, on `port`.
        case anyAddress(port: Int, names: Set<String>)
    }

    /// Access to a server on `host` (as it listens: `127.0.0.1`, `::1`, `0.0.0.0`, `::`) and
    /// `port`; `machineNames` are this machine's names (`pi`, `pi.local`), which a browser on
    /// another machine may use when the server listens on every address.
    public init(token: String, host: String, port: Int, machineNames: [String] = []) {
        self.token = token
        let address = IPAddress(host)
        if address?.isUnspecified == true {
            hosts = .anyAddress(port: port, names: Set((machineNames + ["localhost"]).map { "\($0.lowercased()):\(port)" }))
        } else {
            var accepted: Set<String> = ["\(IPAddress.shown(host).lowercased()):\(port)"]
            if IPAddress.isThisMachine(host) { accepted.insert("localhost:\(port)") }
            hosts = .exactly(accepted)
        }
    }

    /// A token of 32 random bytes, as 64 hexadecimal digits.
    public static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<32).flatMap { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return [digits[Int(byte >> 4)], digits[Int(byte & 15)]]
        })
    }

    /// What a request says of who sent it.
    public struct Request: Sendable {
        /// Whether it asks for the map's data or a change (`/api/...`), not the page or its files.
        public var isPrivate: Bool
        public var host: String?
        /// The token header's value.
        public var headerToken: String?
        /// The `Origin` header, which browsers send with changes and with requests of scripts.
        public var origin: String?

        public init(isPrivate: Bool, host: String?, headerToken: String?, origin: String?) {
            self.isPrivate = isPrivate
            self.host = host
            self.headerToken = headerToken
            self.origin = origin
        }
    }

    public enum Verdict: Sendable, Equatable {
        case allowed
        case refused(status: Int, reason: String)
    }

    public func check(_ request: Request) -> Verdict {
        guard let host = request.host?.lowercased(), accepts(host: host) else {
            return .refused(status: 421, reason: "this map answers only to the address geoalarm map printed")
        }
        if let origin = request.origin, origin.lowercased() != "http://\(host)" {
            return .refused(status: 403, reason: "requests from other sites are refused")
        }
        guard request.isPrivate else { return .allowed }
        guard let given = request.headerToken, Self.same(given, token) else {
            return .refused(status: 403, reason: "open the address geoalarm map printed: this needs its token")
        }
        return .allowed
    }

    /// Whether `host` (a `Host` header, lower case) names this server.
    private func accepts(host: String) -> Bool {
        switch hosts {
        case .exactly(let accepted):
            return accepted.contains(host)
        case .anyAddress(let port, let names):
            if names.contains(host) { return true }
            // An address literal cannot be a rebinding site's name.
            guard let colon = host.lastIndex(of: ":"), host[host.index(after: colon)...] == "\(port)" else { return false }
            let name = host[..<colon]
            let literal = name.hasPrefix("[") && name.hasSuffix("]") ? name.dropFirst().dropLast() : name
            guard let address = IPAddress(String(literal)) else { return false }
            return address.isIPv6 == name.hasPrefix("[")
        }
    }

    /// Whether two tokens are equal, in a time that does not depend on where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
