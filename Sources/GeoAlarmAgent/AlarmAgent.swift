import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmPipeline
import GeoAlarmStore
import GeoAlarmSystem
import GeoAlarmTasks
import Glibc
import Logging
import ServiceLifecycle

/// The agent's pipeline service: every input of the ``AgentChannel`` (the source's reports,
/// changes to the config and state files, SIGHUP, its own timer) handled in order by one task,
/// so the engine needs no lock.
///
/// It sleeps until an input arrives: the only timer it sets is for what is due next (the
/// notice of a silent receiver, a time alarm, the end of a snooze on one). Graceful shutdown
/// ends it; the sinks that are services stop after it (the service group stops them in reverse
/// order).
public final class AlarmAgent: Service {
    private let channel: AgentChannel
    private let eventLoop: EventLoop
    private let sourceName: String
    private let usesUndatedFixes: Bool
    private let configPath: String
    private let initialConfig: Config
    private let sinks: [any EventSink]
    private let state: StateKeeper
    private let logger: Logger
    /// Records, per fix, the time from the source reading it to its events being emitted.
    private let latency: (@Sendable (Duration) -> Void)?
    /// Keeps the task lists on servers in step (nil without any).
    private let taskSync: TaskListSyncService?

    /// How long without a usable fix before the silence is logged.
    static let silenceBeforeNotice: Duration = .seconds(10)
    /// How often the last fix is written for `geoalarm status` and the map (besides with each change of side).
    static let lastFixInterval: Duration = .seconds(10)

    /// Events go to `sinks` in order (the stdout log first); `latency`, when given, hears each
    /// fix's delay; `taskSync` hears of the writes a pop-up's Done leaves for a server, and of the
    /// lists of each reloaded config.
    public init<Source: FixSource>(
        source: Source, channel: AgentChannel, loop: EventLoop, config: Config, state: StateKeeper, sinks: [any EventSink],
        logger: Logger, latency: (@Sendable (Duration) -> Void)? = nil, taskSync: TaskListSyncService? = nil
    ) {
        self.taskSync = taskSync
        self.channel = channel
        eventLoop = loop
        sourceName = source.name
        usesUndatedFixes = source.usesUndatedFixes
        self.state = state
        configPath = config.path
        initialConfig = config
        self.logger = logger
        self.latency = latency
        self.sinks = sinks
    }

    public func run() async throws {
        var loop = AgentState(
            config: initialConfig,
            pipeline: FixPipeline(watching: initialConfig.reminderSet, state: state, sinks: sinks, timeZone: SystemTimeZone()))
        logger.info("watching \(Self.describe(loop.pipeline.engine)) from \(configPath)")
        loop.pipeline.fireDueAlarms(now: Date())
        state.pruneHistory(keep: initialConfig.historyKeep, now: Date())
        rearmTimer(&loop)
        // Graceful shutdown ends the channel: what is in it already is still handled. (Not
        // `cancelOnGracefulShutdown()`, whose merge runs a task off the loop.)
        await withGracefulShutdownHandler {
            for await input in channel.stream {
                handle(input, state: &loop)
            }
        } onGracefulShutdown: { [channel] in
            channel.continuation.finish()
        }
        if let timer = loop.timer { eventLoop.cancel(timer) }
        state.flush()
        if !loop.trackers.isEmpty || !loop.ignored.isEmpty { logger.info("\(Self.describeTracking(loop))") }
        logger.info("stopped")
    }

