import Foundation
import GeoAlarmCore
@testable import GeoAlarmICalendar
@testable import GeoAlarmTasks
import GeoAlarmTestSupport
import PropertyBased
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

    /// Whether `day` is a time of `rule`'s series that starts on `first`, told day by day from
    /// RFC 5545's words (the period it falls in, then each part's limit), apart from how
    /// `forEachDay` makes them period by period.
    static func isOccurrence(_ day: Int, of rule: RecurrenceRule, first: Int) -> Bool {
        let date = LocalTime.date(daysSince1970: day), start = LocalTime.date(daysSince1970: first)
        let weekday = RecurrenceRule.weekday(of: day)
        let length = LocalTime.daysIn(month: date.month, year: date.year)
        func weekdayMatches(_ rule: RecurrenceRule.Weekday) -> Bool {
            guard rule.day == weekday else { return false }
            if rule.ordinal > 0 { return (date.day + 6) / 7 == rule.ordinal }
            if rule.ordinal < 0 { return (length - date.day) / 7 + 1 == -rule.ordinal }
            return true
        }
        let monthDayMatches = rule.monthDays.isEmpty || rule.monthDays.contains { $0 > 0 ? $0 == date.day : length + 1 + $0 == date.day }
        let weekdayOK = rule.weekdays.isEmpty || rule.weekdays.contains(where: weekdayMatches)
        let monthOK = rule.months.isEmpty || rule.months.contains(date.month)
        switch rule.frequency {
        case .daily:
            return (day - first) % rule.interval == 0 && weekdayOK && monthDayMatches && monthOK
        case .weekly:
            func weekStart(_ day: Int) -> Int { day - ((RecurrenceRule.weekday(of: day) - rule.weekStart) % 7 + 7) % 7 }
            let weeks = (weekStart(day) - weekStart(first)) / 7
            let onItsDay = rule.weekdays.isEmpty ? weekday == RecurrenceRule.weekday(of: first) : weekdayOK
            return weeks % rule.interval == 0 && onItsDay && monthOK
        case .monthly, .yearly:
            let inPeriod = rule.frequency == .monthly
                ? ((date.year - start.year) * 12 + date.month - start.month) % rule.interval == 0
                : (date.year - start.year) % rule.interval == 0 && (rule.months.isEmpty ? date.month == start.month : true)
            let onItsDay = rule.monthDays.isEmpty && rule.weekdays.isEmpty ? date.day == start.day : monthDayMatches && weekdayOK
            return inPeriod && onItsDay && monthOK
        }
    }

    /// Rules of every form followed, at random: their days are the ones the day-by-day reading
    /// finds, in order, none left out, over the two years after their start.
    @Test func daysAreThoseTheRuleDescribesDayByDay() async {
        await propertyCheck(count: 400, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
            func some<T>(_ values: [T], most: Int) -> [T] { (0..<Int(random.next() % UInt64(most + 1))).map { _ in pick(values) } }
            let frequency = pick(["DAILY", "WEEKLY", "MONTHLY", "YEARLY"])
            var parts = ["FREQ=\(frequency)", "INTERVAL=\(1 + random.next() % 4)"]
            let names = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
            let ordinals = frequency == "MONTHLY" || frequency == "YEARLY" ? ["", "", "1", "2", "-1", "-2", "5"] : [""]
            let days = some(names, most: 3).map { pick(ordinals) + $0 }
            if !days.isEmpty, frequency != "YEARLY" || random.bool() { parts.append("BYDAY=" + days.joined(separator: ",")) }
            if frequency != "WEEKLY", random.next() % 3 == 0 {
                parts.append("BYMONTHDAY=" + some([1, 2, 13, 15, 28, 29, 30, 31, -1, -2], most: 3).map(String.init).joined(separator: ","))
            }
            if random.next() % 3 == 0 || (frequency == "YEARLY" && parts.contains { $0.hasPrefix("BYDAY") }) {
                parts.append("BYMONTH=" + ([pick(Array(1...12))] + some(Array(1...12), most: 2)).map(String.init).joined(separator: ","))
            }
            if random.bool() { parts.append("WKST=" + pick(names)) }
            let text = parts.filter { !$0.hasSuffix("=") }.joined(separator: ";")
            guard let rule = try? RecurrenceRule(text) else {
                Issue.record("seed \(seed): \(text) refused")
                return
            }
            let first = LocalTime.daysSince1970(year: 2024 + Int(random.next() % 4), month: 1 + Int(random.next() % 12), day: 1)
                + Int(random.next() % 28)
            let horizon = first + 731
            var made: [Int] = []
            rule.forEachDay(after: first, periods: 800) { day in
                guard day <= horizon else { return false }
                made.append(day)
                return true
            }
            let described = ((first + 1)...horizon).filter { Self.isOccurrence($0, of: rule, first: first) }
            #expect(made == described, "seed \(seed): \(text) from day \(first)")
        }
    }
}
