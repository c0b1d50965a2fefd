import FoundationEssentials
import GeoAlarmCore
import GeoAlarmICalendar
import GeoAlarmListCache
import GeoAlarmSystem

/// A `[[tasklist]]` of the config: a synced task list whose location reminders geoalarm fires.
public struct TaskListSettings: Sendable, Equatable {
    /// How `list`, `status`, the map and Home Assistant name it.
    public var name: String
    /// Where its tasks are: a folder, or a server.
    public var source: Source
    /// `geo_tasks`: what a task that has only a place (`GEO`, as tasks.org keeps one) announces;
    /// nil: such tasks are no reminders.
    public var geoTasks: Trigger?
    /// `location_tasks`: what a task without a location alarm or a place announces when its
    /// `LOCATION` (words, as todoman and Thunderbird keep it) names a place of `[places]` or a
    /// `[[collection]]` (any of its places), or is a position; nil: such tasks are no reminders.
    public var locationTasks: Trigger?

    /// Where a list's tasks are.
    public enum Source: Sendable, Equatable {
        /// `vdir`: the folder of its `.ics` files, as vdirsyncer keeps them.
        case vdir(String)
        /// `url`: a CalDAV collection, kept in step by geoalarm itself.
        case server(ServerSettings)
    }

    public init(name: String, folder: String, geoTasks: Trigger? = nil, locationTasks: Trigger? = nil) {
        self.init(name: name, source: .vdir(folder), geoTasks: geoTasks, locationTasks: locationTasks)
    }

    public init(name: String, source: Source, geoTasks: Trigger? = nil, locationTasks: Trigger? = nil) {
        self.name = name
        self.source = source
        self.geoTasks = geoTasks
        self.locationTasks = locationTasks
    }

    /// The folder of a vdir list; nil for a server's.
    public var folder: String? {
        if case .vdir(let folder) = source { folder } else { nil }
    }

    /// Where it is, for messages: its folder, or its server's address.
    public var location: String {
        switch source {
        case .vdir(let folder): folder
        case .server(let server): server.url
        }
    }

    /// The first part of its reminders' ids: its name's slug (`Shopping list` → `shopping-list`).
    public var id: String {
        let slug = Reminder.slug(name)
        return slug.isEmpty ? "tasks" : slug
    }
}

/// A CalDAV collection's `[[tasklist]]` settings: where, as whom, and how often to look.
public struct ServerSettings: Sendable, Equatable {
    /// `url`: the collection (or a server or principal, where the collections are found).
    public var url: String
    public var username: String?
    /// `password_file`: the user's own file (0600); read at each use, so that a fix takes at once.
    public var passwordFile: String?
    /// `password_command`: an argv whose output is the password (a keyring).
    public var passwordCommand: [String]?
    /// `cafile`: the authority the server's certificate must come from.
    public var caFile: String?
    /// `poll`: seconds between looks for changes.
    public var poll: Double

    public static let defaultPoll = 60.0
    /// The shortest `poll`: a server is not asked more often.
    public static let shortestPoll = 10.0

    public init(
        url: String, username: String? = nil, passwordFile: String? = nil, passwordCommand: [String]? = nil, caFile: String? = nil,
        poll: Double = defaultPoll
    ) {
        self.url = url
        self.username = username
        self.passwordFile = passwordFile
        self.passwordCommand = passwordCommand
        self.caFile = caFile
        self.poll = poll
    }

    /// Whether the credentials cross a network unencrypted: a user over plain http to a host other
    /// than this machine (`localhost`, a loopback address).
    public var sendsCredentialsUnencrypted: Bool {
        guard username != nil, url.hasPrefix("http://") else { return false }
        guard let address = try? NetworkAddress(url: Substring(url)) else { return true }
        return !IPAddress.isThisMachine(address.host)
    }
}

extension ServerSettings {
    /// Why `url` cannot name a collection: not http(s), credentials in it, no host, spaces; nil
    /// when it can.
    public static func urlProblem(_ url: String) -> String? {
        guard url.hasPrefix("https://") || url.hasPrefix("http://") else { return "must start with https:// (or http://)" }
        let address: NetworkAddress
        do {
            address = try NetworkAddress(url: Substring(url))
        } catch {
            return error.description
        }
        if address.userInfo != nil { return "must not hold credentials: use username and password_file (or password_command)" }
        if address.host.isEmpty { return "has no host" }
        if url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
            return "has spaces or control characters in it: write a space as %20"
        }
        if url.contains("#") || url.contains("?") { return "must not have a query or a fragment" }
        return nil
    }
}

