/// The system bus's address as GLib takes it from `DBUS_SYSTEM_BUS_ADDRESS`.
public enum SystemBusAddress {
    /// D-Bus's own place for the system bus's socket, where no address is given.
    public static let defaultSocket = "/run/dbus/system_bus_socket"

    /// The file of the socket that `address` names first (`unix:path=...`, its %-escapes
    /// undone); the default socket for none; nil for an address that names no file first (an
    /// abstract socket, TCP).
    public static func socketPath(_ address: String?) -> String? {
        guard let address, let first = address.split(separator: ";").first else { return defaultSocket }
        guard first.hasPrefix("unix:") else { return nil }
        for pair in first.dropFirst("unix:".count).split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == "path" { return unescaped(parts[1]) }
        }
        return nil
    }

    /// `text` with its `%XX` escapes made the bytes they stand for; nil where one is not two hex digits.
    private static func unescaped(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var rest = text.utf8[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            rest = rest.dropFirst(2)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
