import FoundationEssentials

/// What the user and the announcer have done to a reminder, beyond its fence.
public struct Lifecycle: Sendable, Equatable {
    /// Set by `repeat = "once"` after its event, or by `geoalarm complete`.
    public var completedAt: Date?
    /// No announcement before this (`geoalarm snooze`, the "Snooze 1 h" button).
    public var snoozedUntil: Date?
    /// Fix time of the last announced event.
    public var lastFired: Date?

    public init(completedAt: Date? = nil, snoozedUntil: Date? = nil, lastFired: Date? = nil) {
        self.completedAt = completedAt
        self.snoozedUntil = snoozedUntil
        self.lastFired = lastFired
    }

    /// When reminder `id` of `lifecycles` is snoozed until: its own snooze or, for a place of a
    /// collection snoozed whole (a task at a collection's places), the collection's, whichever
    /// ends later; nil when neither is snoozed.
    public static func snoozedUntil(_ id: String, in lifecycles: [String: Lifecycle]) -> Date? {
        let whole = ReminderCollection.collectionID(ofPlace: id).flatMap { lifecycles[$0]?.snoozedUntil }
        return [lifecycles[id]?.snoozedUntil, whole].compactMap { $0 }.max()
    }

    /// When a snooze of `seconds` taken at `now` ends: on the next whole second, so that it is
    /// shown as a time a person reads ("until 09:42:17Z", not "09:42:16.085Z") and never ends
    /// before it was asked to.
    public static func snoozeEnd(after seconds: Double, from now: Date) -> Date {
        Date(timeIntervalSince1970: (now.timeIntervalSince1970 + seconds).rounded(.up))
    }

    /// When a snooze asked for as `text` at `now` ends, in `zone`: after a span ("1h", "2d",
    /// as ``snoozeEnd(after:from:)``), at the next coming of a time of day ("18:00": today, else
    /// tomorrow), or at a local date and time ("2026-12-01T08:00"; a date alone, at its start).
    /// nil for a span of 0, which ends a snooze. Any other number needs its unit.
    public static func snoozeEnd(_ text: String, from now: Date, in zone: some TimeZoneRules) throws(SnoozeTimeError) -> Date? {
        let trimmed = text.trimmingWhitespace()
        if let minute = ActiveWindow.minuteOfDay(trimmed) {
            let today = LocalTime(now, in: zone)
            let moment = LocalTime.moment(year: today.year, month: today.month, day: today.day, secondOfDay: minute * 60, in: zone)
            return moment > now
                ? moment : LocalTime.moment(year: today.year, month: today.month, day: today.day + 1, secondOfDay: minute * 60, in: zone)
        }
        if let date = LocalDate(parsing: trimmed) {
            let moment = date.start(in: zone)
            guard moment > now else { throw .passed(trimmed) }
            return moment
        }
        if trimmed.contains(":") { throw .notATime(trimmed) }
        // "30" or "18.00" (a time written with a point) would be seconds, which nobody snoozes for.
        if let number = Double(trimmed), number != 0 { throw .noUnit(trimmed) }
        let seconds: Double
        do {
            seconds = try Span.parse(trimmed)
        } catch {
            throw .unreadable(error)
        }
        return seconds > 0 ? snoozeEnd(after: seconds, from: now) : nil
    }
}

/// Why a snooze's end could not be told from what was given.
public enum SnoozeTimeError: Error, Equatable, CustomStringConvertible {
    /// Neither a time nor a span: the span's own complaint.
    case unreadable(QuantityError)
    /// A date and time that is not ahead.
    case passed(String)
    /// A time of day (it holds a colon) that is none.
    case notATime(String)
    /// A number other than 0 without a unit.
    case noUnit(String)

    public var description: String {
        switch self {
        case .unreadable(let problem): problem.description
        case .passed(let text): "\(text) has passed"
        case .notATime(let text): "\"\(text)\" is not a time of day (00:00 to 24:00) nor a date and time"
        case .noUnit: "a number alone has no unit"
        }
    }
}

/// What a person did to a reminder from a pop-up's buttons.
public enum ReminderAction: Sendable, Equatable {
    /// "Done": completed at that time.
    case complete(at: Date)
    /// "Snooze 1 h": quiet until then.
    case snooze(until: Date)
}

/// A reminder's buttons, as a pop-up and Home Assistant show them; the raw value is the
/// button's name where it is pressed (a pop-up's action, a Home Assistant button's payload).
public enum ReminderButton: String, Sendable, CaseIterable {
    case done
    case snooze

    /// The button's text: "Done"; "Snooze 1 h" for a snooze of `snooze` seconds.
    public func label(snooze: Double) -> String {
        switch self {
        case .done: "Done"
        case .snooze: "Snooze \(Span.describe(snooze))"
        }
    }

    /// What pressing it at `now` does, a snooze lasting `snooze` seconds.
    public func action(at now: Date, snooze: Double) -> ReminderAction {
        switch self {
        case .done: .complete(at: now)
        case .snooze: .snooze(until: Lifecycle.snoozeEnd(after: snooze, from: now))
        }
    }
}

