import FoundationEssentials
import GeoAlarmCore

/// A fix through a pipeline's engine and announcer, its record made, waiting for its commit and
/// its sinks (``FixPipeline/commitAndDeliver(_:to:)``).
public struct StagedFix {
    let pipeline: FixPipeline
    public let fix: Fix
    public let result: FixResult
    /// Nil when the fix left nothing to keep.
    let record: FixRecord?
}

/// What one fix did in the pipeline.
public struct FixResult: Sendable {
    /// The engine's outcome; `.rejected(.noDate)` for an undated position the pipeline held back.
    public var outcome: FixOutcome
    /// The events announced, in order: committed to the state, then given to every sink.
    public var announced: [GeofenceEvent]
    /// The events their reminders' schedules or lifecycles kept quiet, with why.
    public var silenced: [(event: GeofenceEvent, reason: Silence)]
}

/// The one path every fix takes, whatever its source (gpsd, a recording) and whoever drives it
/// (`run`, `replay`, the benchmarks): the rule for undated positions, the engine, the announcer,
/// the state file, then the sinks (presence changes, then announcements: see ``EventSink``), in
/// that order, so that an event is committed before anything prints or shows it.
///
/// Used from one task at a time.
public final class FixPipeline {
    public private(set) var engine: GeofenceEngine
    public private(set) var announcer: Announcer
    public private(set) var alarms: [TimeAlarm]
    /// Task lists' reminders and time alarms, by their key in the state file: their completion
    /// lives in the task, and their state follows their key.
    public private(set) var taskKeys: [String: String] = [:]
    /// The ids of ``taskKeys``.
    public var taskIDs: Set<String> { Set(taskKeys.values) }

    /// The reminders whose id the last reload changed, by new id: their id before.
    private var renamed: [String: String] = [:]
    /// Where the state is kept (in memory when it has no file).
    public let state: any StateLedger
    private let sinks: [any EventSink]
    /// The indices of the sinks that follow positions (``EventSink/followsPositions``).
    private let positionSinks: [Int]

    private init(engine: GeofenceEngine, announcer: Announcer, state: any StateLedger, sinks: [any EventSink], taskKeys: [String: String]) {
        self.engine = engine
        self.announcer = announcer
        self.state = state
        self.sinks = sinks
        positionSinks = sinks.indices.filter { sinks[$0].followsPositions }
        self.taskKeys = taskKeys
        alarms = []
    }

    /// A pipeline for a tracked device (``Fix/tracker``): the same reminders and sinks, starting
    /// from the sides the state file keeps for that device and the lifecycles this one has, and
    /// the tighter ``GeofenceEngine/trackedFutureTolerance`` for fixes ahead of the clock; its
    /// collection places are kept sparse (see ``GeofenceEngine/copyForTrackedDevice(restoring:)``). It
    /// shares the fences and their index with this pipeline's engine; time alarms stay with this one.
    public func pipeline(forTracker device: String) -> FixPipeline {
        let keeper = state.scoped(to: device)
        let tracked = engine.copyForTrackedDevice(restoring: keeper.savedPresence())
        return FixPipeline(engine: tracked, announcer: announcer, state: keeper, sinks: sinks, taskKeys: taskKeys)
    }

    /// Takes a reloaded config's fences from `base` (the pipeline that reloaded it), keeping the
    /// state of every fence that did not change.
    public func reload(following base: FixPipeline) {
        engine = base.engine.freshCopy(carryingStateFrom: engine, renamed: base.renamed)
        taskKeys = base.taskKeys
        announcer.reopen(taskIDs)
    }

    /// Takes lifecycles another pipeline read from the state file (see ``refreshLifecycles()``).
    public func takeLifecycles(_ lifecycles: [String: Lifecycle]) {
        announcer.take(lifecycles)
        announcer.reopen(taskIDs)
    }

