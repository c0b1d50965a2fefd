import FoundationEssentials
import GeoAlarmCore

/// How a task's local times are read: a floating one in `local`; one of a `TZID` in the zone
/// `named` finds for it, else in `local`.
public struct ICalendarZones: Sendable {
    /// The zone of floating times, and of a `TZID` that `named` does not know.
    public var local: any TimeZoneRules
    /// The zone a `TZID` names; nil when it is not known.
    public var named: @Sendable (String) -> (any TimeZoneRules)?

    public init(local: any TimeZoneRules, named: @escaping @Sendable (String) -> (any TimeZoneRules)?) {
        self.local = local
        self.named = named
    }

    /// Every local time read in UTC, no `TZID` known.
    public static let utc = ICalendarZones(local: FixedOffset.utc, named: { _ in nil })
}

/// A DATE or DATE-TIME value (RFC 5545, 3.3.4 and 3.3.5) as written: a day, a local time
/// ("floating"), a time in UTC, or a time in a named zone (`TZID`).
public enum ICalendarTime: Sendable, Equatable {
    case date(year: Int, month: Int, day: Int)
    case floating(year: Int, month: Int, day: Int, secondOfDay: Int)
    case utc(Date)
    case zoned(year: Int, month: Int, day: Int, secondOfDay: Int, zone: String)

    /// The value of a property such as `DTSTART`, `DUE` or `COMPLETED`; nil when it is not one.
    public init?(_ line: ContentLine) {
        self.init(value: line.value, zone: line.parameter("TZID"))
    }

