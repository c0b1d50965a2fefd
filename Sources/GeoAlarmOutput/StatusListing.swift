import FoundationEssentials
import GeoAlarmCore
import GeoAlarmEncoding

/// What `geoalarm status` shows of a config and its state: each reminder's side as last
/// recorded, its distance from the last fix, its direction of travel and time to arrival, its
/// lifecycle; each collection's count of places inside and the places the state file knows
/// something of; each time alarm. As an aligned table or as one JSON object a line (keys in
/// geoalarm(1)).
public struct StatusListing {
    public var reminders: [Reminder]
    public var collections: [ReminderCollection]
    public var alarms: [TimeAlarm]
    /// The sides recorded, by reminder or collection place id.
    public var saved: [String: SavedPresence]
    /// The directions and times to arrival recorded, by reminder id.
    public var proximities: [String: SavedProximity]
    public var lifecycles: [String: Lifecycle]
    /// The fix distances are measured from; none: no distances.
    public var lastFix: Fix?
    /// What "overdue" and "snoozed until" are told against.
    public var now: Date
    /// The zone of the table's times (the JSON lines keep UTC, as the event lines do).
    public var timeZone: any TimeZoneRules

    public init(
        reminders: [Reminder], collections: [ReminderCollection], alarms: [TimeAlarm], saved: [String: SavedPresence],
        proximities: [String: SavedProximity], lifecycles: [String: Lifecycle], lastFix: Fix?, now: Date, timeZone: any TimeZoneRules
    ) {
        self.reminders = reminders
        self.collections = collections
        self.alarms = alarms
        self.saved = saved
        self.proximities = proximities
        self.lifecycles = lifecycles
        self.lastFix = lastFix
        self.now = now
        self.timeZone = timeZone
    }

    /// The table, a header and a row each, aligned.
    public func tableLines() -> [String] {
        TextTable.lines([["ID", "TITLE", "STATE", "DISTANCE", "DIRECTION", "ETA", "NOTES", "LAST FIRED"]] + entries().rows)
    }

    /// One JSON object a line.
    public func jsonLines() -> [String] {
        entries().lines.map(\.text)
    }

    /// A moment in the table: to the second on the local clock, with its offset from UTC
    /// (`2026-11-21T09:06:30+01:00`), as `snooze` answers and the config's times are written.
    public func local(_ moment: Date) -> String { Timestamp.iso8601(moment, in: timeZone) }

    /// Every row of the table and its JSON object, in the config's order: reminders, collections, time alarms.
    private func entries() -> (rows: [[String]], lines: [JSONLine]) {
        var rows: [[String]] = []
        var lines: [JSONLine] = []
        for reminder in reminders {
            let lifecycle = lifecycles[reminder.id] ?? Lifecycle()
            var notes = reminder.isEnabled ? [] : ["disabled"]
            notes += lifecycleNotes(lifecycle)
            let overdue = reminder.schedule.due.map { $0.moment(in: timeZone) < now } ?? false
            if overdue { notes.append("overdue") }
            let startsLater = reminder.schedule.startsLater(than: now, in: timeZone)
            if let startsLater { notes.append("starts \(startsLater)") }
            let proximity = proximities[reminder.id].flatMap { $0.fenceKey == reminder.fenceKey ? $0.proximity : nil }
            rows.append(row(reminder, proximity: proximity, lifecycle: lifecycle, notes: notes))
            var line = line(reminder, kind: "place", proximity: proximity, lifecycle: lifecycle, overdue: overdue)
            line.add("starts", localDate: startsLater)
            lines.append(line)
        }
        for collection in collections {
            let (collectionRows, collectionLines) = entries(collection)
            rows += collectionRows
            lines += collectionLines
        }
        for alarm in alarms {
            let lifecycle = lifecycles[alarm.id] ?? Lifecycle()
            let notes = ["at \(alarm.at.localDate(in: timeZone))"] + lifecycleNotes(lifecycle)
            rows.append([
                alarm.id, alarm.title, "alarm", "-", "-", "-", notes.joined(separator: ", "), lifecycle.lastFired.map(local) ?? "-",
            ])
            var line = JSONLine()
            line.add("id", alarm.id)
            line.add("title", alarm.title)
            line.add("kind", "alarm")
            line.add("state", "unknown")
            line.add("distance_m", number: nil)
            Self.addProximity(nil, to: &line)
            addLifecycle(lifecycle, to: &line)
            line.add("at", localDate: alarm.at.localDate(in: timeZone))
            lines.append(line)
        }
        return (rows, lines)
    }

    /// "completed ..." and "snoozed until ..." where they apply now.
    private func lifecycleNotes(_ lifecycle: Lifecycle) -> [String] {
        var notes: [String] = []
        if let completed = lifecycle.completedAt { notes.append("completed \(local(completed))") }
        if let until = lifecycle.snoozedUntil, until > now { notes.append("snoozed until \(local(until))") }
        return notes
    }

