import Glibc

/// An IPv4 or IPv6 address literal (`127.0.0.1`, `::1`, `::ffff:127.0.0.1`), as `inet_pton` reads it.
public struct IPAddress: Sendable, Equatable {
    /// The address in network order: 4 bytes, or 16.
    public let bytes: [UInt8]

    /// Nil when `text` is not an address literal (a host name, a bracketed address, junk).
    public init?(_ text: String) {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
    }

    public var isIPv6: Bool { bytes.count == 16 }

    /// The IPv4 address an IPv6 one holds as `::ffff:a.b.c.d`; the address itself when it is IPv4.
    private var asIPv4: [UInt8]? {
        if !isIPv6 { return bytes }
        return bytes.prefix(12) == Array(repeating: 0, count: 10) + [0xFF, 0xFF] ? Array(bytes.suffix(4)) : nil
    }

    /// 127.0.0.0/8, `::1`, or an IPv4 loopback address mapped into IPv6.
    public var isLoopback: Bool {
        if let v4 = asIPv4 { return v4[0] == 127 }
        return bytes == Array(repeating: 0, count: 15) + [1]
    }

    /// Whether `host` (a name or an address, without brackets) is this machine: `localhost`, or a
    /// loopback address. What goes to it crosses no network.
    public static func isThisMachine(_ host: some StringProtocol) -> Bool {
        host.lowercased() == "localhost" || IPAddress(String(host))?.isLoopback == true
    }

    /// `0.0.0.0` or `::`: every address of the machine, to a listening socket.
    public var isUnspecified: Bool { bytes.allSatisfy { $0 == 0 } }

    /// A host as it stands before `:PORT` in an address or a URL: an IPv6 literal in brackets,
    /// anything else as it is.
    public static func shown(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }
}

extension System {
    /// This machine's host name (`gethostname`); nil when it has none.
    public static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }
}
