import FoundationEssentials

/// How often a reminder may announce.
public enum Repeat: Sendable, Equatable {
    /// Every crossing (the default).
    case always
    /// The first announced event completes the reminder, as a phone's Reminders app does.
    case once
    /// At most once per this many seconds.
    case cooldown(Double)

    /// Reads "always", "once", a duration ("12h") or "hourly", "daily", "weekly" (at most once
    /// an hour, a day, a week).
    public init?(parsing text: String) {
        switch text.trimmingWhitespace().lowercased() {
        case "always": self = .always
        case "once": self = .once
        case "hourly": self = .cooldown(3600)
        case "daily": self = .cooldown(86400)
        case "weekly": self = .cooldown(7 * 86400)
        default:
            guard let seconds = try? Span.parse(text), seconds > 0 else { return nil }
            self = .cooldown(seconds)
        }
    }
}

/// A local date, with a time of day or without (then it means the whole day).
public struct LocalDate: Sendable, Equatable, CustomStringConvertible {
    public var year: Int, month: Int, day: Int
    /// Minutes after midnight; nil for a date alone.
    public var minuteOfDay: Int?

    /// Reads "2026-12-24" or "2026-12-24T16:00" (also with a space, and seconds ":00").
    public init?(parsing text: String) {
        let parts = text.split(whereSeparator: { $0 == "T" || $0 == " " })
        guard parts.count == 1 || parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard date.count == 3, let year = date[0], let month = date[1], let day = date[2],
              parts[0].count == 10, (1...12).contains(month), (1...LocalTime.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        if parts.count == 2 {
            guard let minute = ActiveWindow.minuteOfDay(String(parts[1])) else { return nil }
            minuteOfDay = minute
        }
    }

    /// The moment this names in `zone`: its time, or for a date alone the end of that day.
    public func moment(in zone: some TimeZoneRules) -> Date {
        guard let minuteOfDay else { return LocalTime.moment(year: year, month: month, day: day + 1, secondOfDay: 0, in: zone) }
        return LocalTime.moment(year: year, month: month, day: day, secondOfDay: minuteOfDay * 60, in: zone)
    }

    /// The moment this starts in `zone`: its time, or for a date alone the start of that day.
    public func start(in zone: some TimeZoneRules) -> Date {
        LocalTime.moment(year: year, month: month, day: day, secondOfDay: (minuteOfDay ?? 0) * 60, in: zone)
    }

    /// "2026-12-24" or "2026-12-24 16:00".
    public var description: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let date = "\(year)-\(two(month))-\(two(day))"
        return minuteOfDay.map { "\(date) \(two($0 / 60)):\(two($0 % 60))" } ?? date
    }

    /// A day (with a time of day, in minutes after midnight, when given).
    public init(year: Int, month: Int, day: Int, minuteOfDay: Int? = nil) {
        self.year = year
        self.month = month
        self.day = day
        self.minuteOfDay = minuteOfDay
    }
}

/// Days of the week and a time of day when a reminder may announce; `from` after `to` crosses midnight.
public struct ActiveWindow: Sendable, Equatable {
    /// Weekdays numbered 1 Sunday ... 7 Saturday.
    public var weekdays: Set<Int>
    public var fromMinute: Int
    public var toMinute: Int

    /// The weekdays (1 Sunday ... 7 Saturday) an entry of `days` names: a day ("mon", "Monday",
    /// "tues", "thurs"), a range through the week ("mon-fri", "fri-mon" across the weekend;
    /// "–" too), "weekdays" or "weekend". Nil for anything else: "monkey" is no Monday.
    public static func days(named text: String) -> Set<Int>? {
        let name = text.trimmingWhitespace().lowercased()
        switch name {
        case "weekdays", "weekday": return Set(2...6)
        case "weekend", "weekends": return [1, 7]
        default: break
        }
        let ends = name.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "-" || $0 == "–" }).map { day(String($0).trimmingWhitespace()) }
        if ends.count == 1, let single = ends[0] { return [single] }
        guard ends.count == 2, let first = ends[0], let last = ends[1] else { return nil }
        return Set((0...((last - first + 7) % 7)).map { (first - 1 + $0) % 7 + 1 })
    }

    /// A day's number from its name or abbreviation; nil for anything else.
    private static func day(_ name: String) -> Int? {
        let spellings = [
            ["sun", "sunday"], ["mon", "monday"], ["tue", "tues", "tuesday"], ["wed", "weds", "wednesday"],
            ["thu", "thur", "thurs", "thursday"], ["fri", "friday"], ["sat", "saturday"],
        ]
        return spellings.firstIndex { $0.contains(name) }.map { $0 + 1 }
    }

    public init(weekdays: Set<Int>, fromMinute: Int, toMinute: Int) {
        self.weekdays = weekdays
        self.fromMinute = fromMinute
        self.toMinute = toMinute
    }

    /// "08:00" (or "8:00", "08:00:00") as minutes after midnight; "24:00" is the end of the day.
    /// Each part is one or two digits (no sign); seconds, where given, must be 00.
    public static func minuteOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { part in
            part.count <= 2 && part.allSatisfy { $0.isASCII && $0.isNumber } ? Int(part) : nil
        }
        guard parts.count == 2 || parts.count == 3 && parts[2] == 0, let hour = parts[0], let minute = parts[1],
              (0...24).contains(hour), (0..<60).contains(minute), hour < 24 || minute == 0
        else { return nil }
        return hour * 60 + minute
    }

    /// Whether `moment` falls in the window, in `zone`. A window across midnight belongs to the
    /// day it starts on: Friday 22:00-02:00 holds Saturday 01:00.
    public func contains(_ moment: Date, in zone: some TimeZoneRules) -> Bool {
        let local = LocalTime(moment, in: zone)
        let weekday = local.weekday, now = local.secondOfDay / 60
        if fromMinute <= toMinute {
            return weekdays.contains(weekday) && now >= fromMinute && now < toMinute
        }
        let yesterday = (weekday + 5) % 7 + 1
        return (weekdays.contains(weekday) && now >= fromMinute) || (weekdays.contains(yesterday) && now < toMinute)
    }
}

/// When a reminder may announce: how often, on which days and hours, from when and until when.
public struct ReminderSchedule: Sendable, Equatable {
    public var repetition: Repeat
    public var active: ActiveWindow?
    /// After this the reminder is overdue and stays silent, unless `fireWhenOverdue`.
    public var due: LocalDate?
    public var fireWhenOverdue: Bool
    /// Before this the reminder stays silent.
    public var starts: LocalDate?

    public init(
        repetition: Repeat = .always, active: ActiveWindow? = nil, due: LocalDate? = nil, fireWhenOverdue: Bool = false,
        starts: LocalDate? = nil
    ) {
        self.repetition = repetition
        self.active = active
        self.due = due
        self.fireWhenOverdue = fireWhenOverdue
        self.starts = starts
    }

    /// Its `starts`, while that is still to come at `now` (in `zone`): silent until then (a task
    /// not started yet, a repeating one moved on to its next time); nil once it has started.
    public func startsLater(than now: Date, in zone: some TimeZoneRules) -> LocalDate? {
        starts.flatMap { now < $0.start(in: zone) ? $0 : nil }
    }
}
