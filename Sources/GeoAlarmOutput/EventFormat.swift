import Foundation
import GeoAlarmCore

/// What an event line says: an event as it happens, or one read back from the history.
public struct EventRecord: Sendable, Equatable {
    public var time: Date?
    public var kind: EventKind
    public var reminderID: String
    public var title: String
    public var notes: String?
    /// Where the fix was; nil for a time alarm.
    public var coordinate: Coordinate?
    /// Metres from the fix to the reminder's centre (or its area's edge); nil for a time alarm.
    public var distance: Double?
    public var isInitial: Bool
    /// The tracked device (OwnTracks `user/device`) the event is of; nil for this machine's own.
    public var device: String?

    public init(
        time: Date?, kind: EventKind, reminderID: String, title: String, notes: String? = nil,
        coordinate: Coordinate?, distance: Double?, isInitial: Bool = false, device: String? = nil
    ) {
        self.device = device
        self.time = time
        self.kind = kind
        self.reminderID = reminderID
        self.title = title
        self.notes = notes
        self.coordinate = coordinate
        self.distance = distance
        self.isInitial = isInitial
    }

    public init(_ announcement: Announcement) {
        switch announcement {
        case .crossing(let event):
            self.init(
                time: event.fix.time, kind: event.kind, reminderID: event.reminder.id, title: event.reminder.title,
                notes: event.reminder.notes, coordinate: event.fix.coordinate, distance: event.distance,
                isInitial: event.isInitial, device: event.fix.tracker)
        case .alarm(let firing):
            self.init(
                time: firing.time, kind: .alarm, reminderID: firing.alarm.id, title: firing.alarm.title,
                notes: firing.alarm.notes, coordinate: nil, distance: nil)
        }
    }
}

/// How events are written as lines.
public enum EventFormat: Sendable {
    /// `2026-11-21T08:06:30Z  arrive  parcel  "Pick up the parcel"  12 m` (a time alarm has `-` for
    /// the distance); a tracked device's event ends with `  device alice/phone`.
    case text
    /// One JSON object per line with `time`, `event`, `reminder`, `title`, `lat`, `lon`, `distance_m`.
    case json

    /// The announcement as one line, without the line end.
    public func line(for announcement: Announcement) -> String {
        line(for: EventRecord(announcement))
    }

    /// The record as one line, without the line end.
    public func line(for record: EventRecord) -> String {
        switch self {
        case .text:
            let time = record.time.map(Timestamp.iso8601) ?? "-"
            let distance = record.distance.map { "\(Metres.rounded($0)) m" } ?? "-"
            let line = "\(time)  \(record.kind.rawValue)  \(DisplayText.escaped(record.reminderID))  \(JSONText.quote(record.title))  \(distance)"
            return record.device.map { line + "  device \(DisplayText.escaped($0))" } ?? line
        case .json:
            var object = JSONObject()
            object.add("time", record.time.map(Timestamp.iso8601))
            object.add("event", record.kind.rawValue)
            object.add("reminder", record.reminderID)
            object.add("title", record.title)
            // A time alarm's place and distance are null.
            object.add("lat", number: record.coordinate?.latitude)
            object.add("lon", number: record.coordinate?.longitude)
            object.add("distance_m", number: record.distance.map { ($0 * 10).rounded() / 10 })
            if let notes = record.notes { object.add("notes", notes) }
            if record.isInitial { object.add("initial", true) }
            if let device = record.device { object.add("device", device) }
            return object.text
        }
    }
}

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
/// MQTT payloads.
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

/// The bits of JSON writing the event lines need, with a fixed key order.
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
