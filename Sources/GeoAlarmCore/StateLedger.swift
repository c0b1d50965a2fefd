import FoundationEssentials

/// Where the pipeline commits what each fix did before any sink hears of it, and reads back
/// what other processes changed: the state file (GeoAlarmStore's `StateKeeper`), or memory.
///
/// Every method keeps going when the file fails (it logs, then keeps the state in memory): an
/// agent that cannot write its state still announces.
public protocol StateLedger: AnyObject, Sendable {
    /// The ledger of a tracked device's sides in the same place (lifecycles are one for every device).
    func scoped(to device: String) -> any StateLedger
    /// Says how many fences took up their kept side (an engine made from ``savedPresence()``).
    func restored(_ count: Int)
    /// Whether it keeps this machine's proximities for others to read (a state file's `status`
    /// and map): in memory alone, nothing would read them.
    var keepsProximities: Bool { get }
    /// Follows task lists' reminders to their ids now (`keys`: each one's state key, its task's
    /// UID, to its id): one whose id changed takes its state along.
    func follow(taskKeys keys: [String: String])
    /// The kept sides of this ledger's device's fences, by fence id.
    func savedPresence() -> [String: SavedPresence]
    /// This machine's kept proximities, by reminder id.
    func savedProximities() -> [String: SavedProximity]
    /// The kept lifecycles (completed, snoozed, last announced), by reminder id.
    func lifecycles() -> [String: Lifecycle]
    /// Whether another process changed the lifecycles since the last call (true the first
    /// time): this process's own writes do not count.
    func changedByOthers() -> Bool
    /// Commits what fixes changed, in one transaction: one fix's record, or a batch's (a burst of
    /// tracked devices' locations), each record naming its device. A fix that left nothing to
    /// keep has no record, so the pipeline gives no empty one.
    func commit(_ records: [FixRecord])
    /// Commits a time alarm's firing.
    func saveAlarm(_ firing: AlarmFiring)
    /// Commits a pop-up button's action on reminder `id`, as `geoalarm complete` and `snooze` would.
    func apply(_ action: ReminderAction, to id: String)
}

/// What one fix changed, for the state file: its changes of side, the events announced for it,
/// the completions those caused, this machine's proximities and the last fix when it is to be
/// kept (for `status` and the map).
public struct FixRecord: Sendable {
    public var changes: [PresenceChange]
    public var events: [GeofenceEvent]
    /// The completions the events caused, by reminder id.
    public var completed: [String: Date]
    /// The tracked device it was of; nil for this machine's own.
    public var device: String?
    public var proximities: ProximityChanges
    /// The fix, when it is to be kept as the last one used.
    public var lastFix: Fix?

    public init(
        changes: [PresenceChange] = [], events: [GeofenceEvent] = [], completed: [String: Date] = [:], device: String? = nil,
        proximities: ProximityChanges = [], lastFix: Fix? = nil
    ) {
        self.changes = changes
        self.events = events
        self.completed = completed
        self.device = device
        self.proximities = proximities
        self.lastFix = lastFix
    }

    /// Whether it changes nothing.
    public var isEmpty: Bool { changes.isEmpty && events.isEmpty && proximities.isEmpty && lastFix == nil }
}
