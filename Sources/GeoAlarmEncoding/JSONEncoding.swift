import FoundationEssentials
import GeoAlarmCore

/// Timestamps as ISO 8601: in UTC with a `Z`, milliseconds only when the time has them; or, for
/// a time a user typed, on a zone's clock with its offset.
public enum Timestamp {
    /// The earliest moment written as a date: 0000-01-01T00:00:00Z.
    static let earliest = -62_167_219_200.0
    /// The latest moment written as a date: 9999-12-31T23:59:59Z.
    static let latest = 253_402_300_799.0

    /// `2026-11-21T08:06:30Z`; a time before year 0 or after 9999 (a corrupt or hand-edited
    /// state file) is written as "an out-of-range time" rather than trapping.
    public static func iso8601(_ date: Date) -> String {
        let total = date.timeIntervalSince1970
        guard total.isFinite, total >= earliest, total <= latest else { return "an out-of-range time" }
        let seconds = Int64(total.rounded(.down))
        let millis = Int(((total - Double(seconds)) * 1000).rounded())
        let (wholeSeconds, fraction) = millis == 1000 ? (seconds + 1, 0) : (seconds, millis)
        guard Double(wholeSeconds) <= latest else { return "an out-of-range time" }
        return written(Date(timeIntervalSince1970: Double(wholeSeconds)), milliseconds: fraction, in: FixedOffset.utc)
    }

    /// `2026-11-21T09:06:30+01:00`: the moment, to the second, on the clock of `zone` with its
    /// offset from UTC (a `Z` where there is none), for a command that answers a time its user
    /// typed in local time.
    public static func iso8601(_ date: Date, in zone: some TimeZoneRules) -> String {
        let total = date.timeIntervalSince1970.rounded(.down)
        // A day's margin either side keeps the local date within the four-digit years.
        guard total.isFinite, total >= earliest + 86_400, total <= latest - 86_400 else { return "an out-of-range time" }
        return written(Date(timeIntervalSince1970: total), milliseconds: 0, in: zone)
    }

    /// The local date and time of `moment` in `zone`, the milliseconds when not 0, and the
    /// zone's offset. Written into the string's own storage: one allocation, where a String per
    /// field made a dozen for every event line.
    private static func written(_ moment: Date, milliseconds fraction: Int, in zone: some TimeZoneRules) -> String {
        let local = LocalTime(moment, in: zone)
        let secondOfDay = local.secondOfDay
        let offsetMinutes = zone.secondsAheadOfUTC(at: moment) / 60
        return String(unsafeUninitializedCapacity: 29) { text in
            var end = 0
            func put(_ byte: UInt8) {
                text[end] = byte
                end += 1
            }
            func put(_ value: Int, digits: Int) {
                var divisor = 1
                for _ in 1..<digits { divisor *= 10 }
                while divisor > 0 {
                    put(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                    divisor /= 10
                }
            }
            put(local.year, digits: 4)
            put(UInt8(ascii: "-"))
            put(local.month, digits: 2)
            put(UInt8(ascii: "-"))
            put(local.day, digits: 2)
            put(UInt8(ascii: "T"))
            put(secondOfDay / 3600, digits: 2)
            put(UInt8(ascii: ":"))
            put(secondOfDay / 60 % 60, digits: 2)
            put(UInt8(ascii: ":"))
            put(secondOfDay % 60, digits: 2)
            if fraction != 0 {
                put(UInt8(ascii: "."))
                put(fraction, digits: 3)
            }
            if offsetMinutes == 0 {
                put(UInt8(ascii: "Z"))
            } else {
                put(UInt8(ascii: offsetMinutes < 0 ? "-" : "+"))
                put(abs(offsetMinutes) / 60 % 100, digits: 2)
                put(UInt8(ascii: ":"))
                put(abs(offsetMinutes) % 60, digits: 2)
            }
            return end
        }
    }
}

/// One JSON object written member by member, in the order added: event lines, `list --json`,
/// hooks' input, MQTT payloads.
public struct JSONObject: Sendable {
    /// The members so far, comma-separated, without the braces: the UTF-8 of each written into
    /// one buffer, grown in place.
    private var members: [UInt8] = []

    public init() {}

    /// `raw` must be JSON already (a number, an array, an object).
    public mutating func add(_ key: String, raw: String) {
        addKey(key)
        members += raw.utf8
    }

    /// A string, or null.
    public mutating func add(_ key: String, _ text: String?) {
        guard let text else { return add(key, raw: "null") }
        addKey(key)
        QuotedString.append(text, to: &members)
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
        guard !other.members.isEmpty else { return }
        if !members.isEmpty { members.append(UInt8(ascii: ",")) }
        members += other.members
    }

    private mutating func addKey(_ key: String) {
        if members.isEmpty { members.reserveCapacity(256) } else { members.append(UInt8(ascii: ",")) }
        QuotedString.append(key, to: &members)
        members.append(UInt8(ascii: ":"))
    }

    public var text: String {
        String(unsafeUninitializedCapacity: members.count + 2) { text in
            text[0] = UInt8(ascii: "{")
            _ = UnsafeMutableBufferPointer(rebasing: text[1...]).initialize(from: members)
            text[members.count + 1] = UInt8(ascii: "}")
            return members.count + 2
        }
    }
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
        return value.description
    }
}