/// Where a task lives: for writing its completion back, and for `uncomplete` and `remove`.
public struct TaskOrigin: Sendable, Equatable {
    /// The list's name.
    public var list: String
    /// Its file, when the list is a vdir; its address on the server, when it is a server's.
    public var path: String
    /// Whether it lives on a server (its writes go through the queue of ``TaskListCache``).
    public var isOnServer = false
    public var uid: String
    public var title: String
    /// Completed or cancelled: it fires nothing.
    public var isClosed: Bool
}

/// A task list read: its reminders and time alarms, where each task lives, and the tasks and
/// files passed over with why.
public struct TaskListLoad: Sendable {
    public var settings: TaskListSettings
    public var reminders: [Reminder] = []
    /// Tasks whose `LOCATION` names a `[[collection]]`: each the collection's places under the
    /// task's id and title (place `n` is `ID/n`).
    public var collections: [ReminderCollection] = []
    /// The id of the `[[collection]]` each of ``collections`` takes its places from, by its id.
    public var placesOf: [String: String] = [:]
    public var alarms: [TimeAlarm] = []
    /// Every task read (closed ones too), by id: the id of its first reminder, or the id it would have.
    public var tasks: [String: TaskOrigin] = [:]
    /// The task of each reminder and time alarm whose id is not its task's own (`ID-2`, `ID/time-1`), by that id.
    var taskOfID: [String: String] = [:]
    /// Each problem, with its file: a task passed over, or part of one.
    public var problems: [String] = []
    /// Why the list could not be read at all; nil when it was.
    public var failure: String?
    /// How many objects were read.
    public var objectCount = 0
    /// False for a server's list of which there is no copy yet (never fetched): no reminders, no failure.
    public var isFetched = true

    /// "task list Shopping (/home/ana/.local/share/tasks/shopping): 12 reminders and 2 time
    /// alarms from 40 tasks, 1 problem" (its problems are logged before it).
    public var summary: String {
        if let failure { return "task list \(settings.name) (\(settings.location)): \(failure)" }
        if !isFetched { return "task list \(settings.name) (\(settings.location)): not fetched from its server yet" }
        var text = "task list \(settings.name) (\(settings.location)): " + DisplayText.counted(reminders.count, "reminder")
        if !collections.isEmpty { text += ", " + DisplayText.counted(collections.count, "task") + " at a collection's places" }
        if !alarms.isEmpty { text += " and " + DisplayText.counted(alarms.count, "time alarm") }
        text += " from " + DisplayText.counted(objectCount, "task")
        if !problems.isEmpty { text += ", " + DisplayText.counted(problems.count, "problem") }
        return text
    }

    /// The origin of task `id` (a reminder's, a time alarm's, a place's of a task at a
    /// collection's places, or a closed task's): only an id the list gave, never one that merely
    /// begins with a task's (another task's id may, `errands/ab-2` beside `errands/ab`).
    public func origin(of id: String) -> TaskOrigin? {
        if let origin = tasks[id] { return origin }
        if let task = taskOfID[id] { return tasks[task] }
        // A place of a task at a collection's places belongs to its task.
        guard let collection = collections.first(where: { $0.memberIndex(of: id) != nil }) else { return nil }
        return tasks[collection.id]
    }
}

/// Reads task lists into reminders: every task with an arrive or depart location alarm (Apple's
/// `X-APPLE-PROXIMITY`, or RFC 9074's `PROXIMITY`) at each of its places, its time alarms as
/// time alarms, with `geo_tasks` a task that has only a `GEO`, and with `location_tasks` one
/// whose `LOCATION` names a place or a collection of the config, or is a position.
public enum TaskLists {
    /// The most places that tasks at collections' places watch, all lists together (each place
    /// a fence of its own, a million what the engine is measured at): a task beyond is passed over.
    public static let maximumTaskPlaces = 1_000_000

    /// What a task's reminders share (from the config's `[defaults]`), how their times are read,
    /// and the config's places.
    public struct Defaults: Sendable {
        /// Hysteresis, dwell, alert, approach, repetition; its id, title and geometry are replaced.
        public var template: Reminder
        /// Metres, for a place that gives no radius.
        public var radius: Double
        /// How its times are read.
        public var zones: ICalendarZones
        /// The config's `[places]`, for a task whose `LOCATION` names one.
        let places: NamedPlaces
        /// The config's `[[collection]]`s, for a task whose `LOCATION` names one ("Supermarkets":
        /// any of its places).
        let collections: [ReminderCollection]

        public init(
            template: Reminder, radius: Double, zones: ICalendarZones, places: [String: Coordinate] = [:],
            collections: [ReminderCollection] = []
        ) {
            self.template = template
            self.radius = radius
            self.zones = zones
            self.places = NamedPlaces(places)
            self.collections = collections
        }
    }

