/// Double-quoted string literals that both JSON and TOML read back unchanged.
public enum QuotedString {
    /// `text` in double quotes, with `"`, `\\`, newline, tab, carriage return and every other
    /// control character (DEL and C1 included), line and paragraph separators and bidirectional
    /// controls escaped (see ``DisplayText/isUnsafe(_:)``): safe in a terminal and a log line.
    public static func quote(_ text: String) -> String {
        // Most text (ids, titles, times) needs no escape: then it is only wrapped.
        let needsEscape = text.utf8.contains { $0 < 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            && text.unicodeScalars.contains { DisplayText.isUnsafe($0) || $0 == "\"" || $0 == "\\" }
        guard needsEscape else { return "\"" + text + "\"" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where DisplayText.isUnsafe(scalar):
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension String {
    /// This text with each character that `replacement` gives text for replaced by it (an empty
    /// text drops the character): the one loop behind the escapers of each syntax geoalarm
    /// writes (markup, iCalendar TEXT and parameters, `file:` URIs).
    public func replacingCharacters(_ replacement: (Character) -> String?) -> String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for character in self {
            if let replaced = replacement(character) { out += replaced } else { out.append(character) }
        }
        return out
    }
}
