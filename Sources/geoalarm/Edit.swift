import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmICalendar
import GeoAlarmStore
import GeoAlarmSystem
import GeoAlarmTasks

/// Runs one locked, validated, atomic edit of the reminders file (starting it from `creating`
/// when it does not exist), saying the warnings of the file it leaves, or explains why not and
/// exits 1.
private func edit(
    _ path: String, creating: String? = nil, _ change: ([UInt8]) throws(ConfigEditor.EditError) -> [UInt8]
) throws {
    do {
        let edited = try ConfigEditor.edit(path: path, creating: creating, change)
        for warning in edited.warnings { Diagnostics.logger.warning("\(warning)") }
    } catch {
        Diagnostics.error(error.description)
        throw ExitCode.failure
    }
}

/// `geoalarm add`: appends a reminder to the config file, keeping the rest of it as it was.
struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add a reminder to the config file (validated first, written atomically, the rest kept byte for byte).",
        discussion: """
            With no config file yet, the user's own is created. --here waits up to --wait seconds for a fix \
            from gpsd (found as `run` finds it) within max_error, and otherwise takes the last fix the agent \
            recorded in the state file, saying how old it is.
            """)

    @OptionGroup var options: ConfigOptions

    @Option(parsing: .unconditional, help: "What to remember.")
    var title: String

    @Option(parsing: .unconditional, help: ArgumentHelp("Where: a point (\"38.7105,-9.1366\", a geo: URI, or as a map copies it: \"38.7105° N, 9.1366° W\").", valueName: "lat,lon"))
    var at: String?

    @Flag(help: "Where: here, gpsd's position now (else the last fix the agent recorded).")
    var here = false

    @Option(help: ArgumentHelp(
        "Where: a name from [places] (with --at or --here: define it there; with --list, also a [[collection]]: any of its places).",
        valueName: "name"))
    var place: String?

    @Option(help: ArgumentHelp("The circle: metres or \"150m\", \"1km\"...", valueName: "radius"))
    var radius: String?

    @Option(help: ArgumentHelp("arrive, leave or both.", valueName: "when"))
    var when: String?

    @Option(parsing: .unconditional, help: "More text for the pop-up.")
    var notes: String?

    @Option(name: .customLong("repeat"), help: ArgumentHelp("always, once or a period such as 12h or daily.", valueName: "repeat"))
    var repetition: String?

    @Option(help: "The reminder's id (default: a slug of the title, numbered when another reminder has it).")
    var id: String?

    @Option(help: ArgumentHelp(
        "Add it as a task to this [[tasklist]] (by name) instead of the config file: a new .ics file in its folder, "
            + "with its place in Apple's form and RFC 9074's.", valueName: "name"))
    var list: String?

    @OptionGroup var gpsdOptions: GPSDOptions

    @Option(help: ArgumentHelp("With --here: how long to wait for a good fix from gpsd.", valueName: "seconds"))
    var wait: Double = 10

    @OptionGroup var stateOptions: StateOptions

    func validate() throws {
        guard at != nil || here || place != nil else {
            throw ValidationError("Give --at LAT,LON, --here or --place NAME (with --at or --here, NAME is defined there).")
        }
        if at != nil, here { throw ValidationError("--at and --here both say where: give one.") }
        if !here, gpsdOptions.gpsd != nil || gpsdOptions.device != nil {
            throw ValidationError("--gpsd and --device say where --here asks: give them with --here.")
        }
        guard wait.isFinite, (0...600).contains(wait) else { throw ValidationError("--wait \(wait): give 0 to 600 seconds.") }
        if list != nil {
            if id != nil { throw ValidationError("--id and --list: a task's id comes from its UID; give no --id.") }
            if repetition != nil { throw ValidationError("--repeat and --list: a task repeats in its own app; give no --repeat.") }
            if place != nil, at != nil || here { throw ValidationError("--place with --list names a place of [places]; give --at or --here alone.") }
        }
    }

    /// The config to add to: the one given or found, else the user's own, made now (its folder
    /// 0700, the file 0600) with a header pointing to the example.
    private func target() throws -> (path: String, creating: String?) {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = options.config {
            return (explicit, System.exists(explicit) ? nil : ConfigLocation.newConfigHeader)
        }
        if let found = try? ConfigLocation.resolve(
            explicit: nil, environment: environment, exists: { System.exists($0) }) {
            return (found, nil)
        }
        guard let path = ConfigLocation.userPath(environment: environment) else { return (try options.resolvedPath(), nil) }
        let folder = PathParts.split(path).folder
        do {
            try System.makeDirectories(folder, mode: 0o700)
        } catch {
            Diagnostics.error("\(folder): cannot create it: \(error.call): \(error.reason)")
            throw ExitCode.failure
        }
        return (path, ConfigLocation.newConfigHeader)
    }

    func run() async throws {
        // Where --here is comes first: when there is no position, nothing is created.
        let existing = (try? options.resolvedPathQuietly()).flatMap { System.exists($0) ? $0 : nil }
        let at = here ? try await herePosition(config: existing).description : at
        if let list { return try await addTask(to: list, at: at) }
        let (path, creating) = try target()
        var fields: [(String, String)] = []
        if let notes { fields.append(("notes", ConfigEditor.quote(notes))) }
        if let place {
            fields.append(("place", ConfigEditor.quote(place)))
        } else if let at {
            fields.append(("location", ConfigEditor.quote(at)))
        }
        if let radius { fields.append(("radius", ConfigEditor.quote(radius))) }
        if let when { fields.append(("when", ConfigEditor.quote(when))) }
        if let repetition { fields.append(("repeat", ConfigEditor.quote(repetition))) }
        var added = ""
        try edit(path, creating: creating) { (bytes) throws(ConfigEditor.EditError) in
            var bytes = bytes
            if let place, let at { bytes = try ConfigEditor.definingPlace(place, at: at, in: bytes, path: path) }
            let appended = ConfigEditor.appendingReminder(titled: title, id: id, fields, to: bytes, path: path)
            added = appended.id
            return appended.bytes
        }
        if creating != nil { try Console.line("created \(path)") }
        if let place, at != nil { try Console.line("defined place \(place) in \(path)") }
        try Console.line("added \(added) to \(path)")
    }

    /// Adds the reminder as a new task of the task list `name`, at `at` (or the `[places]` place or
    /// the collection --place names).
    private func addTask(to name: String, at: String?) async throws {
        let (config, lists) = try await options.load(fetchingInto: stateOptions.path)
        guard let settings = config.taskListSettings.first(where: { $0.name == name || $0.id == name }) else {
            let names = config.taskListSettings.map(\.name)
            Diagnostics.error("no task list \"\(DisplayText.escaped(name))\" in \(config.path)"
                + (names.isEmpty ? ": give one with a [[tasklist]] table" : "; there are: \(names.joined(separator: ", "))"))
            throw ExitCode.failure
        }
        let location: TaskEdits.NewTask.Location
        switch NewTaskPlace(at: at, place: place, radius: radius, when: when).location(in: config, list: settings) {
        case .success(let found): location = found
        case .failure(let problem):
            Diagnostics.error(problem.description)
            throw ExitCode.failure
        }
        let uid = TaskWriter.newUID()
        let path: String
        do {
            path = try TaskWriter.create(
                TaskEdits.NewTask(uid: uid, title: title, notes: notes, location: location),
                in: settings, at: Date(), cache: lists.servers.cache)
        } catch {
            Diagnostics.error("task list \(settings.name) (\(settings.location)): \(error)")
            throw ExitCode.failure
        }
        var standing = ""
        if settings.folder == nil {
            let sent = await lists.send(settings)
            if sent.isLost {
                Diagnostics.error("task \(DisplayText.escaped(title)) of list \(settings.name)\(sent.words)")
                throw ExitCode.failure
            }
            standing = sent.words
        }
        let reloaded = try? ConfigLoader.load(path: config.path, taskCache: lists.servers.cache, sections: config.sectionKinds)
        let id = reloaded?.taskLists.lazy.compactMap { list in list.tasks.first { $0.value.uid == uid }?.key }.first ?? uid
        try Console.line("added \(id) to task list \(settings.name) (\(path))\(standing)")
    }

    /// Where --here is: gpsd's first position within the config's `max_error` (unknown errors
    /// accepted, as the engine does), else the last fix in the state file; exits 1 with both
    /// reasons when neither is to be had.
    private func herePosition(config path: String?) async throws -> Coordinate {
        // An invalid config is reported by the edit itself; its gpsd and max_error are not used meanwhile.
        let config = path.flatMap { try? ConfigLoader.read(path: $0, sections: ConfigOptions.sections) }
        let maxError = (config?.settings ?? EngineSettings()).maxError
        let (endpoint, sample) = await gpsdOptions.look(config: config, seconds: wait, dated: false)
        if let fix = sample.accepted {
            let error = fix.horizontalError.map { " (±\(Metres.rounded($0)) m)" } ?? ""
            try Console.line("here: \(fix.coordinate)\(error), from gpsd at \(endpoint)")
            return fix.coordinate
        }
        var why = "gpsd at \(endpoint): "
        if let unreachable = sample.unreachable {
            why += unreachable
        } else if let best = sample.latestPosition, let error = best.horizontalError, let maxError {
            why += "no fix within max_error (\(Metres.rounded(maxError)) m) in \(Span.describe(wait)); the last was ±\(Metres.rounded(error)) m"
        } else {
            why += "no fix in \(Span.describe(wait))" + (sample.reports > 0 ? " (the receiver reports no position)" : "")
        }
        let lastFix: Fix?
        do {
            lastFix = try stateOptions.openForReading()?.sides.lastFix()
        } catch let error as StoreError {
            Diagnostics.error(error.description)
            lastFix = nil
        } catch {
            // The state file could not be opened: openForReading said why.
            lastFix = nil
        }
        guard let lastFix else {
            Diagnostics.error("\(why); and \(stateOptions.path) holds no fix: give --at LAT,LON")
            throw ExitCode.failure
        }
        let age = lastFix.age
        Diagnostics.logger.warning("\(why); using the last fix the agent recorded, \(age)")
        try Console.line("here: \(lastFix.coordinate), the last fix recorded in \(stateOptions.path) (\(age))")
        return lastFix.coordinate
    }
}

