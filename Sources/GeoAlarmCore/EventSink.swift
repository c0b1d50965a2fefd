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
    /// The reminder was just completed (by a command or a button): what it showed can go.
    func reminderCompleted(_ id: String)
    /// The reminders' lifecycles as they now are (completed, snoozed, last announced): after an
    /// announcement, a time alarm, or a command or button that changed them.
    func lifecyclesChanged(_ lifecycles: [String: Lifecycle])
    /// A fix was used (after its events were delivered): for a sink that reports the position.
    func positionUsed(_ fix: Fix)
    /// The config was reloaded: these are now the reminders and collections watched.
    func remindersChanged(_ reminders: [Reminder], collections: [ReminderCollection])
}

extension EventSink {
    public func presenceChanged(_ change: PresenceChange) {}
    public func proximityChanged(_ change: ProximityChange) {}
    public func reminderCompleted(_ id: String) {}
    public func lifecyclesChanged(_ lifecycles: [String: Lifecycle]) {}
    public func positionUsed(_ fix: Fix) {}
    public func remindersChanged(_ reminders: [Reminder], collections: [ReminderCollection]) {}
}
