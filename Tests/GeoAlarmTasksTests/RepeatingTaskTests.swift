import Foundation
import GeoAlarmCore
@testable import GeoAlarmICalendar
@testable import GeoAlarmTasks
import Testing

/// Done on a repeating task moves it on to its next time, as Apple's Reminders and tasks.org
/// do; it is completed only when its series ends.
struct RepeatingTaskTests {
    /// Friday 2027-01-15, 08:00 UTC.
    static let now = TaskEditsTests.now
    static let zones = TaskEditsTests.zones

    /// A weekly task, its lines between `SUMMARY` and `END:VTODO` given.
    static func task(_ lines: [String]) -> [UInt8] {
        Array((["BEGIN:VCALENDAR", "VERSION:2.0", "BEGIN:VTODO", "UID:weekly-1", "DTSTAMP:20261201T100000Z",
                "LAST-MODIFIED:20261201T100000Z", "SUMMARY:Water the plants", "STATUS:NEEDS-ACTION"]
               + lines + ["LOCATION:Home", "END:VTODO", "END:VCALENDAR", ""]).joined(separator: "\r\n").utf8)
    }

    static func completed(_ lines: [String]) throws -> (added: [String], removed: [String], bytes: [UInt8]) {
        let before = task(lines)
        let after = try TaskEdits.completing(before, uid: "weekly-1", at: now, zones: zones)
        let (added, removed) = try TaskEditsTests.difference(before, after)
        return (added.map { $0.replacing("\r\n", with: "") }, removed.map { $0.replacing("\r\n", with: "") }, after)
    }

