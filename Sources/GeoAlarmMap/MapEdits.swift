import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmICalendar
import GeoAlarmScanners
import GeoAlarmStore
import GeoAlarmTasks

/// What the page asks to change, read from a request's JSON object (unknown members are passed over).
public struct MapChange: Sendable, Equatable {
    public var id: String?
    public var title: String?
    /// As typed: a length such as "150m", or a JSON number of metres (made "120m"); written as
    /// given, so the config's own rules judge it.
    public var radius: String?
    public var latitude: Double?
    public var longitude: Double?
    public var when: String?
    /// A snooze's length.
    public var seconds: Double?
    /// The task list a new reminder goes to (its name); nil: the config.
    public var list: String?
    /// The key of the task the page showed under `id` (``Reminder/taskKey``): a button acts on
    /// that task, whatever id it has by then.
    public var taskKey: String?

    /// Why a body is no change.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The largest body read.
    public static let largestBody = 16 * 1024

    /// The change a request's body holds.
    public static func parse(_ bytes: [UInt8]) throws(Invalid) -> MapChange {
        guard bytes.count <= largestBody else { throw Invalid(description: "the request is larger than \(largestBody) bytes") }
        var change = MapChange()
        // A member of a known name but of another type (a title given as a number) is refused,
        // never passed over: the change would be made without it.
        var mistyped: String?
        func text(_ scanner: inout JSONScanner, _ name: String) throws(JSONScanner.Failure) -> String? {
            if try scanner.nullValue() { return nil }
            guard let value = try scanner.stringValue() else {
                mistyped = mistyped ?? "\(name) is text"
                return nil
            }
            return value
        }
        func number(_ scanner: inout JSONScanner, _ name: String) throws(JSONScanner.Failure) -> Double? {
            if try scanner.nullValue() { return nil }
            guard let value = try scanner.numberValue() else {
                mistyped = mistyped ?? "\(name) is a number"
                return nil
            }
            return value
        }
        do {
            try JSONScanner.scan(bytes[...]) { scanner throws(JSONScanner.Failure) in
                try scanner.expect(UInt8(ascii: "{"))
                try scanner.members { (scanner, key) throws(JSONScanner.Failure) in
                    switch key {
                    case "id": change.id = try text(&scanner, "id")
                    case "title": change.title = try text(&scanner, "title")
                    case "radius":
                        if try scanner.nullValue() { break }
                        if scanner.nextIsString {
                            change.radius = try scanner.stringValue()
                        } else if let metres = try scanner.numberValue() {
                            change.radius = JSONText.number(metres) + "m"
                        } else {
                            mistyped = mistyped ?? "radius is a length such as \"150m\", or a number of metres"
                        }
                    case "lat": change.latitude = try number(&scanner, "lat")
                    case "lon": change.longitude = try number(&scanner, "lon")
                    case "when": change.when = try text(&scanner, "when")
                    case "seconds": change.seconds = try number(&scanner, "seconds")
                    case "list": change.list = try text(&scanner, "list")
                    case "key": change.taskKey = try text(&scanner, "key")
                    default: try scanner.skipValue()
                    }
                }
                try scanner.expectEnd()
            }
        } catch {
            throw Invalid(description: "the request is not a JSON object: \(error.message)")
        }
        if let mistyped { throw Invalid(description: mistyped) }
        return change
    }

    /// "LAT,LON" for the config, when both are given.
    public var location: String? {
        guard let latitude, let longitude else { return nil }
        return JSONText.number((latitude * 1e7).rounded() / 1e7) + "," + JSONText.number((longitude * 1e7).rounded() / 1e7)
    }
}

/// The page's changes, made as `add`, `remove`, `complete` and `snooze` make them: the config
/// through ``ConfigEditor`` (locked, validated, written atomically, every other byte kept),
/// the lifecycle in the state file. A change that would make the config invalid is refused
/// with the message `geoalarm check` would give, and nothing is written.
enum MapEdits {
    struct Refusal: Error, Sendable, CustomStringConvertible {
        var description: String
    }

