/// Latin, Greek and Cyrillic letters that are drawn alike (Latin a, Cyrillic а): an id typed
/// with the keyboard's layout switched halfway reads as one id and is another.
public enum Lookalikes {
    /// The scripts whose letters are drawn alike.
    public enum Script: String, Sendable {
        case latin = "Latin"
        case greek = "Greek"
        case cyrillic = "Cyrillic"

        /// The script of a letter among these three; nil for any other character.
        public init?(of scalar: Unicode.Scalar) {
            switch scalar.value {
            case 0xD7, 0xF7: return nil
            case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF: self = .latin
            case 0x370...0x3FF, 0x1F00...0x1FFF: self = .greek
            case 0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F: self = .cyrillic
            default: return nil
            }
        }
    }

    /// The first word of `id` (a part between `-`, `_` and `.`) whose letters are of more than
    /// one of the three scripts: the script most of its letters are of (on a tie, its first
    /// letter's), and the other letters.
    public static func mixedWord(in id: String) -> (main: Script, strays: [Unicode.Scalar])? {
        for word in id.split(whereSeparator: { "-_.".contains($0) }) {
            let letters = word.unicodeScalars.compactMap { scalar in Script(of: scalar).map { (scalar, $0) } }
            var counts: [(script: Script, letters: Int)] = []
            for (_, script) in letters {
                if let index = counts.firstIndex(where: { $0.script == script }) {
                    counts[index].letters += 1
                } else {
                    counts.append((script, 1))
                }
            }
            guard counts.count > 1 else { continue }
            let main = counts.dropFirst().reduce(counts[0]) { $1.letters > $0.letters ? $1 : $0 }.script
            return (main, letters.filter { $0.1 != main }.map(\.0))
        }
        return nil
    }

    /// `text` with every Greek or Cyrillic letter that is drawn as a Latin one written as that
    /// Latin letter: two ids with the same skeleton look the same.
    public static func skeleton(_ text: String) -> String {
        var latin = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { latin.append(latinLookalike[scalar] ?? scalar) }
        return String(latin)
    }

    /// "Cyrillic а (U+0430)"; "U+2014" for a character of none of the three scripts.
    public static func describe(_ scalar: Unicode.Scalar) -> String {
        let code = DisplayText.codePoint(scalar)
        guard let script = Script(of: scalar) else { return code }
        return "\(script.rawValue) \(Character(scalar)) (\(code))"
    }

    /// Greek and Cyrillic letters drawn as a Latin letter in common fonts, with that letter.
    private static let latinLookalike: [Unicode.Scalar: Unicode.Scalar] = {
        let pairs: [(String, String)] = [
            // Cyrillic
            ("аеорсухіјѕһԁԛԝ", "aeopcyxijshdqw"),
            ("АВЕКМНОРСТХІЈЅҮ", "ABEKMHOPCTXIJSY"),
            // Greek
            ("αοιρνχγ", "aoipvxy"),
            ("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX"),
        ]
        var map: [Unicode.Scalar: Unicode.Scalar] = [:]
        for (others, latin) in pairs {
            for (other, letter) in zip(others.unicodeScalars, latin.unicodeScalars) { map[other] = letter }
        }
        return map
    }()
}