    /// A reminder's (or collection place's) JSON object: the row's facts as values.
    private func line(_ reminder: Reminder, kind: String, proximity: Proximity?, lifecycle: Lifecycle, overdue: Bool) -> JSONLine {
        var line = JSONLine()
        line.add("id", reminder.id)
        line.add("title", reminder.title)
        line.add("kind", kind)
        line.add("state", presence(reminder).rawValue)
        line.add("distance_m", number: lastFix.map { reminder.distance(from: $0.coordinate) }.flatMap { $0.isFinite ? $0 : nil })
        Self.addProximity(proximity, to: &line)
        addLifecycle(lifecycle, to: &line)
        line.add("enabled", reminder.isEnabled)
        line.add("overdue", overdue)
        return line
    }

    /// completed, completed_at, snoozed_until (only while it lasts) and last_fired.
    private func addLifecycle(_ lifecycle: Lifecycle, to line: inout JSONLine) {
        line.add("completed", lifecycle.completedAt != nil)
        line.add("completed_at", time: lifecycle.completedAt)
        line.add("snoozed_until", time: lifecycle.snoozedUntil.flatMap { $0 > now ? $0 : nil })
        line.add("last_fired", time: lifecycle.lastFired)
    }

    /// edge_m (metres to the edge), direction (of travel) and eta_s (seconds to the edge), or null.
    private static func addProximity(_ proximity: Proximity?, to line: inout JSONLine) {
        line.add("edge_m", number: proximity.map { $0.distance.rounded() })
        line.add("direction", proximity.map(\.direction.rawValue))
        line.add("eta_s", number: proximity?.eta.map { $0.rounded() })
    }

    /// The side saved for a reminder, when saved for its fence as it is now.
    private func presence(_ reminder: Reminder) -> Presence {
        saved[reminder.id].flatMap { $0.fenceKey == reminder.fenceKey ? $0.presence : nil } ?? .unknown
    }

    /// A reminder's (or collection place's) row: its saved side, when saved for its fence as it
    /// is now; its distance from the last fix; its direction of travel and time to arrival, as
    /// the agent saved them; `notes`; when it last fired.
    private func row(_ reminder: Reminder, proximity: Proximity?, lifecycle: Lifecycle, notes: [String]) -> [String] {
        let distance = lastFix.map { "\(Metres.rounded(reminder.distance(from: $0.coordinate))) m" } ?? "-"
        return [
            reminder.id, reminder.title, presence(reminder).rawValue, distance, proximity?.direction.rawValue ?? "-",
            proximity?.eta.map(Span.spoken) ?? "-", notes.isEmpty ? "-" : notes.joined(separator: ", "),
            lifecycle.lastFired.map(local) ?? "-",
        ]
    }

    /// One row for the collection (how many places are inside, the nearest one, a snooze of the
    /// whole), then one per place the state file knows something of: inside, completed, snoozed
    /// or fired. Only the ids in the state file are looked at, not every place of a large collection.
    private func entries(_ collection: ReminderCollection) -> (rows: [[String]], lines: [JSONLine]) {
        var inside = 0
        var known: [Int] = []
        for id in Set(saved.keys).union(lifecycles.keys) {
            guard let place = collection.memberIndex(of: id) else { continue }
            let isInside = saved[id].map { $0.presence == .inside && $0.fenceKey == collection.member(place).fenceKey } ?? false
            if isInside { inside += 1 }
            if isInside || lifecycles[id] != nil { known.append(place) }
        }
        let nearest = lastFix.flatMap { collection.nearestDistance(from: $0.coordinate) }
        // A snooze of the whole (a task at a collection's places) silences every place.
        let snoozedUntil = lifecycles[collection.id]?.snoozedUntil.flatMap { $0 > now ? $0 : nil }
        let startsLater = collection.template.schedule.startsLater(than: now, in: timeZone)
        let notes = (collection.template.isEnabled ? [] : ["disabled"]) + (snoozedUntil.map { ["snoozed until \(local($0))"] } ?? [])
            + (startsLater.map { ["starts \($0)"] } ?? [])
        var rows = [[
            "\(collection.id)/*", collection.template.title, "\(inside) of \(collection.places.count) inside",
            nearest.map { "\(Metres.rounded($0)) m (nearest)" } ?? "-", "-", "-", notes.isEmpty ? "-" : notes.joined(separator: ", "), "-",
        ]]
        var summary = JSONLine()
        summary.add("id", "\(collection.id)/*")
        summary.add("title", collection.template.title)
        summary.add("kind", "collection")
        summary.add("inside", number: Double(inside))
        summary.add("places", number: Double(collection.places.count))
        summary.add("nearest_m", number: nearest)
        summary.add("enabled", collection.template.isEnabled)
        summary.add("snoozed_until", time: snoozedUntil)
        summary.add("starts", localDate: startsLater)
        var lines = [summary]
        for place in known.sorted() {
            let member = collection.member(place)
            let lifecycle = lifecycles[member.id] ?? Lifecycle()
            rows.append(row(member, proximity: nil, lifecycle: lifecycle, notes: lifecycleNotes(lifecycle)))
            lines.append(line(member, kind: "collection place", proximity: nil, lifecycle: lifecycle, overdue: false))
        }
        return (rows, lines)
    }
}
