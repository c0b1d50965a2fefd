/// Somewhere events go: the log on stdout, desktop pop-ups, command hooks.
///
/// `deliver` is called on the agent's loop for every announced event, in order, and must return
/// at once: a sink that does slow work (D-Bus, child processes) hands it to a thread of its own.
public protocol EventSink: Sendable {
    func deliver(_ event: GeofenceEvent)
    /// The reminder was just completed (by a command or a button): what it showed can go.
    func reminderCompleted(_ id: String)
    /// A fix was used (after its events were delivered): for a sink that reports the position.
    func positionUsed(_ fix: Fix)
    /// The config was reloaded: these are now the reminders and collections watched.
    func remindersChanged(_ reminders: [Reminder], collections: [ReminderCollection])
    /// The agent is stopping: end what is still under way (child processes, threads) and return.
    func stop()
}

extension EventSink {
    public func reminderCompleted(_ id: String) {}
    public func positionUsed(_ fix: Fix) {}
    public func remindersChanged(_ reminders: [Reminder], collections: [ReminderCollection]) {}
    public func stop() {}
}
