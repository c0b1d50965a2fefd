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
        let days = Int(floorDivide(wholeSeconds, 86400))
        let secondOfDay = Int(wholeSeconds - Int64(days) * 86400)
        let (year, month, day) = civil(fromDays: days)
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if fraction != 0 { text += ".\(pad(fraction, 3))" }
        return text + "Z"
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : (a - b + 1) / b
    }

    /// Proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's algorithm).
    private static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPart = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPart + 2) / 5 + 1
        let month = monthPart < 10 ? monthPart + 3 : monthPart - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
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
