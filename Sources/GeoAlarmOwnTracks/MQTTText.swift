import GeoAlarmCore

/// The rules libmosquitto applies to the strings it sends (topics, filters, client ids, user
/// names), checked when the config is read so that nothing is refused later, one message at a time.
public enum MQTTText {
    /// The most bytes an MQTT string holds (a 16-bit length).
    public static let longest = 65535

    /// Why `text` cannot be sent as an MQTT string, or nil: at most 65,535 bytes of UTF-8, without
    /// NUL, control characters (U+0001-U+001F, U+007F-U+009F) or Unicode noncharacters.
    public static func stringProblem(_ text: String) -> String? {
        if text.utf8.count > longest { return "is \(text.utf8.count) bytes, more than MQTT's \(longest)" }
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x20 || (0x7F...0x9F).contains(value) {
                return "holds the control character \(DisplayText.codePoint(scalar))"
            }
            if scalar.properties.isNoncharacterCodePoint {
                return "holds the noncharacter \(DisplayText.codePoint(scalar))"
            }
        }
        return nil
    }

    /// Why `topic` cannot be published to, or nil; `room` bytes are kept for the levels added
    /// to it (`/event`, `/waypoints`).
    public static func topicProblem(_ topic: String, room: Int = 0) -> String? {
        if topic.isEmpty { return "must not be empty" }
        if topic.contains("+") || topic.contains("#") { return "must not hold the wildcards + or #" }
        if topic.hasSuffix("/") { return "must not end with /" }
        if topic.utf8.count + room > longest, room > 0 {
            return "is \(topic.utf8.count) bytes: with the levels added to it, more than MQTT's \(longest)"
        }
        return stringProblem(topic)
    }

    /// Why `filter` cannot be subscribed to, or nil: a topic whose `+` levels are whole levels
    /// and whose `#` is a whole last level, as `mosquitto_sub_topic_check` has them.
    public static func filterProblem(_ filter: String) -> String? {
        if filter.isEmpty { return "must not be empty" }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("+"), level != "+" { return "has \"\(level)\": + must be a whole level" }
            if level.contains("#"), level != "#" || index != levels.count - 1 { return "has # that is not the whole last level" }
        }
        return stringProblem(filter)
    }
}
