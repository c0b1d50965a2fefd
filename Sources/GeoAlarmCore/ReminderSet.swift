/// What the pipeline watches: the reminders, collections and time alarms of a config, and the
/// engine's settings.
public struct ReminderSet: Sendable {
    public var reminders: [Reminder]
    public var collections: [ReminderCollection]
    public var alarms: [TimeAlarm]
    public var settings: EngineSettings
    /// The reminders and time alarms of tasks in task lists: their completion lives in the task
    /// (a completed task is no reminder), never in the state file.
    public var taskIDs: Set<String>

    public init(
        reminders: [Reminder], collections: [ReminderCollection] = [], alarms: [TimeAlarm] = [],
        settings: EngineSettings = EngineSettings(), taskIDs: Set<String> = []
    ) {
        self.reminders = reminders
        self.collections = collections
        self.alarms = alarms
        self.settings = settings
        self.taskIDs = taskIDs
    }
}
