/// Double-quoted string literals that both JSON and TOML read back unchanged.
public enum QuotedString {
    /// `text` in double quotes, with `"`, `\\`, newline, tab, carriage return and every other
    /// control character (DEL and C1 included), line and paragraph separators and bidirectional
    /// controls escaped (see ``DisplayText/isUnsafe(_:)``): safe in a terminal and a log line.
    public static func quote(_ text: String) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(text.utf8.count + 2)
        append(text, to: &utf8)
        return String(decoding: utf8, as: UTF8.self)
    }

    /// ``quote(_:)`` of `text`, its UTF-8 written at the end of `utf8`: a JSON line is written
    /// member by member into one buffer (a String grown piece by piece costs hundreds of
    /// instructions a piece).
    public static func append(_ text: String, to utf8: inout [UInt8]) {
        utf8.append(UInt8(ascii: "\""))
        defer { utf8.append(UInt8(ascii: "\"")) }
        // Most text (ids, titles, times) is plain ASCII that needs no escape: copied whole.
        var text = text
        let copied = text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
            else { return false }
            utf8 += bytes
            return true
        }
        guard !copied else { return }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": utf8 += "\\\"".utf8
            case "\\": utf8 += "\\\\".utf8
            case "\n": utf8 += "\\n".utf8
            case "\r": utf8 += "\\r".utf8
            case "\t": utf8 += "\\t".utf8
            case _ where DisplayText.isUnsafe(scalar):
                let hex = String(scalar.value, radix: 16)
                utf8 += ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8
            default: Unicode.UTF8.encode(scalar) { utf8.append($0) }
            }
        }
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
