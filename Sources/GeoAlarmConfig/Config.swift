import GeoAlarmCore
import GeoAlarmListCache
import GeoAlarmSystem
import GeoAlarmTasks
import GeoAlarmTOML

/// Everything a valid reminders file says.
public struct Config: Sendable {
    /// The file it was read from.
    public var path: String
    /// Engine-wide settings from `[defaults]`.
    public var settings: EngineSettings
    /// Named locations from `[places]`.
    public var places: [String: Coordinate]
    /// Every `[[reminder]]` with a place, enabled or not, in file order.
    public var reminders: [Reminder]
    /// Every `[[collection]]`, enabled or not, in file order.
    public var collections: [ReminderCollection] = []
    /// What each collection's file gave: places loaded and rows skipped, in the same order.
    public var collectionLoads: [CollectionLoad] = []
    /// What is valid but likely not meant: an id whose word mixes Latin, Greek and Cyrillic
    /// letters (``Lookalikes``). Logged as warnings wherever the config is loaded.
    public var warnings: [ConfigDiagnostic] = []
    /// Every `[[reminder]]` with an `at` time instead of a place, in file order.
    public var alarms: [TimeAlarm] = []
    /// The ids of all `[[reminder]]` tables, with a place or a time, in file order.
    public var idsInFileOrder: [String] = []
    /// Every id a new reminder may not take: the reminders' and time alarms', the collections'
    /// and the task lists'.
    public var takenIDs: Set<String> {
        Set(idsInFileOrder + collections.map(\.id) + taskListSettings.map(\.id))
    }
    /// `[gpsd] host`, when given.
    public var gpsdHost: String?
    /// `[gpsd] port`, when given.
    public var gpsdPort: Int?
    /// `[location] source`, when given: where `run` takes fixes from without `--source`.
    public var locationSource: LocationSource?
    /// `[output] notify`: false means log only, as `--headless`.
    public var notify: Bool
    /// `[output] hook_timeout`: seconds a command hook may run before it is killed.
    public var hookTimeout: Double = 10
    /// `[output] snooze`: seconds that a pop-up's Snooze button and the map's silence a reminder.
    public var snooze: Double = Config.defaultSnooze
    /// The Snooze buttons' length where the file does not set it: an hour.
    public static let defaultSnooze = 3600.0
    /// `[history] keep`: seconds of event history to keep; nil keeps everything.
    public var historyKeep: Double?
    /// The tables other modules read (``ConfigSection``), by table name: those the file has, of
    /// the kinds it was read with.
    public var sections: [String: any ConfigSection] = [:]
    /// The kinds of section it was read with: a reload reads with the same.
    public var sectionKinds: [any ConfigSection.Type] = []
    /// `[map]`: the tiles `geoalarm map` draws under the reminders.
    public var map: MapSettings = .openStreetMap
    /// Every `[[tasklist]]`, in file order.
    public var taskListSettings: [TaskListSettings] = []
    /// What the lists' reminders share, from `[defaults]`.
    public var taskDefaults = TaskDefaults(
        template: Reminder(id: "", title: "", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100)), radius: 100)
    /// What each list gave (its reminders and time alarms are in ``reminders`` and ``alarms`` too), once loaded.
    public var taskLists: [TaskListLoad] = []

    public init(
        path: String, settings: EngineSettings, places: [String: Coordinate], reminders: [Reminder],
        gpsdHost: String? = nil, gpsdPort: Int? = nil, notify: Bool = true
    ) {
        self.path = path
        self.settings = settings
        self.places = places
        self.reminders = reminders
        self.gpsdHost = gpsdHost
        self.gpsdPort = gpsdPort
        self.notify = notify
    }
}