    /// Adds a reminder at the change's point (to the task list the change names, else the
    /// config); returns its id (its title's slug, numbered when taken; a task's from its UID).
    static func add(_ change: MapChange, to config: Config, store: StateStore? = nil) throws(Refusal) -> String {
        guard let title = change.title?.trimmingWhitespace(), !title.isEmpty else {
            throw Refusal(description: "give the reminder a title")
        }
        guard let location = change.location else { throw Refusal(description: "say where: lat and lon") }
        if let list = change.list { return try addTask(change, title: title, to: list, in: config, store: store) }
        var fields = [("location", ConfigEditor.quote(location))]
        if let radius = change.radius { fields.append(("radius", ConfigEditor.quote(radius))) }
        if let when = change.when { fields.append(("when", ConfigEditor.quote(when))) }
        var id = ""
        try edit(config.path) { bytes in
            let appended = ConfigEditor.appendingReminder(titled: title, fields, to: bytes, path: config.path)
            id = appended.id
            return appended.bytes
        }
        return id
    }

    /// A new task in the list called `name`, at the change's point; its id. A server's list gets
    /// it in its copy in `store` and the queue of writes there, which the agent sends.
    private static func addTask(
        _ change: MapChange, title: String, to name: String, in config: Config, store: StateStore?
    ) throws(Refusal) -> String {
        guard let settings = config.taskListSettings.first(where: { $0.name == name }) else {
            throw Refusal(description: "no task list \"\(name)\" in \(config.path)")
        }
        guard let latitude = change.latitude, let longitude = change.longitude,
              Coordinate(latitude: latitude, longitude: longitude).isValid
        else { throw Refusal(description: "say where: lat and lon, in range") }
        var radius = config.taskDefaults.radius
        if let text = change.radius {
            do {
                radius = try Length.parse(text)
            } catch {
                throw Refusal(description: "radius \(text): \(error)")
            }
            guard radius > 0 else { throw Refusal(description: "radius \(text): must be above 0") }
        }
        var trigger = Trigger.arrive
        if let when = change.when {
            guard let parsed = Trigger(parsing: when) else { throw Refusal(description: "when \(when): use arrive, leave or both") }
            trigger = parsed
        }
        let uid = TaskWriter.newUID()
        do {
            try TaskWriter.create(
                TaskEdits.NewTask(uid: uid, title: title, notes: nil, location: .place(TaskPlace(
                    coordinate: Coordinate(latitude: latitude, longitude: longitude), radius: radius, name: nil), trigger)),
                in: settings, at: Date(), cache: store?.taskLists)
        } catch {
            throw Refusal(description: "task list \(name) (\(settings.location)): \(error)")
        }
        // Its id as the list, read again, gives it.
        let fresh = TaskLists.load(settings, defaults: TaskLists.Defaults(
            template: config.taskDefaults.template, radius: config.taskDefaults.radius, zones: .utc,
            places: config.places, collections: config.collections),
            cache: store?.taskLists)
        return fresh.tasks.first { $0.value.uid == uid }?.key ?? uid
    }

    /// Moves a reminder, renames it or changes its radius.
    static func change(_ change: MapChange, in config: Config) throws(Refusal) {
        let id = try reminderID(change, in: config)
        var setting: [(String, String)] = []
        var removing: Set<String> = []
        if let title = change.title {
            let trimmed = title.trimmingWhitespace()
            guard !trimmed.isEmpty else { throw Refusal(description: "a reminder needs a title") }
            setting.append(("title", ConfigEditor.quote(trimmed)))
        }
        if let radius = change.radius { setting.append(("radius", ConfigEditor.quote(radius))) }
        if change.latitude != nil || change.longitude != nil {
            guard let location = change.location else { throw Refusal(description: "a move gives both lat and lon") }
            guard case .circle = config.reminders.first(where: { $0.id == id })?.geometry else {
                throw Refusal(description: "\(id) is an area: move it in its file")
            }
            // Wherever it was (a named place, lat and lon), it is now at its own point; the
            // named place stays for the reminders that share it.
            setting.append(("location", ConfigEditor.quote(location)))
            removing = ["place", "lat", "lon"]
        }
        guard !setting.isEmpty else { throw Refusal(description: "nothing to change") }
        try edit(config.path) { (bytes) throws(ConfigEditor.EditError) in
            try ConfigEditor.changingReminder(id: id, setting: setting, removing: removing, in: bytes, path: config.path)
        }
    }