    private func handle(_ input: AgentInput, state loop: inout AgentState) {
        switch input {
        case .source(.connected):
            if loop.connection != .connected { logger.info("connected to \(sourceName)") }
            loop.connection = .connected
        case .source(.unavailable(let reason)):
            if loop.connection != .unavailable(reason) { logger.warning("\(sourceName) unavailable: \(reason); retrying") }
            loop.connection = .unavailable(reason)
        case .source(.failed(let reason)):
            logger.error("\(sourceName): \(reason)")
        case .source(.ignored(let kind, let reason, let device)):
            // The first of each kind is logged, the others counted: a flood of junk must not flood
            // the log. A device's own fault is said once for each device (up to a bound).
            if let device {
                if loop.devicesWarned.count < Self.trackersShown, loop.devicesWarned.insert(device).inserted {
                    logger.warning("\(sourceName): ignored \(reason) (\(kind): said once for each device, every one counted in the summary at the end)")
                }
            } else if loop.ignored[kind, default: 0] == 0 {
                logger.warning("\(sourceName): ignored \(reason) (\(kind): the first is logged, every one counted in the summary at the end)")
            }
            loop.ignored[kind, default: 0] += 1
        case .source(.fixes(let fixes, let readAt)):
            for fix in fixes { handle(fix, readAt: readAt, state: &loop) }
        case .timer:
            loop.timer = nil
            if let due = loop.idleDue, ContinuousClock.now >= due { letIdleDevicesGo(&loop) }
            if loop.silentSince == nil, let last = loop.lastUsable, ContinuousClock.now - last.at >= Self.silenceBeforeNotice {
                noticeSilence(&loop)
            }
            loop.pipeline.fireDueAlarms(now: Date())
            rearmTimer(&loop)
        case .reminderAction(let action, let id):
            // A task is completed where it lives: its file, which its app and every device that syncs it read.
            if case .complete(let time) = action, let task = loop.config.taskOrigin(of: id) {
                do {
                    try TaskWriter.complete(task, at: time, cache: state.taskListCache)
                    if task.isOnServer {
                        logger.info("completed \(id) in task list \(task.list): goes to the server (\(task.path))")
                        taskSync?.writeWaits()
                    } else {
                        logger.info("completed \(id) in task list \(task.list) (\(task.path))")
                    }
                } catch {
                    logger.error("cannot complete \(id) in task list \(task.list) (\(task.path)): \(error); it stays open there")
                }
            }
            let lifecycles = loop.pipeline.apply(action, to: id)
            for tracked in loop.trackers.values { tracked.takeLifecycles(lifecycles) }
            loop.pipeline.fireDueAlarms(now: Date())
            rearmTimer(&loop)
        case .stateChanged:
            // Commands (complete, snooze...) write the store; one may have fetched a server's task
            // list into it, or left a write for the server.
            if !loop.config.serverTaskLists.isEmpty {
                reload(&loop)
                if let waiting = try? state.taskListCache.waitingWrites(), !waiting.isEmpty { taskSync?.writeWaits() }
            }
            if let lifecycles = loop.pipeline.refreshLifecycles() {
                for tracked in loop.trackers.values { tracked.takeLifecycles(lifecycles) }
            }
            loop.pipeline.fireDueAlarms(now: Date())
            rearmTimer(&loop)
        case .reload:
            reload(&loop)
        case .configChanged:
            logger.info("\(configPath) changed")
            reload(&loop)
        case .tasksChanged:
            logger.info("a task list changed")
            reload(&loop)
        }
    }

    private func handle(_ fix: Fix, readAt: ContinuousClock.Instant, state loop: inout AgentState) {
        if let tracker = fix.tracker { return handle(fix, of: tracker, readAt: readAt, state: &loop) }
        let result = loop.pipeline.process(fix, receivedAt: Date(), undatedUsable: usesUndatedFixes)
        for (event, silence) in result.silenced {
            logger.info("\(event.kind.rawValue) \(event.reminder.id) not announced: \(silence)")
        }
        latency?(ContinuousClock.now - readAt)
        switch result.outcome {
        case .accepted:
            // Every so often, and with every change of side: the map shows you where that happened.
            if !result.outcome.changes.isEmpty || loop.lastFixSaved.map({ ContinuousClock.now - $0 >= Self.lastFixInterval }) ?? true {
                state.saveLastFix(fix)
                loop.lastFixSaved = ContinuousClock.now
            }
            if loop.silentSince != nil { logger.info("fixes are back at \(Self.clock(fix.time))") }
            loop.futureNoticed = false
            let wasWatching = loop.lastUsable != nil && loop.silentSince == nil
            loop.silentSince = nil
            loop.lastUsable = (ContinuousClock.now, fix.time)
            // The silence timer is set when fixes start; while they flow it only moves on when it fires.
            if !wasWatching { rearmTimer(&loop) }
        case .rejected(.noFix) where loop.silentSince == nil && loop.lastUsable != nil:
            noticeSilence(&loop)
        case .rejected(.future) where !loop.futureNoticed:
            loop.futureNoticed = true
            logger.warning("""
                fixes stamped \(fix.time.map(Timestamp.iso8601) ?? "?"), more than a day ahead of this system's clock, \
                are ignored: the receiver's date (or gpsd's GPS week rollover guess) is wrong, or the system clock is
                """)
        case .rejected:
            break
        }
    }