extension Config {
    /// The settings read only at start that differ in `other` (a reloaded config), as the
    /// config names them: `[gpsd]`, `[location]`, `[output]`'s keys, and every key of the
    /// sections other modules read (`[mqtt]`: a broker, credentials, topics). Empty when a
    /// reload takes everything that changed.
    public func restartOnlyChanges(in other: Config) -> [String] {
        var changed: [String] = []
        if gpsdHost != other.gpsdHost || gpsdPort != other.gpsdPort { changed.append("[gpsd]") }
        if locationSource != other.locationSource { changed.append("[location] source") }
        if notify != other.notify { changed.append("[output] notify") }
        if hookTimeout != other.hookTimeout { changed.append("[output] hook_timeout") }
        if snooze != other.snooze { changed.append("[output] snooze") }
        // Their folders are watched from the start: a list's reminders are read again at every reload all the same.
        if Set(taskListSettings.compactMap(\.folder)) != Set(other.taskListSettings.compactMap(\.folder)) { changed.append("[[tasklist]] vdir (watched)") }
        for name in Set(sections.keys).union(other.sections.keys).sorted() {
            switch (sections[name], other.sections[name]) {
            case (nil, nil): break
            case (nil, _?): changed.append("[\(name)] (added)")
            case (_?, nil): changed.append("[\(name)] (removed)")
            case (let old?, let new?): changed += old.changedKeys(inAny: new).map { "[\(name)] \($0)" }
            }
        }
        return changed
    }

    /// The section of kind `kind`, when the file has it and was read with that kind.
    public func section<Section: ConfigSection>(_ kind: Section.Type) -> Section? {
        sections[kind.tableName] as? Section
    }

    /// The ids of the enabled reminders (of the file and the task lists) whose fence is narrower
    /// than `metres` across its radius: a source accurate to `metres` cannot tell their sides apart.
    public func remindersSmaller(than metres: Double) -> [String] {
        reminders.filter { $0.isEnabled && $0.geometry.circumradius < metres }.map(\.id)
    }

    /// Wi-Fi positioning's usual accuracy (GeoClue's street level, through BeaconDB): tens to
    /// hundreds of metres.
    public static let wifiAccuracy = 100.0

    /// What the pipeline watches.
    public var reminderSet: ReminderSet {
        ReminderSet(reminders: reminders, collections: collections, alarms: alarms, settings: settings, taskKeys: taskKeys)
    }

    /// The id of each task list's reminder, time alarm and task at a collection's places, by its
    /// key (``GeoAlarmCore/Reminder/taskKey``).
    public var taskKeys: [String: String] {
        var keys: [String: String] = [:]
        for list in taskLists {
            let keyed = list.reminders.map { ($0.taskKey, $0.id) } + list.collections.map { ($0.template.taskKey, $0.id) }
                + list.alarms.map { ($0.taskKey, $0.id) }
            for case (let key?, let id) in keyed { keys[key] = id }
        }
        return keys
    }

    /// The id a button pressed for `pressed` acts on now: a task's is found by its key, so that
    /// the button acts on the task it showed, never on another that came to take its id
    /// meanwhile (a member of a shared list added one whose UID begins as this one's); a place
    /// of a task at a collection's places is the same place of it. Nil when its task is no
    /// longer in its list.
    public func reminderID(of pressed: PressedReminder) -> String? {
        guard let key = pressed.taskKey else { return pressed.id }
        guard let now = taskKeys[key] else { return nil }
        guard now != pressed.id, collections.contains(where: { $0.id == now }) else { return now }
        return ReminderCollection.placeNumber(of: pressed.id).map { "\(now)/\($0)" } ?? now
    }

    public var hasExecHooks: Bool {
        reminders.contains { !$0.alert.command.isEmpty } || collections.contains { !$0.template.alert.command.isEmpty }
            || alarms.contains { !$0.alert.command.isEmpty }
    }

    /// Whether a task list's password comes from a command (run as the user, as a hook is).
    public var hasPasswordCommands: Bool {
        taskListSettings.contains { if case .server(let server) = $0.source { server.passwordCommand != nil } else { false } }
    }

    /// Whether credentials go to a server the config names (a task list's user, or a section's
    /// such as the broker's): whoever can rewrite the config can point them at a server of theirs.
    public var sendsCredentials: Bool {
        sections.values.contains { $0.sendsCredentials } || serverTaskLists.contains { $0.server.username != nil }
    }

    /// What the config holds that another user must not be able to change, for the message that
    /// refuses a file they can write ("exec hooks and a password_command"); nil: nothing such.
    public var whatOthersMustNotChange: String? {
        let held = [
            hasExecHooks ? "exec hooks" : nil, hasPasswordCommands ? "a password_command" : nil,
            sendsCredentials ? "credentials for a server (its url and password_file)" : nil,
        ].compactMap { $0 }
        return held.isEmpty ? nil : held.joined(separator: " and ")
    }

