import FoundationEssentials
import GeoAlarmCore

/// UTC timestamps as ISO 8601 with a `Z`, milliseconds only when the time has them.
public enum Timestamp {
    /// The latest moment written as a date: 9999-12-31T23:59:59Z.
    static let latest = 253_402_300_799.0

    /// `2026-11-21T08:06:30Z`; a time before year 0 or after 9999 (a corrupt or hand-edited
    /// state file) is written as "an out-of-range time" rather than trapping.
    public static func iso8601(_ date: Date) -> String {
        let total = date.timeIntervalSince1970
        guard total.isFinite, abs(total) <= latest else { return "an out-of-range time" }
        let seconds = Int64(total.rounded(.down))
        let millis = Int(((total - Double(seconds)) * 1000).rounded())
        let (wholeSeconds, fraction) = millis == 1000 ? (seconds + 1, 0) : (seconds, millis)
        let utc = LocalTime(Date(timeIntervalSince1970: Double(wholeSeconds)), in: FixedOffset.utc)
        let secondOfDay = utc.secondOfDay
        var text = "\(pad(utc.year, 4))-\(pad(utc.month, 2))-\(pad(utc.day, 2))T"
            + "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if fraction != 0 { text += ".\(pad(fraction, 3))" }
        return text + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// One JSON object written member by member, in the order added: event lines, `list --json`,
/// hooks' input, MQTT payloads.
public struct JSONObject: Sendable {
    private var members: [String] = []

    public init() {}

    /// `raw` must be JSON already (a number, an array, an object).
    public mutating func add(_ key: String, raw: String) {
        members.append(JSONText.quote(key) + ":" + raw)
    }

    /// A string, or null.
    public mutating func add(_ key: String, _ text: String?) {
        add(key, raw: text.map(JSONText.quote) ?? "null")
    }

    /// A number as ``JSONText/number(_:)`` writes it; null when nil (or not finite).
    public mutating func add(_ key: String, number: Double?) {
        add(key, raw: number.map(JSONText.number) ?? "null")
    }

    public mutating func add(_ key: String, _ flag: Bool) {
        add(key, raw: flag ? "true" : "false")
    }

    /// `other`'s members after this one's.
    public mutating func add(contentsOf other: JSONObject) {
        members += other.members
    }

    public var text: String { "{" + members.joined(separator: ",") + "}" }
}

/// The bits of JSON writing every sink needs, with a fixed key order.
public enum JSONText {
    /// A JSON string literal.
    public static func quote(_ text: String) -> String {
        QuotedString.quote(text)
    }

    /// A JSON number (shortest form that reads back the same); non-finite values become null.
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
