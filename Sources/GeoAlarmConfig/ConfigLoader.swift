import FoundationEssentials
import GeoAlarmCore
import GeoAlarmListCache
import GeoAlarmSystem
import GeoAlarmTasks
import GeoAlarmTOML

/// Reads and validates a reminders file, collecting every problem rather than stopping at the first.
public enum ConfigLoader {
    /// Reads the file at `path`, and its task lists: vdirs from their folders, servers' lists
    /// from `taskCache` (their copies in the state file; fetching them is the caller's). A config
    /// with `exec` hooks or a `password_command` that others could change is refused (see
    /// ``FileSafety``). The tables of `sections` are handed to their readers; the file's other
    /// tables that other modules read are passed over.
    public static func load(
        path: String, taskCache: (any TaskListCache)? = nil, sections: [any ConfigSection.Type] = []
    ) throws(ConfigError) -> Config {
        var config = try read(path: path, sections: sections)
        config.loadTaskLists(cache: taskCache)
        return config
    }

    /// Reads the file at `path` without its task lists (``Config/loadTaskLists(cache:)`` reads
    /// them, once their servers' copies are fetched).
    public static func read(path: String, sections: [any ConfigSection.Type] = []) throws(ConfigError) -> Config {
        let bytes: [UInt8]
        do {
            bytes = try UserFile.contents(of: path, limit: UserFile.configLimit)
        } catch {
            throw ConfigError([ConfigDiagnostic(file: path, message: "cannot read: \(error)")])
        }
        let config = try parse(bytes, path: path, sections: sections)
        if let held = config.whatOthersMustNotChange, let problem = FileSafety.configProblem(path, holds: held) {
            throw ConfigError([ConfigDiagnostic(file: path, message: "refused: \(problem)")])
        }
        return config
    }

    /// Validates `text`; `path` is only used to name the file in diagnostics.
    public static func parse(_ text: String, path: String, sections: [any ConfigSection.Type] = []) throws(ConfigError) -> Config {
        try parse(Array(text.utf8), path: path, sections: sections)
    }

    /// Validates the bytes of a reminders file; `path` is only used to name the file in diagnostics.
    public static func parse(_ bytes: [UInt8], path: String, sections: [any ConfigSection.Type] = []) throws(ConfigError) -> Config {
        let document = try document(bytes, path: path)
        var reader = ConfigReader(file: path, document: document)
        let config = reader.read(document.root, sections: sections)
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

    /// The top-level tables other modules read (``ConfigSection``): a file that has one is valid
    /// for every reader, those not handed its kind passing it over.
    static let tablesReadElsewhere = ["mqtt"]
    static let topLevelKeys = ["defaults", "places", "reminder", "collection", "tasklist", "gpsd", "location", "output", "history", "map"]
        + tablesReadElsewhere
    static let taskListKeys = ["name", "vdir", "url", "username", "password_file", "password_command", "cafile", "poll", "geo_tasks", "location_tasks"]
    static let mapKeys = ["tiles", "attribution"]
    static let historyKeys = ["keep"]
    static let gpsdKeys = ["host", "port"]
    static let locationKeys = ["source"]
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

    /// The config `root` says, the tables of `sections` handed to their readers.
    mutating func read(_ root: TOMLTable, sections: [any ConfigSection.Type] = []) -> Config {
        checkKeys(of: root, allowed: Self.topLevelKeys + sections.map { $0.tableName }, context: "top level")
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
        let namedPlaces = NamedPlaces(places)
        var reminders: [Reminder] = []
        var alarms: [TimeAlarm] = []
        var order: [String] = []
        var usedIDs: [String: String] = [:]
        forEachTable(of: root, "reminder") { reader, table, number in
            switch reader.readReminder(table, number: number, defaults: defaults, places: namedPlaces, usedIDs: &usedIDs) {
            case .place(let reminder)?:
                reminders.append(reminder)
                order.append(reminder.id)
            case .time(let alarm)?:
                alarms.append(alarm)
                order.append(alarm.id)
            case nil: break
            }
        }
        var config = Config(path: file, settings: settings, places: places, reminders: reminders)
        forEachTable(of: root, "collection") { reader, table, number in
            guard let (collection, load) = reader.readCollection(table, number: number, defaults: defaults, usedIDs: &usedIDs)
            else { return }
            config.collections.append(collection)
            config.collectionLoads.append(load)
        }
        config.alarms = alarms
        config.idsInFileOrder = order
        forEachTable(of: root, "tasklist") { reader, table, number in
            let hasCollections = !config.collections.isEmpty
            if let settings = reader.readTaskList(table, number: number, usedIDs: &usedIDs, places: places, hasCollections: hasCollections) {
                config.taskListSettings.append(settings)
            }
        }
        config.taskDefaults = TaskDefaults(
            template: Reminder(
                id: "", title: "", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: defaults.radius),
                hysteresis: defaults.hysteresis, dwell: defaults.dwell, alert: defaults.alert,
                schedule: ReminderSchedule(repetition: defaults.repetition), approach: defaults.approach),
            radius: defaults.radius)
        if let table = table(root, "gpsd", context: "top level") { readGPSD(table, into: &config) }
        if let table = table(root, "location", context: "top level") { readLocation(table, into: &config) }
        if let table = table(root, "history", context: "top level") { readHistory(table, into: &config) }
        if let table = table(root, "output", context: "top level") { readOutput(table, into: &config) }
        readSections(sections, of: root, into: &config)
        if let table = table(root, "map", context: "top level") { readMap(table, into: &config) }
        config.warnings = warnings
        return config
    }

