import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// Time windows, due dates and repeats, always in an explicit time zone (never the machine's).
struct ScheduleTests {
    static let lisbon = FoundationZone("Europe/Lisbon")

    static func utc(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text)!
    }

    @Test func parsing() {
        #expect(Repeat(parsing: "once") == .once)
        #expect(Repeat(parsing: "Always") == .always)
        #expect(Repeat(parsing: "12h") == .cooldown(43200))
        #expect(Repeat(parsing: "daily") == .cooldown(86400) && Repeat(parsing: " Weekly") == .cooldown(604_800))
        #expect(Repeat(parsing: "hourly") == .cooldown(3600) && Repeat(parsing: "12 hours") == .cooldown(43200))
        #expect(Repeat(parsing: "sometimes") == nil)
        #expect(Repeat(parsing: "0s") == nil)
        #expect(ActiveWindow.minuteOfDay("08:30") == 510)
        #expect(ActiveWindow.minuteOfDay("24:00") == 1440)
        #expect(ActiveWindow.minuteOfDay("24:30") == nil)
        #expect(ActiveWindow.minuteOfDay("8h") == nil)
        #expect(ActiveWindow.minuteOfDay("8:05") == 485 && ActiveWindow.minuteOfDay("08:05:00") == 485)
        for text in ["08:00:xx", "08:00:30", "+8:00", "-0:00", "8:", ":30", "008:00", "08:00:00:00", "08：00"] {
            #expect(ActiveWindow.minuteOfDay(text) == nil, "\(text)")
        }
        #expect(LocalDate(parsing: "2026-12-24T16:00")?.minuteOfDay == 960)
        #expect(LocalDate(parsing: "2026-12-24")?.minuteOfDay == nil)
        #expect(LocalDate(parsing: "2026-13-24") == nil)
        #expect(LocalDate(parsing: "2026-02-30") == nil && LocalDate(parsing: "2026-04-31") == nil, "no day a month lacks")
        #expect(LocalDate(parsing: "2026-02-29") == nil && LocalDate(parsing: "2028-02-29") != nil, "February 29 in leap years only")
        #expect(LocalDate(parsing: "24/12/2026") == nil)
    }

    @Test func dueDatesInAZone() {
        // A date alone is due at the end of that day; Lisbon is UTC+0 in December.
        #expect(LocalDate(parsing: "2026-12-24")?.moment(in: Self.lisbon) == Self.utc("2026-12-25T00:00:00Z"))
        #expect(LocalDate(parsing: "2026-12-24")?.start(in: Self.lisbon) == Self.utc("2026-12-24T00:00:00Z"))
        // In July it is UTC+1.
        #expect(LocalDate(parsing: "2026-07-01T16:00")?.moment(in: Self.lisbon) == Self.utc("2026-07-01T15:00:00Z"))
    }

    @Test func weekdayHours() {
        let office = ActiveWindow(weekdays: [2, 3, 4, 5, 6], fromMinute: 8 * 60, toMinute: 18 * 60)
        #expect(office.contains(Self.utc("2026-11-23T09:00:00Z"), in: Self.lisbon))  // Monday
        #expect(!office.contains(Self.utc("2026-11-21T09:00:00Z"), in: Self.lisbon))  // Saturday
        #expect(!office.contains(Self.utc("2026-11-23T18:00:00Z"), in: Self.lisbon), "the end is not in")
        #expect(!office.contains(Self.utc("2026-11-23T07:59:00Z"), in: Self.lisbon))
    }

    @Test func aWindowAcrossMidnightBelongsToTheDayItStarts() {
        let fridayNight = ActiveWindow(weekdays: [6], fromMinute: 22 * 60, toMinute: 2 * 60)
        #expect(fridayNight.contains(Self.utc("2026-11-20T23:00:00Z"), in: Self.lisbon))  // Fri 23:00
        #expect(fridayNight.contains(Self.utc("2026-11-21T01:00:00Z"), in: Self.lisbon))  // Sat 01:00
        #expect(!fridayNight.contains(Self.utc("2026-11-21T03:00:00Z"), in: Self.lisbon))  // Sat 03:00
        #expect(!fridayNight.contains(Self.utc("2026-11-21T23:00:00Z"), in: Self.lisbon))  // Sat 23:00
        #expect(!fridayNight.contains(Self.utc("2026-11-20T01:00:00Z"), in: Self.lisbon))  // Fri 01:00 is Thursday's night
    }

    @Test func aDaylightSavingChangeMovesTheWindowInUTC() {
        // Lisbon goes from UTC+0 to UTC+1 at 01:00 UTC on 2026-03-29.
        let morning = ActiveWindow(weekdays: Set(1...7), fromMinute: 8 * 60, toMinute: 9 * 60)
        #expect(morning.contains(Self.utc("2026-03-28T08:30:00Z"), in: Self.lisbon))
        #expect(!morning.contains(Self.utc("2026-03-29T08:30:00Z"), in: Self.lisbon), "09:30 local after the change")
        #expect(morning.contains(Self.utc("2026-03-29T07:30:00Z"), in: Self.lisbon), "08:30 local after the change")
        // Back to UTC+0 at 01:00 UTC on 2026-10-25: the hour 01:00-02:00 local happens twice.
        let night = ActiveWindow(weekdays: [1], fromMinute: 60, toMinute: 120)
        #expect(night.contains(Self.utc("2026-10-25T00:30:00Z"), in: Self.lisbon))
        #expect(night.contains(Self.utc("2026-10-25T01:30:00Z"), in: Self.lisbon))
        #expect(!night.contains(Self.utc("2026-10-25T02:30:00Z"), in: Self.lisbon))
    }

    static func event(_ kind: EventKind = .arrive, at time: String?, schedule: ReminderSchedule) -> GeofenceEvent {
        var reminder = Scene.reminder("bakery")
        reminder.schedule = schedule
        var fix = Scene.fix(10, at: 0)
        fix.time = time.map(utc)
        return GeofenceEvent(kind: kind, reminder: reminder, fix: fix, distance: 10)
    }

    @Test func onceCompletesAfterItsFirstAnnouncement() {
        var announcer = Announcer(timeZone: Self.lisbon)
        let once = ReminderSchedule(repetition: .once)
        #expect(announcer.decide(Self.event(at: "2026-11-21T08:00:00Z", schedule: once)) == nil)
        #expect(announcer.lifecycles["bakery"]?.completedAt == Self.utc("2026-11-21T08:00:00Z"))
        #expect(announcer.decide(Self.event(.leave, at: "2026-11-21T09:00:00Z", schedule: once)) == .completed)
        announcer.setCompleted("bakery", at: nil)
        #expect(announcer.decide(Self.event(at: "2026-11-21T10:00:00Z", schedule: once)) == nil, "uncompleted: fires again")
    }

    @Test func alwaysRepeatsAndACooldownSpacesAnnouncements() {
        var announcer = Announcer(timeZone: Self.lisbon)
        #expect(announcer.decide(Self.event(at: "2026-11-21T08:00:00Z", schedule: ReminderSchedule())) == nil)
        #expect(announcer.decide(Self.event(at: "2026-11-21T08:01:00Z", schedule: ReminderSchedule())) == nil)
        let twelveHours = ReminderSchedule(repetition: .cooldown(12 * 3600))
        #expect(announcer.decide(Self.event(at: "2026-11-21T19:00:00Z", schedule: twelveHours)) == .coolingDown)
        #expect(announcer.decide(Self.event(at: "2026-11-21T20:01:00Z", schedule: twelveHours)) == nil)
        #expect(announcer.lifecycles["bakery"]?.lastFired == Self.utc("2026-11-21T20:01:00Z"))
    }

    /// A place of a collection is snoozed by its own snooze or its collection's, to the later.
    @Test func aPlaceIsSnoozedByItselfOrItsCollection() {
        let early = Date(timeIntervalSince1970: 1_800_000_600), late = Date(timeIntervalSince1970: 1_800_003_600)
        #expect(Lifecycle.snoozedUntil("shops/2", in: ["shops": Lifecycle(snoozedUntil: late)]) == late)
        #expect(Lifecycle.snoozedUntil("shops/2", in: ["shops": Lifecycle(snoozedUntil: early), "shops/2": Lifecycle(snoozedUntil: late)]) == late)
        #expect(Lifecycle.snoozedUntil("shops/2", in: ["shops": Lifecycle(snoozedUntil: late), "shops/2": Lifecycle(snoozedUntil: early)]) == late)
        #expect(Lifecycle.snoozedUntil("shops/2", in: ["shops/1": Lifecycle(snoozedUntil: late), "shopsx": Lifecycle(snoozedUntil: late)]) == nil)
        #expect(Lifecycle.snoozedUntil("bread", in: ["bread": Lifecycle(snoozedUntil: early)]) == early)
        #expect(Lifecycle.snoozedUntil("bread", in: [:]) == nil)
        // A task of list Errands is no place of the reminder `errands`, snoozed; nor is its time alarm.
        #expect(Lifecycle.snoozedUntil("errands/milk", in: ["errands": Lifecycle(snoozedUntil: late)]) == nil)
        #expect(Lifecycle.snoozedUntil("errands/milk/time-1", in: ["errands/milk": Lifecycle(snoozedUntil: late)]) == nil)
        #expect(Lifecycle.snoozedUntil("errands/milk/3", in: ["errands/milk": Lifecycle(snoozedUntil: late)]) == late)
    }

    /// A snooze ends on a whole second, never before the time asked for.
    @Test func aSnoozeEndsOnTheNextWholeSecond() {
        let now = Date(timeIntervalSince1970: 1_800_000_000.085)
        #expect(Lifecycle.snoozeEnd(after: 3600, from: now) == Date(timeIntervalSince1970: 1_800_003_601))
        #expect(Lifecycle.snoozeEnd(after: 600, from: Date(timeIntervalSince1970: 1_800_000_000)) == Date(timeIntervalSince1970: 1_800_000_600))
        #expect(Lifecycle.snoozeEnd(after: 0.5, from: now) == Date(timeIntervalSince1970: 1_800_000_001))
    }

    /// A reminder's buttons say what they do, and do it: Done completes now, Snooze lasts as long
    /// as its label says, to the next whole second.
    @Test func aButtonDoesWhatItsLabelSays() {
        let now = Date(timeIntervalSince1970: 1_800_000_000.5)
        #expect(ReminderButton.allCases.map { $0.label(snooze: 1200) } == ["Done", "Snooze 20 min"])
        #expect(ReminderButton.snooze.label(snooze: 3600) == "Snooze 1 h")
        #expect(ReminderButton.done.action(at: now, snooze: 1200) == .complete(at: now))
        #expect(ReminderButton.snooze.action(at: now, snooze: 1200) == .snooze(until: Date(timeIntervalSince1970: 1_800_001_201)))
        #expect(ReminderButton(rawValue: "done") == .done && ReminderButton(rawValue: "Done") == nil)
    }

    /// The days a window names: days by abbreviation or in full, ranges through the week (across
    /// the weekend too), weekdays and weekend; a word that only begins like a day is none
    /// ("mon-fri" was once read as Monday alone, by its first three letters).
    @Test(arguments: [
        ("mon", [2]), ("Monday", [2]), (" TUES ", [3]), ("thurs", [5]), ("sat", [7]), ("mon-fri", [2, 3, 4, 5, 6]),
        ("fri-mon", [6, 7, 1, 2]), ("sat–sun", [7, 1]), ("wed-wed", [4]), ("weekdays", [2, 3, 4, 5, 6]), ("weekend", [1, 7]),
    ] as [(String, Set<Int>)])
    func windowDays(text: String, days: Set<Int>) {
        #expect(ActiveWindow.days(named: text) == days)
    }

    @Test(arguments: ["monkey", "mo", "", "mon-", "-fri", "mon-fri-sat", "funday", "weekly"])
    func notADay(text: String) {
        #expect(ActiveWindow.days(named: text) == nil)
    }

    /// A snooze until a time of day ends at its next coming, local time; until a date and time,
    /// then; for a span, after it; "0" ends one, and any other number needs its unit. Lisbon, on
    /// the day the clocks go back.
    @Test func aSnoozeEndsAfterASpanOrAtALocalTime() throws {
        let now = Self.utc("2026-10-25T10:00:00Z")  // 10:00 in Lisbon, now on UTC again
        #expect(try Lifecycle.snoozeEnd("18:00", from: now, in: Self.lisbon) == Self.utc("2026-10-25T18:00:00Z"))
        #expect(try Lifecycle.snoozeEnd("09:30", from: now, in: Self.lisbon) == Self.utc("2026-10-26T09:30:00Z"), "past today: tomorrow")
        #expect(try Lifecycle.snoozeEnd("10:00", from: now, in: Self.lisbon) == Self.utc("2026-10-26T10:00:00Z"), "now is not ahead")
        #expect(try Lifecycle.snoozeEnd("00:30", from: Self.utc("2026-10-24T12:00:00Z"), in: Self.lisbon) == Self.utc("2026-10-24T23:30:00Z"),
                "the night before, in summer time still")
        #expect(try Lifecycle.snoozeEnd("2026-12-01T08:00", from: now, in: Self.lisbon) == Self.utc("2026-12-01T08:00:00Z"))
        #expect(try Lifecycle.snoozeEnd("2026-07-01 08:00", from: Self.utc("2026-06-01T00:00:00Z"), in: Self.lisbon)
                == Self.utc("2026-07-01T07:00:00Z"), "summer time: UTC+1")
        #expect(try Lifecycle.snoozeEnd("2026-10-31", from: now, in: Self.lisbon) == Self.utc("2026-10-31T00:00:00Z"), "a date: its start")
        #expect(try Lifecycle.snoozeEnd("1h30m", from: now, in: Self.lisbon) == Self.utc("2026-10-25T11:30:00Z"))
        #expect(try Lifecycle.snoozeEnd("0", from: now, in: Self.lisbon) == nil)
        #expect(try Lifecycle.snoozeEnd("2 hours", from: now, in: Self.lisbon) == Self.utc("2026-10-25T12:00:00Z"))
        // A number alone would be seconds: "18.00" is a time written with a point, "30" minutes meant.
        #expect(throws: SnoozeTimeError.noUnit("18.00")) { try Lifecycle.snoozeEnd("18.00", from: now, in: Self.lisbon) }
        #expect(throws: SnoozeTimeError.noUnit("30")) { try Lifecycle.snoozeEnd(" 30 ", from: now, in: Self.lisbon) }
        #expect(throws: SnoozeTimeError.passed("2026-10-01T08:00")) { try Lifecycle.snoozeEnd("2026-10-01T08:00", from: now, in: Self.lisbon) }
        #expect(throws: SnoozeTimeError.unreadable(.notANumber("soon"))) { try Lifecycle.snoozeEnd("soon", from: now, in: Self.lisbon) }
        #expect(throws: SnoozeTimeError.notATime("25:00")) { try Lifecycle.snoozeEnd("25:00", from: now, in: Self.lisbon) }
        #expect(throws: SnoozeTimeError.notATime("2026-13-01T08:00")) { try Lifecycle.snoozeEnd("2026-13-01T08:00", from: now, in: Self.lisbon) }
    }

    @Test func snoozeStartsDueAndWindowsSilenceButUntimedEventsPass() {
        var announcer = Announcer(timeZone: Self.lisbon)
        announcer.snooze("bakery", until: Self.utc("2026-11-21T09:00:00Z"))
        #expect(announcer.decide(Self.event(at: "2026-11-21T08:30:00Z", schedule: ReminderSchedule())) == .snoozed)
        #expect(announcer.decide(Self.event(at: "2026-11-21T09:00:00Z", schedule: ReminderSchedule())) == nil)
        let christmas = ReminderSchedule(due: LocalDate(parsing: "2026-12-24"), starts: LocalDate(parsing: "2026-12-01"))
        #expect(announcer.decide(Self.event(at: "2026-11-30T23:59:00Z", schedule: christmas)) == .notStarted)
        #expect(announcer.decide(Self.event(at: "2026-12-24T23:59:00Z", schedule: christmas)) == nil)
        #expect(announcer.decide(Self.event(at: "2026-12-25T00:01:00Z", schedule: christmas)) == .overdue)
        var late = christmas
        late.fireWhenOverdue = true
        #expect(announcer.decide(Self.event(at: "2026-12-25T00:01:00Z", schedule: late)) == nil)
        let weekdays = ReminderSchedule(active: ActiveWindow(weekdays: [2, 3, 4, 5, 6], fromMinute: 480, toMinute: 1080))
        #expect(announcer.decide(Self.event(at: "2026-11-21T10:00:00Z", schedule: weekdays)) == .outsideActiveHours)
        #expect(announcer.decide(Self.event(at: nil, schedule: weekdays)) == nil, "no time: only completion is checked")
    }
}
