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
        let store = try stateOptions.open()
        let saved = try store.savedPresence()
        let lifecycles = try store.lifecycles()
        let lastFix = try store.lastFix()
        let now = Date()
        var rows = [["ID", "TITLE", "STATE", "DISTANCE", "NOTES", "LAST FIRED"]]
        for reminder in config.reminders {
            let presence = saved[reminder.id].flatMap { $0.fenceKey == reminder.fenceKey ? $0.presence : nil } ?? .unknown
            let distance = lastFix.map { "\(Int(Haversine.distance($0.coordinate, reminder.center).rounded())) m" } ?? "-"
            let lifecycle = lifecycles[reminder.id] ?? Lifecycle()
            var notes: [String] = []
            if !reminder.isEnabled { notes.append("disabled") }
            if let completed = lifecycle.completedAt { notes.append("completed \(Timestamp.iso8601(completed))") }
            if let until = lifecycle.snoozedUntil, until > now { notes.append("snoozed until \(Timestamp.iso8601(until))") }
            if let due = reminder.schedule.due?.moment(in: .current), due < now { notes.append("overdue") }
            rows.append([
                reminder.id, reminder.title, presence.rawValue, distance, notes.isEmpty ? "-" : notes.joined(separator: ", "),
                lifecycle.lastFired.map(Timestamp.iso8601) ?? "-",
            ])
        }
        for alarm in config.alarms {
            let lifecycle = lifecycles[alarm.id] ?? Lifecycle()
            var notes = ["at \(alarm.at)"]
            if let completed = lifecycle.completedAt { notes.append("completed \(Timestamp.iso8601(completed))") }
            if let until = lifecycle.snoozedUntil, until > now { notes.append("snoozed until \(Timestamp.iso8601(until))") }
            rows.append([alarm.id, alarm.title, "alarm", "-", notes.joined(separator: ", "), lifecycle.lastFired.map(Timestamp.iso8601) ?? "-"])
        }
        for line in TextTable.lines(rows) { print(line) }
        if let lastFix {
            print("last fix: \(lastFix.coordinate) at \(lastFix.time.map(Timestamp.iso8601) ?? "an unknown time")")
        } else {
            print("no fix recorded yet (is geoalarm run running?)")
        }
    }
}