    /// Removes a reminder from the config (a task: its file) and forgets its state, as `geoalarm remove` does.
    static func remove(_ change: MapChange, from config: Config, store: StateStore?) throws(Refusal) {
        if let id = change.id, let task = config.taskOrigin(of: id) {
            do {
                try TaskWriter.delete(task, cache: store?.taskLists)
            } catch {
                throw Refusal(description: "task \(task.title) of list \(task.list): \(error)")
            }
        } else {
            let id = try reminderID(change, in: config)
            try edit(config.path) { (bytes) throws(ConfigEditor.EditError) in
                try ConfigEditor.removingReminder(id: id, from: bytes, path: config.path)
            }
        }
        guard let id = change.id else { return }
        do {
            _ = try store?.forget(id)
        } catch {
            // The reminder is gone from the config all the same; only its stale state stays.
            throw Refusal(description: "removed, but its state stays in the state file: \(error)")
        }
    }

    /// What a lifecycle button does to a reminder or collection place.
    enum LifecycleAction: Sendable {
        case complete, uncomplete, snooze
    }

    /// Completes, uncompletes or snoozes (for the change's `seconds`; 0 ends a snooze) a
    /// reminder or collection place, in the state file.
    static func apply(_ action: LifecycleAction, _ change: MapChange, in config: Config, store: StateStore?, now: Date) throws(Refusal) {
        guard let shown = change.id else { throw Refusal(description: "say which reminder: id") }
        // A task's button names the task the page showed: by its key, whatever its id is now.
        guard let given = config.reminderID(of: PressedReminder(id: shown, taskKey: change.taskKey)) else {
            throw Refusal(description: "the task shown as \(DisplayText.escaped(shown)) is no longer in its list (deleted, or moved)")
        }
        let id: String
        switch config.lookUp(given) {
        case .success(let found): id = found.id
        case .failure(let unknown): throw Refusal(description: unknown.description)
        }
        // A task is completed where it lives: its file.
        if let task = config.taskOrigin(of: id), action != .snooze {
            do {
                if action == .complete {
                    try TaskWriter.complete(task, at: now, cache: store?.taskLists)
                } else {
                    try TaskWriter.uncomplete(task, at: now, cache: store?.taskLists)
                }
            } catch {
                throw Refusal(description: "task \(task.title) of list \(task.list): \(error)")
            }
            return
        }
        guard let store else { throw Refusal(description: "there is no state file to write to") }
        do {
            switch action {
            case .complete: try store.lifecycles.complete(id, at: now)
            case .uncomplete: try store.lifecycles.uncomplete(id)
            case .snooze:
                guard let seconds = change.seconds, seconds.isFinite, seconds >= 0, seconds <= Span.maximum else {
                    throw Refusal(description: "a snooze lasts 0 seconds to a year (365 days)")
                }
                // A task at a collection's places is snoozed at all of them; a place shown
                // snoozed with its whole collection is unsnoozed with it.
                let snoozed = config.taskAtPlaces(of: id) ?? id
                if seconds > 0 {
                    try store.lifecycles.snooze(snoozed, until: Lifecycle.snoozeEnd(after: seconds, from: now))
                } else {
                    try store.lifecycles.endSnooze(of: snoozed)
                }
            }
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            throw Refusal(description: "\(error)")
        }
    }

    /// The id of a `[[reminder]]` of the config that the change names.
    private static func reminderID(_ change: MapChange, in config: Config) throws(Refusal) -> String {
        if let id = change.id, let task = config.taskOrigin(of: id) {
            throw Refusal(description: "\(id) is a task of list \(task.list): change its place and title in its task app")
        }
        guard let id = change.id, config.reminders.contains(where: { $0.id == id }) else {
            throw Refusal(description: "no reminder \"\(change.id ?? "")\" in \(config.path) (a collection's places are edited in its file)")
        }
        return id
    }

    private static func edit(_ path: String, _ change: ([UInt8]) throws(ConfigEditor.EditError) -> [UInt8]) throws(Refusal) {
        do {
            try ConfigEditor.edit(path: path, change)
        } catch {
            throw Refusal(description: error.description)
        }
    }
}