    /// A tracked device's fix (OwnTracks): through that device's own pipeline, made when its
    /// first fix comes and kept only when that fix is usable (a name that never sent a usable
    /// location holds no place). A device named in `[mqtt.device_secrets]` always has a place;
    /// the others, `max_devices` at most. Rejections (repeated, out of order, inaccurate) are
    /// counted, not logged.
    private func handle(_ fix: Fix, of tracker: String, readAt: ContinuousClock.Instant, state loop: inout AgentState) {
        let pipeline: FixPipeline
        let isNew = loop.trackers[tracker] == nil
        if let known = loop.trackers[tracker] {
            pipeline = known
        } else {
            // Every device costs memory for the agent's life: made-up names must not take it all,
            // nor the places of the devices the config names.
            let most = initialConfig.mqtt?.maxDevices ?? MQTTSettings.defaultMaxDevices
            guard isNamed(tracker) || loop.unnamedTracked < most else {
                refuse(tracker, most: most, state: &loop)
                return
            }
            pipeline = loop.pipeline.pipeline(forTracker: tracker)
        }
        let receivedAt = Date()
        let result = pipeline.process(fix, receivedAt: receivedAt, undatedUsable: false)
        // Said once a device (for so many devices at most: made-up names must not flood the log).
        if case .rejected(.future) = result.outcome, let time = fix.time, loop.aheadNoticed.count < Self.trackersShown,
           loop.aheadNoticed.insert(tracker).inserted {
            logger.warning("""
                \(DisplayText.escaped(tracker)): a location stamped \(Timestamp.iso8601(time)), \
                \(Span.describe(time.timeIntervalSince(receivedAt))) ahead of this system's clock, is set aside \
                (the device's clock or its message is wrong); more such are only counted
                """)
        }
        if isNew {
            guard case .accepted = result.outcome else {
                loop.tracked.count(result)
                return
            }
            loop.trackers[tracker] = pipeline
            if !isNamed(tracker) { loop.unnamedTracked += 1 }
            if loop.trackers.count <= Self.trackersShown {
                logger.info("tracking \(DisplayText.escaped(tracker)) (\(pipeline.engine.keptStates) sides restored)")
            }
        }
        let heardAt = ContinuousClock.now
        loop.lastHeard[tracker] = heardAt
        if loop.idleDue == nil {
            loop.idleDue = heardAt + .seconds(deviceIdle)
            rearmTimer(&loop)
        }
        for (event, silence) in result.silenced {
            logger.info("\(event.kind.rawValue) \(event.reminder.id) for \(DisplayText.escaped(tracker)) not announced: \(silence)")
        }
        latency?(ContinuousClock.now - readAt)
        loop.tracked.count(result)
    }

    /// Whether `[mqtt.device_secrets]` names the device: it always has a place.
    private func isNamed(_ tracker: String) -> Bool {
        initialConfig.mqtt?.deviceSecrets[tracker] != nil
    }

    /// Refuses a new device beyond `max_devices`: said once, naming it; the names refused are
    /// kept (the first ones) for the summary, and every refusal counted.
    private func refuse(_ tracker: String, most: Int, state loop: inout AgentState) {
        if loop.ignored[Self.beyondMaxDevices, default: 0] == 0 {
            logger.warning("""
                \(sourceName): \(most) devices are tracked, max_devices: \(DisplayText.escaped(tracker)) and any other new \
                device are refused (a device named in [mqtt.device_secrets] always has a place); the names refused are \
                listed and counted in the summary at the end
                """)
        }
        loop.ignored[Self.beyondMaxDevices, default: 0] += 1
        if loop.refusedDevices.count < Self.refusedShown, !loop.refusedDevices.contains(tracker) {
            loop.refusedDevices.append(tracker)
        }
    }

