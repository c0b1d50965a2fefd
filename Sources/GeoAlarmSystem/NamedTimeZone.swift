import FoundationEssentials
import GeoAlarmCore
import Glibc

/// A time zone by its name (`Europe/Zurich`), as the system's zone database (tzdata) has it in
/// `/usr/share/zoneinfo`: the offsets of its compiled file (TZif), and after its last change the
/// rule its footer gives (`CET-1CEST,M3.5.0,M10.5.0/3`). For the `TZID` of a task's times.
public struct NamedTimeZone: TimeZoneRules {
    public let name: String
    /// Moments (seconds since 1970) when the offset changes, in order, and the offset from each on.
    private let transitions: [Int64]
    private let offsets: [Int]
    /// The offset before the first change.
    private let initialOffset: Int
    /// What holds after the last change.
    private let rule: PosixZoneRule?

    /// Where the zone database is.
    public static let folder = "/usr/share/zoneinfo"

    /// The zone called `name`; nil when the system has none by that name (or its file is not TZif).
    public init?(_ name: String, folder: String = NamedTimeZone.folder) {
        // A name is a path below the database: no way out of it.
        guard !name.isEmpty, name.count <= 64, !name.hasPrefix("/"), !name.split(separator: "/").contains(".."),
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/_-+".contains($0)) })
        else { return nil }
        guard let bytes = try? UserFile.contents(of: folder + "/" + name, limit: 1 << 20), let parsed = TZif(bytes) else { return nil }
        self.name = name
        transitions = parsed.transitions
        offsets = parsed.offsets
        initialOffset = parsed.initialOffset
        rule = parsed.footer.flatMap(PosixZoneRule.init)
    }

    public func secondsAheadOfUTC(at moment: Date) -> Int {
        let seconds = Int64(max(min(moment.timeIntervalSince1970, 1e15), -1e15).rounded(.down))
        if let last = transitions.last, seconds >= last, let rule { return rule.offset(at: seconds) }
        // The last change at or before the moment.
        var low = 0, high = transitions.count
        while low < high {
            let middle = (low + high) / 2
            if transitions[middle] <= seconds { low = middle + 1 } else { high = middle }
        }
        if low == 0 { return transitions.isEmpty ? (rule?.offset(at: seconds) ?? initialOffset) : initialOffset }
        return offsets[low - 1]
    }

}

/// A compiled zone file (RFC 8536): its 64-bit data when it has them, and its footer rule.
private struct TZif {
    var transitions: [Int64] = []
    var offsets: [Int] = []
    var initialOffset = 0
    var footer: String?

    init?(_ bytes: [UInt8]) {
        var reader = Reader(bytes: bytes)
        guard let header = reader.header() else { return nil }
        if header.version >= 2 {
            // Pass over the 32-bit data; the 64-bit block follows with its own header.
            guard reader.skip(header.dataSize(timeBytes: 4)), let second = reader.header(), second.version >= 2,
                  read(second, with: &reader, timeBytes: 8)
            else { return nil }
            if reader.byte() == 0x0A, let end = reader.bytes[reader.position...].firstIndex(of: 0x0A) {
                footer = String(decoding: reader.bytes[reader.position..<end], as: UTF8.self)
            }
        } else {
            guard read(header, with: &reader, timeBytes: 4) else { return nil }
        }
    }

    private mutating func read(_ header: Header, with reader: inout Reader, timeBytes: Int) -> Bool {
        var times: [Int64] = []
        for _ in 0..<header.timeCount {
            guard let time = timeBytes == 8 ? reader.int64() : reader.int32().map(Int64.init) else { return false }
            times.append(time)
        }
        var indices: [Int] = []
        for _ in 0..<header.timeCount {
            guard let index = reader.byte() else { return false }
            indices.append(Int(index))
        }
        var types: [Int] = []
        for _ in 0..<header.typeCount {
            guard let offset = reader.int32(), reader.skip(2) else { return false }
            types.append(Int(offset))
        }
        guard !types.isEmpty, indices.allSatisfy({ $0 < types.count }),
              reader.skip(header.characterCount + header.leapCount * (timeBytes + 4) + header.standardCount + header.utcCount)
        else { return false }
        transitions = times
        offsets = indices.map { types[$0] }
        initialOffset = types[0]
        return true
    }

    struct Header {
        var version: Int
        var utcCount: Int, standardCount: Int, leapCount: Int, timeCount: Int, typeCount: Int, characterCount: Int

        func dataSize(timeBytes: Int) -> Int {
            timeCount * timeBytes + timeCount + typeCount * 6 + characterCount + leapCount * (timeBytes + 4) + standardCount + utcCount
        }
    }

    struct Reader {
        let bytes: [UInt8]
        var position = 0

