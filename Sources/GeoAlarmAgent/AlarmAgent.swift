import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmOutput
import GeoAlarmStore
import Logging
import ServiceLifecycle
import UnixSignals

/// The live agent: fixes from gpsd through the engine and the announcer to the event sinks,
/// as a lifecycle service.
///
/// Everything arrives on one stream and is handled in order by one loop, so the engine needs no
/// lock: gpsd's reports, SIGHUP and changes to the config file (reload it), and a tick each
/// second (notice a silent receiver, pick up commands' changes in the state store).
/// Graceful shutdown (SIGTERM, SIGINT) ends the loop, stops the reader and returns.
public final class AlarmAgent: Service {
    /// What the loop reacts to.
    enum Input: Sendable {
        case gpsd(GPSDUpdate)
        case reload
        case configChanged
        case tick
    }

    private let source: GPSDSource
    private let configPath: String
    private let initialConfig: Config
    private let sinks: [any EventSink]
    private let state: StateKeeper
    private let logger: Logger
    /// Records, per fix, the time from gpsd's report being read to its events being emitted.
    private let latency: (@Sendable (Duration) -> Void)?

    /// How long without a usable fix before the silence is logged.
    static let silenceBeforeNotice: Duration = .seconds(10)

    /// Events go to `sinks` in order (the stdout log first); `latency`, when given, hears each report's delay.
    public init(
        source: GPSDSource, config: Config, state: StateKeeper, sinks: [any EventSink], logger: Logger,
        latency: (@Sendable (Duration) -> Void)? = nil
    ) {
        self.state = state
        self.source = source
        self.configPath = config.path
        self.initialConfig = config
        self.logger = logger
        self.latency = latency
        self.sinks = sinks
    }

