import Foundation
import GeoAlarmCore
@testable import GeoAlarmTasks
import Testing

/// A repeating task's rule: the days it gives after its first, as python-dateutil's `rrule`
/// (todoman's) gives them; the rules geoalarm does not follow, refused by their part.
struct RecurrenceRuleTests {
    /// The first four days after `first` (`2026-11-30`), as `2026-12-02`.
    static func days(_ rule: String, after first: String) throws -> [String] {
        let parsed = try RecurrenceRule(rule)
        let start = try #require(LocalDate(parsing: first))
        var found: [String] = []
        parsed.forEachDay(after: LocalTime.daysSince1970(year: start.year, month: start.month, day: start.day)) { day in
            let date = LocalTime.date(daysSince1970: day)
            found.append(String(format: "%04d-%02d-%02d", date.year, date.month, date.day))
            return found.count < 4
        }
        return found
    }

    // Each answer is python-dateutil 2.9's `rrulestr(rule, dtstart=first).after(...)`, four times.
    @Test(arguments: [
        ("FREQ=DAILY;INTERVAL=2", "2026-11-30", ["2026-12-02", "2026-12-04", "2026-12-06", "2026-12-08"]),
        ("FREQ=WEEKLY;BYDAY=MO,TH", "2026-11-30", ["2026-12-03", "2026-12-07", "2026-12-10", "2026-12-14"]),
        ("FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", "2026-11-30", ["2026-12-01", "2026-12-15", "2026-12-29", "2027-01-12"]),
        ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,SU;WKST=SU", "2026-11-30", ["2026-12-13", "2026-12-14", "2026-12-27", "2026-12-28"]),
        ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,SU", "2026-11-30", ["2026-12-06", "2026-12-14", "2026-12-20", "2026-12-28"]),
        ("FREQ=MONTHLY", "2026-01-31", ["2026-03-31", "2026-05-31", "2026-07-31", "2026-08-31"]),
        ("FREQ=MONTHLY;BYDAY=2TU", "2026-11-10", ["2026-12-08", "2027-01-12", "2027-02-09", "2027-03-09"]),
        ("FREQ=MONTHLY;BYDAY=-1FR", "2026-11-27", ["2026-12-25", "2027-01-29", "2027-02-26", "2027-03-26"]),
        ("FREQ=MONTHLY;BYMONTHDAY=-1", "2026-11-30", ["2026-12-31", "2027-01-31", "2027-02-28", "2027-03-31"]),
        ("FREQ=YEARLY", "2024-02-29", ["2028-02-29", "2032-02-29", "2036-02-29", "2040-02-29"]),
        ("FREQ=YEARLY;BYMONTH=3,9", "2026-03-15", ["2026-09-15", "2027-03-15", "2027-09-15", "2028-03-15"]),
        ("FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR", "2026-12-04", ["2026-12-07", "2026-12-08", "2026-12-09", "2026-12-10"]),
        ("FREQ=MONTHLY;BYMONTHDAY=1,15;BYDAY=MO", "2026-11-30", ["2027-02-01", "2027-02-15", "2027-03-01", "2027-03-15"]),
        ("FREQ=YEARLY;BYMONTH=11;BYDAY=4TH", "2026-11-26", ["2027-11-25", "2028-11-23", "2029-11-22", "2030-11-28"]),
        ("FREQ=WEEKLY;BYDAY=MO,MO,TH", "2026-11-30", ["2026-12-03", "2026-12-07", "2026-12-10", "2026-12-14"]),
        ("FREQ=YEARLY;BYMONTH=9,3,9", "2026-03-15", ["2026-09-15", "2027-03-15", "2027-09-15", "2028-03-15"]),
        ("freq=monthly;interval=3;bymonthday=31", "2026-12-31", ["2027-03-31", "2027-12-31", "2028-03-31", "2028-12-31"]),
    ])
    func daysAreTheOnesDateutilGives(rule: String, first: String, expected: [String]) throws {
        #expect(try Self.days(rule, after: first) == expected)
    }

    /// A rule no day meets ends instead of searching for ever.
    @Test func aRuleNoDayMeetsHasNoDays() throws {
        #expect(try Self.days("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", after: "2026-01-01").isEmpty)
        #expect(try Self.days("FREQ=MONTHLY;BYMONTHDAY=31;BYMONTH=4,6", after: "2026-01-31").isEmpty)
    }

    @Test(arguments: [
        ("FREQ=HOURLY", "FREQ=HOURLY"), ("FREQ=WEEKLY;BYSETPOS=1", "BYSETPOS"), ("INTERVAL=2", "no FREQ"),
        ("FREQ=DAILY;COUNT=2;UNTIL=20270101", "both COUNT and UNTIL"), ("FREQ=WEEKLY;BYDAY=2TU", "BYDAY with a number"),
        ("FREQ=WEEKLY;BYDAY=XX", "BYDAY=XX"), ("FREQ=DAILY;INTERVAL=0", "INTERVAL=0"), ("FREQ=DAILY;COUNT=-1", "COUNT=-1"),
        ("FREQ=MONTHLY;BYMONTHDAY=32", "BYMONTHDAY=32"), ("FREQ=YEARLY;BYDAY=1MO", "without BYMONTH"), ("FREQ=DAILY;UNTIL=tomorrow", "UNTIL"),
        ("FREQ=MONTHLY;BYDAY=0MO", "BYDAY=0MO"), ("FREQ=DAILY;WKST=XX", "WKST"),
    ])
    func aRuleGeoalarmDoesNotFollowIsRefusedByItsPart(rule: String, named: String) {
        #expect { try RecurrenceRule(rule) } throws: { error in "\(error)".contains(named) && "\(error)".contains("its RRULE") }
    }

    /// COUNT is written back where it was, the other parts as they were.
    @Test func theRuleIsWrittenBackWithItsNewCount() throws {
        let rule = try RecurrenceRule("FREQ=WEEKLY;COUNT=10;BYDAY=MO,TH;X-NAME=kept")
        #expect(rule.count == 10)
        #expect(rule.text(count: 7) == "FREQ=WEEKLY;COUNT=7;BYDAY=MO,TH;X-NAME=kept")
    }
}
