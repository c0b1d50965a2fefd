/// What the pipeline watches: the reminders, collections and time alarms of a config, and the
/// engine's settings.
public struct ReminderSet: Sendable {
    public var reminders: [Reminder]
    public var collections: [ReminderCollection]
    public var alarms: [TimeAlarm]
    public var settings: EngineSettings
    /// The reminders and time alarms of tasks in task lists, by their key in the state file (their
    /// task's UID, with a suffix): their completion lives in the task (a completed task is no
    /// reminder), never in the state file, and their state follows their key when their id changes.
    public var taskKeys: [String: String]

    /// The ids of ``taskKeys``.
    public var taskIDs: Set<String> { Set(taskKeys.values) }

    public init(
        reminders: [Reminder], collections: [ReminderCollection] = [], alarms: [TimeAlarm] = [],
        settings: EngineSettings = EngineSettings(), taskKeys: [String: String] = [:]
    ) {
        self.reminders = reminders
        self.collections = collections
        self.alarms = alarms
        self.settings = settings
        self.taskKeys = taskKeys
    }
}