    /// Its start and due day move on by a week, its count down by one; it stays open, and says
    /// when it comes next.
    @Test func aWeeklyTaskMovesOnAWeek() throws {
        let (added, removed, after) = try Self.completed([
            "DTSTART;VALUE=DATE:20270111", "DUE;VALUE=DATE:20270112", "RRULE:FREQ=WEEKLY;COUNT=5",
        ])
        #expect(Set(added) == [
            "DTSTART;VALUE=DATE:20270118", "DUE;VALUE=DATE:20270119", "RRULE:FREQ=WEEKLY;COUNT=4",
            "LAST-MODIFIED:20270115T080000Z", "DTSTAMP:20270115T080000Z",
        ])
        #expect(Set(removed) == [
            "DTSTART;VALUE=DATE:20270111", "DUE;VALUE=DATE:20270112", "RRULE:FREQ=WEEKLY;COUNT=5",
            "LAST-MODIFIED:20261201T100000Z", "DTSTAMP:20261201T100000Z",
        ])
        #expect(TaskEdits.nextOccurrence(of: "weekly-1", in: after) == .date(year: 2027, month: 1, day: 18))
        let task = try TaskObject(try #require(try ICalendarReader.read(after).components("VTODO").first))
        #expect(!task.isClosed)
    }

    /// Weeks missed are passed over (the count goes down by each): it moves to the first time
    /// still to come. Done early, before its time, it moves to the time after.
    @Test func missedTimesArePassedOverAndAnEarlyDoneTakesTheNext() throws {
        let late = try Self.completed(["DTSTART;VALUE=DATE:20261207", "RRULE:FREQ=WEEKLY;COUNT=10"])
        #expect(Set(late.added).isSuperset(of: ["DTSTART;VALUE=DATE:20270118", "RRULE:FREQ=WEEKLY;COUNT=4"]), "\(late.added)")
        let early = try Self.completed(["DUE:20270118T170000Z", "RRULE:FREQ=WEEKLY"])
        #expect(early.added.contains("DUE:20270125T170000Z"), "\(early.added)")
        #expect(!early.added.contains { $0.hasPrefix("RRULE") }, "no count to change")
    }

    /// A time in a zone stays on that zone's clock, its parameters and folding as they were
    /// read; a completion's lines of an earlier round go.
    @Test func aZonedTimeKeepsItsZone() throws {
        let (added, removed, _) = try Self.completed([
            "DTSTART;X-KEPT=\"a;b\";TZID=Europe/Lisbon:20270114T0", " 90000", "RRULE:FREQ=DAILY", "PERCENT-COMPLETE:40",
        ])
        #expect(added.contains("DTSTART;X-KEPT=\"a;b\";TZID=Europe/Lisbon:20270115T090000"), "\(added)")
        #expect(removed.contains("PERCENT-COMPLETE:40"))
    }

    /// A DTSTART that is no time (found by the fuzzer) is passed over: the task repeats from its
    /// DUE, and says it comes next then.
    @Test func aStartThatIsNoTimeIsPassedOver() throws {
        let (added, removed, after) = try Self.completed([
            "DTSTART;TZID=Europe/Lisbon:2261207T090000", "DUE;VALUE=DATE:20261208", "RRULE:FREQ=WEEKLY;INTERVAL=3;BYDAY=MO,TH;WKST=SU",
        ])
        #expect(added.contains("DUE;VALUE=DATE:20270118") && !removed.contains { $0.hasPrefix("DTSTART") }, "\(added) \(removed)")
        #expect(TaskEdits.nextOccurrence(of: "weekly-1", in: after) == .date(year: 2027, month: 1, day: 18))
    }

    /// A time its EXDATE takes out (one deleted in Thunderbird, a list of them, in a zone) is
    /// passed over, and counts as one of COUNT's.
    @Test func aTimeTakenOutIsPassedOver() throws {
        let days = try Self.completed([
            "DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY;COUNT=5", "EXDATE;VALUE=DATE:20270118,20270125",
        ])
        #expect(Set(days.added).isSuperset(of: ["DTSTART;VALUE=DATE:20270201", "RRULE:FREQ=WEEKLY;COUNT=2"]), "\(days.added)")
        let zoned = try Self.completed([
            "DTSTART;TZID=Europe/Lisbon:20270114T090000", "RRULE:FREQ=DAILY", "EXDATE;TZID=Europe/Lisbon:20270115T090000",
            "EXDATE:20270116T090000Z",
        ])
        #expect(zoned.added.contains("DTSTART;TZID=Europe/Lisbon:20270117T090000"), "\(zoned.added)")
        let ended = try Self.completed(["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY;COUNT=2", "EXDATE;VALUE=DATE:20270118"])
        #expect(ended.added.contains("STATUS:COMPLETED"), "its one time left taken out: \(ended.added)")
    }

    /// An alarm at a time of its own moves by as many days; one from its start or due time, and
    /// Apple's placeholder of a place alarm, stay as they are.
    @Test func anAlarmAtATimeGoesAlong() throws {
        let (added, removed, _) = try Self.completed([
            "DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY",
            "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER;VALUE=DATE-TIME:20270111T090000Z", "END:VALARM",
            "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER;RELATED=END:-PT15M", "END:VALARM",
            "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER;VALUE=DATE-TIME:19760401T005545Z", "X-APPLE-PROXIMITY:ARRIVE", "END:VALARM",
        ])
        #expect(added.contains("TRIGGER;VALUE=DATE-TIME:20270118T090000Z") && removed.contains("TRIGGER;VALUE=DATE-TIME:20270111T090000Z"),
                "\(added) \(removed)")
        #expect(!removed.contains { $0.hasPrefix("TRIGGER;RELATED") || $0.contains("19760401") }, "\(removed)")
    }

    /// Its series ended (the last of its COUNT, or past UNTIL): it is completed.
    @Test(arguments: [
        ["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY;COUNT=1"],
        ["DTSTART;VALUE=DATE:20261207", "RRULE:FREQ=WEEKLY;COUNT=6"],
        ["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY;UNTIL=20270117"],
        ["DUE:20270111T090000Z", "RRULE:FREQ=WEEKLY;UNTIL=20270118T085959Z"],
        ["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"],
    ])
    func aTaskWhoseSeriesEndedIsCompleted(lines: [String]) throws {
        let (added, _, after) = try Self.completed(lines)
        #expect(added.contains("STATUS:COMPLETED") && added.contains("COMPLETED:20270115T080000Z"), "\(added)")
        #expect(TaskEdits.nextOccurrence(of: "weekly-1", in: after) == nil)
    }

    /// UNTIL lets through the last time it allows.
    @Test func theLastTimeUntilAllowsIsKept() throws {
        let (added, _, _) = try Self.completed(["DUE:20270111T090000Z", "RRULE:FREQ=WEEKLY;UNTIL=20270118T090000Z"])
        #expect(added.contains("DUE:20270118T090000Z"), "\(added)")
    }

    /// The same completion made again (sent again after its answer was lost) moves it no further.
    @Test func theSameCompletionTwiceMovesItOnce() throws {
        let once = try Self.completed(["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY"]).bytes
        #expect(try TaskEdits.completing(once, uid: "weekly-1", at: Self.now, zones: Self.zones) == once)
        let later = try TaskEdits.completing(once, uid: "weekly-1", at: Self.now.addingTimeInterval(60), zones: Self.zones)
        #expect(TaskEdits.nextOccurrence(of: "weekly-1", in: later) == .date(year: 2027, month: 1, day: 25), "a Done of its own, later")
    }

    /// What geoalarm does not move on is refused, with why; its own app does it.
    @Test(arguments: [
        (["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=HOURLY"], "FREQ=HOURLY"),
        (["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY", "EXDATE;VALUE=DATE:2027011"], "EXDATE that is no time"),
        (["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY", "RDATE;VALUE=DATE:20270120"], "RDATE"),
        (["RRULE:FREQ=WEEKLY"], "without a DTSTART or DUE"),
    ])
    func whatGeoalarmDoesNotMoveOnIsRefused(lines: [String], why: String) {
        #expect { try Self.completed(lines) } throws: { error in
            "\(error)".contains(why) && "\(error)".contains("complete it in its own app")
        }
    }

    @Test func aTaskWithAnOccurrenceChangedOnItsOwnIsRefused() throws {
        var text = String(decoding: Self.task(["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY"]), as: UTF8.self)
        text = text.replacing("END:VCALENDAR", with: "BEGIN:VTODO\r\nUID:weekly-1\r\nRECURRENCE-ID;VALUE=DATE:20270118\r\nSUMMARY:Water them twice\r\nEND:VTODO\r\nEND:VCALENDAR")
        #expect { try TaskEdits.completing(Array(text.utf8), uid: "weekly-1", at: Self.now, zones: Self.zones) } throws: { error in
            "\(error)".contains("RECURRENCE-ID")
        }
    }

    /// A series that began long ago moves on at once to its next time still to come, however
    /// many periods lie between (a bound on the periods looked at once completed such a task);
    /// the next times are python-dateutil 2.9's `rrule(...).after(now)`.
    @Test(arguments: [
        ("RRULE:FREQ=DAILY", "DTSTART;VALUE=DATE:20270116"),
        ("RRULE:FREQ=WEEKLY;INTERVAL=2", "DTSTART;VALUE=DATE:20270118"),
        ("RRULE:FREQ=MONTHLY;BYMONTHDAY=15", "DTSTART;VALUE=DATE:20270215"),
        ("RRULE:FREQ=YEARLY", "DTSTART;VALUE=DATE:20280101"),
    ])
    func aSeriesThatBeganInYearOneMovesOnToItsNextTime(rule: String, next: String) throws {
        let (added, _, _) = try Self.completed(["DTSTART;VALUE=DATE:00010101", rule])
        #expect(added.contains(next) && !added.contains("STATUS:COMPLETED"), "\(added)")
    }

    /// What RFC 5545 cannot write is never written: a series whose next time would fall after
    /// the year 9999, and a task of two RRULEs (one would be lost), are refused as they are.
    @Test(arguments: [
        (["DTSTART;VALUE=DATE:99991230", "DUE:99991231T090000", "RRULE:FREQ=DAILY"], "past the year 9999"),
        (["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY;COUNT=5", "RRULE:FREQ=MONTHLY;COUNT=3"], "more than one RRULE"),
    ])
    func whatCannotBeWrittenIsRefused(lines: [String], why: String) {
        #expect { try Self.completed(lines) } throws: { error in
            "\(error)".contains(why) && "\(error)".contains("complete it in its own app")
        }
    }

    /// Thunderbird's zoned EXDATEs, two thousand of them: the zone is read once, not at each
    /// comparison (which took minutes, the agent's loop held meanwhile). The bound only ends a failure.
    @Test(.timeLimit(.minutes(1)))
    func thousandsOfZonedTimesTakenOutAreReadOnce() throws {
        let taken = (16...2015).map { day in
            let date = LocalTime.date(daysSince1970: LocalTime.daysSince1970(year: 2027, month: 1, day: 1) + day - 1)
            return "EXDATE;TZID=Europe/Berlin:" + String(format: "%04d%02d%02dT090000", date.year, date.month, date.day)
        }
        let before = Self.task(["DTSTART;TZID=Europe/Berlin:20270101T090000", "RRULE:FREQ=DAILY"] + taken)
        let after = try TaskEdits.completing(before, uid: "weekly-1", at: Self.now, zones: .system)
        let day = LocalTime.date(daysSince1970: LocalTime.daysSince1970(year: 2027, month: 1, day: 1) + 2015)
        let expected = "DTSTART;TZID=Europe/Berlin:" + String(format: "%04d%02d%02dT090000", day.year, day.month, day.day)
        #expect(String(decoding: after, as: UTF8.self).contains(expected + "\r\n"), "the first day not taken out: \(expected)")
    }

    /// More EXDATEs than geoalarm moves a task past are refused, with their bound.
    @Test func tooManyTimesTakenOutAreRefused() {
        let taken = "EXDATE;VALUE=DATE:" + (0...TaskEdits.mostExclusions).map { _ in "20270118" }.joined(separator: ",")
        #expect { try Self.completed(["DTSTART;VALUE=DATE:20270111", "RRULE:FREQ=WEEKLY", taken]) } throws: { error in
            "\(error)".contains("more than \(TaskEdits.mostExclusions) EXDATE times")
        }
    }
}