    /// Hands each table of `kinds` that the file has to its reader, keeping what it gives.
    private mutating func readSections(_ kinds: [any ConfigSection.Type], of root: TOMLTable, into config: inout Config) {
        config.sectionKinds = kinds
        for kind in kinds {
            if let table = table(root, kind.tableName, context: "top level"), let section = kind.read(table, file: file, reader: &self) {
                config.sections[kind.tableName] = section
            }
        }
    }

    // MARK: Sections

    /// Calls `body` with each table of the array of tables `key` (`[[key]]`) and its 1-based
    /// number; a value that is not an array, and an element that is not a table, are reported
    /// (the element at its own line).
    private mutating func forEachTable(
        of root: TOMLTable, _ key: String, _ body: (inout ConfigReader, TOMLTable, Int) -> Void
    ) {
        guard let value = root[key] else { return }
        guard let array = value.array else {
            return report(in: root, "top level", key, "must be an array of tables: write each one as [[\(key)]]")
        }
        for (offset, element) in array.enumerated() {
            guard let table = element.table else {
                report(at: element.keyOffset, "\(key) (#\(offset + 1))", nil, "must be a table ([[\(key)]])")
                continue
            }
            body(&self, table, offset + 1)
        }
    }

    private mutating func readGPSD(_ table: TOMLTable, into config: inout Config) {
        checkKeys(of: table, allowed: Self.gpsdKeys, context: "gpsd")
        if let port = typed(table, "port", context: "gpsd", expected: "a port number", { $0.int }) {
            if NetworkAddress.ports.contains(port) { config.gpsdPort = port } else { report(in: table, "gpsd", "port", "\(port) is not 1-65535") }
        }
        if let host = string(table, "host", context: "gpsd"), let endpoint = gpsdHost(host, in: table) {
            config.gpsdHost = endpoint.host
            if let port = endpoint.port { config.gpsdPort = port }
        }
    }

    private mutating func readLocation(_ table: TOMLTable, into config: inout Config) {
        checkKeys(of: table, allowed: Self.locationKeys, context: "location")
        guard let source = string(table, "source", context: "location") else { return }
        if let known = LocationSource(rawValue: source) {
            config.locationSource = known
        } else {
            let names = LocationSource.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            report(in: table, "location", "source", "\"\(DisplayText.escaped(source))\" is not one of \(names)")
        }
    }

    private mutating func readHistory(_ table: TOMLTable, into config: inout Config) {
        checkKeys(of: table, allowed: Self.historyKeys, context: "history")
        // A number alone would be seconds: keep = 90 (meant as days) would prune all but the
        // last minute and a half of the history at the next start.
        if let value = table["keep"], value.int != nil || value.string.flatMap({ Double($0.trimmingWhitespace()) }) != nil {
            report(in: table, "history", "keep", "a number alone would be seconds, and the history older pruned: give its unit (\"90d\")")
        } else if let keep = span(table, "keep", context: "history") {
            if keep > 0 { config.historyKeep = keep } else { report(in: table, "history", "keep", "must be above 0") }
        }
    }

    private mutating func readOutput(_ table: TOMLTable, into config: inout Config) {
        checkKeys(of: table, allowed: Self.outputKeys, context: "output")
        config.notify = bool(table, "notify", context: "output") ?? true
        if let timeout = span(table, "hook_timeout", context: "output") {
            if timeout > 0 { config.hookTimeout = timeout } else { report(in: table, "output", "hook_timeout", "must be above 0") }
        }
        if let snooze = span(table, "snooze", context: "output") {
            if snooze >= 60 { config.snooze = snooze } else { report(in: table, "output", "snooze", "must be at least a minute") }
        }
    }

    private mutating func readMap(_ table: TOMLTable, into config: inout Config) {
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
        let address: NetworkAddress
        do {
            address = try NetworkAddress(authority: Substring(text))
        } catch {
            report(in: table, "gpsd", "host", "\(shown) \(error)")
            return nil
        }
        guard !address.host.isEmpty, !address.host.contains(where: \.isWhitespace) else {
            report(in: table, "gpsd", "host", "\"\(shown)\" is no host name or address")
            return nil
        }
        guard let portText = address.portText else { return (String(address.host), nil) }
        guard table["port"] == nil else {
            report(in: table, "gpsd", "host", "\(shown) gives a port, and so does port: give it once")
            return nil
        }
        guard let port = address.port else {
            report(in: table, "gpsd", "host", "\(shown): port \"\(DisplayText.escaped(String(portText)))\" is not 1-65535")
            return nil
        }
        return (String(address.host), port)
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
        _ table: TOMLTable, number: Int, defaults: ReminderDefaults, places: NamedPlaces,
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

    // MARK: Typed values

    /// `~/...` as a shell reads it: vdirsyncer's own config writes paths so.
    static func expandingHome(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"], home.hasPrefix("/") else {
            return path
        }
        return home + path.dropFirst()
    }


    mutating func coordinate(_ table: TOMLTable, context: String, required: Bool) -> Coordinate? {
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

    mutating func location(_ text: String, at offset: Int?, context: String, key: String) -> Coordinate? {
        switch ReminderRules.parseLocation(text) {
        case .success(let coordinate): return coordinate
        case .failure(let error):
            report(at: offset, context, key, error.description)
            return nil
        }
    }

    mutating func number(_ table: TOMLTable, _ key: String, context: String, required: Bool) -> Double? {
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
