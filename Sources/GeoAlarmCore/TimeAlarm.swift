import FoundationEssentials

/// A reminder with a time instead of a place (`at = "2026-12-24T16:00"`): it fires when its
/// time comes, once, or again when a snooze ends; completing it silences it.
public struct TimeAlarm: Sendable, Equatable, Identifiable {
    public var id: String
    public var title: String
    public var notes: String?
    /// When: a local time (a date alone means its midnight), or a moment (a task's alarm).
    public var at: AlarmTime
    public var alert: ReminderAlert
    public var isEnabled: Bool
    /// A task's time alarm: the key its state is kept under (`UID/time-1`...), as ``Reminder/taskKey``.
    public var taskKey: String?

    public init(
        id: String, title: String, notes: String? = nil, at: AlarmTime, alert: ReminderAlert = ReminderAlert(),
        isEnabled: Bool = true, taskKey: String? = nil
    ) {
        self.id = id
        self.title = title
        self.notes = notes
        self.at = at
        self.alert = alert
        self.isEnabled = isEnabled
        self.taskKey = taskKey
    }

    /// When the alarm should fire now (at `now`, in `zone`), given its lifecycle: its time, or
    /// the end of a snooze after it fired; nil when it has nothing to say.
    public func firing(at now: Date, in zone: some TimeZoneRules, lifecycle: Lifecycle) -> Date? {
        guard let due = nextFiring(in: zone, lifecycle: lifecycle), now >= due else { return nil }
        return due
    }

    /// When the alarm will next fire (its time, or the end of a snooze after it fired), past or
    /// future; nil when it never will (disabled, completed, or fired already).
    public func nextFiring(in zone: some TimeZoneRules, lifecycle: Lifecycle) -> Date? {
        guard isEnabled, lifecycle.completedAt == nil else { return nil }
        let time = at.start(in: zone)
        let due = max(time, lifecycle.snoozedUntil ?? time)
        if let fired = lifecycle.lastFired, fired >= due { return nil }
        return due
    }
}

/// When a time alarm fires: a local date and time (`at` in the config), or a moment (a task's
/// alarm, in UTC or its own zone).
public enum AlarmTime: Sendable, Equatable, CustomStringConvertible {
    case local(LocalDate)
    case instant(Date)

    /// The moment it names in `zone`.
    public func start(in zone: some TimeZoneRules) -> Date {
        switch self {
        case .local(let date): date.start(in: zone)
        case .instant(let moment): moment
        }
    }

    /// The local date and time it names in `zone`.
    public func localDate(in zone: some TimeZoneRules) -> LocalDate {
        switch self {
        case .local(let date):
            return date
        case .instant(let moment):
            let time = LocalTime(moment, in: zone)
            return LocalDate(year: time.year, month: time.month, day: time.day, minuteOfDay: time.secondOfDay / 60)
        }
    }

    /// "2026-12-24 16:00" (a moment in UTC: "2026-12-24 15:00 UTC").
    public var description: String {
        switch self {
        case .local(let date): date.description
        case .instant: "\(localDate(in: .utc)) UTC"
        }
    }
}
