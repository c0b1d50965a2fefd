/// What the pipeline watches: the reminders, collections and time alarms of a config, and the
/// engine's settings.
public struct ReminderSet: Sendable {
    public var reminders: [Reminder]
    public var collections: [ReminderCollection]
    public var alarms: [TimeAlarm]
    public var settings: EngineSettings

    public init(
        reminders: [Reminder], collections: [ReminderCollection] = [], alarms: [TimeAlarm] = [],
        settings: EngineSettings = EngineSettings()
    ) {
        self.reminders = reminders
        self.collections = collections
        self.alarms = alarms
        self.settings = settings
    }
}
