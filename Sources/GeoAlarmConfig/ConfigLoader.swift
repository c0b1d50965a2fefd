import FoundationEssentials
import GeoAlarmCore
import GeoAlarmMQTT
import GeoAlarmSystem
import GeoAlarmTasks
import GeoAlarmTOML

/// Reads and validates a reminders file, collecting every problem rather than stopping at the first.
public enum ConfigLoader {
    /// Reads the file at `path`, and its task lists: vdirs from their folders, servers' lists
    /// from `taskCache` (their copies in the state file; fetching them is the caller's). A config
    /// with `exec` hooks or a `password_command` that others could change is refused (see
    /// ``FileSafety``).
    public static func load(path: String, taskCache: (any TaskListCache)? = nil) throws(ConfigError) -> Config {
        var config = try read(path: path)
        config.loadTaskLists(cache: taskCache)
        return config
    }

    /// Reads the file at `path` without its task lists (``Config/loadTaskLists(cache:)`` reads
    /// them, once their servers' copies are fetched).
    public static func read(path: String) throws(ConfigError) -> Config {
        let bytes: [UInt8]
        do {
            bytes = try UserFile.contents(of: path, limit: UserFile.configLimit)
        } catch {
            throw ConfigError([ConfigDiagnostic(file: path, message: "cannot read: \(error)")])
        }
        let config = try parse(bytes, path: path)
        if config.hasExecHooks || config.hasPasswordCommands, let problem = FileSafety.configProblem(path) {
            throw ConfigError([ConfigDiagnostic(file: path, message: "refused: \(problem)")])
        }
        return config
    }

    /// Validates `text`; `path` is only used to name the file in diagnostics.
    public static func parse(_ text: String, path: String) throws(ConfigError) -> Config {
        try parse(Array(text.utf8), path: path)
    }

    /// Validates the bytes of a reminders file; `path` is only used to name the file in diagnostics.
    public static func parse(_ bytes: [UInt8], path: String) throws(ConfigError) -> Config {
        let document = try document(bytes, path: path)
        var reader = ConfigReader(file: path, document: document)
        let config = reader.read(document.root)
        guard reader.diagnostics.isEmpty else { throw ConfigError(reader.diagnostics) }
        return config
    }

    /// The ids the reminders, time alarms, collections and task lists of a valid file take
    /// (``Config/takenIDs``), read without its collections' files, so that choosing a new id
    /// beside a million places does not read them.
    public static func takenIDs(_ bytes: [UInt8], path: String) throws(ConfigError) -> Set<String> {
        let document = try document(bytes, path: path)
        var reader = ConfigReader(file: path, document: document, readsCollectionFiles: false)
        let config = reader.read(document.root)
        guard reader.diagnostics.isEmpty else { throw ConfigError(reader.diagnostics) }
        return config.takenIDs
    }

    /// The parsed TOML of a reminders file, or its syntax error with line and column.
    public static func document(_ bytes: [UInt8], path: String) throws(ConfigError) -> TOMLDocument {
        do {
            return try TOML.parse(bytes)
        } catch {
            let (line, column) = TOMLDocument.position(of: error.offset, in: bytes, lineStarts: TOMLDocument.lineStarts(of: bytes))
            throw ConfigError([ConfigDiagnostic(file: path, line: line, column: column, message: error.message)])
        }
    }
}

/// Settings applied to reminders that do not give their own.
struct ReminderDefaults {
    var radius = 100.0
    var hysteresis = 25.0
    var dwell = 0.0
    var alert = ReminderAlert()
    var repetition = Repeat.always
    var approach = ApproachRule()
}

/// Walks the parsed TOML tables, building the config and recording diagnostics.
struct ConfigReader: TableReading {
    let file: String
    /// The parsed file, for the lines problems are reported at.
    let document: TOMLDocument
    var diagnostics: [ConfigDiagnostic] = []
    /// What is valid but likely not meant (``Config/warnings``).
    var warnings: [ConfigDiagnostic] = []
    /// False reads each collection's id and settings but not its file of places.
    let readsCollectionFiles: Bool

    static let topLevelKeys = ["defaults", "places", "reminder", "collection", "tasklist", "gpsd", "output", "history", "mqtt", "map"]
    static let taskListKeys = ["name", "vdir", "url", "username", "password_file", "password_command", "cafile", "poll", "geo_tasks", "location_tasks"]
    static let mapKeys = ["tiles", "attribution"]
    static let historyKeys = ["keep"]
    static let gpsdKeys = ["host", "port"]
    static let outputKeys = ["notify", "hook_timeout", "snooze"]
    static let alertKeys = ["urgency", "icon", "timeout", "exec"]
    static let scheduleKeys = ["repeat", "active", "due", "starts", "fire_when_overdue"]
    static let defaultsKeys = [
        "radius", "hysteresis", "dwell", "max_error", "confirmations", "announce_initial", "repeat", "approach_within", "approach_eta",
    ]
        + alertKeys
    static let activeKeys = ["days", "from", "to"]
    static let placeKeys = ["lat", "lon"]
    static let reminderKeys = [
        "id", "title", "notes", "lat", "lon", "place", "location", "area", "area_feature", "polygon", "radius",
        "hysteresis", "dwell", "when", "enabled", "at", "approach_within", "approach_eta",
    ] + alertKeys + scheduleKeys
    /// The keys that say where a reminder is.
    static let whereKeys = ["lat", "lon", "place", "location", "area", "area_feature", "polygon"]
    static let collectionKeys = [
        "id", "file", "format", "title", "notes", "radius", "hysteresis", "dwell", "when", "enabled",
    ] + alertKeys + scheduleKeys
    /// Keys that only mean something for a reminder with a place.
    static let placeOnlyKeys = [
        "radius", "hysteresis", "dwell", "when", "active", "due", "starts", "repeat", "fire_when_overdue", "approach_within", "approach_eta",
    ]