    public func run() async throws {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let updates = source.updates()
        let watcher = ConfigWatcher(path: configPath) { continuation.yield(.configChanged) }
        if watcher == nil { logger.warning("cannot watch \(configPath) for changes; reload with SIGHUP") }
        var loop = AgentState(
            engine: state.engine(
                reminders: initialConfig.reminders, collections: initialConfig.collections, settings: initialConfig.settings),
            announcer: Announcer(timeZone: .current, lifecycles: state.lifecycles()),
            alarms: initialConfig.alarms, endpoint: source.endpoint.description)
        logger.info("watching \(Self.describe(loop.engine)) from \(configPath)")
        fireDueAlarms(&loop)
        state.pruneHistory(keep: initialConfig.historyKeep, now: Date())
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await update in updates { continuation.yield(.gpsd(update)) }
            }
            group.addTask {
                for await _ in hangups { continuation.yield(.reload) }
            }
            group.addTask {
                while (try? await Task.sleep(for: .seconds(1))) != nil { continuation.yield(.tick) }
            }
            for await input in inputs.cancelOnGracefulShutdown() {
                handle(input, state: &loop)
            }
            source.stop()
            watcher?.stop()
            group.cancelAll()
        }
        for sink in sinks.reversed() { sink.stop() }
        logger.info("stopped")
    }

    private func handle(_ input: Input, state: inout AgentState) {
        switch input {
        case .gpsd(.connected):
            if state.connection != .connected { logger.info("connected to gpsd at \(state.endpoint)") }
            state.connection = .connected
        case .gpsd(.unavailable(let reason)):
            if state.connection != .unavailable(reason) {
                logger.warning("gpsd at \(state.endpoint) unavailable: \(reason); retrying")
            }
            state.connection = .unavailable(reason)
        case .gpsd(.report(let fix, _)) where fix.time == nil && fix.mode >= .twoD:
            // gpsd sends positions without a time until it trusts the receiver's date (just after
            // it starts). Events carry their fix's time, so these wait for the first timed fix.
            break
        case .gpsd(.report(let fix, let readAt)):
            let outcome = state.engine.process(fix, receivedAt: Date())
            var announced: [GeofenceEvent] = []
            for event in outcome.events {
                if let silence = state.announcer.decide(event) {
                    logger.info("\(event.kind.rawValue) \(DisplayText.escaped(event.reminder.id)) not announced: \(silence)")
                    continue
                }
                announced.append(event)
            }
            // Committed to the history before anything is printed or shown: after a kill -9, every
            // event that reached stdout or a pop-up is in the state file.
            self.state.save(outcome, announced: announced, announcer: state.announcer)
            for event in announced {
                for sink in sinks { sink.deliver(event) }
            }
            if case .accepted = outcome, state.lastFixSaved.map({ ContinuousClock.now - $0 > .seconds(10) }) ?? true {
                self.state.saveLastFix(fix)
                state.lastFixSaved = ContinuousClock.now
            }
            latency?(ContinuousClock.now - readAt)
            switch outcome {
            case .accepted:
                if state.silentSince != nil { logger.info("fixes are back at \(Self.clock(fix.time))") }
                state.silentSince = nil
                state.lastUsable = (ContinuousClock.now, fix.time)
            case .rejected(.noFix) where state.silentSince == nil && state.lastUsable != nil:
                noticeSilence(&state)
            case .rejected:
                break
            }
        case .tick:
            if state.silentSince == nil, let last = state.lastUsable,
               ContinuousClock.now - last.at > Self.silenceBeforeNotice {
                noticeSilence(&state)
            }
            // Commands (complete, snooze...) and the pop-up buttons write the store.
            if self.state.isPersisting {
                let lifecycles = self.state.lifecycles()
                for (id, lifecycle) in lifecycles
                where lifecycle.completedAt != nil && state.announcer.lifecycles[id]?.completedAt == nil {
                    for sink in sinks { sink.reminderCompleted(id) }
                }
                state.announcer = Announcer(timeZone: state.announcer.timeZone, lifecycles: lifecycles)
            }
            fireDueAlarms(&state)

        case .reload:
            reload(&state)
        case .configChanged:
            logger.info("\(configPath) changed")
            reload(&state)
        }
    }

    /// Announces every time alarm whose time (or snooze's end) has come, by the wall clock:
    /// also one that came while the agent was stopped.
    private func fireDueAlarms(_ state: inout AgentState) {
        let now = Date()
        for alarm in state.alarms {
            let lifecycle = state.announcer.lifecycles[alarm.id] ?? Lifecycle()
            guard let due = alarm.firing(at: now, in: state.announcer.timeZone, lifecycle: lifecycle) else { continue }
            let event = alarm.event(at: due)
            state.announcer.noteFired(alarm.id, at: due)
            self.state.saveAlarm(event)
            for sink in sinks { sink.deliver(event) }
        }
    }

    private func noticeSilence(_ state: inout AgentState) {
        state.silentSince = ContinuousClock.now
        logger.warning("no fix since \(Self.clock(state.lastUsable?.fixTime)); holding the last known state")
    }

    private func reload(_ state: inout AgentState) {
        do {
            let config = try ConfigLoader.load(path: configPath)
            Self.logCollections(of: config, to: logger)
            let engine = GeofenceEngine(
                reminders: config.reminders, collections: config.collections, settings: config.settings,
                carryingStateFrom: state.engine)
            logger.info("reloaded \(configPath): \(Self.describe(engine)), \(engine.keptStates) kept their state")
            state.engine = engine
            state.alarms = config.alarms
            self.state.pruneHistory(keep: config.historyKeep, now: Date())
        } catch {
            logger.error("reload of \(configPath) failed; the previous config stays in force:")
            for diagnostic in error.diagnostics { logger.error("\(diagnostic.description)") }
        }
    }

    /// Logs the bad rows skipped in the config's collection files (as warnings), and what each
    /// collection loaded; for the agent's reloads and the commands that load a config alike.
    public static func logCollections(of config: Config, to logger: Logger) {
        for load in config.collectionLoads {
            for problem in load.shownProblems { logger.warning("\(problem)") }
            logger.info("\(load.summary)")
        }
    }

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

    var engine: GeofenceEngine
    var announcer: Announcer
    var alarms: [TimeAlarm]
    let endpoint: String
    /// When the last fix was written for `geoalarm status`.
    var lastFixSaved: ContinuousClock.Instant?
    var connection = Connection.connecting
    /// When the last usable fix was handled, and its fix time.
    var lastUsable: (at: ContinuousClock.Instant, fixTime: Date?)?
    /// Set while the receiver is silent or has no fix (and it has been logged).
    var silentSince: ContinuousClock.Instant?
}