    /// How many tracked devices were seen, and what their messages came to: "3 devices tracked:
    /// 12 fixes, 12 used, 2 events; 3 messages ignored (1 encrypted without a secret, 2 malformed)".
    static func describeTracking(_ loop: AgentState) -> String {
        var text = "\(loop.trackers.count) devices tracked: \(loop.tracked.describe())"
        if !loop.ignored.isEmpty {
            let kinds = loop.ignored.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            text += "; \(loop.ignored.values.reduce(0, +)) messages ignored (\(kinds.joined(separator: ", ")))"
        }
        if !loop.refusedDevices.isEmpty {
            let more = loop.refusedDevices.count == refusedShown ? ", and maybe more" : ""
            text += "; refused beyond max_devices: \(loop.refusedDevices.map(DisplayText.escaped).joined(separator: ", "))\(more)"
        }
        return text
    }

    /// Seconds without a message after which a tracked device leaves memory.
    private var deviceIdle: Double { initialConfig.mqtt?.deviceIdle ?? 3600 }

    /// Lets go of the tracked devices silent for `device_idle`: their state stays in the state
    /// file, and their next message brings it back. Sets when to look again.
    private func letIdleDevicesGo(_ loop: inout AgentState) {
        let now = ContinuousClock.now
        let idle = Duration.seconds(deviceIdle)
        let quiet = loop.lastHeard.filter { now - $0.value >= idle }.map(\.key)
        for device in quiet {
            if loop.trackers.removeValue(forKey: device) != nil, !isNamed(device) { loop.unnamedTracked -= 1 }
            loop.lastHeard[device] = nil
            loop.aheadNoticed.remove(device)
        }
        if !quiet.isEmpty {
            logger.info("""
                let go of \(quiet.count) devices silent for \(Span.describe(deviceIdle)) (their state stays in the \
                state file); \(loop.trackers.count) tracked
                """)
        }
        loop.idleDue = loop.lastHeard.values.min().map { $0 + idle }
    }

    /// The kind of ignored message of a device beyond `max_devices`.
    static let beyondMaxDevices = "new device beyond max_devices"

    /// How many new tracked devices are logged one by one.
    static let trackersShown = 20
    /// How many names of refused devices the summary lists.
    static let refusedShown = 50

    /// Sets the one timer for what is due next: the silence notice (10 s after the last usable
    /// fix, while fixes were flowing) or the next time alarm or snooze end, whichever is first.
    private func rearmTimer(_ loop: inout AgentState) {
        if let timer = loop.timer { eventLoop.cancel(timer) }
        loop.timer = nil
        var delays: [Duration] = []
        if loop.silentSince == nil, let last = loop.lastUsable {
            delays.append(last.at + Self.silenceBeforeNotice - ContinuousClock.now)
        }
        if let due = loop.pipeline.nextDue() {
            delays.append(.milliseconds(Int64(max(0, min(due.timeIntervalSinceNow, 86400 * 365)) * 1000)))
        }
        if let due = loop.idleDue { delays.append(due - ContinuousClock.now) }
        guard let delay = delays.min() else { return }
        loop.timer = eventLoop.schedule(at: .now + max(delay, .zero)) { [channel] in channel.continuation.yield(.timer) }
    }

    private func noticeSilence(_ loop: inout AgentState) {
        loop.silentSince = ContinuousClock.now
        logger.warning("no fix since \(Self.clock(loop.lastUsable?.fixTime)); holding the last known state")
    }

    private func reload(_ loop: inout AgentState) {
        do {
            let config = try ConfigLoader.load(path: configPath, taskCache: state.taskListCache)
            Self.logSources(of: config, to: logger)
            taskSync?.follow(config.serverTaskLists.map(\.settings))
            loop.config = config
            loop.pipeline.reload(config.reminderSet)
            for tracked in loop.trackers.values { tracked.reload(following: loop.pipeline) }
            let engine = loop.pipeline.engine
            logger.info("reloaded \(configPath): \(Self.describe(engine)), \(engine.keptStates) kept their state")
            let waiting = initialConfig.restartOnlyChanges(in: config)
            if !waiting.isEmpty {
                logger.warning("""
                    \(waiting.joined(separator: ", ")) changed: read only at start, kept as they were until the agent \
                    restarts (systemctl --user restart geoalarm)
                    """)
            }
            state.pruneHistory(keep: config.historyKeep, now: Date())
            loop.pipeline.fireDueAlarms(now: Date())
            rearmTimer(&loop)
        } catch {
            logger.error("reload of \(configPath) failed; the previous config stays in force:")
            for diagnostic in error.diagnostics { logger.error("\(diagnostic.description)") }
        }
    }