/// `geoalarm remove ID`: deletes that reminder's table from the config file, and nothing else,
/// then forgets its state in the state file (its history stays).
struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove a reminder from the config file (the rest kept byte for byte, written atomically).",
        discussion: "Its state in the state file (inside/outside, completed, snoozed) is forgotten, so that a "
            + "reminder added later with the same id starts afresh; its past events stay in the history.")

    @OptionGroup var options: ConfigOptions

    @OptionGroup var stateOptions: StateOptions

    @Argument(help: ArgumentHelp("The reminder's id (see geoalarm list).", valueName: "id"))
    var id: String

    func run() async throws {
        let (config, lists) = try await options.load(fetchingInto: stateOptions.path)
        try lookUp(id, in: config)
        if let task = config.taskOrigin(of: id) {
            // A task is removed where it lives: its file, which the next sync deletes on the
            // server; or on the server itself.
            let standing = try await changeTask(task, config: config, lists: lists) { (task, cache) throws(TaskProblem) in
                try TaskWriter.delete(task, cache: cache)
            }
            try Console.line("removed \(id) from task list \(task.list) (deleted \(task.path))\(standing)")
            forgetState()
            return
        }
        guard config.idsInFileOrder.contains(id) else {
            Diagnostics.error("\(DisplayText.escaped(id)) is a place of a collection: remove it from the collection's file")
            throw ExitCode.failure
        }
        try edit(config.path) { (bytes) throws(ConfigEditor.EditError) in
            try ConfigEditor.removingReminder(id: id, from: bytes, path: config.path)
        }
        try Console.line("removed \(id) from \(config.path)")
        forgetState()
    }

    /// Forgets the removed reminder's state, when there is a state file.
    private func forgetState() {
        guard System.exists(stateOptions.path) else { return }
        do {
            let kept = try StateStore(path: stateOptions.path).forget(id)
            try Console.line("forgot its state in \(stateOptions.path)" + (kept > 0 ? "; its \(kept) past events stay in the history" : ""))
        } catch {
            // The reminder is gone all the same; only its stale state stays.
            Diagnostics.logger.warning("\(error)")
        }
    }
}
