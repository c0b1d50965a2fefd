import FoundationEssentials
import GeoAlarmCore
import Logging
import Synchronization

/// Keeps an engine's state in a ``StateStore``, and carries on in memory when the store fails.
///
/// Used from one loop at a time (the agent's, or replay's); a lock keeps it safe all the same.
public final class StateKeeper: StateLedger {
    /// The open store (nil in memory, or once it failed), and its data version when
    /// ``changedByOthers()`` last looked.
    private let held: Mutex<(store: StateStore?, seenVersion: Int?)>
    private let logger: Logger
    /// The tracked device whose sides this keeper keeps; nil for this machine's own.
    public let device: String?

    /// Opens the store at `path` (none: memory only). A store that cannot be opened is logged
    /// with its file and cause, and the keeper runs in memory.
    public init(path: String?, logger: Logger) {
        self.logger = logger
        device = nil
        var store: StateStore?
        if let path {
            do {
                store = try StateStore(path: path)
            } catch {
                logger.error("\(error); state will not persist, running in memory")
            }
        }
        held = Mutex((store, nil))
    }

    private init(store: StateStore?, logger: Logger, device: String) {
        held = Mutex((store, nil))
        self.logger = logger
        self.device = device
    }

    /// The store while it works.
    private var store: StateStore? { held.withLock { $0.store } }

    /// A keeper of a tracked device's sides in the same store (lifecycles are one for every device).
    public func scoped(to device: String) -> any StateLedger {
        StateKeeper(store: store, logger: logger, device: device)
    }

    /// Whether state is being written to disk.
    public var isPersisting: Bool { store != nil }

    /// The open store, for a sink that keeps more in it (a durable queue); nil in memory.
    public var sharedStore: StateStore? { store }

    /// The saved sides of this keeper's device's fences (none in memory).
    public func savedPresence() -> [String: SavedPresence] {
        read([:]) { store throws(StoreError) in try store.savedPresence(device: device) }
    }

    /// This machine's saved proximity of each reminder (none in memory).
    public func savedProximities() -> [String: SavedProximity] {
        read([:]) { store throws(StoreError) in try store.savedProximities() }
    }

    /// An engine for `reminders` and `collections` that starts from the saved side of every
    /// fence that is unchanged.
    public func engine(
        reminders: [Reminder], collections: [ReminderCollection] = [], settings: EngineSettings
    ) -> GeofenceEngine {
        let saved = savedPresence()
        let engine = GeofenceEngine(reminders: reminders, collections: collections, settings: settings, restoring: saved)
        if engine.keptStates > 0, let store { logger.info("restored the state of \(engine.keptStates) reminders from \(store.path)") }
        return engine
    }

    /// Deletes history older than `keep` seconds before `now` (nothing when `keep` is nil).
    public func pruneHistory(keep: Double?, now: Date) {
        guard let store, let keep else { return }
        do {
            let removed = try store.prune(before: now.addingTimeInterval(-keep))
            if removed > 0 { logger.info("pruned \(removed) events older than the history's keep from \(store.path)") }
        } catch {
            fail(error)
        }
    }

    /// Whether another process wrote the store since the last call (true the first time): the
    /// agent's own writes do not count, so a change of the file that it made itself is not read back.
    public func changedByOthers() -> Bool {
        guard let store else { return false }
        do {
            let version = try store.dataVersion()
            return held.withLock { held in
                defer { held.seenVersion = version }
                return version != held.seenVersion
            }
        } catch {
            fail(error)
            return false
        }
    }

    /// The lifecycles saved in the store (none in memory), for an ``Announcer``.
    public func lifecycles() -> [String: Lifecycle] {
        read([:]) { store throws(StoreError) in try store.lifecycles() }
    }

    /// Writes what one fix changed: its changes of side, the events announced for it, and the
    /// completions those caused (as `announcer` has them); a failing store is logged once and dropped.
    public func save(_ outcome: FixOutcome, announced: [GeofenceEvent], announcer: Announcer) {
        // Proximities are kept for this machine only: `status` and the map show its own.
        let proximities = device == nil ? outcome.proximities : []
        guard let store, !outcome.changes.isEmpty || !announced.isEmpty || !proximities.isEmpty else { return }
        var completed: [String: Date] = [:]
        for event in announced {
            if let time = announcer.lifecycles[event.reminder.id]?.completedAt { completed[event.reminder.id] = time }
        }
        do {
            try store.record(outcome.changes, events: announced, completed: completed, device: device, proximities: proximities)
        } catch {
            fail(error)
        }
    }

    /// Writes a time alarm's firing (history and last fired).
    public func saveAlarm(_ firing: AlarmFiring) {
        guard let store else { return }
        do {
            try store.record(firing)
        } catch {
            fail(error)
        }
    }

    /// Writes a pop-up button's action on reminder `id`, as `geoalarm complete` and `snooze` would.
    public func apply(_ action: ReminderAction, to id: String) {
        guard let store else { return }
        do {
            switch action {
            case .complete(let time): try store.setCompleted(id, at: time)
            case .snooze(let until): try store.snooze(id, until: until)
            }
        } catch {
            fail(error)
        }
    }

    /// Notes the last fix used (for `geoalarm status`).
    public func saveLastFix(_ fix: Fix) {
        guard let store else { return }
        do {
            try store.setLastFix(fix)
        } catch {
            fail(error)
        }
    }

    /// What `body` reads from the store; `empty` in memory, or when the store fails (then dropped).
    private func read<Value>(_ empty: Value, _ body: (StateStore) throws(StoreError) -> Value) -> Value {
        guard let store else { return empty }
        do {
            return try body(store)
        } catch {
            fail(error)
            return empty
        }
    }

    private func fail(_ error: StoreError) {
        logger.error("\(error); state will not persist from now on, running in memory")
        held.withLock { $0.store = nil }
    }
}
