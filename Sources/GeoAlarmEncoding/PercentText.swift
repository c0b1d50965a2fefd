/// Percent-encoded text (RFC 3986 2.1), as a URL's path and query write it.
public enum PercentText {
    /// `bytes` with every `%XX` read as its byte (and `+` as a space, with `plusIsSpace`, as a
    /// form's query writes one), taken as UTF-8; nil for a broken escape (not two hexadecimal
    /// digits) or bytes that are no UTF-8.
    public static func decoded(_ bytes: some Collection<UInt8>, plusIsSpace: Bool = false) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var rest = bytes[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                continue
            }
            guard let high = rest.popFirst().flatMap(hexValue), let low = rest.popFirst().flatMap(hexValue) else { return nil }
            out.append(high << 4 | low)
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
