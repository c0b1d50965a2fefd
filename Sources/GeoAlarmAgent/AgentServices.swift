import GeoAlarmCore
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
    /// The state file was written (by a command, a pop-up button, or the agent itself).
    case stateChanged
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
    }
}

/// Changes to the config file and the state file into the agent's channel (inotify), until
/// graceful shutdown.
public struct WatcherService: Service {
    private let watcher: FileWatcher?
    private let channel: AgentChannel

    /// Watches `configPath` (and `statePath`'s write-ahead log, when state is kept in a file);
    /// what cannot be watched is logged, and SIGHUP still reloads.
    public init(configPath: String, statePath: String?, channel: AgentChannel, logger: Logger) {
        var files = [FileWatcher.Watch(path: configPath, events: .replaced, input: .configChanged)]
        // A command closes the write-ahead log as it ends, after its last write; the agent's own
        // writes, to the log it keeps open, wake nothing.
        if let statePath { files.append(FileWatcher.Watch(path: statePath + "-wal", events: .replaced, input: .stateChanged)) }
        watcher = FileWatcher(files)
        self.channel = channel
        if watcher == nil { logger.warning("cannot watch \(configPath) for changes; reload with SIGHUP") }
    }

    public func run() async throws {
        guard let watcher else { return try await gracefulShutdown() }
        watcher.start(channel)
        try? await gracefulShutdown()
        watcher.stop()
    }
}
