import Glibc

extension System {
    /// The user whose process holds the other end of a TCP connection, when that end is on this
    /// machine (`connection` is this end, as `accept` gave it); nil when the peer is elsewhere or
    /// cannot be found.
    ///
    /// Linux lists both ends of a connection within the machine in `/proc/net/tcp` (or `tcp6`),
    /// each with its owner's uid: the peer's end is the one whose local address is this end's
    /// remote one, and whose remote address is this end's local one.
    public static func localPeerOwner(_ connection: Int32) -> uid_t? {
        guard let mine = socketAddress(connection, remote: false), let theirs = socketAddress(connection, remote: true) else {
            return nil
        }
        let table = theirs.isIPv4 ? "/proc/net/tcp" : "/proc/net/tcp6"
        guard let text = procFile(table) else { return nil }
        let wantedLocal = theirs.procText, wantedRemote = mine.procText
        for line in text.split(separator: "\n").dropFirst() {
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7, fields[1] == wantedLocal, fields[2] == wantedRemote else { continue }
            return uid_t(fields[7])
        }
        return nil
    }

    /// One end of a connection, as `/proc/net/tcp*` writes it.
    private struct SocketAddress {
        /// The address's bytes in network order: 4 for IPv4, 16 for IPv6.
        var bytes: [UInt8]
        var port: UInt16

        var isIPv4: Bool { bytes.count == 4 }

        /// `0100007F:1F90`: each 32-bit word of the address as the kernel holds it in memory,
        /// printed as a number in hexadecimal, then the port.
        var procText: Substring {
            var text = ""
            for word in stride(from: 0, to: bytes.count, by: 4) {
                let value = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: word, as: UInt32.self) }
                text += hex(UInt(value), digits: 8)
            }
            return Substring(text + ":" + hex(UInt(port), digits: 4))
        }

        private func hex(_ value: UInt, digits: Int) -> String {
            let text = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
    }

    /// This end's (or the peer's) address of a connection; an IPv4 address mapped into IPv6
    /// (`::ffff:127.0.0.1`) is given as the IPv4 one it is.
    private static func socketAddress(_ descriptor: Int32, remote: Bool) -> SocketAddress? {
        var storage = sockaddr_storage()
        var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                remote ? getpeername(descriptor, $0, &size) : getsockname(descriptor, $0, &size)
            }
        }
        guard result == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafeBytes(of: &storage) { raw in
                let address = raw.load(as: sockaddr_in.self)
                return SocketAddress(bytes: withUnsafeBytes(of: address.sin_addr) { Array($0) }, port: UInt16(bigEndian: address.sin_port))
            }
        case AF_INET6:
            return withUnsafeBytes(of: &storage) { raw in
                let address = raw.load(as: sockaddr_in6.self)
                let bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
                let port = UInt16(bigEndian: address.sin6_port)
                if bytes.prefix(12) == Array(repeating: 0, count: 10) + [0xFF, 0xFF] {
                    return SocketAddress(bytes: Array(bytes.suffix(4)), port: port)
                }
                return SocketAddress(bytes: bytes, port: port)
            }
        default:
            return nil
        }
    }

    /// A file of /proc read whole (they report a size of 0); nil when it cannot be read.
    private static func procFile(_ path: String) -> String? {
        guard let descriptor = try? open(path, O_RDONLY) else { return nil }
        defer { close(descriptor) }
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while let count = try? read(descriptor, into: &buffer), count > 0 {
            all += buffer[..<count]
            // A machine with hundreds of thousands of sockets is not scanned past this.
            if all.count > 64 << 20 { return nil }
        }
        return String(decoding: all, as: UTF8.self)
    }
}