        mutating func byte() -> UInt8? {
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func skip(_ count: Int) -> Bool {
            guard count >= 0, position + count <= bytes.count else { return false }
            position += count
            return true
        }

        mutating func int32() -> Int32? {
            guard position + 4 <= bytes.count else { return nil }
            defer { position += 4 }
            return Int32(bitPattern: bytes[position..<(position + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }

        mutating func int64() -> Int64? {
            guard position + 8 <= bytes.count else { return nil }
            defer { position += 8 }
            return Int64(bitPattern: bytes[position..<(position + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        }

        mutating func header() -> Header? {
            guard position + 44 <= bytes.count, bytes[position..<(position + 4)].elementsEqual("TZif".utf8) else { return nil }
            let version = bytes[position + 4] == 0 ? 1 : Int(bytes[position + 4]) - 0x30
            position += 20
            var counts: [Int] = []
            for _ in 0..<6 {
                guard let count = int32(), count >= 0, count < 1 << 20 else { return nil }
                counts.append(Int(count))
            }
            return Header(
                version: version, utcCount: counts[0], standardCount: counts[1], leapCount: counts[2], timeCount: counts[3],
                typeCount: counts[4], characterCount: counts[5])
        }
    }
}

/// A POSIX `TZ` rule, as a zone file's footer gives it: `CET-1CEST,M3.5.0,M10.5.0/3` (standard
/// time an hour ahead of UTC, summer time from the last Sunday of March at 02:00 to the last
/// Sunday of October at 03:00). Only the `Mm.w.d` form of a change's day is read (the one tzdata
/// uses); a rule without summer time is its offset alone.
struct PosixZoneRule: Sendable {
    /// Seconds ahead of UTC in standard time, and in summer time.
    var standard: Int
    var summer: Int?
    /// When summer time starts and ends, in local time of the time then in force.
    var start: Change?
    var end: Change?

    struct Change: Sendable {
        var month: Int, week: Int, weekday: Int
        /// Seconds after local midnight (may be negative or past a day).
        var time: Int

        /// The moment (seconds since 1970, UTC) of the change in `year`, for a clock `offset` ahead of UTC.
        func moment(in year: Int, offset: Int) -> Int64 {
            let first = LocalTime.daysSince1970(year: year, month: month, day: 1)
            // 1970-01-01 was a Thursday (4, counting Sunday as 0).
            let firstWeekday = ((first % 7) + 7 + 4) % 7
            var day = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            if week == 5 {
                while day > LocalTime.daysIn(month: month, year: year) { day -= 7 }
            }
            return Int64((first + day - 1) * 86_400 + time - offset)
        }
    }

    init?(_ text: String) {
        var scanner = Scanner(text: Array(text.utf8))
        guard scanner.name(), let standardOffset = scanner.offset() else { return nil }
        standard = -standardOffset
        guard !scanner.atEnd else { return }
        guard scanner.name() else { return nil }
        summer = scanner.peekIsOffsetStart ? scanner.offset().map { -$0 } : standard + 3600
        guard summer != nil, scanner.take(UInt8(ascii: ",")), let start = scanner.change(), scanner.take(UInt8(ascii: ",")),
              let end = scanner.change()
        else { return nil }
        self.start = start
        self.end = end
    }

    func offset(at seconds: Int64) -> Int {
        guard let summer, let start, let end else { return standard }
        let year = LocalTime(Date(timeIntervalSince1970: Double(seconds)), in: FixedOffset(seconds: standard)).year
        let begins = start.moment(in: year, offset: standard), ends = end.moment(in: year, offset: summer)
        let inSummer = begins < ends ? (seconds >= begins && seconds < ends) : (seconds >= begins || seconds < ends)
        return inSummer ? summer : standard
    }

    /// Reads the parts of a rule.
    private struct Scanner {
        let text: [UInt8]
        var position = 0

        var atEnd: Bool { position >= text.count }
        var peekIsOffsetStart: Bool {
            guard position < text.count else { return false }
            let byte = text[position]
            return byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte)
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard position < text.count, text[position] == byte else { return false }
            position += 1
            return true
        }

        /// A zone abbreviation: letters, or anything in `<...>`.
        mutating func name() -> Bool {
            if take(UInt8(ascii: "<")) {
                guard let close = text[position...].firstIndex(of: UInt8(ascii: ">")) else { return false }
                position = close + 1
                return true
            }
            let start = position
            while position < text.count, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(text[position] & 0xDF) { position += 1 }
            return position - start >= 3
        }

        mutating func number() -> Int? {
            let start = position
            while position < text.count, (0x30...0x39).contains(text[position]) { position += 1 }
            guard position > start, position - start <= 4 else { return nil }
            return Int(String(decoding: text[start..<position], as: UTF8.self))
        }

        /// `[+-]hh[:mm[:ss]]` in seconds (POSIX's sign: west of Greenwich is positive).
        mutating func offset() -> Int? {
            var sign = 1
            if take(UInt8(ascii: "-")) { sign = -1 } else { _ = take(UInt8(ascii: "+")) }
            guard let hours = number() else { return nil }
            var seconds = hours * 3600
            if take(UInt8(ascii: ":")) {
                guard let minutes = number() else { return nil }
                seconds += minutes * 60
                if take(UInt8(ascii: ":")) {
                    guard let rest = number() else { return nil }
                    seconds += rest
                }
            }
            return sign * seconds
        }

        /// `Mm.w.d[/time]`.
        mutating func change() -> Change? {
            guard take(UInt8(ascii: "M")), let month = number(), take(UInt8(ascii: ".")), let week = number(),
                  take(UInt8(ascii: ".")), let weekday = number(), (1...12).contains(month), (1...5).contains(week), (0...6).contains(weekday)
            else { return nil }
            var time = 7200
            if take(UInt8(ascii: "/")) {
                guard let given = offset() else { return nil }
                time = given
            }
            return Change(month: month, week: week, weekday: weekday, time: time)
        }
    }
}