    /// A pipeline for `watched`, starting from the state `state` kept, giving events to `sinks`
    /// in order.
    public init(watching watched: ReminderSet, state: any StateLedger, sinks: [any EventSink], timeZone: any TimeZoneRules) {
        self.state = state
        self.sinks = sinks
        positionSinks = sinks.indices.filter { sinks[$0].followsPositions }
        state.follow(taskKeys: watched.taskKeys)
        engine = GeofenceEngine(
            reminders: watched.reminders, collections: watched.collections, settings: watched.settings, restoring: state.savedPresence())
        state.restored(engine.keptStates)
        // Proximities are read where something keeps or shows them (replay without a state file: nothing does).
        engine.showProximity(state.keepsProximities || sinks.contains { $0.followsProximity })
        engine.restoreProximities(state.savedProximities())
        announcer = Announcer(timeZone: timeZone, lifecycles: state.lifecycles())
        alarms = watched.alarms
        taskKeys = watched.taskKeys
        announcer.reopen(taskIDs)
        let shown = engine.shownState(lifecycles: announcer.lifecycles)
        for sink in sinks { sink.stateReset(shown) }
    }

    /// Every how many seconds (of the clock fixes arrive by) an accepted fix is kept as the last
    /// one used, besides every fix that changed a side; nil: never (a tracked device's, replay's).
    public var lastFixInterval: TimeInterval?
    /// When the last fix was kept.
    private var lastFixKept: Date?

    /// Runs one fix through: ``stage(_:receivedAt:undatedUsable:)``, its commit, then the sinks.
    @discardableResult
    public func process(_ fix: Fix, receivedAt: Date, undatedUsable: Bool) -> FixResult {
        // ``commitAndDeliver(_:to:)`` for one fix, without its arrays or a staged copy of the
        // fix: most fixes change nothing to keep, and a replay takes a million of them.
        let (result, record) = run(fix, receivedAt: receivedAt, undatedUsable: undatedUsable)
        if let record { state.commit([record]) }
        deliver(result, of: fix)
        return result
    }

    /// Runs one fix through the engine and the announcer and makes its record, without committing
    /// it or telling the sinks (see ``commitAndDeliver(_:to:)``); `receivedAt` is the system clock
    /// when it arrived (a fix far ahead of it is set aside, see ``GeofenceEngine/futureTolerance``).
    /// A position without a time is used only where the source says so
    /// (``FixSource/usesUndatedFixes``, `undatedUsable`).
    public func stage(_ fix: Fix, receivedAt: Date, undatedUsable: Bool) -> StagedFix {
        let (result, record) = run(fix, receivedAt: receivedAt, undatedUsable: undatedUsable)
        return StagedFix(pipeline: self, fix: fix, result: result, record: record)
    }

    /// What ``stage(_:receivedAt:undatedUsable:)`` makes of a fix: its result, and its record
    /// when it left something to keep (most fixes do not; a replay takes a million of them).
    private func run(_ fix: Fix, receivedAt: Date, undatedUsable: Bool) -> (FixResult, FixRecord?) {
        if fix.time == nil, fix.mode >= .twoD, fix.coordinate.isValid, !undatedUsable {
            return (FixResult(outcome: .rejected(.noDate), announced: [], silenced: []), nil)
        }
        let outcome = engine.process(fix, receivedAt: receivedAt)
        var result = FixResult(outcome: outcome, announced: [], silenced: [])
        guard case .accepted(let events, let changes, let proximities) = outcome else {
            return (result, nil)
        }
        for event in events {
            if let silence = announcer.decide(event) {
                result.silenced.append((event, silence))
            } else {
                result.announced.append(event)
            }
        }
        // Proximities and the last fix are kept for this machine only: `status` and the map show its own.
        let keepsProximities = fix.tracker == nil && !proximities.isEmpty
        let keepsFix = lastFixInterval.map { interval in
            !changes.isEmpty || lastFixKept.map { receivedAt.timeIntervalSince($0) >= interval } ?? true
        } ?? false
        guard !changes.isEmpty || !result.announced.isEmpty || keepsProximities || keepsFix else { return (result, nil) }
        var record = FixRecord(changes: changes, events: result.announced, device: fix.tracker)
        for event in result.announced {
            if let time = announcer.lifecycles[event.reminder.id]?.completedAt { record.completed[event.reminder.id] = time }
        }
        if keepsProximities { record.proximities = proximities }
        if keepsFix {
            record.lastFix = fix
            lastFixKept = receivedAt
        }
        return (result, record)
    }