/// Why an event was recorded but not announced.
public enum Silence: Sendable, Equatable, CustomStringConvertible {
    case completed
    case snoozed
    case coolingDown
    case notStarted
    case overdue
    case outsideActiveHours

    public var description: String {
        switch self {
        case .completed: "the reminder is completed"
        case .snoozed: "the reminder is snoozed"
        case .coolingDown: "it fired less than its repeat period ago"
        case .notStarted: "its start date has not come"
        case .overdue: "it is overdue (fire_when_overdue = false)"
        case .outsideActiveHours: "it is outside its active days and hours"
        }
    }
}

/// Decides which events are announced, by each reminder's schedule and lifecycle, and keeps
/// the lifecycles up to date (last fired; completed after a `once` event).
///
/// Rules, in order: a completed reminder is silent; so is a snoozed one until the snooze
/// ends (a collection's place also while its whole collection is snoozed), one before its
/// `starts`, one past its `due` (unless `fire_when_overdue`), one outside its active days and
/// hours (in `timeZone`), and one that fired less than its cooldown ago.
/// An event without a time (an untimed GPX point) is only checked for completion.
public struct Announcer: Sendable {
    public let timeZone: any TimeZoneRules
    public private(set) var lifecycles: [String: Lifecycle]
    /// When each reminder's last approach was announced. An approach is a warning before the
    /// arrival: it has its own cooldown, and neither completes a `once` reminder nor counts as
    /// its firing, so the arrival that follows is still announced.
    private var lastApproached: [String: Date] = [:]

    public init(timeZone: any TimeZoneRules, lifecycles: [String: Lifecycle] = [:]) {
        self.timeZone = timeZone
        self.lifecycles = lifecycles
    }

    /// nil to announce `event` (and it is noted as fired), or why it stays silent.
    public mutating func decide(_ event: GeofenceEvent) -> Silence? {
        let id = event.reminder.id
        let schedule = event.reminder.schedule
        var lifecycle = lifecycles[id] ?? Lifecycle()
        if lifecycle.completedAt != nil { return .completed }
        if let time = event.fix.time {
            if let until = Lifecycle.snoozedUntil(id, in: lifecycles), time < until { return .snoozed }
            if schedule.startsLater(than: time, in: timeZone) != nil { return .notStarted }
            if let due = schedule.due, time > due.moment(in: timeZone), !schedule.fireWhenOverdue { return .overdue }
            if let window = schedule.active, !window.contains(time, in: timeZone) { return .outsideActiveHours }
            let last = event.kind == .approach ? lastApproached[id] : lifecycle.lastFired
            if case .cooldown(let period) = schedule.repetition, let last, time.timeIntervalSince(last) < period {
                return .coolingDown
            }
        }
        if event.kind == .approach {
            lastApproached[id] = event.fix.time ?? lastApproached[id]
            return nil
        }
        lifecycle.lastFired = event.fix.time ?? lifecycle.lastFired
        if schedule.repetition == .once { lifecycle.completedAt = event.fix.time ?? Date(timeIntervalSince1970: 0) }
        lifecycles[id] = lifecycle
        return nil
    }

    /// Takes lifecycles read from the state file (commands, another pipeline), keeping the
    /// approaches' cooldowns, which live only here.
    public mutating func take(_ lifecycles: [String: Lifecycle]) {
        self.lifecycles = lifecycles
    }

    /// Moves what it knows of each reminder, and of each place of a collection, to its new id
    /// (`renamed`: new id to old).
    public mutating func rename(_ renamed: [String: String]) {
        let newIDs = Dictionary(renamed.map { ($1, $0) }) { first, _ in first }
        ReminderCollection.rename(&lifecycles, by: newIDs)
        ReminderCollection.rename(&lastApproached, by: newIDs)
    }

    /// Takes `ids` as not completed, and the places of those that are collections: reminders
    /// whose completion lives elsewhere (a task's in its task list, where a completed task is no
    /// reminder at all).
    public mutating func reopen(_ ids: Set<String>) {
        for (id, lifecycle) in lifecycles where lifecycle.completedAt != nil {
            let reopened = ids.contains(id) || ReminderCollection.collectionID(ofPlace: id).map(ids.contains) == true
            if reopened { lifecycles[id]?.completedAt = nil }
        }
    }

    /// Notes that a time alarm fired at `time`.
    public mutating func noteFired(_ id: String, at time: Date) {
        lifecycles[id, default: Lifecycle()].lastFired = time
    }

    /// Marks a reminder completed (or not), as `geoalarm complete` / `uncomplete` do.
    public mutating func setCompleted(_ id: String, at time: Date?) {
        lifecycles[id, default: Lifecycle()].completedAt = time
    }

    /// Silences a reminder until `until` (nil ends a snooze).
    public mutating func snooze(_ id: String, until: Date?) {
        lifecycles[id, default: Lifecycle()].snoozedUntil = until
    }

    /// Takes a pop-up button's action on reminder `id`.
    public mutating func apply(_ action: ReminderAction, to id: String) {
        switch action {
        case .complete(let time): setCompleted(id, at: time)
        case .snooze(let until): snooze(id, until: until)
        }
    }
}