    init(file: String, document: TOMLDocument, readsCollectionFiles: Bool = true) {
        self.file = file
        self.document = document
        self.readsCollectionFiles = readsCollectionFiles
    }

    mutating func read(_ root: TOMLTable) -> Config {
        checkKeys(of: root, allowed: Self.topLevelKeys, context: "top level")
        var settings = EngineSettings()
        var defaults = ReminderDefaults()
        if let table = table(root, "defaults", context: "top level") {
            readDefaults(table, settings: &settings, defaults: &defaults)
        }
        var places: [String: Coordinate] = [:]
        if let table = table(root, "places", context: "top level") {
            for name in table.keys.sorted() {
                if let place = readPlace(name: name, value: table[name]!) { places[name] = place }
            }
        }
        var reminders: [Reminder] = []
        var alarms: [TimeAlarm] = []
        var order: [String] = []
        var usedIDs: [String: String] = [:]
        if let value = root["reminder"] {
            if let array = value.array {
                for (offset, element) in array.enumerated() {
                    let number = offset + 1
                    guard let table = element.table else {
                        report(in: root, "reminder (#\(number))", nil, "must be a table ([[reminder]])")
                        continue
                    }
                    switch readReminder(table, number: number, defaults: defaults, places: places, usedIDs: &usedIDs) {
                    case .place(let reminder)?:
                        reminders.append(reminder)
                        order.append(reminder.id)
                    case .time(let alarm)?:
                        alarms.append(alarm)
                        order.append(alarm.id)
                    case nil: break
                    }
                }
            } else {
                report(in: root, "top level", "reminder", "must be an array of tables: write each one as [[reminder]]")
            }
        }
        var config = Config(path: file, settings: settings, places: places, reminders: reminders)
        if let value = root["collection"] {
            if let array = value.array {
                for (offset, element) in array.enumerated() {
                    guard let table = element.table else {
                        report(in: root, "collection (#\(offset + 1))", nil, "must be a table ([[collection]])")
                        continue
                    }
                    guard let (collection, load) = readCollection(table, number: offset + 1, defaults: defaults, usedIDs: &usedIDs)
                    else { continue }
                    config.collections.append(collection)
                    config.collectionLoads.append(load)
                }
            } else {
                report(in: root, "top level", "collection", "must be an array of tables: write each one as [[collection]]")
            }
        }
        config.alarms = alarms
        config.idsInFileOrder = order
        if let value = root["tasklist"] {
            if let array = value.array {
                for (offset, element) in array.enumerated() {
                    guard let table = element.table else {
                        report(in: root, "tasklist (#\(offset + 1))", nil, "must be a table ([[tasklist]])")
                        continue
                    }
                    if let settings = readTaskList(table, number: offset + 1, usedIDs: &usedIDs, places: config.places) {
                        config.taskListSettings.append(settings)
                    }
                }
            } else {
                report(in: root, "top level", "tasklist", "must be an array of tables: write each one as [[tasklist]]")
            }
        }
        config.taskDefaults = TaskDefaults(
            template: Reminder(
                id: "", title: "", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: defaults.radius),
                hysteresis: defaults.hysteresis, dwell: defaults.dwell, alert: defaults.alert,
                schedule: ReminderSchedule(repetition: defaults.repetition), approach: defaults.approach),
            radius: defaults.radius)
        if let table = table(root, "gpsd", context: "top level") {
            checkKeys(of: table, allowed: Self.gpsdKeys, context: "gpsd")
            if let port = typed(table, "port", context: "gpsd", expected: "a port number", { $0.int }) {
                if HostAndPort.ports.contains(port) { config.gpsdPort = port } else { report(in: table, "gpsd", "port", "\(port) is not 1-65535") }
            }
            if let host = string(table, "host", context: "gpsd"), let endpoint = gpsdHost(host, in: table) {
                config.gpsdHost = endpoint.host
                if let port = endpoint.port { config.gpsdPort = port }
            }
        }
        if let table = table(root, "history", context: "top level") {
            checkKeys(of: table, allowed: Self.historyKeys, context: "history")
            // A number alone would be seconds: keep = 90 (meant as days) would prune all but the
            // last minute and a half of the history at the next start.
            if let value = table["keep"], value.int != nil || value.string.flatMap({ Double($0.trimmingWhitespace()) }) != nil {
                report(in: table, "history", "keep", "a number alone would be seconds, and the history older pruned: give its unit (\"90d\")")
            } else if let keep = span(table, "keep", context: "history") {
                if keep > 0 { config.historyKeep = keep } else { report(in: table, "history", "keep", "must be above 0") }
            }
        }
        if let table = table(root, "output", context: "top level") {
            checkKeys(of: table, allowed: Self.outputKeys, context: "output")
            config.notify = bool(table, "notify", context: "output") ?? true
            if let timeout = span(table, "hook_timeout", context: "output") {
                if timeout > 0 { config.hookTimeout = timeout } else { report(in: table, "output", "hook_timeout", "must be above 0") }
            }
            if let snooze = span(table, "snooze", context: "output") {
                if snooze >= 60 { config.snooze = snooze } else { report(in: table, "output", "snooze", "must be at least a minute") }
            }
        }
        if let table = table(root, "mqtt", context: "top level") {
            config.mqtt = MQTTSetup.read(table, file: file, reader: &self)
        }
        if let table = table(root, "map", context: "top level") {
            checkKeys(of: table, allowed: Self.mapKeys, context: "map")
            if let tiles = string(table, "tiles", context: "map") {
                // Other tiles come with another credit: OpenStreetMap's is not assumed for them.
                config.map.attribution = ""
                if tiles.isEmpty {
                    config.map.tiles = nil
                } else if let problem = MapSettings.problem(withTiles: tiles) {
                    report(in: table, "map", "tiles", problem)
                } else {
                    config.map.tiles = tiles
                }
            }
            if let attribution = string(table, "attribution", context: "map") { config.map.attribution = attribution }
        }
        config.warnings = warnings
        return config
    }

    // MARK: Sections

    private mutating func readDefaults(
        _ table: TOMLTable, settings: inout EngineSettings, defaults: inout ReminderDefaults
    ) {
        let context = "defaults"
        checkKeys(of: table, allowed: Self.defaultsKeys, context: context)
        if let radius = length(table, "radius", context: context) {
            if radius > 0 {
                defaults.radius = radius
                warnIfTooSmall(radius, in: table, context: context)
            } else {
                report(in: table, context, "radius", "must be above 0")
            }
        }
        if let hysteresis = length(table, "hysteresis", context: context) { defaults.hysteresis = hysteresis }
        if let dwell = span(table, "dwell", context: context) { defaults.dwell = dwell }
        defaults.approach = approach(table, context: context, inheriting: ApproachRule())
        if let maxError = length(table, "max_error", context: context) {
            // 0 is no "no limit": it would pass over every fix that has an error estimate.
            if maxError > 0 {
                settings.maxError = maxError
            } else {
                report(in: table, context, "max_error", "must be above 0 (0 would ignore every fix with an error estimate; no limit is \"20000km\")")
            }
        }
        if let value = table["confirmations"] {
            if let count = value.int, count >= 1, count <= 100 {
                settings.confirmations = count
            } else {
                report(in: table, context, "confirmations", "must be a whole number from 1 to 100")
            }
        }
        if let announce = bool(table, "announce_initial", context: context) { settings.announceInitial = announce }
        defaults.alert = alert(table, context: context, inheriting: defaults.alert)
        defaults.repetition = repetition(table, context: context) ?? defaults.repetition
    }

    private mutating func repetition(_ table: TOMLTable, context: String) -> Repeat? {
        guard let text = string(table, "repeat", context: context) else { return nil }
        guard let parsed = Repeat(parsing: text) else {
            report(in: table, context, "repeat", "\"\(text)\" is not \"always\", \"once\" or a period such as \"12h\" or \"daily\"")
            return nil
        }
        return parsed
    }

    /// repeat, active, due, starts and fire_when_overdue of one reminder.
    private mutating func schedule(_ table: TOMLTable, context: String, defaults: ReminderDefaults) -> ReminderSchedule {
        var schedule = ReminderSchedule(repetition: repetition(table, context: context) ?? defaults.repetition)
        for key in ["due", "starts"] {
            guard let text = typed(table, key, context: context, expected: "a date string such as \"2026-12-24\" or \"2026-12-24T16:00\"", { $0.string }) else { continue }
            guard let date = LocalDate(parsing: text) else {
                report(in: table, context, key, "\"\(text)\" is not a date such as \"2026-12-24\" or \"2026-12-24T16:00\"")
                continue
            }
            if key == "due" { schedule.due = date } else { schedule.starts = date }
        }
        schedule.fireWhenOverdue = bool(table, "fire_when_overdue", context: context) ?? false
        // Silent before starts, and after due unless it fires when overdue: no time to speak.
        if let starts = schedule.starts, let due = schedule.due, !schedule.fireWhenOverdue,
           starts.start(in: FixedOffset.utc) >= due.moment(in: FixedOffset.utc) {
            report(in: table, context, "starts", "\(starts) is not before due (\(due)): the reminder would never speak (unless fire_when_overdue = true)")
        }
        if let active = self.table(table, "active", context: context) {
            schedule.active = activeWindow(active, context: context)
        }
        return schedule
    }

    /// `[gpsd] host`, read as --gpsd reads its value: a name or an address (an IPv6 one with its
    /// brackets or without), a port after it ("localhost:2947") where `port` gives none; nil
    /// (reported) when it is none.
    private mutating func gpsdHost(_ text: String, in table: TOMLTable) -> (host: String, port: Int?)? {
        let shown = DisplayText.escaped(text)
        switch HostAndPort.split(Substring(text)) {
        case .failure(let problem):
            report(in: table, "gpsd", "host", "\(shown) \(problem)")
        case .success(let parts):
            guard !parts.host.isEmpty, !parts.host.contains(where: \.isWhitespace) else {
                report(in: table, "gpsd", "host", "\"\(shown)\" is no host name or address")
                return nil
            }
            guard let portText = parts.port else { return (String(parts.host), nil) }
            guard table["port"] == nil else {
                report(in: table, "gpsd", "host", "\(shown) gives a port, and so does port: give it once")
                return nil
            }
            guard let port = HostAndPort.portNumber(portText) else {
                report(in: table, "gpsd", "host", "\(shown): port \"\(DisplayText.escaped(String(portText)))\" is not 1-65535")
                return nil
            }
            return (String(parts.host), port)
        }
        return nil
    }

    private mutating func activeWindow(_ table: TOMLTable, context: String) -> ActiveWindow? {
        checkKeys(of: table, allowed: Self.activeKeys, context: context)
        var weekdays = Set(1...7)
        if let value = table["days"] {
            let entries = value.array.map { array in (0..<array.count).map { array[$0].string } }
            let given = entries?.compactMap { $0 } ?? []
            guard let entries, !entries.isEmpty, given.count == entries.count else {
                report(in: table, context, "active.days", "must be a list of days such as [\"mon\", \"tue\"] or [\"mon-fri\"]")
                return nil
            }
            weekdays = []
            for name in given {
                guard let days = ActiveWindow.days(named: name) else {
                    report(in: table, context, "active.days", """
                        "\(name)" is not a day: sun, mon, tue, wed, thu, fri, sat (or spelt out), a range such as mon-fri, \
                        weekdays or weekend
                        """)
                    return nil
                }
                weekdays.formUnion(days)
            }
        }
        var minutes: [Int] = []
        for (key, fallback) in [("from", "00:00"), ("to", "24:00")] {
            let text = string(table, key, context: context) ?? fallback
            guard let minute = ActiveWindow.minuteOfDay(text) else {
                report(in: table, context, "active.\(key)", "\"\(text)\" is not a time of day such as \"08:00\"")
                return nil
            }
            minutes.append(minute)
        }
        guard minutes[0] != minutes[1] else {
            report(in: table, context, "active", "from and to are the same time: the window would be empty")
            return nil
        }
        return ActiveWindow(weekdays: weekdays, fromMinute: minutes[0], toMinute: minutes[1])
    }

    /// Urgency, icon, timeout and exec, each taken from `base` when the table does not say.
    private mutating func alert(_ table: TOMLTable, context: String, inheriting base: ReminderAlert) -> ReminderAlert {
        var alert = base
        if let text = string(table, "urgency", context: context) {
            if let urgency = Urgency(rawValue: text.lowercased()) {
                alert.urgency = urgency
            } else {
                report(in: table, context, "urgency", "unknown value \"\(text)\" (use \"low\", \"normal\" or \"critical\")")
            }
        }
        if let icon = string(table, "icon", context: context) { alert.icon = icon.isEmpty ? nil : self.icon(icon, in: table, context: context) }
        if let timeout = span(table, "timeout", context: context) { alert.timeout = timeout }
        if let value = table["exec"] {
            let words = value.array.map { array in (0..<array.count).compactMap { array[$0].string } }
            if let words, let count = value.array?.count, words.count == count, !words.isEmpty, !words[0].isEmpty {
                alert.command = words
            } else {
                report(in: table, context, "exec", "must be a non-empty array of strings: the program and its arguments, e.g. [\"/usr/bin/paplay\", \"bell.oga\"]")
            }
        }
        return alert
    }

    private mutating func readPlace(name: String, value: TOMLValue) -> Coordinate? {
        let context = "place \"\(name)\""
        if let text = value.string {
            return location(text, at: value.keyOffset, context: context, key: "location")
        }
        guard let table = value.table else {
            report(at: value.keyOffset, context, nil, "must be { lat = ..., lon = ... } or a \"LAT,LON\" string")
            return nil
        }
        checkKeys(of: table, allowed: Self.placeKeys, context: context)
        return coordinate(table, context: context, required: true)
    }

    /// A `[[reminder]]` table: a reminder with a place, or a time alarm (`at` and no place).
    enum Entry {
        case place(Reminder)
        case time(TimeAlarm)
    }

    private mutating func readReminder(
        _ table: TOMLTable, number: Int, defaults: ReminderDefaults, places: [String: Coordinate],
        usedIDs: inout [String: String]
    ) -> Entry? {
        let before = diagnostics.count
        let (id, title, context) = identify(table, kind: "reminder", number: number, namedBy: "title", slug: Reminder.slug)

        checkKeys(of: table, allowed: Self.reminderKeys, context: context)
        if title == nil, table["title"] == nil { report(in: table, context, "title", "missing (every reminder needs a title)") }
        if let title, title.trimmingWhitespace().isEmpty { report(in: table, context, "title", "is empty") }
        if let id {
            claim(id, in: table, for: "reminder #\(number)", context: context, usedIDs: &usedIDs, emptyHint: "this title")
        }
        let notes = string(table, "notes", context: context)
        if table["at"] != nil {
            let alarm = timeAlarm(table, context: context, defaults: defaults)
            guard diagnostics.count == before, let id, let title, let at = alarm.at else { return nil }
            return .time(TimeAlarm(id: id, title: title, notes: notes, at: .local(at), alert: alarm.alert, isEnabled: alarm.enabled))
        }
        let (center, placeName, area) = reminderCenter(table, context: context, places: places)
        if area != nil, table["radius"] != nil {
            report(in: table, context, "radius", "does not apply to an area (hysteresis is its margin beyond the edge)")
        }
        var radius = length(table, "radius", context: context) ?? 0
        if radius == 0 { radius = defaults.radius } else { warnIfTooSmall(radius, in: table, context: context) }
        let hysteresis = length(table, "hysteresis", context: context) ?? defaults.hysteresis
        let dwell = span(table, "dwell", context: context) ?? defaults.dwell
        let approach = approach(table, context: context, inheriting: defaults.approach)
        let trigger = self.trigger(table, context: context)
        let enabled = bool(table, "enabled", context: context) ?? true
        let alert = alert(table, context: context, inheriting: defaults.alert)
        let schedule = schedule(table, context: context, defaults: defaults)
        guard diagnostics.count == before, let id, let title, let center else { return nil }
        return .place(Reminder(
            id: id, title: title, notes: notes, geometry: area.map(FenceGeometry.area) ?? .circle(center: center, radius: radius),
            placeName: placeName,
            hysteresis: hysteresis, dwell: dwell, trigger: trigger, isEnabled: enabled, alert: alert,
            schedule: schedule, approach: approach))
    }

    /// `approach_within` (a length) and `approach_eta` (a duration), each above 0, over `inherited`.
    private mutating func approach(_ table: TOMLTable, context: String, inheriting inherited: ApproachRule) -> ApproachRule {
        var rule = inherited
        if let within = length(table, "approach_within", context: context) {
            if within > 0 { rule.within = within } else { report(in: table, context, "approach_within", "must be above 0") }
            // An approach a few metres out is the arrival itself: "2" meant as kilometres.
            if within > 0, within < Self.smallestUsefulApproach {
                warnings.append(diagnostic(
                    in: table, context, "approach_within",
                    "\(Metres.rounded(within)) m ahead of the edge is the arrival itself (a length with its unit: \"2km\")"))
            }
        }
        if let eta = span(table, "approach_eta", context: context) {
            if eta > 0 { rule.eta = eta } else { report(in: table, context, "approach_eta", "must be above 0") }
            if eta > 0, eta < Self.shortestUsefulApproach {
                warnings.append(diagnostic(
                    in: table, context, "approach_eta", "\(Span.spoken(eta)) ahead is the arrival itself (\"10m\" is ten minutes)"))
            }
        }
        return rule
    }

    /// A `[[collection]]` table and the places of its file. `usedIDs` maps the reminder and
    /// collection ids taken so far to who took them.
    /// A `[[tasklist]]`: its name (unique, and its slug no other reminder's or collection's id),
    /// its folder (beside the config when relative), and what a task with only a place announces.
    private mutating func readTaskList(
        _ table: TOMLTable, number: Int, usedIDs: inout [String: String], places: [String: Coordinate]
    ) -> TaskListSettings? {
        let context = "tasklist (#\(number))"
        // "password" has its own message.
        checkKeys(of: table, allowed: Self.taskListKeys + ["password"], context: context)
        let before = diagnostics.count
        if table["password"] != nil {
            report(in: table, context, "password", """
                a password is not written in the config: put it in a file only you can read and name it with password_file, \
                or give password_command
                """)
        }
        let name = string(table, "name", context: context)
        if name == nil, table["name"] == nil { report(in: table, context, "name", "missing: how list, status and the map name the list") }
        if let name, name.trimmingWhitespace().isEmpty { report(in: table, context, "name", "is empty") }
        let folder = string(table, "vdir", context: context)
        if let folder, folder.isEmpty { report(in: table, context, "vdir", "is empty") }
        let server = table["url"] == nil ? nil : readServer(table, context: context)
        if table["url"] != nil, table["vdir"] != nil {
            report(in: table, context, "url", "a list is a vdir or a server's collection, not both: give vdir or url")
        } else if table["url"] == nil {
            for key in ["username", "password_file", "password_command", "cafile", "poll"] where table[key] != nil {
                report(in: table, context, key, "only applies to a list on a server (url)")
            }
            if table["vdir"] == nil {
                report(in: table, context, "vdir", """
                    missing: give the folder of the list's .ics files (vdir, as vdirsyncer keeps it) or its CalDAV \
                    collection (url)
                    """)
            }
        }
        var geoTasks: Trigger?
        if let text = string(table, "geo_tasks", context: context) {
            geoTasks = Trigger(parsing: text)
            if geoTasks == nil { report(in: table, context, "geo_tasks", "unknown value \"\(text)\" (use \"arrive\", \"leave\" or \"both\")") }
        }
        var locationTasks: Trigger?
        if let text = string(table, "location_tasks", context: context) {
            locationTasks = Trigger(parsing: text)
            if locationTasks == nil {
                report(in: table, context, "location_tasks", "unknown value \"\(text)\" (use \"arrive\", \"leave\" or \"both\")")
            } else if places.isEmpty {
                warnings.append(diagnostic(
                    in: table, context, "location_tasks", "there is no [places] table: only a task whose LOCATION is a position is a reminder"))
            }
        }
        guard diagnostics.count == before, let name else { return nil }
        let source: TaskListSettings.Source
        if let server {
            source = .server(server)
        } else if let folder {
            source = .vdir(PathParts.resolve(Self.expandingHome(folder), besides: file))
        } else {
            return nil
        }
        let settings = TaskListSettings(name: name, source: source, geoTasks: geoTasks, locationTasks: locationTasks)
        if let first = usedIDs[settings.id] {
            report(in: table, context, "name", "its reminders' ids would start \"\(settings.id)/\", as those of \(first) do: give it another name")
            return nil
        }
        usedIDs[settings.id] = "task list #\(number)"
        return settings
    }

    /// A `[[tasklist]]`'s server: its collection's address, the credentials and how often to look;
    /// nil (reported) when it cannot be used.
    private mutating func readServer(_ table: TOMLTable, context: String) -> ServerSettings? {
        let before = diagnostics.count
        guard let url = string(table, "url", context: context) else { return nil }
        if let problem = ServerSettings.urlProblem(url) { report(in: table, context, "url", "\(DisplayText.url(url)) \(problem)") }
        var server = ServerSettings(url: url)
        if let username = string(table, "username", context: context) {
            if username.isEmpty || username.contains(where: \.isNewline) || username.contains("\u{0}") {
                report(in: table, context, "username", "must be one line of text")
            }
            server.username = username
        }
        if let passwordFile = string(table, "password_file", context: context) {
            let resolved = PathParts.resolve(Self.expandingHome(passwordFile), besides: file)
            // Read at each use (a fixed file takes at once), so only its rights are checked here.
            if case .failure(let problem) = PasswordFile.read(resolved), problem.isAboutRights {
                report(in: table, context, "password_file", "\(resolved): \(problem.message)")
            }
            server.passwordFile = resolved
        }
        if let value = table["password_command"] {
            let words = value.array.map { array in (0..<array.count).compactMap { array[$0].string } }
            if let words, let count = value.array?.count, words.count == count, !words.isEmpty, !words[0].isEmpty {
                server.passwordCommand = words
            } else {
                report(in: table, context, "password_command", """
                    must be a non-empty array of strings: the program that prints the password and its arguments, \
                    e.g. ["secret-tool", "lookup", "service", "nextcloud"]
                    """)
            }
        }
        if server.passwordFile != nil, server.passwordCommand != nil {
            report(in: table, context, "password_command", "give password_file or password_command, not both")
        }
        if server.username == nil, server.passwordFile != nil || server.passwordCommand != nil {
            report(in: table, context, "username", "missing: a password needs a username")
        }
        if let cafile = string(table, "cafile", context: context) {
            let resolved = PathParts.resolve(Self.expandingHome(cafile), besides: file)
            if !url.hasPrefix("https://") { report(in: table, context, "cafile", "only applies to an https:// url") }
            if ((try? System.fileStatus(resolved)) ?? nil) == nil {
                report(in: table, context, "cafile", "\(resolved): no such file")
            } else if let problem = FileSafety.notRegularFileProblem(resolved) {
                report(in: table, context, "cafile", "\(resolved) \(problem)")
            }
            server.caFile = resolved
        }
        if let poll = span(table, "poll", context: context) {
            if poll >= ServerSettings.shortestPoll {
                server.poll = poll
            } else {
                report(in: table, context, "poll", "must be at least \(Int(ServerSettings.shortestPoll))s: a server is not asked more often")
            }
        }
        return diagnostics.count == before ? server : nil
    }

    /// `~/...` as a shell reads it: vdirsyncer's own config writes paths so.
    static func expandingHome(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"], home.hasPrefix("/") else {
            return path
        }
        return home + path.dropFirst()
    }

    private mutating func readCollection(
        _ table: TOMLTable, number: Int, defaults: ReminderDefaults, usedIDs: inout [String: String]
    ) -> (ReminderCollection, CollectionLoad)? {
        let before = diagnostics.count
        let (id, path, context) = identify(table, kind: "collection", number: number, namedBy: "file") { path in
            Reminder.slug(PathParts.stem(path))
        }

        checkKeys(of: table, allowed: Self.collectionKeys, context: context)
        if path == nil, table["file"] == nil { report(in: table, context, "file", "missing: the CSV, GPX or GeoJSON file of places") }
        if let id {
            claim(id, in: table, for: "collection #\(number)", context: context, usedIDs: &usedIDs, emptyHint: "the file name")
        }
        var format: CollectionFormat?
        if let text = string(table, "format", context: context) {
            format = CollectionFormat(rawValue: text.lowercased())
            if format == nil { report(in: table, context, "format", "unknown format \"\(text)\" (use \"csv\", \"gpx\" or \"geojson\")") }
        } else if let path {
            format = CollectionFormat(fileName: path)
            if format == nil { report(in: table, context, "format", "cannot tell from the name \"\(path)\"; give format = \"csv\", \"gpx\" or \"geojson\"") }
        }
        let title = string(table, "title", context: context) ?? "{name}"
        if title.trimmingWhitespace().isEmpty { report(in: table, context, "title", "is empty") }
        var radius = length(table, "radius", context: context) ?? 0
        if radius == 0 { radius = defaults.radius }
        let template = Reminder(
            id: id ?? "", title: title, notes: string(table, "notes", context: context),
            geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: radius),
            hysteresis: length(table, "hysteresis", context: context) ?? defaults.hysteresis,
            dwell: span(table, "dwell", context: context) ?? defaults.dwell,
            trigger: trigger(table, context: context), isEnabled: bool(table, "enabled", context: context) ?? true,
            alert: alert(table, context: context, inheriting: defaults.alert),
            schedule: schedule(table, context: context, defaults: defaults))
        guard diagnostics.count == before, let id, let path, let format else { return nil }
        let resolved = PathParts.resolve(path, besides: file)
        guard readsCollectionFiles else {
            return (ReminderCollection(id: id, template: template, places: []),
                    CollectionLoad(collectionID: id, file: resolved, placeCount: 0, problems: [], problemCount: 0))
        }
        let list: PlaceList
        do {
            list = try CollectionFile.read(path: resolved, format: format, defaultRadius: radius)
        } catch {
            report(in: table, context, "file", "\(resolved): \(error)")
            return nil
        }
        let load = CollectionLoad(
            collectionID: id, file: resolved, placeCount: list.places.count, problems: list.problems,
            problemCount: list.problemCount)
        return (ReminderCollection(id: id, template: template, places: list.places), load)
    }

    /// A table's `id` (else `slug` of the string at `key`), that string, and the context its
    /// problems are reported under: `kind "id" (#number)`. Problems found while reading these
    /// two keys, before the id was known, are moved under that context.
    private mutating func identify(
        _ table: TOMLTable, kind: String, number: Int, namedBy key: String, slug: (String) -> String
    ) -> (id: String?, name: String?, context: String) {
        let before = diagnostics.count
        let name = string(table, key, context: "\(kind) (#\(number))")
        let id = string(table, "id", context: "\(kind) (#\(number))") ?? name.map(slug)
        let context = id.map { "\(kind) \"\(DisplayText.shortened($0))\" (#\(number))" } ?? "\(kind) (#\(number))"
        for index in before..<diagnostics.count { diagnostics[index].context = context }
        return (id, name, context)
    }

    /// Checks an id's form and that no reminder or collection took it before (`usedIDs` maps
    /// ids to who took them), then takes it for `owner`.
    private mutating func claim(
        _ id: String, in table: TOMLTable, for owner: String, context: String, usedIDs: inout [String: String], emptyHint: String
    ) {
        if let first = usedIDs[id] {
            report(in: table, context, "id", "duplicate id \"\(id)\" (first used by \(first))")
        } else {
            usedIDs[id] = owner
        }
        if id.isEmpty {
            report(in: table, context, "id", "cannot be made from \(emptyHint); give it an id")
        } else if !id.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) {
            // Letters of any script: a title in Cyrillic, Greek or Chinese makes its own id
            // ("Купить хлеб" → "купить-хлеб"); spaces, punctuation, controls and emoji do not.
            report(in: table, context, "id", "\"\(id)\" may only hold letters, digits, '-', '_' and '.'")
        } else if let (main, strays) = Lookalikes.mixedWord(in: id) {
            warnings.append(diagnostic(
                in: table, context, "id",
                "\"\(id)\" has \(strays.map(Lookalikes.describe).joined(separator: ", ")) among \(main.rawValue) letters "
                    + "in one word: it is not the id it looks like (a keyboard layout switched halfway?)"))
        }
    }

    /// Warns of a circle smaller than a receiver's error: its fixes may never fall inside it
    /// ("radius = 1" meant as a kilometre). A phone's geofences start at 100 m.
    private mutating func warnIfTooSmall(_ radius: Double, in table: TOMLTable, context: String) {
        guard radius < Self.smallestUsefulRadius else { return }
        warnings.append(diagnostic(
            in: table, context, "radius",
            "\(Metres.rounded(radius)) m is less than a GPS fix's usual error: the place may never count as reached "
                + "(a length with its unit: \"1km\")"))
    }

    /// The radius under which a circle is warned about, in metres.
    static let smallestUsefulRadius = 10.0
    /// The approach distance under which one is warned about, in metres.
    static let smallestUsefulApproach = 50.0
    /// The approach time under which one is warned about, in seconds.
    static let shortestUsefulApproach = 60.0

    /// An icon as the notification server takes it: a themed name as it is ("mark-location"),
    /// an image file (a path, or a name ending in an image's extension) relative to the config's
    /// folder (~/ is the home), which the server would otherwise look up as a name and not
    /// find; one not there is warned about, and the default shows.
    private mutating func icon(_ text: String, in table: TOMLTable, context: String) -> String? {
        let lowered = text.lowercased()
        let isFile = text.contains("/") || [".png", ".svg", ".jpg", ".jpeg", ".gif", ".xpm"].contains { lowered.hasSuffix($0) }
        guard isFile else { return text }
        let resolved = PathParts.resolve(Self.expandingHome(text), besides: file)
        guard System.exists(resolved) else {
            warnings.append(diagnostic(in: table, context, "icon", "\(DisplayText.escaped(resolved)) does not exist: the default icon shows"))
            return nil
        }
        return resolved
    }

    /// `when`: arrive unless the table says otherwise.
    private mutating func trigger(_ table: TOMLTable, context: String) -> Trigger {
        guard let when = string(table, "when", context: context) else { return .arrive }
        guard let parsed = Trigger(parsing: when) else {
            report(in: table, context, "when", "unknown value \"\(when)\" (use \"arrive\", \"leave\" or \"both\")")
            return .arrive
        }
        return parsed
    }

    /// The parts of a time alarm: `at`, with no place and none of the place-only keys.
    private mutating func timeAlarm(
        _ table: TOMLTable, context: String, defaults: ReminderDefaults
    ) -> (at: LocalDate?, alert: ReminderAlert, enabled: Bool) {
        for key in Self.whereKeys where table[key] != nil {
            report(in: table, context, key, "a reminder has a place or an at time, not both")
        }
        for key in Self.placeOnlyKeys where table[key] != nil {
            report(in: table, context, key, "only reminders with a place have this; a time alarm fires once at its time")
        }
        var at: LocalDate?
        if let text = typed(table, "at", context: context, expected: "a date string such as \"2026-12-24T16:00\"", { $0.string }) {
            at = LocalDate(parsing: text)
            if at == nil { report(in: table, context, "at", "\"\(text)\" is not a time such as \"2026-12-24T16:00\"") }
        }
        return (at, alert(table, context: context, inheriting: defaults.alert), bool(table, "enabled", context: context) ?? true)
    }

    /// Where a reminder is: a point (with the `[places]` name it came from), or an area (its
    /// `center` is the area's middle).
    private mutating func reminderCenter(
        _ table: TOMLTable, context: String, places: [String: Coordinate]
    ) -> (Coordinate?, String?, Area?) {
        let given = ["lat/lon": table["lat"] != nil || table["lon"] != nil,
                     "place": table["place"] != nil, "location": table["location"] != nil,
                     "area": table["area"] != nil, "polygon": table["polygon"] != nil]
            .filter(\.value).map(\.key).sorted()
        if table["area_feature"] != nil, table["area"] == nil {
            report(in: table, context, "area_feature", "only applies with area = \"FILE.geojson\"")
        }
        guard given.count == 1 else {
            if given.isEmpty {
                report(in: table, context, "location", "missing: give lat and lon, place, location, area or polygon")
            } else {
                report(in: table, context, given.joined(separator: ", "), "give only one of lat/lon, place, location, area or polygon")
            }
            return (nil, nil, nil)
        }
        switch given[0] {
        case "place":
            guard let name = string(table, "place", context: context) else { return (nil, nil, nil) }
            guard let place = places[name] else {
                let known = places.keys.sorted()
                var message = "unknown place \"\(name)\""
                if let near = Suggestion.closest(to: name, among: known) {
                    message += " (did you mean \"\(near)\"?)"
                } else if known.isEmpty {
                    message += " (there is no [places] table)"
                }
                report(in: table, context, "place", message)
                return (nil, nil, nil)
            }
            return (place, name, nil)
        case "location":
            guard let text = string(table, "location", context: context) else { return (nil, nil, nil) }
            return (location(text, at: table["location"]?.keyOffset, context: context, key: "location"), nil, nil)
        case "area":
            let area = areaFromFile(table, context: context)
            return (area?.center, nil, area)
        case "polygon":
            let area = inlinePolygon(table, context: context)
            return (area?.center, nil, area)
        default:
            return (coordinate(table, context: context, required: true), nil, nil)
        }
    }

    /// `polygon = [[lat, lon], ...]`: one ring, closed by itself, no holes.
    private mutating func inlinePolygon(_ table: TOMLTable, context: String) -> Area? {
        let shape = "an array of [lat, lon] pairs, such as [[38.71, -9.14], [38.72, -9.14], [38.72, -9.13]]"
        guard let pairs = table["polygon"]?.array else {
            report(in: table, context, "polygon", "must be \(shape)")
            return nil
        }
        var ring: [Coordinate] = []
        for index in pairs.indices {
            let pair = pairs[index].array ?? []
            guard pair.count == 2, let latitude = Self.degrees(pair[0]), let longitude = Self.degrees(pair[1]) else {
                report(at: pairs[index].keyOffset, context, "polygon", "point \(index + 1) is not [lat, lon]: it must be \(shape)")
                return nil
            }
            ring.append(Coordinate(latitude: latitude, longitude: longitude))
        }
        do {
            return try Area(polygons: [[ring]])
        } catch {
            report(in: table, context, "polygon", error.description)
            return nil
        }
    }

    /// A number of degrees written as a float or an integer.
    private static func degrees(_ value: TOMLValue) -> Double? {
        value.double ?? value.int.map(Double.init)
    }

    /// `area = "FILE.geojson"` (relative to the config's folder), and `area_feature` to pick
    /// one of several Polygon or MultiPolygon features by its name or id.
    private mutating func areaFromFile(_ table: TOMLTable, context: String) -> Area? {
        guard let path = string(table, "area", context: context) else { return nil }
        let wanted = string(table, "area_feature", context: context)
        let resolved = PathParts.resolve(path, besides: file)
        let features: [(feature: GeoJSONPlaces.Feature, area: Result<Area, GeoJSONPlaces.FeatureProblem>)]
        do {
            features = try GeoJSONPlaces.areas(try UserFile.contents(of: resolved, limit: UserFile.collectionLimit))
        } catch let error as CollectionFileError {
            report(in: table, context, "area", "\(resolved): \(error)")
            return nil
        } catch {
            report(in: table, context, "area", "\(resolved): cannot read: \(error)")
            return nil
        }
        let names = features.map { $0.feature.name ?? $0.feature.propertyID ?? $0.feature.id ?? "line \($0.feature.line)" }
        let listed = names.prefix(10).map { "\"\($0)\"" }.joined(separator: ", ") + (names.count > 10 ? "..." : "")
        let chosen: (feature: GeoJSONPlaces.Feature, area: Result<Area, GeoJSONPlaces.FeatureProblem>)
        if let wanted {
            guard let match = features.first(where: { $0.feature.isNamed(wanted) }) else {
                let known = features.isEmpty ? "it has none" : "it has \(listed)"
                report(in: table, context, "area_feature", "no Polygon or MultiPolygon feature named \"\(wanted)\" in \(resolved) (\(known))")
                return nil
            }
            chosen = match
        } else {
            guard features.count == 1 else {
                report(in: table, context, "area", features.isEmpty
                    ? "\(resolved) has no Polygon or MultiPolygon feature"
                    : "\(resolved) has \(features.count) areas: choose one with area_feature (\(listed))")
                return nil
            }
            chosen = features[0]
        }
        switch chosen.area {
        case .success(let area):
            return area
        case .failure(let problem):
            let name = chosen.feature.name.map { " \"\($0)\"" } ?? ""
            report(in: table, context, "area", "\(resolved):\(chosen.feature.line): feature\(name): \(problem.message)")
            return nil
        }
    }

    // MARK: Typed values

    private mutating func coordinate(_ table: TOMLTable, context: String, required: Bool) -> Coordinate? {
        let latitude = number(table, "lat", context: context, required: required)
        let longitude = number(table, "lon", context: context, required: required)
        var valid = true
        if let latitude, let problem = ReminderRules.latitudeProblem(latitude) {
            report(in: table, context, "lat", problem)
            valid = false
        }
        if let longitude, let problem = ReminderRules.longitudeProblem(longitude) {
            report(in: table, context, "lon", problem)
            valid = false
        }
        guard valid, let latitude, let longitude else { return nil }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    private mutating func location(_ text: String, at offset: Int?, context: String, key: String) -> Coordinate? {
        switch ReminderRules.parseLocation(text) {
        case .success(let coordinate): return coordinate
        case .failure(let error):
            report(at: offset, context, key, error.description)
            return nil
        }
    }

    private mutating func number(_ table: TOMLTable, _ key: String, context: String, required: Bool) -> Double? {
        guard let value = table[key] else {
            if required { report(in: table, context, key, "missing") }
            return nil
        }
        if let int = value.int { return Double(int) }
        if let double = value.double { return double }
        report(in: table, context, key, "must be a number, not \(value.typeDescription)")
        return nil
    }
}
