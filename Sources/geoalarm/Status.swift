import ArgumentParser
import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmOutput

/// `geoalarm status`: where the agent thinks you are, reminder by reminder.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show each reminder's state: inside/outside/unknown, distance from the last fix, completed, snoozed, overdue, last fired.")

    @OptionGroup var options: ConfigOptions
    @OptionGroup var stateOptions: StateOptions

    func run() throws {
        let config = try options.load()
        let store = try stateOptions.openForReading()
        let saved: [String: SavedPresence]
        let lifecycles: [String: Lifecycle]
        let lastFix: Fix?
        do {
            saved = try store?.savedPresence() ?? [:]
            lifecycles = try store?.lifecycles() ?? [:]
            lastFix = try store?.lastFix()
        } catch {
            Diagnostics.error(error.description)
            throw ExitCode.failure
        }
        let now = Date()
        var rows = [["ID", "TITLE", "STATE", "DISTANCE", "NOTES", "LAST FIRED"]]
        for reminder in config.reminders {
            let lifecycle = lifecycles[reminder.id] ?? Lifecycle()
            var notes = reminder.isEnabled ? [] : ["disabled"]
            notes += Self.lifecycleNotes(lifecycle, now: now)
            if let due = reminder.schedule.due?.moment(in: .current), due < now { notes.append("overdue") }
            rows.append(Self.row(reminder, saved: saved[reminder.id], lifecycle: lifecycle, lastFix: lastFix, notes: notes))
        }
        for collection in config.collections {
            rows += collectionRows(collection, saved: saved, lifecycles: lifecycles, lastFix: lastFix, now: now)
        }
        for alarm in config.alarms {
            let lifecycle = lifecycles[alarm.id] ?? Lifecycle()
            let notes = ["at \(alarm.at)"] + Self.lifecycleNotes(lifecycle, now: now)
            rows.append([alarm.id, alarm.title, "alarm", "-", notes.joined(separator: ", "), lifecycle.lastFired.map(Timestamp.iso8601) ?? "-"])
        }
        for line in TextTable.lines(rows) { print(line) }
        if let lastFix {
            print("last fix: \(lastFix.coordinate) at \(lastFix.time.map(Timestamp.iso8601) ?? "an unknown time")")
        } else {
            print("no fix recorded yet (is geoalarm run running?)")
        }
    }

    /// "completed ..." and "snoozed until ..." where they apply at `now`.
    private static func lifecycleNotes(_ lifecycle: Lifecycle, now: Date) -> [String] {
        var notes: [String] = []
        if let completed = lifecycle.completedAt { notes.append("completed \(Timestamp.iso8601(completed))") }
        if let until = lifecycle.snoozedUntil, until > now { notes.append("snoozed until \(Timestamp.iso8601(until))") }
        return notes
    }

    /// A reminder's (or collection place's) row: its saved side, when saved for its fence as it
    /// is now; its distance from the last fix; `notes`; when it last fired.
    private static func row(
        _ reminder: Reminder, saved: SavedPresence?, lifecycle: Lifecycle, lastFix: Fix?, notes: [String]
    ) -> [String] {
        let presence = saved.flatMap { $0.fenceKey == reminder.fenceKey ? $0.presence : nil } ?? .unknown
        let distance = lastFix.map { "\(Metres.rounded(Haversine.distance($0.coordinate, reminder.center))) m" } ?? "-"
        return [
            reminder.id, reminder.title, presence.rawValue, distance, notes.isEmpty ? "-" : notes.joined(separator: ", "),
            lifecycle.lastFired.map(Timestamp.iso8601) ?? "-",
        ]
    }

    /// One row for the collection (how many places are inside, the nearest one), then one per
    /// place the state file knows something of: inside, completed, snoozed or fired. Only the
    /// ids in the state file are looked at, not every place of a large collection.
    private func collectionRows(
        _ collection: ReminderCollection, saved: [String: SavedPresence], lifecycles: [String: Lifecycle], lastFix: Fix?,
        now: Date
    ) -> [[String]] {
        var inside = 0
        var known: [Int] = []
        for id in Set(saved.keys).union(lifecycles.keys) {
            guard let place = collection.memberIndex(of: id) else { continue }
            let isInside = saved[id].map { $0.presence == .inside && $0.fenceKey == collection.member(place).fenceKey } ?? false
            if isInside { inside += 1 }
            if isInside || lifecycles[id] != nil { known.append(place) }
        }
        let nearest = lastFix.flatMap { collection.nearestDistance(from: $0.coordinate) }
        var rows = [[
            "\(collection.id)/*", collection.template.title, "\(inside) of \(collection.places.count) inside",
            nearest.map { "\(Metres.rounded($0)) m (nearest)" } ?? "-", collection.template.isEnabled ? "-" : "disabled", "-",
        ]]
        for place in known.sorted() {
            let member = collection.member(place)
            let lifecycle = lifecycles[member.id] ?? Lifecycle()
            rows.append(Self.row(
                member, saved: saved[member.id], lifecycle: lifecycle, lastFix: lastFix,
                notes: Self.lifecycleNotes(lifecycle, now: now)))
        }
        return rows
    }
}
