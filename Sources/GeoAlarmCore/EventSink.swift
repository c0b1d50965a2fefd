/// Somewhere events go: the log on stdout, desktop pop-ups, command hooks, an MQTT broker.
///
/// The pipeline gives sinks two streams, each in order, and per fix the first before the second:
/// - **presence changes** (``presenceChanged(_:)``): the engine's truth, every confirmed change
///   of side of every fence, announced or not, the first side learnt included. An output that
///   shows where the device is (an MQTT presence sensor, OwnTracks regions) follows these.
///   With them come **proximity changes** (``proximityChanged(_:)``): a reminder's distance,
///   direction of travel and time to arrival, when they changed noticeably.
/// - **announcements** (``announce(_:)``): the crossings the reminder's policy lets through
///   (`when`, `active`, snooze, completion, `repeat`, `dwell`, `announce_initial`), and time
///   alarms, each its own case of ``Announcement``. An output that interrupts a person (stdout's
///   event lines, pop-ups, hooks, the history) follows these.
///
/// Both are called on the agent's loop and must return at once: a sink that does slow work
/// (D-Bus, child processes, a broker) hands it to a thread of its own.
public protocol EventSink: Sendable {
    /// An announced crossing, or a time alarm.
    func announce(_ announcement: Announcement)
    /// A fence's confirmed side changed (see the type's documentation).
    func presenceChanged(_ change: PresenceChange)
    /// A reminder's proximity changed noticeably (see ``Proximity/differsNoticeably(from:)``).
    func proximityChanged(_ change: ProximityChange)
    /// Whether this sink shows proximities: the engine reads them only when a sink or the
    /// ledger wants them (``StateLedger/keepsProximities``), approaches aside.
    var followsProximity: Bool { get }
    /// The reminder was just completed (by a command or a button): what it showed can go.
    func reminderCompleted(_ id: String)
    /// The reminders' lifecycles as they now are (completed, snoozed, last announced): after an
    /// announcement, a time alarm, or a command or button that changed them.
    func lifecyclesChanged(_ lifecycles: [String: Lifecycle])
    /// A fix was used (after its events were delivered): for a sink that reports the position,
    /// and says so with ``followsPositions``.
    func positionUsed(_ fix: Fix)
    /// Whether this sink reports the position: only such sinks are given every fix used
    /// (``positionUsed(_:)``), a call that costs a copy of the sink per fix of a replay.
    var followsPositions: Bool { get }
    /// What the pipeline holds, when it starts and after each reload of the config: a sink that
    /// shows state shows this, then follows the changes (it keeps no state of its own beside
    /// the pipeline's, so that every output agrees from the first fix).
    func stateReset(_ state: ShownState)
    /// Returns once the sink has room for more events: the agent awaits it after each batch of
    /// fixes, so that a sink whose queue fills faster than it is delivered (a burst of
    /// transitions for a broker that acknowledges more slowly) holds the source back rather than
    /// dropping what it queued. A sink without such a queue returns at once.
    func roomForEvents() async
}

/// The pipeline's state for a sink that shows it (see ``EventSink/stateReset(_:)``): the
/// reminders and collections watched, this machine's confirmed side of each reminder, the
/// collection places it is inside, each reminder's proximity where one is known, and the
/// lifecycles.
public struct ShownState: Sendable {
    public var reminders: [Reminder]
    public var collections: [ReminderCollection]
    /// Each reminder's confirmed side (``Presence/unknown`` before one is confirmed).
    public var sides: [String: Presence]
    /// The collection places this machine is inside, by id (as their collection's reminder).
    public var placesInside: [String: Reminder]
    public var proximities: [String: Proximity]
    public var lifecycles: [String: Lifecycle]

    public init(
        reminders: [Reminder], collections: [ReminderCollection], sides: [String: Presence] = [:], placesInside: [String: Reminder] = [:],
        proximities: [String: Proximity] = [:], lifecycles: [String: Lifecycle] = [:]
    ) {
        self.reminders = reminders
        self.collections = collections
        self.sides = sides
        self.placesInside = placesInside
        self.proximities = proximities
        self.lifecycles = lifecycles
    }
}

extension EventSink {
    public func presenceChanged(_ change: PresenceChange) {}
    public func proximityChanged(_ change: ProximityChange) {}
    public var followsProximity: Bool { false }
    public func reminderCompleted(_ id: String) {}
    public func lifecyclesChanged(_ lifecycles: [String: Lifecycle]) {}
    public func positionUsed(_ fix: Fix) {}
    public var followsPositions: Bool { false }
    public func stateReset(_ state: ShownState) {}
    public func roomForEvents() async {}
}
