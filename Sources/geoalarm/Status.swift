import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmOutput
import GeoAlarmSystem

/// `geoalarm status`: where the agent thinks you are, reminder by reminder.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: """
            Show each reminder's state: inside/outside/unknown, distance from the last fix, direction of travel and time \
            to arrival, completed, snoozed, overdue, last fired.
            """)

    @OptionGroup var options: ConfigOptions
    @OptionGroup var stateOptions: StateOptions

    @Flag(help: "Print one JSON object per line (keys in the man page) instead of a table.")
    var json = false

    @Option(help: ArgumentHelp(
        "Show the sides of this OwnTracks device (as `run --source owntracks` tracks it) rather than this machine's.",
        valueName: "user/device"))
    var device: String?

    func run() async throws {
        let (config, _) = try await options.load(fetchingInto: stateOptions.path)
        let store = try stateOptions.openForReading()
        let saved: [String: SavedPresence]
        let lifecycles: [String: Lifecycle]
        let lastFix: Fix?
        let proximities: [String: SavedProximity]
        do {
            saved = try store?.savedPresence(device: device) ?? [:]
            // A tracked device's proximities and last fix are not kept: its sides are.
            proximities = device == nil ? try store?.savedProximities() ?? [:] : [:]
            lifecycles = try store?.lifecycles() ?? [:]
            lastFix = device == nil ? try store?.lastFix() : nil
        } catch {
            Diagnostics.error(error.description)
            throw ExitCode.failure
        }
        let now = Date()
        var rows = [["ID", "TITLE", "STATE", "DISTANCE", "DIRECTION", "ETA", "NOTES", "LAST FIRED"]]
        var lines: [JSONLine] = []
        for reminder in config.reminders {
            let lifecycle = lifecycles[reminder.id] ?? Lifecycle()
            var notes = reminder.isEnabled ? [] : ["disabled"]
            notes += Self.lifecycleNotes(lifecycle, now: now)
            let overdue = reminder.schedule.due.map { $0.moment(in: SystemTimeZone()) < now } ?? false
            if overdue { notes.append("overdue") }
            let proximity = Self.proximity(reminder, saved: proximities[reminder.id])
            rows.append(Self.row(
                reminder, saved: saved[reminder.id], proximity: proximity, lifecycle: lifecycle, lastFix: lastFix, notes: notes))
            lines.append(Self.line(
                reminder, kind: "place", saved: saved[reminder.id], proximity: proximity, lifecycle: lifecycle, lastFix: lastFix,
                now: now, overdue: overdue))
        }
        for collection in config.collections {
            let (collectionRows, collectionLines) = entries(
                collection, saved: saved, lifecycles: lifecycles, lastFix: lastFix, now: now)
            rows += collectionRows
            lines += collectionLines
        }
        for alarm in config.alarms {
            let lifecycle = lifecycles[alarm.id] ?? Lifecycle()
            let notes = ["at \(alarm.at.localDate(in: SystemTimeZone()))"] + Self.lifecycleNotes(lifecycle, now: now)
            rows.append([
                alarm.id, alarm.title, "alarm", "-", "-", "-", notes.joined(separator: ", "), lifecycle.lastFired.map(Self.local) ?? "-",
            ])
            var line = JSONLine()
            line.add("id", alarm.id)
            line.add("title", alarm.title)
            line.add("kind", "alarm")
            line.add("state", "unknown")
            line.add("distance_m", number: nil)
            Self.addProximity(nil, to: &line)
            Self.addLifecycle(lifecycle, to: &line, now: now)
            line.add("at", localDate: alarm.at.localDate(in: SystemTimeZone()))
            lines.append(line)
        }
        // The devices are named only where this table shows none of their sides. A file that
        // could be read above but not here names none: the hint is left out, not the table.
        let devices = { (try? store?.trackedDevices()) ?? [] }
        if let device, saved.isEmpty {
            Diagnostics.logger.warning("\(Self.noSides(of: device, devices: devices()))")
        }
        if json {
            for line in lines { try Console.line(line.text) }
            return
        }
        for line in TextTable.lines(rows) { try Console.line(line) }
        if let device {
            try Console.line("the sides of OwnTracks device \(device) (no distance is kept for a tracked device)")
        } else if let lastFix {
            try Console.line("last fix: \(lastFix.coordinate) at \(lastFix.time.map { "\(Self.local($0)) (\(lastFix.age))" } ?? "an unknown time")")
        } else if case let devices = devices(), !devices.isEmpty {
            try Console.line("no fix of this machine recorded; --device NAME shows the sides of \(Self.listed(devices))")
        } else if !saved.isEmpty {
            // The agent keeps a fix with every side it records; `replay --state` keeps none.
            try Console.line("no fix recorded (a replay keeps none): the sides and directions are as last recorded")
        } else {
            try Console.line("no fix recorded yet (is geoalarm run running?)")
        }
    }

    /// Why a device's table is all unknown: the devices the file does hold sides of, if any
    /// (escaped where it is shown, as every line is).
    private static func noSides(of device: String, devices: [String]) -> String {
        devices.isEmpty
            ? "no side of \(device) in the state file, which holds no tracked device's"
            : "no side of \(device) in the state file; it holds those of \(listed(devices))"
    }

    /// "2 OwnTracks devices: alice/phone, bob/phone", the first ten named.
    private static func listed(_ devices: [String]) -> String {
        let named = devices.prefix(10).joined(separator: ", ")
        return DisplayText.counted(devices.count, "OwnTracks device") + ": " + named + (devices.count > 10 ? ", …" : "")
    }

    /// A moment in the table: to the second on this machine's clock, with its offset from UTC
    /// (`2026-11-21T09:06:30+01:00`), as `snooze` answers and the config's times are written.
    /// The JSON lines keep UTC, as the event lines and `history` do.
    private static func local(_ moment: Date) -> String { Timestamp.iso8601(moment, in: SystemTimeZone()) }

    /// "completed ..." and "snoozed until ..." where they apply at `now`.
    private static func lifecycleNotes(_ lifecycle: Lifecycle, now: Date) -> [String] {
        var notes: [String] = []
        if let completed = lifecycle.completedAt { notes.append("completed \(local(completed))") }
        if let until = lifecycle.snoozedUntil, until > now { notes.append("snoozed until \(local(until))") }
        return notes
    }

    /// A reminder's (or collection place's) JSON object: the row's facts as values.
    private static func line(
        _ reminder: Reminder, kind: String, saved: SavedPresence?, proximity: Proximity?, lifecycle: Lifecycle, lastFix: Fix?,
        now: Date, overdue: Bool
    ) -> JSONLine {
        var line = JSONLine()
        line.add("id", reminder.id)
        line.add("title", reminder.title)
        line.add("kind", kind)
        line.add("state", presence(reminder, saved: saved).rawValue)
        line.add("distance_m", number: lastFix.map { reminder.distance(from: $0.coordinate) }.flatMap { $0.isFinite ? $0 : nil })
        addProximity(proximity, to: &line)
        addLifecycle(lifecycle, to: &line, now: now)
        line.add("enabled", reminder.isEnabled)
        line.add("overdue", overdue)
        return line
    }

    /// completed, completed_at, snoozed_until (only while it lasts) and last_fired.
    private static func addLifecycle(_ lifecycle: Lifecycle, to line: inout JSONLine, now: Date) {
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

    /// The proximity the agent saved for a reminder, when saved for its fence as it is now.
    private static func proximity(_ reminder: Reminder, saved: SavedProximity?) -> Proximity? {
        saved.flatMap { $0.fenceKey == reminder.fenceKey ? $0.proximity : nil }
    }

    /// The side saved for a reminder, when saved for its fence as it is now.
    private static func presence(_ reminder: Reminder, saved: SavedPresence?) -> Presence {
        saved.flatMap { $0.fenceKey == reminder.fenceKey ? $0.presence : nil } ?? .unknown
    }

    /// A reminder's (or collection place's) row: its saved side, when saved for its fence as it
    /// is now; its distance from the last fix; its direction of travel and time to arrival, as
    /// the agent saved them; `notes`; when it last fired.
    private static func row(
        _ reminder: Reminder, saved: SavedPresence?, proximity: Proximity?, lifecycle: Lifecycle, lastFix: Fix?, notes: [String]
    ) -> [String] {
        let presence = presence(reminder, saved: saved)
        let distance = lastFix.map { "\(Metres.rounded(reminder.distance(from: $0.coordinate))) m" } ?? "-"
        return [
            reminder.id, reminder.title, presence.rawValue, distance, proximity?.direction.rawValue ?? "-",
            proximity?.eta.map(Span.spoken) ?? "-", notes.isEmpty ? "-" : notes.joined(separator: ", "),
            lifecycle.lastFired.map(local) ?? "-",
        ]
    }

    /// One row for the collection (how many places are inside, the nearest one), then one per
    /// place the state file knows something of: inside, completed, snoozed or fired. Only the
    /// ids in the state file are looked at, not every place of a large collection.
    private func entries(
        _ collection: ReminderCollection, saved: [String: SavedPresence], lifecycles: [String: Lifecycle], lastFix: Fix?,
        now: Date
    ) -> (rows: [[String]], lines: [JSONLine]) {
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
        let notes = (collection.template.isEnabled ? [] : ["disabled"]) + (snoozedUntil.map { ["snoozed until \(Self.local($0))"] } ?? [])
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
        var lines = [summary]
        for place in known.sorted() {
            let member = collection.member(place)
            let lifecycle = lifecycles[member.id] ?? Lifecycle()
            rows.append(Self.row(
                member, saved: saved[member.id], proximity: nil, lifecycle: lifecycle, lastFix: lastFix,
                notes: Self.lifecycleNotes(lifecycle, now: now)))
            lines.append(Self.line(
                member, kind: "collection place", saved: saved[member.id], proximity: nil, lifecycle: lifecycle, lastFix: lastFix,
                now: now, overdue: false))
        }
        return (rows, lines)
    }
}
