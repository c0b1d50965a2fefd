/// Text from users and files made safe to show on a terminal, in a log line or a table cell:
/// control characters (C0, DEL, C1), line and paragraph separators and bidirectional controls
/// become visible escapes, so that no title, note or file excerpt can move the cursor, change
/// colours, start a new log line or reorder what follows it.
public enum DisplayText {
    /// `text` with every unsafe scalar written as `\n`, `\t`, `\r` or `\u{XX}`; backslashes stay as they are.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return out
    }

    /// A URL as it may be shown, escaped, its password (`user:password@`) replaced with `…`: a
    /// URL refused for holding one is named in the terminal and the journal without it.
    public static func url(_ text: String) -> String {
        guard let schemeEnd = text.firstRange(of: "://") else { return escaped(text) }
        let authorityEnd = text[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        let authority = text[schemeEnd.upperBound..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return escaped(text) }
        return escaped(String(text[..<authority.index(after: colon)]) + "…" + String(text[at...]))
    }

    /// A scalar's code point as Unicode writes it: "U+0430", "U+1F35E".
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// At most `limit` characters of the bytes' text (invalid UTF-8 shown as U+FFFD), escaped,
    /// with "…" when cut: for quoting a file or a child's output in a message.
    public static func excerpt<Bytes: Collection<UInt8>>(_ bytes: Bytes, limit: Int = 60) -> String {
        escaped(shortened(String(decoding: bytes.prefix(limit * 4), as: UTF8.self), limit: limit))
    }

    /// At most `limit` characters of `text`, with "…" when cut (not escaped): for quoting in a
    /// message a name or key that may be as long as the file it came from.
    public static func shortened(_ text: String, limit: Int = 60) -> String {
        text.dropFirst(limit).isEmpty ? text : text.prefix(limit) + "…"
    }

    /// Whether a scalar must not reach a terminal or a log raw.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x2028, 0x2029: true
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// How many terminal columns `text` takes once escaped: two for each wide character (CJK
    /// ideographs and kana, Hangul, fullwidth forms, an emoji shown as a picture), one for any
    /// other, a combining mark going with the character it marks. For aligning a table whatever
    /// the script of the titles in it.
    public static func columns(_ text: String) -> Int {
        text.reduce(0) { $0 + (isWide($1) ? 2 : 1) }
    }

    /// Whether a terminal shows `character` two columns wide (Unicode's East Asian Wide and
    /// Fullwidth ranges, and emoji presentation, as `wcwidth` counts them).
    private static func isWide(_ character: Character) -> Bool {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return false }
        // A variation selector 16 asks for the emoji (picture) form of what it follows.
        if first.properties.isEmojiPresentation || scalars.contains(where: { $0.value == 0xFE0F }) { return true }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// "a, b, c" of `items`, the first `most` of them ("a, b, …" when there are more).
    public static func firstNamed(_ items: [String], most: Int = 10) -> String {
        items.prefix(most).joined(separator: ", ") + (items.count > most ? ", …" : "")
    }

    /// A count with its noun for people: "1 reminder", "3 reminders", "0 reminders"; `plural`
    /// where the noun takes more than an "s" ("1 entry", "2 entries").
    public static func counted(_ count: Int, _ singular: String, plural: String? = nil) -> String {
        count == 1 ? "1 \(singular)" : "\(count) \(plural ?? singular + "s")"
    }

    /// A size in bytes for people, in the largest binary unit that holds it whole or nearly:
    /// "512 bytes", "64 KiB", "1.5 MiB", "1 GiB".
    public static func size(_ bytes: Int) -> String {
        let units = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        guard let (unit, name) = units.first(where: { bytes >= $0.0 }) else { return counted(bytes, "byte") }
        let tenths = bytes / unit * 10 + (bytes % unit * 10 + unit / 2) / unit
        return tenths % 10 == 0 ? "\(tenths / 10) \(name)" : "\(tenths / 10).\(tenths % 10) \(name)"
    }
}


