import FoundationEssentials

/// A time alarm whose time (or the end of its snooze) came.
public struct AlarmFiring: Sendable, Equatable {
    public var alarm: TimeAlarm
    /// When it was due (its time, or its snooze's end), which may be before it was noticed.
    public var time: Date

    public init(alarm: TimeAlarm, time: Date) {
        self.alarm = alarm
        self.time = time
    }
}

/// What the pipeline announces, to the outputs that interrupt a person (stdout's event lines,
/// pop-ups, hooks, the history): a crossing the reminder's policy let through, or a time alarm.
/// An alarm has no place, no fix and no distance: a sink says so by its case, not by a value.
public enum Announcement: Sendable, Equatable {
    /// An arrival or departure (of this machine, or of a tracked device).
    case crossing(GeofenceEvent)
    /// A time alarm firing.
    case alarm(AlarmFiring)

    /// `arrive`, `leave` or `alarm`.
    public var kind: EventKind {
        switch self {
        case .crossing(let event): event.kind
        case .alarm: .alarm
        }
    }

    /// What is announced: the reminder's or alarm's id, title, notes, and how it is presented.
    private var subject: (id: String, title: String, notes: String?, alert: ReminderAlert) {
        switch self {
        case .crossing(let event): (event.reminder.id, event.reminder.title, event.reminder.notes, event.reminder.alert)
        case .alarm(let firing): (firing.alarm.id, firing.alarm.title, firing.alarm.notes, firing.alarm.alert)
        }
    }

    /// The reminder's or alarm's id.
    public var id: String { subject.id }
    /// The key of the task it is of (``Reminder/taskKey``): what a button on its pop-up names, so
    /// that it acts on this task whatever id the task has by then. Nil for a config's.
    public var taskKey: String? {
        switch self {
        case .crossing(let event): event.reminder.taskKey
        case .alarm(let firing): firing.alarm.taskKey
        }
    }
    public var title: String { subject.title }
    public var notes: String? { subject.notes }
    /// How it is presented: the pop-up's look and the commands to run.
    public var alert: ReminderAlert { subject.alert }

    /// The crossing's fix time, or when the alarm was due; nil for a fix without a time.
    public var time: Date? {
        switch self {
        case .crossing(let event): event.fix.time
        case .alarm(let firing): firing.time
        }
    }

    /// The tracked device a crossing is of (OwnTracks `user/device`); nil for this machine's own, and for an alarm.
    public var device: String? {
        if case .crossing(let event) = self { event.fix.tracker } else { nil }
    }
}

/// The reminder a button was pressed for (a pop-up's Done or Snooze): the id it was shown with,
/// and the key of its task, if it is a task's (``Announcement/taskKey``), which names that task
/// even once another task of its list has come to take its id.
public struct PressedReminder: Sendable, Equatable {
    public var id: String
    public var taskKey: String?

    public init(id: String, taskKey: String? = nil) {
        self.id = id
        self.taskKey = taskKey
    }

    /// The one an announcement shows.
    public init(_ announcement: Announcement) {
        self.init(id: announcement.id, taskKey: announcement.taskKey)
    }
}
