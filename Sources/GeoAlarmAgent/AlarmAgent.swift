import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmICalendar
import GeoAlarmOwnTracks
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
    /// Told what the engine needs after each own fix while it takes requests (GeoClue's).
    private let source: any FixSource
    private let configPath: String
    private let initialConfig: Config
    private let sinks: [any EventSink]
    private let keeper: StateKeeper
    private let logger: Logger
    /// Records, per fix, the time from the source reading it to its events being emitted.
    private let latency: (@Sendable (Duration) -> Void)?
    /// Writes a task's Done where it lives, and keeps the task lists on servers in step.
    private let taskLists: TaskListService
    /// systemd, told that the agent is ready, how it stands and that it stops (nil when it
    /// did not start the agent as a notify service).
    private let serviceManager: ServiceManager?
    /// The tracked devices' limits (`[mqtt]`'s OwnTracks settings).
    private let deviceLimits: TrackedDevices.Limits

    /// How long without a usable fix before the silence is logged.
    static let silenceBeforeNotice: Duration = .seconds(10)
    /// How often the last fix is written for `geoalarm status` and the map (besides with each change of side).
    static let lastFixInterval: TimeInterval = 10

    /// Events go to `sinks` in order (the stdout log first); `latency`, when given, hears each
    /// fix's delay; `taskLists` writes a task's Done, and hears of the writes a command left for a
    /// server and of the lists of each reloaded config; `serviceManager`, when given, hears that the agent is ready,
    /// each change of how it stands, and that it stops; `ownTracks` (`[mqtt]`'s, when given)
    /// says how many of OwnTracks' devices are tracked, and for how long.
    public init<Source: FixSource>(
        source: Source, channel: AgentChannel, loop: EventLoop, config: Config, state: StateKeeper, sinks: [any EventSink],
        taskLists: TaskListService, logger: Logger, latency: (@Sendable (Duration) -> Void)? = nil,
        serviceManager: ServiceManager? = nil, ownTracks: OwnTracksSettings? = nil
    ) {
        let ownTracks = ownTracks ?? OwnTracksSettings()
        deviceLimits = TrackedDevices.Limits(
            most: ownTracks.maxDevices, named: Set(ownTracks.deviceSecrets.keys), idle: .seconds(ownTracks.deviceIdle))
        self.taskLists = taskLists
        self.serviceManager = serviceManager
        self.channel = channel
        eventLoop = loop
        sourceName = source.name
        usesUndatedFixes = source.usesUndatedFixes
        self.source = source
        keeper = state
        configPath = config.path
        initialConfig = config
        self.logger = logger
        self.latency = latency
        self.sinks = sinks
    }

    public func run() async throws {
        var current = AgentState(
            config: initialConfig,
            pipeline: FixPipeline(watching: initialConfig.reminderSet, state: keeper, sinks: sinks, timeZone: SystemTimeZone()),
            devices: TrackedDevices(limits: deviceLimits), reportsOnlyOnMovement: source.reportsOnlyOnMovement)
        current.pipeline.lastFixInterval = Self.lastFixInterval
        logger.info("watching \(Self.describe(current.pipeline.engine)) from \(configPath)")
        current.pipeline.fireDueAlarms(now: Date())
        keeper.pruneHistory(keep: initialConfig.historyKeep, now: Date())
        rearmTimer(&current)
        tellServiceManager(&current, ready: true)
        // Graceful shutdown ends the channel: what is in it already is still handled. (Not
        // `cancelOnGracefulShutdown()`, whose merge runs a task off the loop.)
        await withGracefulShutdownHandler {
            for await input in channel.stream {
                handle(input, &current)
                // A sink short of room (the MQTT outbox, while its broker catches up) holds the
                // next input back; the reports meanwhile wait in the channel.
                if case .source(.fixes) = input {
                    for sink in sinks { await sink.roomForEvents() }
                }
            }
        } onGracefulShutdown: { [channel, serviceManager] in
            // Said as the stop begins, for systemd to show the unit deactivating; nothing more is
            // to be done if it cannot hear.
            try? serviceManager?.notify(["STOPPING=1"])
            channel.continuation.finish()
        }
        if let timer = current.timer { eventLoop.cancel(timer) }
        keeper.flush()
        if current.devices.count > 0 || !current.ignored.isEmpty { logger.info("\(Self.describeTracking(current))") }
        logger.info("stopped")
    }

    /// One input, handed to its handler: each says what the agent does when that comes.
    private func handle(_ input: AgentInput, _ current: inout AgentState) {
        switch input {
        case .source(let report): take(report, &current)
        case .timer: timerFired(&current)
        case .reminderAction(let action, let pressed): take(action, on: pressed, &current)
        case .taskCompleted(let action, let id, let task, let written): taskWritten(action, id: id, task: task, written, &current)
        case .stateChanged: stateFileChanged(&current)
        case .reload: reload(&current)
        case .configLoaded(let loaded): take(loaded, &current)
        case .configChanged:
            logger.info("\(configPath) changed")
            reload(&current)
        case .tasksChanged:
            logger.info("a task list changed")
            if !current.tasksBeingWritten.isEmpty { current.tasksReadDuringWrite = true }
            reload(&current)
        }
    }

    /// What the source says: fixes, how it stands, and what it passed over.
    private func take(_ report: SourceReport, _ current: inout AgentState) {
        switch report {
        case .connected:
            if current.connection != .connected {
                logger.info("connected to \(current.sourceInUse ?? sourceName)")
                current.connection = .connected
                tellServiceManager(&current)
            }
        case .unavailable(let reason):
            if current.connection != .unavailable(reason) {
                logger.warning("\(current.sourceInUse ?? sourceName) unavailable: \(reason); retrying")
                current.connection = .unavailable(reason)
                tellServiceManager(&current)
            }
        case .failed(let reason): logger.error("\(sourceName): \(reason)")
        case .warning(let text): logger.warning("\(sourceName): \(text)")
        case .ignored(let kind, let reason, let device): ignored(kind, reason, of: device, &current)
        case .fixes(let fixes, let readAt): handle(fixes, readAt: readAt, &current)
        case .switched(let name, let why, let reportsOnlyOnMovement): switched(to: name, why, reportsOnlyOnMovement, &current)
        }
    }

    /// Something the source passed over. The first of each kind is logged, the others counted: a
    /// flood of junk must not flood the log. A device's own fault is said once for each device
    /// (up to a bound).
    private func ignored(_ kind: String, _ reason: String, of device: String?, _ current: inout AgentState) {
        if let device {
            if current.devicesWarned.count < Self.trackersShown, current.devicesWarned.insert(device).inserted {
                logger.warning("\(sourceName): ignored \(reason) (\(kind): said once for each device, every one counted in the summary at the end)")
            }
        } else if current.ignored[kind, default: 0] == 0 {
            logger.warning("\(sourceName): ignored \(reason) (\(kind): the first is logged, every one counted in the summary at the end)")
        }
        current.ignored[kind, default: 0] += 1
    }

    /// The fixes come from another source now (`auto`'s hand-over), for `why`.
    private func switched(to name: String, _ why: String, _ reportsOnlyOnMovement: Bool, _ current: inout AgentState) {
        logger.info("fixes from \(name): \(why)")
        (current.sourceInUse, current.sourceWhy) = (name, why)
        current.reportsOnlyOnMovement = reportsOnlyOnMovement
        current.connection = .connecting
        (current.silentSince, current.lastUsable, current.coarseFixesSaid) = (nil, nil, false)
        // A source that takes requests now (GeoClue taking over from gpsd) starts from what
        // the engine needs where the last fix was.
        if source.takesRequests, let fix = current.lastOwnFix { tell(after: fix, &current) }
        rearmTimer(&current)
        tellServiceManager(&current)
    }

    /// The one timer: idle devices let go, a silence said, time alarms fired.
    private func timerFired(_ current: inout AgentState) {
        current.timer = nil
        if let due = current.devices.idleDue, ContinuousClock.now >= due { letIdleDevicesGo(&current) }
        if current.silentSince == nil, !current.reportsOnlyOnMovement, let last = current.lastUsable,
           ContinuousClock.now - last.at >= Self.silenceBeforeNotice {
            noticeSilence(&current)
        }
        current.pipeline.fireDueAlarms(now: Date())
        rearmTimer(&current)
    }

    /// A button pressed (a pop-up's, the map's, Home Assistant's) on the reminder `pressed` showed.
    /// A task is completed where it lives: its file, which its app and every device that syncs it
    /// read (once: a second Done, on a pop-up shown before, leaves its first completion). The
    /// task-list service writes it off the loop, and the task is silenced only once it is written.
    private func take(_ action: ReminderAction, on pressed: PressedReminder, _ current: inout AgentState) {
        guard let id = reminderID(of: pressed, current) else { return }
        if case .complete(let time) = action, !current.pipeline.isCompleted(id),
           let task = current.config.taskOrigin(of: id) {
            guard !current.tasksBeingWritten.contains(id) else { return }
            if taskLists.complete(task, at: time, for: action, id: id) {
                current.tasksBeingWritten.insert(id)
            } else {
                logger.warning("Done on \(id) comes as the agent stops: not written; it stays open in task list \(task.list)")
            }
            return
        }
        apply(action, to: id, &current)
    }

    /// A task's Done, written by the task-list service (or not): silenced once written, else said and left open.
    private func taskWritten(
        _ action: ReminderAction, id: String, task: TaskOrigin, _ written: Result<ICalendarTime?, TaskProblem>, _ current: inout AgentState
    ) {
        current.tasksBeingWritten.remove(id)
        switch written {
        case .success(let next):
            let done = next.map { "moved \(id) on (it repeats) to \($0.displayText)" } ?? "completed \(id)"
            if task.isOnServer {
                logger.info("\(done) in task list \(task.list): goes to the server (\(task.path))")
            } else {
                logger.info("\(done) in task list \(task.list) (\(task.path))")
            }
            apply(action, to: id, &current)
            // The list was read again while the Done was being written: read once more, so
            // that what the pipeline follows is the task as written (a repeating one open again).
            if current.tasksReadDuringWrite, current.tasksBeingWritten.isEmpty {
                current.tasksReadDuringWrite = false
                reload(&current)
            }
        case .failure(let problem):
            // Never half of it: not written, not silenced; it fires here as its app shows it.
            logger.error("""
                cannot complete \(id) in task list \(task.list) (\(task.path)): \(problem); it stays open, here and \
                there (press Done again once that is mended)
                """)
        }
    }

    /// A command (complete, snooze...) wrote the state file; one may have fetched a server's task
    /// list into it, or left a write for the server.
    private func stateFileChanged(_ current: inout AgentState) {
        if !current.config.serverTaskLists.isEmpty {
            reload(&current)
            if let waiting = try? keeper.taskListCache.waitingWrites(), !waiting.isEmpty { taskLists.writeWaits() }
        }
        if let lifecycles = current.pipeline.refreshLifecycles() {
            for tracked in current.devices.pipelines.values { tracked.takeLifecycles(lifecycles) }
        }
        current.pipeline.fireDueAlarms(now: Date())
        rearmTimer(&current)
    }

    /// The id a pressed button's reminder has now (``Config/reminderID(of:)``); nil, said, when
    /// its task is no longer in its list.
    private func reminderID(of pressed: PressedReminder, _ current: AgentState) -> String? {
        guard let id = current.config.reminderID(of: pressed) else {
            logger.warning("\(pressed.id): its task is no longer in its list (deleted, or moved to another): the button does nothing")
            return nil
        }
        if id != pressed.id {
            logger.info("\(pressed.id) is \(id) now (its list changed since its pop-up was shown): the button acts on it")
        }
        return id
    }

    /// A button's action on reminder `id`, taken by the pipeline (and every tracked device's).
    private func apply(_ action: ReminderAction, to id: String, _ current: inout AgentState) {
        let lifecycles = current.pipeline.apply(action, to: id)
        for tracked in current.devices.pipelines.values { tracked.takeLifecycles(lifecycles) }
        current.pipeline.fireDueAlarms(now: Date())
        rearmTimer(&current)
    }

    /// A report's fixes: each through its pipeline (this machine's, or its tracked device's), their
    /// records committed in one transaction, then their events given to the sinks.
    private func handle(_ fixes: [Fix], readAt: ContinuousClock.Instant, _ current: inout AgentState) {
        let receivedAt = Date()
        let now = ContinuousClock.now
        let idleWasDue = current.devices.idleDue != nil
        var staged: [StagedFix] = []
        for fix in fixes {
            guard let device = fix.tracker else {
                staged.append(current.pipeline.stage(fix, receivedAt: receivedAt, undatedUsable: usesUndatedFixes))
                continue
            }
            switch current.devices.stage(fix, of: device, base: current.pipeline, receivedAt: receivedAt, now: now) {
            case .staged(let fix, let isNew):
                staged.append(fix)
                if isNew, current.devices.count <= Self.trackersShown {
                    let restored = current.devices.pipelines[device]?.engine.keptStates ?? 0
                    logger.info("tracking \(DisplayText.escaped(device)) (\(DisplayText.counted(restored, "side")) restored)")
                }
            case .notKept(let result):
                noteAhead(fix, result, receivedAt: receivedAt, &current)
            case .refused(let first):
                refused(device, first: first, &current)
            }
        }
        FixPipeline.commitAndDeliver(staged, to: keeper)
        // The first device heard sets when the quietest one is due to be let go.
        if !idleWasDue, current.devices.idleDue != nil { rearmTimer(&current) }
        for fix in staged {
            let device = fix.fix.tracker
            for (event, silence) in fix.result.silenced {
                let whose = device.map { " for \(DisplayText.escaped($0))" } ?? ""
                logger.info("\(event.kind.rawValue) \(event.reminder.id)\(whose) not announced: \(silence)")
            }
            latency?(ContinuousClock.now - readAt)
            if device == nil { noteOwn(fix.fix, fix.result, &current) } else { noteAhead(fix.fix, fix.result, receivedAt: receivedAt, &current) }
        }
    }

    /// What this machine's fix says of the receiver: back from a silence, silent, or stamped in the future.
    private func noteOwn(_ fix: Fix, _ result: FixResult, _ current: inout AgentState) {
        switch result.outcome {
        case .accepted:
            if current.silentSince != nil { logger.info("fixes are back at \(Self.clock(fix.time))") }
            current.futureNoticed = false
            let wasWatching = current.lastUsable != nil && current.silentSince == nil
            current.silentSince = nil
            current.lastUsable = (ContinuousClock.now, fix.time)
            // The silence timer is set when fixes start; while they flow it only moves on when it fires.
            if !wasWatching { rearmTimer(&current) }
            current.lastOwnFix = fix
            if source.takesRequests { tell(after: fix, &current) }
        case .rejected(.noFix) where current.silentSince == nil && current.lastUsable != nil:
            noticeSilence(&current)
        case .rejected(.future) where !current.futureNoticed:
            current.futureNoticed = true
            logger.warning("""
                fixes stamped \(fix.time.map(Timestamp.iso8601) ?? "?"), more than a day ahead of this system's clock, \
                are ignored: the receiver's date (or gpsd's GPS week rollover guess) is wrong, or the system clock is
                """)
        case .rejected:
            break
        }
    }

    /// Tells the source what the engine needs after `fix` (when that changed), and says once when
    /// its fixes are coarser than the smallest fence near: that fence's side may be misjudged.
    private func tell(after fix: Fix, _ current: inout AgentState) {
        let need = current.pipeline.engine.locationNeed(at: fix)
        if need != current.toldNeed {
            current.toldNeed = need
            source.request(need)
        }
        if !current.coarseFixesSaid, let error = fix.horizontalError, need.smallestNearRadius < error {
            current.coarseFixesSaid = true
            logger.warning("""
                fixes from \(current.sourceInUse ?? sourceName) are accurate to \(Int(error.rounded())) m, coarser than a fence \
                of \(Int(need.smallestNearRadius.rounded())) m near here: its side may be misjudged until a finer one comes \
                (geoalarm check lists the reminders smaller than a source's accuracy)
                """)
        }
    }

    /// A tracked device's location stamped ahead of the clock: said once a device (for so many
    /// devices at most: made-up names must not flood the log).
    private func noteAhead(_ fix: Fix, _ result: FixResult, receivedAt: Date, _ current: inout AgentState) {
        guard case .rejected(.future) = result.outcome, let time = fix.time, let device = fix.tracker,
              current.devices.isNewlyAhead(device) else { return }
        logger.warning("""
            \(DisplayText.escaped(device)): a location stamped \(Timestamp.iso8601(time)), \
            \(Span.describe(time.timeIntervalSince(receivedAt))) ahead of this system's clock, is set aside \
            (the device's clock or its message is wrong); more such are only counted
            """)
    }

    /// A new device refused beyond `max_devices`: said the first time, counted for the summary.
    private func refused(_ device: String, first: Bool, _ current: inout AgentState) {
        if first {
            let most = current.devices.limits.most
            logger.warning("""
                \(sourceName): \(DisplayText.counted(most, "device")) \(most == 1 ? "is" : "are") tracked, max_devices: \
                \(DisplayText.escaped(device)) and any \
                other new device are refused (a device named in [mqtt.device_secrets] always has a place); the names refused \
                are listed and counted in the summary at the end
                """)
        }
        current.ignored[Self.beyondMaxDevices, default: 0] += 1
    }

    /// How many tracked devices were seen, and what their messages came to: "3 devices tracked:
    /// 12 fixes, 12 used, 2 events; 3 messages ignored (1 encrypted without a secret, 2 malformed)".
    static func describeTracking(_ current: AgentState) -> String {
        var text = "\(DisplayText.counted(current.devices.count, "device")) tracked: \(current.devices.tally.describe())"
        if !current.ignored.isEmpty {
            let kinds = current.ignored.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            text += "; \(DisplayText.counted(current.ignored.values.reduce(0, +), "message")) ignored (\(kinds.joined(separator: ", ")))"
        }
        let refused = current.devices.refusedNames
        if !refused.isEmpty {
            let more = refused.count == TrackedDevices.refusedShown ? ", and maybe more" : ""
            text += "; refused beyond max_devices: \(refused.map(DisplayText.escaped).joined(separator: ", "))\(more)"
        }
        return text
    }

    /// Lets go of the tracked devices silent for `device_idle`: their state stays in the state
    /// file, and their next message brings it back.
    private func letIdleDevicesGo(_ current: inout AgentState) {
        let quiet = current.devices.letIdleGo(now: ContinuousClock.now)
        if !quiet.isEmpty {
            logger.info("""
                let go of \(DisplayText.counted(quiet.count, "device")) silent for \
                \(Span.describe(current.devices.limits.idle / .seconds(1))) (their state stays in the state file); \
                \(current.devices.count) tracked
                """)
        }
    }

    /// The kind of ignored message of a device beyond `max_devices`.
    static let beyondMaxDevices = "new device beyond max_devices"

    /// How many new tracked devices are logged one by one.
    static let trackersShown = 20

    /// Sets the one timer for what is due next: the silence notice (10 s after the last usable
    /// fix, while fixes were flowing) or the next time alarm or snooze end, whichever is first.
    private func rearmTimer(_ current: inout AgentState) {
        if let timer = current.timer { eventLoop.cancel(timer) }
        current.timer = nil
        var delays: [Duration] = []
        if current.silentSince == nil, !current.reportsOnlyOnMovement, let last = current.lastUsable {
            delays.append(last.at + Self.silenceBeforeNotice - ContinuousClock.now)
        }
        if let due = current.pipeline.nextDue() {
            delays.append(.milliseconds(Int64(max(0, min(due.timeIntervalSinceNow, 86400 * 365)) * 1000)))
        }
        if let due = current.devices.idleDue { delays.append(due - ContinuousClock.now) }
        guard let delay = delays.min() else { return }
        current.timer = eventLoop.schedule(at: .now + max(delay, .zero)) { [channel] in channel.continuation.yield(.timer) }
    }

    private func noticeSilence(_ current: inout AgentState) {
        current.silentSince = ContinuousClock.now
        logger.warning("no fix since \(Self.clock(current.lastUsable?.fixTime)); holding the last known state")
    }

    /// Reads the config (and its task folders, collection files and lists' copies) again, off
    /// the loop: a slow disk or a large list holds up no fix, button or signal meanwhile. A
    /// reload asked for while one is under way is made once that one is done (many become one).
    private func reload(_ current: inout AgentState) {
        switch current.reloading {
        case .underWay, .askedAgain:
            current.reloading = .askedAgain
            return
        case .none:
            break
        }
        current.reloading = .underWay
        sendToServiceManager(ServiceManager.reloading(), &current)
        let cache = keeper.taskListCache
        Task.detached { [channel, configPath, sections = initialConfig.sectionKinds] in
            let loaded = Result { () throws(ConfigError) in try ConfigLoader.load(path: configPath, taskCache: cache, sections: sections) }
            channel.continuation.yield(.configLoaded(loaded))
        }
    }

    /// A reload's config, read off the loop, put in force (or its refusal said); then the reload
    /// asked for meanwhile, if any.
    private func take(_ loaded: Result<Config, ConfigError>, _ current: inout AgentState) {
        let askedAgain = current.reloading == .askedAgain
        current.reloading = .none
        switch loaded {
        case .success(let config):
            Self.logSources(of: config, to: logger)
            taskLists.follow(config.serverTaskLists.map(\.settings))
            current.config = config
            current.pipeline.reload(config.reminderSet)
            for tracked in current.devices.pipelines.values { tracked.reload(following: current.pipeline) }
            let engine = current.pipeline.engine
            logger.info("reloaded \(configPath): \(Self.describe(engine)), \(engine.keptStates) kept their state")
            let waiting = initialConfig.restartOnlyChanges(in: config)
            if !waiting.isEmpty {
                let restart = serviceManager?.unit.map { " (\($0.restartCommand))" } ?? ""
                logger.warning("""
                    \(waiting.joined(separator: ", ")) changed: read only at start, kept as they were until the agent \
                    restarts\(restart)
                    """)
            }
            keeper.pruneHistory(keep: config.historyKeep, now: Date())
            current.pipeline.fireDueAlarms(now: Date())
            rearmTimer(&current)
            current.reloadFailed = false
        case .failure(let error):
            logger.error("reload of \(configPath) failed; the previous config stays in force:")
            for diagnostic in error.diagnostics { logger.error("\(diagnostic.description)") }
            current.reloadFailed = true
        }
        tellServiceManager(&current, ready: true)
        if askedAgain { reload(&current) }
    }

    /// Tells systemd how the agent stands (the `Status:` line of `systemctl status`) when that
    /// changed, and with `ready` that it is ready (at start, and after each reload).
    private func tellServiceManager(_ current: inout AgentState, ready: Bool = false) {
        guard serviceManager != nil else { return }
        var status = switch current.connection {
        case .connecting: "connecting to \(current.sourceInUse ?? sourceName)"
        case .connected: "connected to \(current.sourceInUse ?? sourceName)"
        case .unavailable(let reason): "\(current.sourceInUse ?? sourceName) unavailable: \(reason); retrying"
        }
        if let why = current.sourceWhy { status += " (\(why))" }
        status += "; watching \(Self.describe(current.pipeline.engine))"
        if current.reloadFailed { status += "; the last reload failed, the previous config stays in force" }
        guard ready || status != current.toldStatus else { return }
        current.toldStatus = status
        sendToServiceManager((ready ? ["READY=1"] : []) + [ServiceManager.status(status)], &current)
    }

    /// Sends `fields` to systemd; a socket that cannot be written to is said once.
    private func sendToServiceManager(_ fields: [String], _ current: inout AgentState) {
        guard let serviceManager else { return }
        do {
            try serviceManager.notify(fields)
        } catch {
            if !current.serviceManagerFailed {
                logger.warning("cannot tell systemd how the agent stands (\(serviceManager.socketPath)): \(error)")
            }
            current.serviceManagerFailed = true
        }
    }

    /// Logs the config's warnings, the bad rows skipped in its collection files and the tasks
    /// passed over in its task lists (as warnings: all of them with `everyProblem`, else the first
    /// ``problemsShown`` of each list), and what each collection and list loaded; for the agent's
    /// reloads and the commands that load a config alike.
    public static func logSources(of config: Config, to logger: Logger, everyProblem: Bool = false) {
        for warning in config.warnings { logger.warning("\(warning)") }
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
        return DisplayText.counted(engine.reminders.count, "reminder")
            + (engine.collections.isEmpty ? "" : " and " + DisplayText.counted(places, "collection place"))
    }

    /// "08:06:30 UTC" for a fix time; "an unknown time" without one.
    static func clock(_ time: Date?) -> String {
        guard let time else { return "an unknown time" }
        let iso = Timestamp.iso8601(time)
        let start = iso.index(iso.startIndex, offsetBy: 11)
        return "\(iso[start..<iso.index(start, offsetBy: 8)]) UTC"
    }
}