    /// Reads the list of `settings`: its vdir, or the copy `cache` keeps of its server's.
    public static func load(_ settings: TaskListSettings, defaults: Defaults, cache: (any TaskListCache)? = nil) -> TaskListLoad {
        switch settings.source {
        case .vdir(let folder):
            let contents: Vdir.Contents
            do {
                contents = try Vdir(folder: folder).read()
            } catch {
                var load = TaskListLoad(settings: settings)
                load.failure = "cannot read the folder: \(error.reason)"
                return load
            }
            var load = read(contents.objects.map { ($0.path, $0.bytes) }, settings: settings, defaults: defaults)
            load.problems = contents.problems.map { "\($0.path): \($0.reason)" } + load.problems
            return load
        case .server(let server):
            let cached: CachedList?
            do {
                cached = try cache?.cachedList(settings.name)
            } catch {
                var load = TaskListLoad(settings: settings)
                load.failure = "its copy cannot be read: \(error)"
                return load
            }
            // A copy of another collection (the url changed since) is not this list's.
            guard let cached, ServerAddress.collection(cached.url) == ServerAddress.collection(server.url) else {
                var load = TaskListLoad(settings: settings)
                load.isFetched = false
                return load
            }
            var load = read(cached.objects.sorted { $0.key < $1.key }.map { ($0.key, $0.value.bytes) }, settings: settings, defaults: defaults)
            for id in load.tasks.keys { load.tasks[id]?.isOnServer = true }
            return load
        }
    }

    /// The reminders of `objects` (each a file's path and bytes).
    public static func read(_ objects: [(path: String, bytes: [UInt8])], settings: TaskListSettings, defaults: Defaults) -> TaskListLoad {
        var load = TaskListLoad(settings: settings)
        load.objectCount = objects.count
        // Problems by the file's place in `objects`, so that each file's are said together.
        var problems: [(file: Int, text: String)] = []
        var filesOfUID: [String: String] = [:]
        var tasks: [(file: Int, path: String, task: TaskObject)] = []
        for (file, (path, bytes)) in objects.enumerated() {
            let calendar: Component
            do {
                calendar = try ICalendarReader.read(bytes)
            } catch {
                problems.append((file, "\(path): \(error)"))
                continue
            }
            // An object holds one task (and perhaps its occurrences' overrides, which share its
            // UID); a file of events is another collection's, passed over.
            for todo in calendar.components("VTODO") where todo.property("RECURRENCE-ID") == nil {
                let task: TaskObject
                do {
                    task = try TaskObject(todo)
                } catch {
                    problems.append((file, "\(path): \(error)"))
                    continue
                }
                if let first = filesOfUID[task.uid] {
                    problems.append((file, "\(path): the task \(DisplayText.escaped(task.uid)) is in \(first) already: passed over"))
                    continue
                }
                filesOfUID[task.uid] = path
                tasks.append((file, path, task))
            }
        }
        let ids = taskIDs(tasks.map(\.task.uid), list: settings.id)
        for (file, path, task) in tasks {
            let id = ids[task.uid] ?? settings.id
            load.tasks[id] = TaskOrigin(
                list: settings.name, path: path, uid: task.uid, title: title(of: task), isClosed: task.isClosed)
            for problem in task.problems { problems.append((file, "\(path): \(problem)")) }
            guard !task.isClosed else { continue }
            let before = load.problems.count
            add(task, id: id, path: path, settings: settings, defaults: defaults, to: &load)
            for problem in load.problems[before...] { problems.append((file, problem)) }
            load.problems.removeSubrange(before...)
        }
        load.problems = problems.enumerated().sorted { ($0.element.file, $0.offset) < ($1.element.file, $1.offset) }.map(\.element.text)
        return load
    }

