import ArgumentParser
import FoundationEssentials
import GeoAlarmAgent
import GeoAlarmConfig
import GeoAlarmListCache
import GeoAlarmMQTT
import GeoAlarmStore
import GeoAlarmSystem
import GeoAlarmTasks
import GeoAlarmTOML

/// The `--config` option shared by every command that reads reminders.
struct ConfigOptions: ParsableArguments {
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The reminders file.",
            discussion: "Default: $XDG_CONFIG_HOME/geoalarm/config.toml, ~/.config/geoalarm/config.toml, "
                + "then /etc/geoalarm/config.toml.",
            valueName: "file"))
    var config: String?

    /// The config's tables that other modules read, handed to them by every load: `[mqtt]`.
    static let sections: [any ConfigSection.Type] = [MQTTSetup.self]

    func validate() throws {
        if config?.isEmpty == true { throw ValidationError.emptyPath("--config") }
    }

    /// The path of the file to read, explained on stderr when there is none.
    func resolvedPath() throws -> String {
        do {
            return try resolvedPathQuietly()
        } catch {
            Diagnostics.error("\(error)")
            throw ExitCode.failure
        }
    }

    /// The path of the config file to read; throws ``ConfigNotFound`` (and says nothing) when there is none.
    func resolvedPathQuietly() throws -> String {
        try ConfigLocation.resolve(
            explicit: config, environment: ProcessInfo.processInfo.environment,
            exists: { System.exists($0) })
    }

    /// Loads and validates the config, printing every problem and failing when there are any.
    /// Rows skipped in collection files and tasks passed over in task lists are warnings (every
    /// one with `everyProblem`), followed by what each collection and list loaded. A server's task
    /// list is read from its copy in `taskCache` (none: not at all).
    func load(everyProblem: Bool = false, taskCache: (any TaskListCache)? = nil) throws -> Config {
        let path = try resolvedPath()
        do {
            let config = try ConfigLoader.load(path: path, taskCache: taskCache, sections: Self.sections)
            AlarmAgent.logSources(of: config, to: Diagnostics.logger, everyProblem: everyProblem)
            return config
        } catch {
            Diagnostics.report(error)
            throw ExitCode.failure
        }
    }

    /// Loads the config as ``load(everyProblem:taskCache:)`` does, with its task lists on servers
    /// fetched first (their waiting writes sent), once, into the state file at `statePath`: a
    /// server that cannot be used is said, and its list read from its last copy.
    func load(everyProblem: Bool = false, fetchingInto statePath: String) async throws -> (Config, FetchedTaskLists) {
        let path = try resolvedPath()
        var config: Config
        do {
            config = try ConfigLoader.read(path: path, sections: Self.sections)
        } catch {
            Diagnostics.report(error)
            throw ExitCode.failure
        }
        let fetched = await FetchedTaskLists.fetch(config.serverTaskLists.map(\.settings), statePath: statePath)
        config.loadTaskLists(cache: fetched.servers.cache)
        AlarmAgent.logSources(of: config, to: Diagnostics.logger, everyProblem: everyProblem)
        return (config, fetched)
    }
}

/// The task lists on servers as a command fetched them: where their copies are, and what each
/// look came to.
struct FetchedTaskLists {
    let servers: ServerTaskLists
    /// Whether the copies and waiting writes outlast the command (in the state file, not memory).
    let isKept: Bool
    var outcomes: [String: ServerTaskLists.Outcome] = [:]

    /// Looks at each of `lists` once (none: nothing is opened); a server that cannot be used is
    /// said on stderr, but `quietly` (the caller says it).
    static func fetch(_ lists: [TaskListSettings], statePath: String, quietly: Bool = false) async -> FetchedTaskLists {
        guard !lists.isEmpty else { return FetchedTaskLists(servers: ServerTaskLists(cache: MemoryTaskListCache(), loop: .main), isKept: false) }
        let (cache, isKept) = taskListCache(at: statePath, for: lists.map(\.name))
        var fetched = FetchedTaskLists(servers: ServerTaskLists(cache: cache, loop: .main), isKept: isKept)
        for list in lists {
            let outcome = await fetched.servers.sync(list)
            fetched.outcomes[list.name] = outcome
            for dropped in outcome.dropped { Diagnostics.error("task list \(list.name): a change cannot be made and is dropped: \(dropped)") }
            for passed in outcome.passedOver { Diagnostics.logger.warning("task list \(list.name): \(passed)") }
            if let problem = outcome.problem, !quietly {
                let copy = ((try? cache.cachedList(list.name)) ?? nil) == nil ? "there is no copy of it yet" : "its last copy is used"
                Diagnostics.logger.warning("task list \(list.name) (\(list.location)): \(problem); \(copy)")
            }
        }
        return fetched
    }

    /// Where a change a command made to a server's task stands.
    struct Standing {
        /// Said after the command's line: " on the server", "; it waits for the server...".
        var words: String
        /// Whether it is lost: not sent, and not kept to be sent later.
        var isLost = false
    }

    /// Sends what a command just queued for `list`'s server; says where it stands.
    func send(_ list: TaskListSettings) async -> Standing {
        let outcome = await servers.sync(list)
        if let problem = outcome.problem {
            return isKept
                ? Standing(words: "; it waits for the server (\(problem)) and goes out when the agent or the next command reaches it")
                : Standing(words: "; the server cannot be reached (\(problem)) and the state file cannot keep it: not made", isLost: true)
        }
        if !outcome.dropped.isEmpty { return Standing(words: "; the server refused it: \(outcome.dropped.joined(separator: "; "))", isLost: true) }
        return Standing(words: " on the server")
    }

    /// Where a command keeps the copies of the task lists `names` it fetches, and the writes it
    /// leaves for their servers: the state file at `path` (made when there is none); a copy in
    /// memory of one it may only read (the copies then last as long as the command); whether it
    /// is the file.
    private static func taskListCache(at path: String, for names: [String]) -> (any TaskListCache, isKept: Bool) {
        if let store = try? StateStore(path: path) { return (store.taskLists, true) }
        var lists: [String: CachedList] = [:]
        if let store = (try? StateStore(readingFrom: path)) ?? nil {
            for name in names { lists[name] = (try? store.taskLists.cachedList(name)) ?? nil }
        }
        return (MemoryTaskListCache(lists: lists), false)
    }
}
