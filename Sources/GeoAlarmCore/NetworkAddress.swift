/// An address of a server as the user writes it, read one way for every address the program is
/// given: a URL (a task list's `https://cloud.example.org:8443/dav/ana/tasks/`, the broker's
/// `mqtts://[::1]:8883`) or a bare authority (gpsd's `localhost:2947`, `map --listen`'s
/// `[::1]:8080`).
///
/// RFC 3986's generic syntax: a scheme (in any case; kept in lower case), `://`, the authority
/// (user information before an `@`, a host, an IPv6 one in brackets, a port after a colon),
/// then the path, a query after `?` and a fragment after `#`. An IPv6 address may also be
/// written without brackets where no port follows (more than one colon: all of it is the host). What a server's
/// address may hold beyond the syntax (which schemes, whether a path or credentials) is its
/// reader's to say.
public struct NetworkAddress: Sendable, Equatable {
    /// `https`; nil for a bare authority.
    public var scheme: String?
    /// The authority as written: `ana@Cloud.example.org:8443`.
    public var authority: Substring
    /// What comes before the authority's `@`; nil when it has none.
    public var userInfo: Substring?
    /// The host, without an IPv6 address's brackets; it may be empty (the reader says so).
    public var host: Substring
    /// The text after the port's colon, as written; nil when there is none.
    public var portText: Substring?
    /// `/dav/ana/tasks/`; empty when the address has none.
    public var path: Substring
    /// The text after `?`, before any `#`; nil when there is none.
    public var query: Substring?
    /// The text after `#`; nil when there is none.
    public var fragment: Substring?

    /// Why a text is not an address.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case noScheme
        case unclosedBracket
        case textAfterBracket

        public var description: String {
            switch self {
            case .noScheme: "has no scheme (such as https://)"
            case .unclosedBracket: "has an unclosed ["
            case .textAfterBracket: "has text after ]"
            }
        }
    }

    /// The ports a connection may be made to.
    public static let ports = 1...65535

    /// A port written as text ("2947") as its number; nil for text that is no number in
    /// ``ports`` written in decimal digits alone (RFC 3986: no sign).
    public static func portNumber(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text).flatMap { ports.contains($0) ? $0 : nil }
    }

    /// The port's number, when one is written and is one a connection may be made to.
    public var port: Int? { portText.flatMap(Self.portNumber) }

    /// `scheme://authority` as written, the scheme in lower case: `https://Cloud.example.org:8443`.
    public var origin: String { (scheme.map { $0 + "://" } ?? "") + authority }

    /// Reads a URL: `SCHEME://AUTHORITY[PATH][?QUERY][#FRAGMENT]`.
    public init(url text: Substring) throws(Problem) {
        let schemeText = text.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
        guard let first = schemeText.first, first.isLetter, text.dropFirst(schemeText.count).hasPrefix("://") else { throw .noScheme }
        let rest = text.dropFirst(schemeText.count + 3)
        let authorityEnd = rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex
        try self.init(authority: rest[..<authorityEnd], scheme: schemeText.lowercased())
        var tail = rest[authorityEnd...]
        if let hash = tail.firstIndex(of: "#") {
            fragment = tail[tail.index(after: hash)...]
            tail = tail[..<hash]
        }
        if let question = tail.firstIndex(of: "?") {
            query = tail[tail.index(after: question)...]
            tail = tail[..<question]
        }
        path = tail
    }

    /// Reads a bare authority: `HOST`, `HOST:PORT`, `[IPv6]`, `[IPv6]:PORT` or a bare IPv6
    /// address. The host may be empty and the port any text: the reader checks both.
    public init(authority text: Substring) throws(Problem) {
        try self.init(authority: text, scheme: nil)
    }

    private init(authority text: Substring, scheme: String?) throws(Problem) {
        self.scheme = scheme
        authority = text
        path = text[text.endIndex...]
        var hostAndPort = text
        if scheme != nil, let at = text.lastIndex(of: "@") {
            userInfo = text[..<at]
            hostAndPort = text[text.index(after: at)...]
        }
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { throw .unclosedBracket }
            host = hostAndPort[hostAndPort.index(after: hostAndPort.startIndex)..<close]
            let after = hostAndPort[hostAndPort.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw .textAfterBracket }
            portText = after.isEmpty ? nil : after.dropFirst()
            return
        }
        // More than one colon and no brackets: a bare IPv6 address, all of it the host.
        guard let colon = hostAndPort.firstIndex(of: ":"), hostAndPort.lastIndex(of: ":") == colon else {
            host = hostAndPort
            return
        }
        host = hostAndPort[..<colon]
        portText = hostAndPort[hostAndPort.index(after: colon)...]
    }
}
