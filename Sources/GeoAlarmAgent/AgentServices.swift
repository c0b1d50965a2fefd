import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmICalendar
import GeoAlarmSystem
import GeoAlarmTasks
import Glibc
import Logging
import ServiceLifecycle

/// What the agent's pipeline service reacts to, in the order it arrives.
public enum AgentInput: Sendable {
    /// A report of the fix source (fixes, connected, unavailable, failed).
    case source(SourceReport)
    /// SIGHUP: reload the config.
    case reload
    /// The config file was written or replaced.
    case configChanged
    /// The state file was written by another process (a command such as `geoalarm complete`).
    case stateChanged
    /// A task list's folder changed: a task added, changed or removed (a sync, a task app, Done).
    case tasksChanged
    /// A pop-up's button (or Home Assistant's) was pressed for a reminder.
    case reminderAction(ReminderAction, PressedReminder)
    /// A Done on a task was written where the task lives (off the loop): when it comes next
    /// (nil: completed), or why it was not.
    case taskCompleted(ReminderAction, id: String, task: TaskOrigin, Result<ICalendarTime?, TaskProblem>)
    /// A reload's config, read off the loop (or why it was refused).
    case configLoaded(Result<Config, ConfigError>)
    /// A timer the pipeline set is due.
    case timer
}

/// The one stream every service of the agent feeds and the pipeline service reads.
public struct AgentChannel: Sendable {
    public let stream: AsyncStream<AgentInput>
    public let continuation: AsyncStream<AgentInput>.Continuation

    public init() {
        (stream, continuation) = AsyncStream.makeStream(of: AgentInput.self)
    }
}

/// A ``FixSource``'s reports into the agent's channel, until graceful shutdown stops the source.
/// A source that ends before (it failed for good, and said why) ends the agent with
/// ``SourceEnded``.
public struct SourceService<Source: FixSource>: Service {
    private let source: Source
    private let channel: AgentChannel

    public init(source: Source, channel: AgentChannel) {
        self.source = source
        self.channel = channel
    }

    public func run() async throws {
        let reports = source.reports()
        await withGracefulShutdownHandler {
            for await report in reports { channel.continuation.yield(.source(report)) }
        } onGracefulShutdown: {
            source.stop()
        }
        if !Task.isShuttingDownGracefully { throw SourceEnded(source: source.name) }
    }
}

/// The agent's fix source ended by itself: it can give no fix any more (why was logged).
public struct SourceEnded: Error, CustomStringConvertible {
    public let source: String

    public var description: String { "\(source) can give no fixes any more (said above): the agent stops" }
}

/// Changes to the config file and the state file into the agent's channel (inotify), until
/// graceful shutdown.
public struct WatcherService: Service {
    private let configPath: String
    private let statePath: String?
    private let taskFolders: [String]
    private let channel: AgentChannel
    private let loop: EventLoop
    private let logger: Logger

    /// Watches `configPath`, the `.ics` files of `taskFolders` (and `statePath`'s write-ahead log
    /// and the file itself, when state is kept in a file), once run;
    /// what cannot be watched is logged, and SIGHUP still reloads.
    public init(
        configPath: String, statePath: String?, taskFolders: [String] = [], channel: AgentChannel, loop: EventLoop, logger: Logger
    ) {
        self.configPath = configPath
        self.statePath = statePath
        self.taskFolders = taskFolders
        self.channel = channel
        self.loop = loop
        self.logger = logger
    }

    public func run() async throws {
        var files = [FileWatcher.Watch(path: configPath, events: .replaced, report: AgentInput.configChanged)]
        // vdirsyncer writes a task under a temporary name and renames it; a deletion removes it.
        for folder in taskFolders {
            files.append(FileWatcher.Watch(filesOf: folder, ending: ".ics", events: [.replaced, .removed], report: .tasksChanged))
        }
        // A command closes the write-ahead log as it ends, after its last write; the agent's own
        // writes, to the log it keeps open, wake nothing.
        // The file itself deleted or renamed away: the agent makes a new one at once, with what it holds.
        if let statePath {
            files.append(FileWatcher.Watch(path: statePath + "-wal", events: .replaced, report: .stateChanged))
            files.append(FileWatcher.Watch(path: statePath, events: .removed, report: .stateChanged))
        }
        guard let watcher = FileWatcher(files) else {
            logger.warning("cannot watch \(configPath) for changes; reload with SIGHUP")
            return try await gracefulShutdown()
        }
        for path in watcher.unwatched { logger.warning("cannot watch \(path) for changes (is its folder there?); reload with SIGHUP") }
        let watch = watcher.start(on: loop) { [channel] in channel.continuation.yield($0) }
        try? await gracefulShutdown()
        watcher.stop(watch, on: loop)
    }
}

/// SIGTERM and SIGINT end the agent cleanly, SIGHUP reloads its config: read from a signalfd on
/// the agent's loop, as everything else it waits on.
///
/// The signals are blocked from the start of `run` (``blockedSignals``), before any thread
/// exists, so one that comes early, while the config loads, waits for this service instead of
/// killing the agent. It returns on SIGTERM or SIGINT: run it with
/// `successTerminationBehavior: .gracefullyShutdownGroup`.
public struct SignalService: Service {
    private let channel: AgentChannel
    private let loop: EventLoop
    private let logger: Logger

    /// The signals the agent handles itself; block them first (``System/blockSignals(_:)``).
    public static let blockedSignals = [SIGTERM, SIGINT, SIGHUP]

    /// Says on `logger` which signal stops the agent (what is under way ends first).
    public init(channel: AgentChannel, loop: EventLoop, logger: Logger) {
        self.channel = channel
        self.loop = loop
        self.logger = logger
    }

    public func run() async throws {
        let descriptor = try System.signalDescriptor(Self.blockedSignals)
        defer { System.close(descriptor) }
        let (signals, arrived) = AsyncStream.makeStream(of: Int32.self)
        let watch = loop.watch(descriptor) { _ in
            for signal in System.readSignals(descriptor) { arrived.yield(signal) }
        }
        defer { loop.unwatch(watch) }
        await withGracefulShutdownHandler {
            for await signal in signals {
                if signal == SIGHUP {
                    channel.continuation.yield(.reload)
                } else {
                    logger.info("stopping (\(signal == SIGINT ? "SIGINT" : "SIGTERM")): what is under way ends first")
                    return
                }
            }
        } onGracefulShutdown: {
            arrived.finish()
        }
    }
}