    /// Commits the records of `staged` (fixes of this machine and of tracked devices, in the order
    /// they came) in one transaction of `ledger`, then gives each fix's changes and events to its
    /// pipeline's sinks, in order: nothing is shown before it is kept.
    public static func commitAndDeliver(_ staged: [StagedFix], to ledger: any StateLedger) {
        ledger.commit(staged.compactMap(\.record))
        for fix in staged { fix.pipeline.deliver(fix.result, of: fix.fix) }
    }

    /// Gives a committed fix's changes and events to the sinks. Each sink is called where it
    /// stands in the array: a copy of it, for every fix, would retain and release what it holds.
    private func deliver(_ result: FixResult, of fix: Fix) {
        guard case .accepted(_, let changes, let proximities) = result.outcome else { return }
        for change in changes {
            for sink in sinks.indices { sinks[sink].presenceChanged(change) }
        }
        for change in proximities {
            for sink in sinks.indices { sinks[sink].proximityChanged(change) }
        }
        for event in result.announced {
            for sink in sinks.indices { sinks[sink].announce(.crossing(event)) }
        }
        if !result.announced.isEmpty {
            for sink in sinks.indices { sinks[sink].lifecyclesChanged(announcer.lifecycles) }
        }
        for sink in positionSinks { sinks[sink].positionUsed(fix) }
    }

    /// Drives every report of `source` through the pipeline, as `replay` and the benchmarks do
    /// (the agent takes its reports one at a time from its channel, through ``process(_:receivedAt:undatedUsable:)``
    /// with the same rule): each report's fixes are processed, an undated one used only where the
    /// source says so (``FixSource/usesUndatedFixes``), and counted in `tally`; then `heard` gets
    /// the report.
    public func drive<Source: FixSource>(
        _ source: Source, counting tally: inout FixTally, heard: (SourceReport) throws -> Void
    ) async rethrows {
        for await report in source.reports() {
            if case .fixes(let fixes, _) = report {
                let now = Date()
                let undatedUsable = source.usesUndatedFixes
                // Counted one at a time: an array of a million results would be made, read once and freed.
                for fix in fixes { tally.count(process(fix, receivedAt: now, undatedUsable: undatedUsable)) }
            }
            try heard(report)
        }
    }

    /// Takes a reloaded config's reminders, keeping the state of every fence that did not change.
    public func reload(_ watched: ReminderSet) {
        // A task whose id changed (its list renamed, it moved to another) keeps its side, by its key.
        let previousKeys = taskKeys
        renamed = Dictionary(watched.taskKeys.compactMap { key, id in
            previousKeys[key].flatMap { $0 != id ? (id, $0) : nil }
        }) { first, _ in first }
        state.follow(taskKeys: watched.taskKeys)
        announcer.rename(renamed)
        engine = GeofenceEngine(
            reminders: watched.reminders, collections: watched.collections, settings: watched.settings,
            carryingStateFrom: engine, renamed: renamed)
        alarms = watched.alarms
        // A task completed in its list is no reminder; one that comes back was reopened there.
        taskKeys = watched.taskKeys
        announcer.reopen(taskIDs)
        let shown = engine.shownState(lifecycles: announcer.lifecycles)
        for sink in sinks { sink.stateReset(shown) }
    }

    /// Takes the lifecycles commands and pop-up buttons wrote to the state file (complete,
    /// snooze); a reminder completed since is taken off every sink (its pop-up closed). Nothing is
    /// read when only this process wrote the file since the last look. The lifecycles read, for
    /// the pipelines of tracked devices (``takeLifecycles(_:)``); nil when nothing changed.
    @discardableResult
    public func refreshLifecycles() -> [String: Lifecycle]? {
        guard state.changedByOthers() else { return nil }
        let lifecycles = state.lifecycles()
        for (id, lifecycle) in lifecycles where lifecycle.completedAt != nil && announcer.lifecycles[id]?.completedAt == nil {
            for sink in sinks { sink.reminderCompleted(id) }
        }
        takeLifecycles(lifecycles)
        for sink in sinks { sink.lifecyclesChanged(lifecycles) }
        return lifecycles
    }

    /// Whether reminder `id` is completed: a Done on it changes nothing.
    public func isCompleted(_ id: String) -> Bool { announcer.lifecycles[id]?.completedAt != nil }

