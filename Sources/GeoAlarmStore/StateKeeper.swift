import Foundation
import GeoAlarmCore
import Logging

/// Keeps an engine's state in a ``StateStore``, and carries on in memory when the store fails.
///
/// Used from one loop at a time (the agent's, or replay's).
public final class StateKeeper: @unchecked Sendable {
    private var store: StateStore?
    private let logger: Logger

    /// Opens the store at `path` (none: memory only). A store that cannot be opened is logged
    /// with its file and cause, and the keeper runs in memory.
    public init(path: String?, logger: Logger) {
        self.logger = logger
        guard let path else { return }
        do {
            store = try StateStore(path: path)
        } catch {
            logger.error("\(error); state will not persist, running in memory")
        }
    }

    /// Whether state is being written to disk.
    public var isPersisting: Bool { store != nil }

    /// An engine for `reminders` that starts from the saved sides of every reminder whose fence is unchanged.
    public func engine(reminders: [Reminder], settings: EngineSettings) -> GeofenceEngine {
        var restored: [String: (Presence, Date?)] = [:]
        if let store {
            do {
                let saved = try store.savedPresence()
                for reminder in reminders {
                    guard let entry = saved[reminder.id], entry.fenceKey == reminder.fenceKey else { continue }
                    restored[reminder.id] = (entry.presence, entry.time)
                }
                if !restored.isEmpty { logger.info("restored the state of \(restored.count) reminders from \(store.path)") }
            } catch {
                fail(error)
            }
        }
        return GeofenceEngine(reminders: reminders, settings: settings, restoring: restored)
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
    public func save(_ outcome: FixOutcome, announced: [GeofenceEvent], engine: GeofenceEngine, announcer: Announcer) {
        guard let store, !outcome.changes.isEmpty || !announced.isEmpty else { return }
        let byID = Dictionary(engine.reminders.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var completed: [String: Date] = [:]
        for event in announced {
            if let time = announcer.lifecycles[event.reminder.id]?.completedAt { completed[event.reminder.id] = time }
        }
        do {
            try store.record(outcome.changes, events: announced, reminders: byID, completed: completed)
        } catch {
            fail(error)
        }
    }

    /// Writes a time alarm's event (history and last fired).
    public func saveAlarm(_ event: GeofenceEvent) {
        guard let store else { return }
        do {
            try store.record([], events: [event], reminders: [:])
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