    /// The task lists on servers: what the agent keeps in step, and what commands fetch.
    public var serverTaskLists: [(settings: TaskListSettings, server: ServerSettings)] {
        taskListSettings.compactMap { if case .server(let server) = $0.source { ($0, server) } else { nil } }
    }
}

/// A config file that cannot be used, with every problem found in it.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [ConfigDiagnostic]

    public init(_ diagnostics: [ConfigDiagnostic]) {
        self.diagnostics = diagnostics
    }

    public var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }
}

/// How a `[[collection]]`'s file loaded: rows skipped (as warnings, not errors) and places kept.
public struct CollectionLoad: Sendable {
    public var collectionID: String
    /// The collection file, as resolved.
    public var file: String
    public var placeCount: Int
    /// The first rows skipped (see ``PlaceList/keptProblems``).
    public var problems: [PlaceProblem]
    /// Every row skipped.
    public var problemCount: Int

    /// `FILE:LINE: message` for each kept problem, then a line saying how many more were skipped.
    public var shownProblems: [String] {
        var lines = problems.map { DisplayText.escaped("\(file):\($0.line): \($0.message); row skipped") }
        if problemCount > problems.count {
            lines.append(DisplayText.escaped("\(file): \(DisplayText.counted(problemCount - problems.count, "more bad row")) skipped"))
        }
        return lines
    }

    /// "collection "cameras": 999998 places from FILE (2 bad rows skipped)".
    public var summary: String {
        "collection \"\(collectionID)\": \(DisplayText.counted(placeCount, "place")) from \(DisplayText.escaped(file))"
            + (problemCount == 0 ? "" : " (\(DisplayText.counted(problemCount, "bad row")) skipped)")
    }
}

/// What a task list's reminders share, from the config's `[defaults]`.
public struct TaskDefaults: Sendable {
    /// Hysteresis, dwell, alert, repetition and approach of every task's reminder.
    public var template: Reminder
    /// Metres, for a place that gives no radius.
    public var radius: Double
}

extension Config {
    /// Reads every task list (a folder, or the copy `cache` keeps of a server's): their reminders and time alarms join the config's (a
    /// task whose id is taken is passed over, said with the others; so is a task at a collection's
    /// places beyond ``TaskLists/maximumTaskPlaces``).
    public mutating func loadTaskLists(cache: (any TaskListCache)? = nil) {
        let defaults = TaskLists.Defaults(
            template: taskDefaults.template, radius: taskDefaults.radius, zones: .system,
            places: places, collections: collections)
        taskLists = taskListSettings.map { TaskLists.load($0, defaults: defaults, cache: cache) }
        var taken = Set(reminders.map(\.id) + alarms.map(\.id) + collections.map(\.id))
        var taskPlaces = 0
        for index in taskLists.indices {
            func kept(_ id: String) -> Bool {
                guard taken.insert(id).inserted else {
                    taskLists[index].problems.append("the id \(id) is taken already: its task is passed over")
                    return false
                }
                return true
            }
            // Each place of a task at a collection's places is a fence of its own.
            func withinLimit(_ collection: ReminderCollection) -> Bool {
                guard taskPlaces + collection.places.count <= TaskLists.maximumTaskPlaces else {
                    taskLists[index].problems.append("""
                        \(collection.id): its \(collection.places.count) places would take the tasks at collections' places past \
                        \(TaskLists.maximumTaskPlaces) in all: its task is passed over
                        """)
                    return false
                }
                taskPlaces += collection.places.count
                return true
            }
            taskLists[index].reminders = taskLists[index].reminders.filter { kept($0.id) }
            taskLists[index].collections = taskLists[index].collections.filter { kept($0.id) && withinLimit($0) }
            reminders += taskLists[index].reminders
            collections += taskLists[index].collections
            alarms += taskLists[index].alarms
        }
    }

    /// The file collection `id`'s places were read from: its own, or, for a task at a
    /// collection's places, that collection's.
    public func placesFile(of id: String) -> String? {
        let source = taskLists.lazy.compactMap { $0.placesOf[id] }.first ?? id
        return collectionLoads.first { $0.collectionID == source }?.file
    }

    /// Whether collection `id` is a task at a collection's places (its list's, not the file's).
    public func isTaskCollection(_ id: String) -> Bool {
        taskLists.contains { $0.placesOf[id] != nil }
    }