    /// Takes a pop-up button's action on reminder `id` straight from the notifier: written to the
    /// state file (for other processes), taken by the announcer, and a reminder just completed is
    /// taken off every sink (its pop-ups closed). The lifecycles as they now are, for the
    /// pipelines of tracked devices (``takeLifecycles(_:)``).
    public func apply(_ action: ReminderAction, to id: String) -> [String: Lifecycle] {
        let tasks = taskIDs
        // A place of a task at a collection's places (its own reminders and time alarms are
        // tasks' ids themselves): snoozed at all of them, as its Done completes the task.
        let placeOf = tasks.contains(id) ? nil : ReminderCollection.collectionID(ofPlace: id).flatMap { tasks.contains($0) ? $0 : nil }
        var id = id
        if case .snooze = action, let placeOf { id = placeOf }
        // The first completion stands, as `geoalarm complete` and the map keep it: Done on a
        // pop-up shown before the reminder was completed elsewhere changes nothing.
        if case .complete = action, isCompleted(id) { return announcer.lifecycles }
        // A task's completion is written to its task list (by the caller), not the state file:
        // here it only silences the task until the list, read again, no longer has it.
        if case .complete = action, tasks.contains(id) || placeOf != nil {} else { state.apply(action, to: id) }
        announcer.apply(action, to: id)
        if case .complete = action {
            for sink in sinks { sink.reminderCompleted(id) }
        }
        for sink in sinks { sink.lifecyclesChanged(announcer.lifecycles) }
        return announcer.lifecycles
    }

    /// Announces every time alarm whose time (or snooze's end) has come by `now`, also one that
    /// came while the agent was stopped: committed first, then given to the sinks.
    public func fireDueAlarms(now: Date) {
        for alarm in alarms {
            let lifecycle = announcer.lifecycles[alarm.id] ?? Lifecycle()
            guard let due = alarm.firing(at: now, in: announcer.timeZone, lifecycle: lifecycle) else { continue }
            let firing = AlarmFiring(alarm: alarm, time: due)
            announcer.noteFired(alarm.id, at: due)
            state.saveAlarm(firing)
            for sink in sinks { sink.announce(.alarm(firing)) }
            for sink in sinks { sink.lifecyclesChanged(announcer.lifecycles) }
        }
    }

    /// When the next time alarm or snooze end is due, if any: what a timer needs to wait for.
    public func nextDue() -> Date? {
        let alarmsDue = alarms.compactMap { alarm in
            alarm.nextFiring(in: announcer.timeZone, lifecycle: announcer.lifecycles[alarm.id] ?? Lifecycle())
        }
        return alarmsDue.min()
    }
}

/// Counts of what the pipeline made of a run of fixes: a replayed track's, or the tracked
/// devices' of the agent.
public struct FixTally: Sendable {
    /// Fixes counted.
    public private(set) var fixes = 0
    private var accepted = 0
    private var rejected: [FixRejection: Int] = [:]
    /// Events printed, and events their reminders' schedules or lifecycles kept quiet.
    private var announced = 0
    private var silenced = 0

    public init() {}

    /// Fixes set aside for `reason`.
    public func rejections(_ reason: FixRejection) -> Int {
        rejected[reason] ?? 0
    }

    public mutating func count(_ result: FixResult) {
        fixes += 1
        switch result.outcome {
        case .accepted:
            accepted += 1
        case .rejected(let reason):
            rejected[reason, default: 0] += 1
        }
        announced += result.announced.count
        silenced += result.silenced.count
    }

    /// "1268 fixes, 1267 used (ignored: 1 inaccurate), 5 events".
    public func describe() -> String {
        var text = "\(DisplayText.counted(fixes, "fix", plural: "fixes")), \(accepted) used"
        let skipped = FixRejection.allCases.compactMap { reason in
            rejected[reason].map { "\($0) \(reason.rawValue)" }
        }
        if !skipped.isEmpty { text += " (ignored: \(skipped.joined(separator: ", ")))" }
        return text + ", " + DisplayText.counted(announced, "event") + (silenced > 0 ? " (\(silenced) more not announced by their schedule)" : "")
    }
}
