import GeoAlarmCore

/// A repeating task's `RRULE` (RFC 5545, 3.3.10), in the forms task apps write: every N days,
/// weeks (on some weekdays), months (on days of the month, or "the second Tuesday") or years
/// (in some months), for COUNT times or UNTIL a day. A rule of another form (hourly, BYSETPOS,
/// BYWEEKNO...) is refused with its part named: its own app moves such a task on.
struct RecurrenceRule: Sendable, Equatable {
    enum Frequency: String, Sendable {
        case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY"
    }

    /// A weekday of `BYDAY`: 0 Monday to 6 Sunday, and which one of the month it must be (2 the
    /// second, -1 the last), 0 for every one.
    struct Weekday: Sendable, Equatable {
        var day: Int
        var ordinal: Int
    }

    var frequency: Frequency
    var interval: Int
    /// How many occurrences the series has, the first one included; nil without end.
    var count: Int?
    /// The last moment an occurrence may have (`UNTIL`), as written.
    var until: ICalendarTime?
    var weekdays: [Weekday] = []
    var monthDays: [Int] = []
    var months: [Int] = []
    /// The first day of a week (`WKST`), 0 Monday.
    var weekStart = 0
    /// Its parts as written, in order, for writing it again with another COUNT.
    private var parts: [(name: String, value: String)]

    static let weekdayNames = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

