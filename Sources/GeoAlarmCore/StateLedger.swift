import FoundationEssentials

/// Where the pipeline commits what each fix did before any sink hears of it, and reads back
/// what other processes changed: the state file (GeoAlarmStore's `StateKeeper`), or memory.
///
/// Every method keeps going when the file fails (it logs, then keeps the state in memory): an
/// agent that cannot write its state still announces.
public protocol StateLedger: AnyObject, Sendable {
    /// The ledger of a tracked device's sides in the same place (lifecycles are one for every device).
    func scoped(to device: String) -> any StateLedger
    /// An engine for these fences that starts from the kept side of every fence that is unchanged.
    func engine(reminders: [Reminder], collections: [ReminderCollection], settings: EngineSettings) -> GeofenceEngine
    /// Follows task lists' reminders to their ids now (`keys`: each one's state key, its task's
    /// UID, to its id): one whose id changed takes its state along.
    func follow(taskKeys keys: [String: String])
    /// The kept sides of this ledger's device's fences, by fence id.
    func savedPresence() -> [String: SavedPresence]
    /// The kept lifecycles (completed, snoozed, last announced), by reminder id.
    func lifecycles() -> [String: Lifecycle]
    /// Whether another process changed the lifecycles since the last call (true the first
    /// time): this process's own writes do not count.
    func changedByOthers() -> Bool
    /// Commits what one fix changed: its changes of side, the events announced for it, and the
    /// completions those caused (as `announcer` has them).
    func save(_ outcome: FixOutcome, announced: [GeofenceEvent], announcer: Announcer)
    /// Commits a time alarm's firing.
    func saveAlarm(_ firing: AlarmFiring)
    /// Commits a pop-up button's action on reminder `id`, as `geoalarm complete` and `snooze` would.
    func apply(_ action: ReminderAction, to id: String)
}
