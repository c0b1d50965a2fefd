import Foundation
import GeoAlarmCore
import Logging

/// Keeps an engine's state in a ``StateStore``, and carries on in memory when the store fails.
///
/// Used from one loop at a time (the agent's, or replay's).
public final class StateKeeper: @unchecked Sendable {
    private var store: StateStore?
    private let logger: Logger
    /// The store's data version when ``changedByOthers()`` last looked.
    private var seenVersion: Int?
    /// The tracked device whose sides this keeper keeps; nil for this machine's own.
    public let device: String?

    /// Opens the store at `path` (none: memory only). A store that cannot be opened is logged
    /// with its file and cause, and the keeper runs in memory.
    public init(path: String?, logger: Logger) {
        self.logger = logger
        device = nil
        guard let path else { return }
        do {
            store = try StateStore(path: path)
        } catch {
            logger.error("\(error); state will not persist, running in memory")
        }
    }

    private init(store: StateStore?, logger: Logger, device: String) {
        self.store = store
        self.logger = logger
        self.device = device
    }

    /// A keeper of a tracked device's sides in the same store (lifecycles are one for every device).
    public func scoped(to device: String) -> StateKeeper {
        StateKeeper(store: store, logger: logger, device: device)
    }

    /// Whether state is being written to disk.
    public var isPersisting: Bool { store != nil }

    /// The open store, for an adapter that keeps more in it (the MQTT outbox); nil in memory.
    public var sharedStore: StateStore? { store }

    /// The saved sides of this keeper's device's fences (none in memory).
    public func savedPresence() -> [String: SavedPresence] {
        guard let store else { return [:] }
        do {
            return try store.savedPresence(device: device)
        } catch {
            fail(error)
            return [:]
        }
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
            defer { seenVersion = version }
            return version != seenVersion
        } catch {
            fail(error)
            return false
        }
    }

    /// The lifecycles saved in the store (none in memory), for an ``Announcer``.
    public func lifecycles() -> [String: Lifecycle] {
        guard let store else { return [:] }
        do {
            return try store.lifecycles()
        } catch {
            fail(error)
            return [:]
        }
    }

    /// Writes what one fix changed: its changes of side, the events announced for it, and the
    /// completions those caused (as `announcer` has them); a failing store is logged once and dropped.
    public func save(_ outcome: FixOutcome, announced: [GeofenceEvent], announcer: Announcer) {
        guard let store, !outcome.changes.isEmpty || !announced.isEmpty else { return }
        var completed: [String: Date] = [:]
        for event in announced {
            if let time = announcer.lifecycles[event.reminder.id]?.completedAt { completed[event.reminder.id] = time }
        }
        do {
            try store.record(outcome.changes, events: announced, completed: completed, device: device)
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

    /// Notes the last fix used (for `geoalarm status`).
    public func saveLastFix(_ fix: Fix) {
        guard let store else { return }
        do {
            try store.setLastFix(fix)
        } catch {
            fail(error)
        }
    }

    private func fail(_ error: StoreError) {
        logger.error("\(error); state will not persist from now on, running in memory")
        store = nil
    }
}