    /// Reads an `RRULE` value (`FREQ=WEEKLY;BYDAY=MO,TH;COUNT=10`).
    init(_ text: String) throws(TaskProblem) {
        parts = text.split(separator: ";", omittingEmptySubsequences: true).map { part in
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(pair[0]).uppercased(), pair.count > 1 ? String(pair[1]) : "")
        }
        func problem(_ words: String) -> TaskProblem { TaskProblem("its RRULE \(DisplayText.escaped(text)): \(words)") }
        func numbers(_ value: String, in range: ClosedRange<Int>, _ name: String) throws(TaskProblem) -> [Int] {
            var found: [Int] = []
            for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                guard let number = Int(item), range.contains(number), number != 0 else { throw problem("\(name)=\(value) is not understood") }
                found.append(number)
            }
            return found
        }
        var frequency: Frequency?
        var interval = 1
        for (name, value) in parts {
            switch name {
            case "FREQ":
                guard let known = Frequency(rawValue: value.uppercased()) else {
                    throw problem("FREQ=\(value) is not daily, weekly, monthly nor yearly")
                }
                frequency = known
            case "INTERVAL": interval = try numbers(value, in: 1...10_000, name)[0]
            case "COUNT": count = try numbers(value, in: 1...1_000_000, name)[0]
            case "UNTIL":
                guard let end = ICalendarTime(value: value, zone: nil) else { throw problem("UNTIL=\(value) is no date nor time") }
                until = end
            case "BYMONTHDAY": monthDays = try numbers(value, in: -31...31, name)
            case "BYMONTH": months = try numbers(value, in: 1...12, name)
            case "WKST":
                guard let day = Self.weekdayNames.firstIndex(of: value.uppercased()) else { throw problem("WKST=\(value) is no weekday") }
                weekStart = day
            case "BYDAY":
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    let name = String(item.suffix(2)).uppercased()
                    let ordinalText = item.dropLast(2)
                    guard let day = Self.weekdayNames.firstIndex(of: name),
                          let ordinal = ordinalText.isEmpty ? 0 : Int(ordinalText), (-5...5).contains(ordinal),
                          ordinalText.isEmpty || ordinal != 0
                    else { throw problem("BYDAY=\(value) is not understood") }
                    weekdays.append(Weekday(day: day, ordinal: ordinal))
                }
            default:
                // An extension's part (RFC 5545's x-name) is kept as it is.
                guard name.hasPrefix("X-") else { throw problem("\(name) is a part geoalarm does not follow") }
            }
        }
        guard let frequency else { throw problem("it has no FREQ") }
        guard count == nil || until == nil else { throw problem("it has both COUNT and UNTIL") }
        let ordinals = weekdays.contains { $0.ordinal != 0 }
        switch frequency {
        case .daily, .weekly:
            if ordinals { throw problem("BYDAY with a number needs FREQ=MONTHLY or YEARLY") }
            if frequency == .weekly, !monthDays.isEmpty { throw problem("BYMONTHDAY with FREQ=WEEKLY") }
        case .monthly:
            break
        case .yearly:
            if !weekdays.isEmpty, months.isEmpty { throw problem("BYDAY in a year without BYMONTH") }
        }
        self.frequency = frequency
        self.interval = interval
    }

    /// The rule as written, with COUNT set to `count`.
    func text(count: Int?) -> String {
        var written = parts.filter { $0.name != "COUNT" }.map { "\($0.name)=\($0.value)" }
        if let count {
            let at = parts.firstIndex { $0.name == "COUNT" } ?? written.count
            written.insert("COUNT=\(count)", at: min(at, written.count))
        }
        return written.joined(separator: ";")
    }

    /// Calls `body` with each day (as days since 1970-01-01) on which the series that starts on
    /// `first` has an occurrence after `first`, in order, until it returns false; at most
    /// `periods` periods (days, weeks, months or years, `interval` apart) are looked at, so that a
    /// rule no day meets (the 30th of February) ends. With `from`, the periods that end before
    /// that day are passed over without a look (a task that began in year 1 moves on at once);
    /// only for a series without COUNT, whose every occurrence counts.
    func forEachDay(after first: Int, from: Int? = nil, periods: Int = 100_000, _ body: (Int) -> Bool) {
        let start = LocalTime.date(daysSince1970: first)
        var skipped = 0
        if let from, count == nil, from > first {
            let target = LocalTime.date(daysSince1970: from)
            let elapsed = switch frequency {
            case .daily: (from - first) / interval
            case .weekly: (from - first) / (7 * interval)
            case .monthly: ((target.year - start.year) * 12 + target.month - start.month) / interval
            case .yearly: (target.year - start.year) / interval
            }
            // One period early: the one `from` falls in may begin before it.
            skipped = max(0, elapsed - 1)
        }
        for period in skipped..<(skipped + periods) {
            let days: [Int]
            switch frequency {
            case .daily:
                days = [first + period * interval]
            case .weekly:
                let weekBegins = first - Self.floorModulo(Self.weekday(of: first) - weekStart, 7) + 7 * period * interval
                let wanted = weekdays.isEmpty ? [Self.weekday(of: first)] : weekdays.map(\.day)
                days = Set(wanted.map { weekBegins + Self.floorModulo($0 - weekStart, 7) }).sorted()
            case .monthly:
                let monthNumber = start.month - 1 + period * interval
                let year = start.year + Self.floorDivision(monthNumber, 12), month = Self.floorModulo(monthNumber, 12) + 1
                days = self.days(ofMonth: month, year: year, startDay: start.day)
            case .yearly:
                let year = start.year + period * interval
                days = (months.isEmpty ? [start.month] : Set(months).sorted()).flatMap { self.days(ofMonth: $0, year: year, startDay: start.day) }
            }
            for day in days where day > first && matchesLimits(day) {
                if LocalTime.date(daysSince1970: day).year > 9999 || !body(day) { return }
            }
        }
    }

    /// The days of a month the rule picks, in order: its BYMONTHDAY days, else those of BYDAY,
    /// else the day the series started on (a month too short for it has none).
    private func days(ofMonth month: Int, year: Int, startDay: Int) -> [Int] {
        let length = LocalTime.daysIn(month: month, year: year)
        let firstDay = LocalTime.daysSince1970(year: year, month: month, day: 1)
        var daysOfMonth: [Int]
        if !monthDays.isEmpty {
            daysOfMonth = monthDays.map { $0 > 0 ? $0 : length + 1 + $0 }.filter { (1...length).contains($0) }
        } else if !weekdays.isEmpty {
            daysOfMonth = Array(1...length)
        } else {
            daysOfMonth = startDay <= length ? [startDay] : []
        }
        if !weekdays.isEmpty {
            daysOfMonth = daysOfMonth.filter { day in
                let weekday = Self.weekday(of: firstDay + day - 1)
                return weekdays.contains { rule in
                    guard rule.day == weekday else { return false }
                    if rule.ordinal > 0 { return (day - 1) / 7 + 1 == rule.ordinal }
                    if rule.ordinal < 0 { return (length - day) / 7 + 1 == -rule.ordinal }
                    return true
                }
            }
        }
        return Set(daysOfMonth).sorted().map { firstDay + $0 - 1 }
    }

    /// Whether `day` meets the parts that only limit: BYMONTH (but in a year, where it picks the
    /// months), BYDAY and BYMONTHDAY in a daily rule.
    private func matchesLimits(_ day: Int) -> Bool {
        let date = LocalTime.date(daysSince1970: day)
        if !months.isEmpty, !months.contains(date.month) { return false }
        guard frequency == .daily else { return true }
        if !weekdays.isEmpty, !weekdays.contains(where: { $0.day == Self.weekday(of: day) }) { return false }
        if !monthDays.isEmpty {
            let length = LocalTime.daysIn(month: date.month, year: date.year)
            if !monthDays.contains(where: { ($0 > 0 ? $0 : length + 1 + $0) == date.day }) { return false }
        }
        return true
    }

    /// 0 Monday to 6 Sunday (1970-01-01 was a Thursday).
    static func weekday(of day: Int) -> Int { floorModulo(day + 3, 7) }

    private static func floorModulo(_ value: Int, _ divisor: Int) -> Int { ((value % divisor) + divisor) % divisor }

    private static func floorDivision(_ value: Int, _ divisor: Int) -> Int { (value - floorModulo(value, divisor)) / divisor }

    static func == (left: RecurrenceRule, right: RecurrenceRule) -> Bool { left.text(count: left.count) == right.text(count: right.count) }
}
