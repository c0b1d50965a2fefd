import FoundationEssentials
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
    /// An approach's estimated seconds to the edge, when it has one.
    public var eta: Double?

    public init(
        time: Date?, kind: EventKind, reminderID: String, title: String, notes: String? = nil,
        coordinate: Coordinate?, distance: Double?, isInitial: Bool = false, device: String? = nil, eta: Double? = nil
    ) {
        self.device = device
        self.eta = eta
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
                isInitial: event.isInitial, device: event.fix.tracker, eta: event.proximity?.eta)
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
    /// the distance); an approach says its time to arrival after the distance (`  in 9 min`), a
    /// tracked device's event ends with `  device alice/phone`.
    case text
    /// One JSON object per line with `time`, `event`, `reminder`, `title`, `lat`, `lon`,
    /// `distance_m`, and `eta_s` for an approach.
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
            var line = "\(time)  \(record.kind.rawValue)  \(DisplayText.escaped(record.reminderID))  \(JSONText.quote(record.title))  \(distance)"
            if let eta = record.eta { line += "  in \(Span.spoken(eta))" }
            return record.device.map { line + "  device \(DisplayText.escaped($0))" } ?? line
        case .json:
            return Self.object(for: record).text
        }
    }

    /// The record's JSON object, as a `json` line holds it: `time`, `event`, `reminder`, `title`,
    /// `lat`, `lon`, `distance_m`, and `notes`, `initial`, `device` and `eta_s` where they apply.
    public static func object(for record: EventRecord) -> JSONObject {
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
        if let eta = record.eta { object.add("eta_s", number: eta.rounded()) }
        return object
    }
}
