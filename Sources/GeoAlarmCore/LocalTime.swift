import FoundationEssentials

/// What the core needs of a time zone: the offset of local time from UTC at each moment,
/// daylight saving included. The system's zone (`TZ`, `/etc/localtime`) comes from an adapter;
/// ``FixedOffset`` is one that never changes (UTC).
public protocol TimeZoneRules: Sendable {
    /// Seconds the local clock is ahead of UTC at `moment` (3600 in Lisbon in summer).
    func secondsAheadOfUTC(at moment: Date) -> Int
}

/// A zone whose offset never changes, such as UTC.
public struct FixedOffset: TimeZoneRules, Equatable {
    public var seconds: Int

    public init(seconds: Int) { self.seconds = seconds }

    public func secondsAheadOfUTC(at moment: Date) -> Int { seconds }
}

extension TimeZoneRules where Self == FixedOffset {
    /// Coordinated Universal Time.
    public static var utc: FixedOffset { FixedOffset(seconds: 0) }
}

/// A moment read as a local date and time in a zone, by the Gregorian calendar (as a phone's
/// clock reads it); and the way back from a local date and time to the moment.
public struct LocalTime: Sendable, Equatable {
    public var year: Int, month: Int, day: Int
    /// 1 Sunday ... 7 Saturday, as ``ActiveWindow`` numbers them.
    public var weekday: Int
    /// Seconds after local midnight.
    public var secondOfDay: Int

    /// `moment` on the local clock of `zone`.
    public init(_ moment: Date, in zone: some TimeZoneRules) {
        let local = Int((moment.timeIntervalSince1970).rounded(.down)) + zone.secondsAheadOfUTC(at: moment)
        let days = Self.floorDivision(local, 86_400)
        secondOfDay = local - days * 86_400
        (year, month, day) = Self.date(daysSince1970: days)
        // 1970-01-01 was a Thursday (5).
        weekday = (days % 7 + 7 + 4) % 7 + 1
    }

    /// The moment the local clock of `zone` shows `secondOfDay` on the given day. A time the
    /// clock shows twice (the autumn hour) is the first of the two; one it skips (the spring
    /// gap) is read with the offset before the change, so it lands after the gap.
    public static func moment(year: Int, month: Int, day: Int, secondOfDay: Int, in zone: some TimeZoneRules) -> Date {
        let local = daysSince1970(year: year, month: month, day: day) * 86_400 + secondOfDay
        func offset(at seconds: Int) -> Int { zone.secondsAheadOfUTC(at: Date(timeIntervalSince1970: Double(seconds))) }
        // A zone changes its offset at most once in a day either side.
        let before = offset(at: local - 86_400), after = offset(at: local + 86_400)
        for candidate in [max(before, after), min(before, after)] where (local - candidate) + offset(at: local - candidate) == local {
            return Date(timeIntervalSince1970: Double(local - candidate))
        }
        return Date(timeIntervalSince1970: Double(local - before))
    }

    /// How many days the month has in that year (February 29 in leap years).
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given Gregorian date (negative before it); a day past the
    /// month's end runs into the next month.
    public static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        // Counted in years that start on 1 March, so that February's leap day comes last.
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivision(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian date `days` after 1970-01-01.
    public static func date(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = floorDivision(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivision(_ value: Int, _ divisor: Int) -> Int {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