    /// Logs the bad rows skipped in the config's collection files and the tasks passed over in
    /// its task lists (as warnings: all of them with `everyProblem`, else the first
    /// ``problemsShown`` of each list), and what each collection and list loaded; for the agent's
    /// reloads and the commands that load a config alike.
    public static func logSources(of config: Config, to logger: Logger, everyProblem: Bool = false) {
        for load in config.collectionLoads {
            for problem in load.shownProblems { logger.warning("\(problem)") }
            logger.info("\(load.summary)")
        }
        for list in config.taskLists {
            let shown = everyProblem ? list.problems[...] : list.problems.prefix(problemsShown)
            for problem in shown { logger.warning("\(problem)") }
            if shown.count < list.problems.count {
                logger.warning("task list \(list.settings.name): \(list.problems.count - shown.count) more problems (geoalarm check lists them all)")
            }
            if list.failure != nil { logger.error("\(list.summary)") } else { logger.info("\(list.summary)") }
        }
    }

    /// How many problems of a task list are logged but by `check`.
    static let problemsShown = 20

    /// "5 reminders" or "5 reminders and 1000000 collection places".
    static func describe(_ engine: GeofenceEngine) -> String {
        let places = engine.fenceCount - engine.reminders.count
        return "\(engine.reminders.count) reminders" + (engine.collections.isEmpty ? "" : " and \(places) collection places")
    }

    /// "08:06:30 UTC" for a fix time; "an unknown time" without one.
    static func clock(_ time: Date?) -> String {
        guard let time else { return "an unknown time" }
        let iso = Timestamp.iso8601(time)
        let start = iso.index(iso.startIndex, offsetBy: 11)
        return "\(iso[start..<iso.index(start, offsetBy: 8)]) UTC"
    }
}

/// What the agent's loop keeps between inputs.
struct AgentState {
    enum Connection: Equatable {
        case connecting, connected
        case unavailable(String)
    }

    /// The config as last loaded (its task lists say where each task lives).
    var config: Config
    var pipeline: FixPipeline
    /// When the last fix was written for `geoalarm status`.
    var lastFixSaved: ContinuousClock.Instant?
    var connection = Connection.connecting
    /// When the last usable fix was handled, and its fix time.
    var lastUsable: (at: ContinuousClock.Instant, fixTime: Date?)?
    /// Set while the receiver is silent or has no fix (and it has been logged).
    var silentSince: ContinuousClock.Instant?
    /// The loop's timer for the next due moment.
    var timer: EventLoop.Timer?
    /// Set once fixes from the future were logged, until a usable fix comes.
    var futureNoticed = false
    /// The pipeline of each tracked device (``Fix/tracker``) seen so far.
    var trackers: [String: FixPipeline] = [:]
    /// How many of them `[mqtt.device_secrets]` does not name: those `max_devices` bounds.
    var unnamedTracked = 0
    /// What the tracked devices' fixes came to.
    var tracked = FixTally()
    /// The tracked devices whose fixes from the future were logged (once each).
    var aheadNoticed: Set<String> = []
    /// When each tracked device last sent a message, by the agent's clock.
    var lastHeard: [String: ContinuousClock.Instant] = [:]
    /// When the quietest tracked device will have been idle for `device_idle`.
    var idleDue: ContinuousClock.Instant?
    /// How many messages of the source carried no usable fix, by kind.
    var ignored: [String: Int] = [:]
    /// The devices whose own fault (a location in the clear despite a secret) was said.
    var devicesWarned: Set<String> = []
    /// The new device names refused beyond `max_devices` (the first ones), for the summary.
    var refusedDevices: [String] = []
}
