/// Double-quoted string literals that both JSON and TOML read back unchanged.
public enum QuotedString {
    /// `text` in double quotes, with `"`, `\\`, newline, tab, carriage return and every other
    /// control character (DEL included, as TOML requires) escaped.
    public static func quote(_ text: String) -> String {
        // Most text (ids, titles, times) needs no escape: then it is only wrapped.
        let needsEscape = text.utf8.contains { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        guard needsEscape else { return "\"" + text + "\"" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