    /// A task's reminders and time alarms.
    private static func add(
        _ task: TaskObject, id: String, path: String, settings: TaskListSettings, defaults: Defaults, to load: inout TaskListLoad
    ) {
        /// Says why part of the task is not used, with its file and UID.
        func problem(_ why: String) {
            load.problems.append("\(path): task \(DisplayText.escaped(task.uid)): \(why)")
        }
        var template = defaults.template
        template.title = title(of: task)
        template.notes = task.description.flatMap { $0.isEmpty ? nil : $0 }
        template.schedule.starts = task.start?.localDate(in: defaults.zones)
        // A location alarm fires whatever the due date, as Reminders does: the overdue bread is still bought.
        template.schedule.due = task.due?.localDate(in: defaults.zones)
        template.schedule.fireWhenOverdue = true
        // A task is done when its owner says so (Done, or its app): `repeat = once` does not complete it.
        if case .once = template.schedule.repetition { template.schedule.repetition = .always }
        // Each place once, with every trigger its alarms give it.
        var places: [(place: TaskPlace, trigger: Trigger)] = []
        for alarm in task.alarms {
            switch alarm.kind {
            case .place(let trigger, let alarmPlaces):
                for place in alarmPlaces {
                    if let index = places.firstIndex(where: { $0.place.isSamePlace(as: place) }) {
                        if places[index].trigger != trigger { places[index].trigger = .both }
                    } else {
                        places.append((place, trigger))
                    }
                }
            case .vehicle(let link, let line):
                // Said for open tasks only: a done car reminder is nothing to report.
                let moment = link == .connect ? "getting into a car" : "getting out of a car"
                problem("line \(line): a \(link.rawValue) alarm is for \(moment), not a place: passed over")
            case .time:
                continue
            }
        }
        if places.isEmpty, let trigger = settings.geoTasks, let geo = task.geo {
            places.append((TaskPlace(coordinate: geo, radius: nil, name: nil), trigger))
        }
        if places.isEmpty, let trigger = settings.locationTasks, let words = task.location {
            if let named = defaults.places.place(named: words) {
                places.append((TaskPlace(coordinate: named.coordinate, radius: nil, name: named.key), trigger))
            } else if let collection = ReminderCollection.named(words, among: defaults.collections) {
                // "Supermarkets": at any of them. Each place keeps its own size; the task gives
                // the rest, as it does to a place of its own.
                var shared = template
                shared.id = id
                shared.trigger = trigger
                shared.taskKey = task.uid
                load.collections.append(ReminderCollection(id: id, template: shared, places: collection.places, titleNamesPlace: false))
                load.placesOf[id] = collection.id
            } else if case .success(let point) = ReminderRules.parseLocation(words) {
                // A position pasted into the app's location field, as a map copies it.
                places.append((TaskPlace(coordinate: point, radius: nil, name: nil), trigger))
            } else {
                problem("LOCATION \"\(DisplayText.excerpt(words.utf8))\" is no place of [places], no [[collection]] nor a position: passed over")
            }
        }
        for (number, entry) in places.enumerated() {
            var reminder = template
            reminder.id = number == 0 ? id : "\(id)-\(number + 1)"
            let radius = entry.place.radius ?? defaults.radius
            guard radius.isFinite, radius > 0, radius <= Length.maximum else {
                problem("a radius of \(ReminderRules.plain(radius)) m: passed over")
                continue
            }
            reminder.geometry = .circle(center: entry.place.coordinate, radius: radius)
            reminder.placeName = entry.place.name
            reminder.trigger = entry.trigger
            reminder.taskKey = number == 0 ? task.uid : "\(task.uid)-\(number + 1)"
            if number > 0 { load.taskOfID[reminder.id] = id }
            load.reminders.append(reminder)
        }
        var timeNumber = 0
        for alarm in task.alarms {
            guard case .time(let trigger) = alarm.kind else { continue }
            let moment: Date
            switch trigger {
            case .at(let time):
                moment = time.moment(in: defaults.zones)
            case .fromStart(let seconds):
                guard let anchor = task.start ?? task.due else {
                    problem("a time alarm from its start, and it has none")
                    continue
                }
                moment = anchor.moment(in: defaults.zones).addingTimeInterval(seconds)
            case .fromDue(let seconds):
                guard let anchor = task.due else {
                    problem("a time alarm from its due time, and it has none")
                    continue
                }
                moment = anchor.moment(in: defaults.zones).addingTimeInterval(seconds)
            }
            timeNumber += 1
            load.taskOfID["\(id)/time-\(timeNumber)"] = id
            load.alarms.append(TimeAlarm(
                id: "\(id)/time-\(timeNumber)", title: template.title, notes: template.notes, at: .instant(moment),
                alert: defaults.template.alert, taskKey: "\(task.uid)/time-\(timeNumber)"))
        }
    }

    private static func title(of task: TaskObject) -> String {
        task.summary.isEmpty ? "Untitled task" : task.summary
    }

    /// Each task's id: the list's id and the first eight letters and digits of its UID, lower
    /// case (`shopping/9710d97c`); where two would share one, the whole UID's; where even those
    /// are one (UIDs apart only in other characters), numbered in the order of the UIDs.
    public static func taskIDs(_ uids: [String], list: String) -> [String: String] {
        func short(_ uid: String) -> String { String(token(uid).prefix(8)) }
        var counts: [String: Int] = [:]
        for uid in uids { counts[short(uid), default: 0] += 1 }
        var ids: [String: String] = [:]
        var taken: [String: Int] = [:]
        for uid in uids.sorted() {
            var part = counts[short(uid)] == 1 ? short(uid) : token(uid)
            if part.isEmpty { part = "task" }
            let seen = taken[part, default: 0]
            taken[part] = seen + 1
            ids[uid] = "\(list)/\(part)" + (seen > 0 ? "-\(seen + 1)" : "")
        }
        return ids
    }

    /// A UID's letters and digits, lower case.
    private static func token(_ uid: String) -> String {
        String(uid.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }.map(Character.init))
            .lowercased()
    }
}
