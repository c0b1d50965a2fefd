import GeoAlarmCore

/// Text for HTML and XML: an element's text or an attribute's value, in either.
public enum MarkupText {
    /// `text` with the five characters markup gives a meaning written as references.
    public static func escaped(_ text: String) -> String {
        text.replacingCharacters { character in
            switch character {
            case "&": "&amp;"
            case "<": "&lt;"
            case ">": "&gt;"
            case "\"": "&quot;"
            case "'": "&#39;"
            default: nil
            }
        }
    }
}