    /// The task at a collection's places that `id` is a place of (`errands/1a2b3c4d` for
    /// `errands/1a2b3c4d/2`); nil for any other id. A snooze of such a place is its task's.
    public func taskAtPlaces(of id: String) -> String? {
        ReminderCollection.collectionID(ofPlace: id).flatMap { isTaskCollection($0) ? $0 : nil }
    }

    /// Where the task `id` names lives (a task list's reminder, time alarm, or a closed task).
    public func taskOrigin(of id: String) -> TaskOrigin? {
        for list in taskLists {
            if let origin = list.origin(of: id) { return origin }
        }
        return nil
    }

    /// What an id on a command line or from the map names: a `[[reminder]]` (with a place or a
    /// time), a collection's place, or a task of a task list, with its title.
    public func lookUp(_ id: String) -> Result<(id: String, title: String), UnknownID> {
        for collection in collections {
            if let place = collection.memberIndex(of: id) { return .success((id, collection.member(place).title)) }
        }
        if let origin = taskOrigin(of: id) {
            let title = reminders.first { $0.id == id }?.title ?? alarms.first { $0.id == id }?.title ?? origin.title
            return .success((id, title))
        }
        guard idsInFileOrder.contains(id) else { return .failure(UnknownID(id: id, config: self)) }
        let title = reminders.first { $0.id == id }?.title ?? alarms.first { $0.id == id }?.title ?? id
        return .success((id, title))
    }

    /// The ids of the reminders and time alarms whose title is `text` (case and the white space
    /// around it aside).
    func ids(titled text: String) -> [String] {
        let wanted = text.trimmingWhitespace().lowercased()
        return reminders.filter { $0.title.lowercased() == wanted }.map(\.id) + alarms.filter { $0.title.lowercased() == wanted }.map(\.id)
    }

    /// An id that names nothing in the config: said with the id it is the title of, or the
    /// nearest id when it looks like a typo of one, and the ids there are (a collection's as a
    /// range; the first 30).
    public struct UnknownID: Error, Sendable, CustomStringConvertible {
        public var description: String
        /// How many ids the message names at most.
        static let listed = 30

        init(id: String, config: Config) {
            let shown = DisplayText.escaped(id)
            let looks = Lookalikes.skeleton(id)
            if let collection = config.collections.first(where: { id.hasPrefix($0.id + "/") }) {
                description = "no place \"\(shown)\" in collection \(collection.id) of \(config.path): its places are \(collection.memberIDRange)"
            } else if let twin = config.idsInFileOrder.first(where: { Lookalikes.skeleton($0) == looks }) {
                // Same-looking, different letters: say which, or the two read as one.
                let differing = zip(id.unicodeScalars, twin.unicodeScalars).first { $0 != $1 }
                let letters = differing.map { ": \(Lookalikes.describe($0)) given, \(Lookalikes.describe($1)) in the file" } ?? ""
                description = "no reminder \"\(shown)\" in \(config.path); \"\(twin)\" looks the same but is written with other letters\(letters)"
            } else if case let titled = config.ids(titled: id), !titled.isEmpty {
                // A title given for an id: the id to give, never a guess acted on.
                description = "no reminder \"\(shown)\" in \(config.path); it is the title of \(titled.joined(separator: ", ")): give the id"
            } else {
                let all = config.idsInFileOrder + config.collections.map(\.memberIDRange)
                let near = Suggestion.closest(to: id, among: config.idsInFileOrder).map { " (did you mean \"\($0)\"?)" } ?? ""
                let listed = all.count > Self.listed ? all.prefix(Self.listed) + ["and \(all.count - Self.listed) more (geoalarm list)"] : all
                description = "no reminder \"\(shown)\" in \(config.path)\(near); there are: \(listed.joined(separator: ", "))"
            }
        }
    }
}

/// Where the live agent's own fixes come from (`[location] source`, `run --source`).
public enum LocationSource: String, Sendable, CaseIterable {
    /// gpsd while it gives fixes, else GeoClue (the default).
    case auto
    /// A GPS receiver through gpsd.
    case gpsd
    /// GeoClue2, the desktop's and the phone's location service.
    case geoclue
    /// OwnTracks devices through the `[mqtt]` broker, each tracked apart.
    case owntracks
}