/// What the agent keeps between inputs.
struct AgentState {
    enum Connection: Equatable {
        case connecting, connected
        case unavailable(String)
    }

    /// The config as last loaded (its task lists say where each task lives).
    var config: Config
    var pipeline: FixPipeline
    var connection = Connection.connecting
    /// When the last usable fix was handled, and its fix time.
    var lastUsable: (at: ContinuousClock.Instant, fixTime: Date?)?
    /// Set while the receiver is silent or has no fix (and it has been logged).
    var silentSince: ContinuousClock.Instant?
    /// The loop's timer for the next due moment.
    var timer: EventLoop.Timer?
    /// Set once fixes from the future were logged, until a usable fix comes.
    var futureNoticed = false
    /// The devices tracked (`--source owntracks`), each through a pipeline of its own.
    var devices: TrackedDevices
    /// How many messages of the source carried no usable fix, by kind.
    var ignored: [String: Int] = [:]
    /// The devices whose own fault (a location in the clear despite a secret) was said.
    var devicesWarned: Set<String> = []
    /// Whether the last reload of the config was refused (the one before stays in force).
    var reloadFailed = false
    /// What systemd was last told of how the agent stands.
    var toldStatus: String?
    /// Set once systemd's socket could not be written to (and it was said).
    var serviceManagerFailed = false
    /// The tasks whose Done is being written (off the loop): a second Done waits for the first.
    var tasksBeingWritten: Set<String> = []
    /// Whether a task list was read again while a Done was being written.
    var tasksReadDuringWrite = false
    /// Whether fixes come only once the device moved (GeoClue): no silence is then noticed.
    var reportsOnlyOnMovement: Bool
    /// The source behind `auto` that feeds the agent now, and why, once it said.
    var sourceInUse: String?
    var sourceWhy: String?
    /// What the source was last told the engine needs, and this machine's last accepted fix.
    var toldNeed: LocationNeed?
    var lastOwnFix: Fix?
    /// Set once fixes coarser than a fence near were said (again after each switch of source).
    var coarseFixesSaid = false
    /// Whether the config is being read again (off the loop), and whether another reload was
    /// asked for meanwhile.
    var reloading = Reloading.none

    enum Reloading {
        case none, underWay, askedAgain
    }
}