    /// A DATE or DATE-TIME value as written (`20261204`, `20261204T180000Z`), of the zone named
    /// `zone` (a `TZID`) when it is a local time.
    public init?(value text: String, zone: String?) {
        let value = text.utf8
        func number(_ range: Range<Int>) -> Int? {
            let slice = value.dropFirst(range.lowerBound).prefix(range.count)
            guard slice.count == range.count, slice.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int(String(decoding: slice, as: UTF8.self))
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), (1...12).contains(month),
              (1...LocalTime.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        if value.count == 8 {
            self = .date(year: year, month: month, day: day)
            return
        }
        guard value.count == 15 || value.count == 16, value.dropFirst(8).first == UInt8(ascii: "T"),
              let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
              hour < 24, minute < 60, second <= 60
        else { return nil }
        let secondOfDay = hour * 3600 + minute * 60 + min(second, 59)
        if value.count == 16 {
            guard value.last == UInt8(ascii: "Z") else { return nil }
            self = .utc(LocalTime.moment(year: year, month: month, day: day, secondOfDay: secondOfDay, in: .utc))
        } else if let zone {
            self = .zoned(year: year, month: month, day: day, secondOfDay: secondOfDay, zone: zone)
        } else {
            self = .floating(year: year, month: month, day: day, secondOfDay: secondOfDay)
        }
    }

    /// The moment it names: a day is its start; a floating time is read in `zones.local`; a
    /// zoned one in the zone `zones` finds for its name (else in `zones.local`).
    public func moment(in zones: ICalendarZones) -> Date {
        switch self {
        case .date(let year, let month, let day):
            return LocalTime.moment(year: year, month: month, day: day, secondOfDay: 0, in: zones.local)
        case .floating(let year, let month, let day, let second):
            return LocalTime.moment(year: year, month: month, day: day, secondOfDay: second, in: zones.local)
        case .utc(let date):
            return date
        case .zoned(let year, let month, let day, let second, let zone):
            let rules = zones.named(zone) ?? zones.local
            return LocalTime.moment(year: year, month: month, day: day, secondOfDay: second, in: rules)
        }
    }

    /// As a local date (of `zones.local`) for a reminder's schedule: a day stays a day.
    public func localDate(in zones: ICalendarZones) -> LocalDate {
        if case .date(let year, let month, let day) = self { return LocalDate(year: year, month: month, day: day) }
        let time = LocalTime(moment(in: zones), in: zones.local)
        return LocalDate(year: time.year, month: time.month, day: time.day, minuteOfDay: time.secondOfDay / 60)
    }

    /// Its day (days since 1970-01-01) and time of day, on its own clock (UTC for a time in
    /// UTC); no time of day for a day.
    var wallClock: (day: Int, secondOfDay: Int?) {
        switch self {
        case .date(let year, let month, let day):
            (LocalTime.daysSince1970(year: year, month: month, day: day), nil)
        case .floating(let year, let month, let day, let second), .zoned(let year, let month, let day, let second, _):
            (LocalTime.daysSince1970(year: year, month: month, day: day), second)
        case .utc(let moment):
            { time in (LocalTime.daysSince1970(year: time.year, month: time.month, day: time.day), time.secondOfDay) }(LocalTime(moment, in: .utc))
        }
    }

    /// The same time of day (on its own clock) `days` days later.
    func moved(byDays days: Int) -> ICalendarTime {
        let (day, _) = wallClock
        let date = LocalTime.date(daysSince1970: day + days)
        switch self {
        case .date: return .date(year: date.year, month: date.month, day: date.day)
        case .floating(_, _, _, let second): return .floating(year: date.year, month: date.month, day: date.day, secondOfDay: second)
        case .zoned(_, _, _, let second, let zone):
            return .zoned(year: date.year, month: date.month, day: date.day, secondOfDay: second, zone: zone)
        case .utc(let moment): return .utc(moment.addingTimeInterval(Double(days) * 86_400))
        }
    }

    /// As a property's value is written: `20261204`, `20261204T180000`, `20261204T180000Z`.
    var valueText: String {
        let (day, second) = wallClock
        let date = LocalTime.date(daysSince1970: day)
        var text = Self.padded(date.year, 4) + Self.padded(date.month, 2) + Self.padded(date.day, 2)
        if let second { text += "T" + Self.padded(second / 3600, 2) + Self.padded(second / 60 % 60, 2) + Self.padded(second % 60, 2) }
        if case .utc = self { text += "Z" }
        return text
    }

    /// For a person: `2026-12-04`, `2026-12-04 18:00`, `2026-12-04 18:00 UTC`, `2026-12-04 18:00
    /// Europe/Lisbon`.
    public var displayText: String {
        let (day, second) = wallClock
        let date = LocalTime.date(daysSince1970: day)
        var text = "\(Self.padded(date.year, 4))-\(Self.padded(date.month, 2))-\(Self.padded(date.day, 2))"
        if let second { text += " \(Self.padded(second / 3600, 2)):\(Self.padded(second / 60 % 60, 2))" }
        switch self {
        case .utc: text += " UTC"
        case .zoned(_, _, _, _, let zone): text += " \(zone)"
        case .date, .floating: break
        }
        return text
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// `20260710T045638Z`: a moment as a DATE-TIME in UTC.
    public static func utcText(_ moment: Date) -> String {
        ICalendarTime.utc(moment).valueText
    }
}

/// A DURATION value (RFC 5545, 3.3.6): `-PT15M`, `P1D`, `PT0S`, `P1W`.
public enum ICalendarDuration {
    /// Seconds, negative before; nil when `text` is no duration.
    public static func seconds(_ text: String) -> Double? {
        var rest = Substring(text)
        var sign = 1.0
        if rest.hasPrefix("-") { sign = -1; rest = rest.dropFirst() } else if rest.hasPrefix("+") { rest = rest.dropFirst() }
        guard rest.hasPrefix("P"), rest.count > 1 else { return nil }
        rest = rest.dropFirst()
        var total = 0.0
        var inTime = false
        var digits = ""
        var units = 0, timeUnits = 0
        for character in rest {
            if character.isASCII, character.isNumber {
                digits.append(character)
                guard digits.count <= 9 else { return nil }
                continue
            }
            if character == "T" {
                guard !inTime, digits.isEmpty else { return nil }
                inTime = true
                continue
            }
            guard let amount = Double(digits) else { return nil }
            digits = ""
            switch (character, inTime) {
            case ("W", false): total += amount * 604_800
            case ("D", false): total += amount * 86_400
            case ("H", true): total += amount * 3600
            case ("M", true): total += amount * 60
            case ("S", true): total += amount
            default: return nil
            }
            units += 1
            if inTime { timeUnits += 1 }
        }
        guard digits.isEmpty, units > 0, !inTime || timeUnits > 0 else { return nil }
        return sign * total
    }
}
