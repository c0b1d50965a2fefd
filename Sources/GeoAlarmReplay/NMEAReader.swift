import FoundationEssentials
import GeoAlarmCore
import GeoAlarmScanners

/// Decodes NMEA 0183 logs into one fix per reporting epoch, the way gpsd does.
///
/// - Sentences: RMC, GGA, GLL and GNS give position and time, GSA the fix mode and HDOP, GST the
///   error ellipse, ZDA the date. Any talker (GP, GN, GL, GA, BD, GB, GQ...) is accepted;
///   other sentences, AIS (`!`) lines and `#` comments are passed over. A sentence may begin
///   with more than one `$`, as gpsd allows.
/// - Checksums are verified where present; a sentence without one is accepted when its
///   fields are complete, as gpsd does. Bad lines are counted and skipped.
/// - Epochs and the moment each becomes a fix follow gpsd's (3.22) reporting cycle, so that
///   replay sees what the live agent sees through gpsd (``CycleDetector``): an epoch starts at
///   a sentence that times the cycle (RMC with a valid fix, GGA, GLL, GNS, GBS) with a new time
///   of day; it becomes a fix at its first report with a position, and the data merged so far
///   is that fix. Where the cycle is known, a report is its last sentence (as learnt); before
///   that, every sentence that changes the position or mode reports. For most receivers this
///   is each epoch's last position; for those whose GLL runs a second ahead, it is not.
/// - The date comes from RMC or ZDA (or, for a log that never carries one, from the caller, as
///   `replay --date` gives it) and is carried forward (rolling over at midnight); until a date
///   is known, fixes have no time.
/// - Within an epoch the last statement of the fix mode wins, as gpsd merges them: RMC or GLL
///   status V, GGA quality 0 or fewer than three satellites, GNS mode N and GSA mode 1 say no
///   fix. An epoch counts as without a fix only when a sentence said so and no fix was given
///   at its time.
/// - The horizontal error is gpsd's: HDOP × 19 m, or × 4.75 m with DGPS. Only without any
///   HDOP does GST give it, as 2.45 × the RMS of its latitude and longitude deviations.
public struct NMEAReader {
    /// gpsd's P_UERE constants (metres, 95% confidence).
    static let rangeErrorWithoutDGPS = 19.0
    static let rangeErrorWithDGPS = 4.75

    var report = TrackReport(format: .nmea)
    /// Days since 1970-01-01 of the current UTC date, once known.
    private var day: Int?
    private var lastTimeOfDay: Double?
    /// Latest GSA mode and HDOP: GSA carries no time, so it applies until the next one.
    private var gsaMode: FixMode?
    private var gsaHDOP: Double?
    private var epoch = Epoch()
    private var cycle = CycleDetector()
    /// What the sentence being decoded means to the cycle detector.
    private var sentence = SentenceEffect()
    /// The time of day of the last statement of no fix not yet counted, and of the last fix given.
    private var pendingNoFixTime: Double?
    private var lastFixTime: Double?
    /// Storage for where the fields of the sentence being decoded are.
    private var fieldBuffer: [Range<Int>] = []

    /// One field of a sentence, read in place: a slice of the line's bytes would retain and
    /// release their storage, for every field of every sentence.
    private typealias Field = Slice<UnsafeBufferPointer<UInt8>>

    /// A sentence's fields, as ranges of the line's buffer (valid while the line is held for its
    /// decoding).
    private struct Fields {
        var sentence: UnsafeBufferPointer<UInt8>
        /// The first `count` are the fields'; the storage is kept from sentence to sentence.
        var bounds: [Range<Int>]
        var count: Int
        subscript(index: Int) -> Field { sentence[bounds[index]] }
        /// The problem of a sentence with too few fields.
        var truncated: String { "truncated (\(DisplayText.counted(count, "field")))" }
    }

    /// What the sentences of one epoch said.
    private struct Epoch {
        /// The time of day that started it.
        var timeOfDay: Double?
        /// The time of day of its latest timed sentence (ZDA included), which gpsd gives its fix:
        /// a receiver may time its sentences a few milliseconds apart.
        var latestTimeOfDay: Double?
        var coordinate: Coordinate?
        /// What GGA, RMC, GLL or GNS said of the fix: true for a fix, false for none.
        var hasFix: Bool?
        var dgps = false
        var hasAltitude = false
        var hdop: Double?
        var gstError: Double?
        var speed: Double?
        var course: Double?
        /// Whether a fix with a time, or one without (no date yet), was given for this epoch.
        var reported = false
        var reportedUndated = false
    }

    /// What one sentence did, as gpsd's cycle detector sees it.
    private struct SentenceEffect {
        /// The time it gave the reporting cycle (gpsd's "fractional time"), if any.
        var cycleTime: Double?
        /// Whether it set the position or the fix mode.
        var changesFix = false
        /// An RMC or GGA without a time, which gpsd reports at once and which makes it
        /// distrust the cycle end it had learnt.
        var forcesReport = false
    }

    /// `startDay` (days since 1970-01-01) dates the log's first epochs until a sentence gives a date.
    public init(startDay: Int? = nil) {
        day = startDay
    }

    /// Decodes a whole log; `startDay` as for ``init(startDay:)``.
    public static func read(_ bytes: ArraySlice<UInt8>, startDay: Int? = nil) -> TrackReport {
        var reader = NMEAReader(startDay: startDay)
        forEachLine(bytes) { line, number in reader.feed(line, lineNumber: number) }
        reader.finish()
        return reader.report
    }

    /// Takes one line; completed epochs are appended to the report's fixes.
    public mutating func feed(_ line: ArraySlice<UInt8>, lineNumber: Int) {
        // Read in place: each slice of the line (its body, tag, type and fields) would retain
        // and release the log's storage.
        line.withUnsafeBufferPointer { feed($0[...], lineNumber: lineNumber) }
    }

    /// ``feed(_:lineNumber:)`` of a line in a buffer the caller holds.
    mutating func feed(_ line: Slice<UnsafeBufferPointer<UInt8>>, lineNumber: Int) {
        guard let first = line.first else { return }
        if first == UInt8(ascii: "#") || first == UInt8(ascii: "!") { return }
        guard first == UInt8(ascii: "$") else {
            report.record(TrackProblem(line: lineNumber, reason: "not an NMEA sentence"))
            return
        }
        // gpsd's lexer starts a sentence at the last of several '$' (ST Teseo LIV4F doubles it).
        let body = line.drop { $0 == UInt8(ascii: "$") }
        let star = body.lastIndex(of: UInt8(ascii: "*"))
        let (fields, computed) = split(star.map { body[..<$0] } ?? body)
        defer { fieldBuffer = (consume fields).bounds }
        if let star {
            let given = body[(star + 1)...]
            guard given.count == 2, let high = hexDigit(given.first!), let low = hexDigit(given.last!) else {
                report.record(TrackProblem(line: lineNumber, reason: "malformed checksum"))
                return
            }
            let value = high << 4 | low
            guard value == computed else {
                report.record(TrackProblem(
                    line: lineNumber,
                    reason: "checksum mismatch (says \(hex(value)), computed \(hex(computed)))"))
                return
            }
        }
        // The sentence type first, from the bytes: most sentences of a log are not decoded,
        // but every one counts for the cycle detector.
        let tag = fields[0]
        let proprietary = tag.first == UInt8(ascii: "P")
        let type = proprietary || tag.count != 5 ? tag : tag.dropFirst(2)
        sentence = SentenceEffect()
        let sentenceType = CycleDetector.SentenceType(type)
        defer {
            if cycle.reports(type: sentenceType, timed: sentence.cycleTime != nil,
                             forced: sentence.forcesReport, changesFix: sentence.changesFix),
               CycleDetector.carriesData(type: sentenceType, fields: fields.count) {
                reportEpoch()
            }
        }
        // Each decoder called by name: called through a closure, the fields' array was retained
        // and released around the call, two atomic operations a sentence.
        let problem: String?
        if proprietary || type.count != 3 {
            guard type.elementsEqual("PSRFEPE".utf8) else { return }
            problem = timedOnly(fields)
        } else {
            switch (type[type.startIndex], type[type.startIndex + 1], type[type.startIndex + 2]) {
            case (0x52, 0x4D, 0x43): problem = rmc(fields)  // RMC
            case (0x47, 0x47, 0x41): problem = gga(fields)  // GGA
            case (0x47, 0x4C, 0x4C): problem = gll(fields)  // GLL
            case (0x47, 0x4E, 0x53): problem = gns(fields)  // GNS
            case (0x47, 0x53, 0x41): problem = gsa(fields)  // GSA
            case (0x47, 0x53, 0x54): problem = gst(fields)  // GST
            case (0x5A, 0x44, 0x41): problem = zda(fields)  // ZDA
            case (0x47, 0x42, 0x53): problem = timedOnly(fields)  // GBS: its time only
            case (0x44, 0x42, 0x54): problem = dbt(fields)  // DBT: only what it does to cycles
            default: return
            }
        }
        if let problem {
            report.record(TrackProblem(line: lineNumber, reason: "\(DisplayText.excerpt(type, limit: 12)): \(problem)"))
        }
    }

    /// Splits a sentence (between its `$` and its `*`) at its commas, and XORs its bytes for the
    /// checksum in the same pass, eight bytes a step (``ByteWord``). The fields are written into
    /// `fieldBuffer`'s storage, taken out for the sentence (written through a pointer: appended
    /// one at a time, each field checked the array's uniqueness, a call into the runtime) and
    /// grown when a sentence has more fields than any before. The caller puts it back.
    private mutating func split(_ payload: Field) -> (fields: Fields, checksum: UInt8) {
        var bounds = fieldBuffer
        fieldBuffer = []
        let end = payload.endIndex
        var (count, start, index) = (0, payload.startIndex, payload.startIndex)
        var (words, tail): (UInt64, UInt8) = (0, 0)
        var split = false
        while !split {
            // Room for a word's eight commas, or the tail's seven and the last field.
            if bounds.count < count + 8 { bounds += repeatElement(0..<0, count: max(16, bounds.count)) }
            bounds.withUnsafeMutableBufferPointer { slots in
                func field(endingAt comma: Int) {
                    slots[count] = start..<comma
                    count += 1
                    start = comma + 1
                }
                while end - index >= 8 {
                    guard slots.count - count >= 8 else { return }
                    let word = ByteWord(at: payload.base.baseAddress! + index)
                    words ^= word.bits
                    var commas = word.matches(UInt8(ascii: ","))
                    while commas != 0 {
                        field(endingAt: index + ByteWord.firstOffset(in: commas))
                        commas &= commas &- 1
                    }
                    index += 8
                }
                guard slots.count - count >= 8 else { return }
                while index < end {
                    let byte = payload.base[index]
                    tail ^= byte
                    if byte == UInt8(ascii: ",") { field(endingAt: index) }
                    index += 1
                }
                field(endingAt: end)
                split = true
            }
        }
        return (Fields(sentence: payload.base, bounds: bounds, count: count), ByteWord.xorOfBytes(words) ^ tail)
    }

    /// Closes the epoch still open at the end of the log.
    public mutating func finish() {
        closeEpoch()
        countNoFix(at: nil)
    }

    // MARK: Sentences (each returns a problem, or nil when it was used)

    private mutating func rmc(_ f: Fields) -> String? {
        guard f.count >= 10 else { return f.truncated }
        let valid = f[2].first == UInt8(ascii: "A") || f[2].first == UInt8(ascii: "D")
        sentence.changesFix = true
        guard let time = timeOfDay(f[1]) else {
            if !valid, f[1].isEmpty || f[9].isEmpty { sentence.forcesReport = true }
            return valid ? "bad time" : nil
        }
        // gpsd takes the time and date of a valid RMC only, and times its cycle by it.
        if valid, let date = date(f[9]) {
            startCycle(at: time)
            day = date
        }
        guard valid else {
            noFix(at: time)
            return nil
        }
        epoch.hasFix = true
        if f.count >= 13, f[12].first == UInt8(ascii: "D") { epoch.dgps = true }
        if let knots = decimal(f[7]) { epoch.speed = knots * 1852 / 3600 }
        if let course = decimal(f[8]) { epoch.course = course }
        guard valid else { return nil }
        guard let coordinate = position(f[3], f[4], f[5], f[6]) else { return "bad position" }
        epoch.coordinate = coordinate
        return nil
    }

    private mutating func gga(_ f: Fields) -> String? {
        guard f.count >= 10 else { return f.truncated }
        let quality = integer(f[6]) ?? 0
        sentence.changesFix = true
        guard let time = timeOfDay(f[1]) else {
            if quality == 0, f[1].isEmpty { sentence.forcesReport = true }
            return quality > 0 ? "bad time" : nil
        }
        startCycle(at: time)
        // gpsd 3.22 takes fewer than three satellites in use as no fix.
        guard quality > 0, let satellites = integer(f[7]), satellites >= 3 else {
            noFix(at: time)
            return nil
        }
        epoch.hasFix = true
        if quality == 2 { epoch.dgps = true }
        if let hdop = decimal(f[8]) { epoch.hdop = hdop }
        epoch.hasAltitude = !f[9].isEmpty
        guard let coordinate = position(f[2], f[3], f[4], f[5]) else { return "bad position" }
        epoch.coordinate = coordinate
        return nil
    }

    private mutating func gll(_ f: Fields) -> String? {
        guard f.count >= 7 else { return f.truncated }
        let valid = f[6].first == UInt8(ascii: "A") && !(f.count >= 8 && f[7].first == UInt8(ascii: "N"))
        sentence.changesFix = true
        guard let time = timeOfDay(f[5]) else { return valid ? "bad time" : nil }
        startCycle(at: time)
        guard valid else {
            noFix(at: time)
            return nil
        }
        epoch.hasFix = true
        guard let coordinate = position(f[1], f[2], f[3], f[4]) else { return "bad position" }
        epoch.coordinate = coordinate
        return nil
    }

    private mutating func gns(_ f: Fields) -> String? {
        guard f.count >= 10 else { return f.truncated }
        let modes = f[6]
        // gpsd reads the leading mode indicator only.
        let valid = modes.first.map { $0 != UInt8(ascii: "N") } ?? false
        sentence.changesFix = true
        guard let time = timeOfDay(f[1]) else { return valid ? "bad time" : nil }
        startCycle(at: time)
        guard valid else {
            noFix(at: time)
            return nil
        }
        epoch.hasFix = true
        if modes.contains(UInt8(ascii: "D")) { epoch.dgps = true }
        if let hdop = decimal(f[8]) { epoch.hdop = hdop }
        epoch.hasAltitude = !f[9].isEmpty
        guard let coordinate = position(f[2], f[3], f[4], f[5]) else { return "bad position" }
        epoch.coordinate = coordinate
        return nil
    }

    private mutating func gsa(_ f: Fields) -> String? {
        guard f.count >= 18 else { return f.truncated }
        sentence.changesFix = true
        switch f[2].first {
        case UInt8(ascii: "1"): gsaMode = .noFix
        case UInt8(ascii: "2"): gsaMode = .twoD
        case UInt8(ascii: "3"): gsaMode = .threeD
        default: return "bad mode"
        }
        gsaHDOP = decimal(f[16])
        // The last statement of the cycle wins, as gpsd merges it.
        if gsaMode == .noFix, let time = epoch.timeOfDay {
            noFix(at: time)
        } else if epoch.timeOfDay != nil {
            epoch.hasFix = true
        }
        return nil
    }

    private mutating func gst(_ f: Fields) -> String? {
        guard f.count >= 9 else { return f.truncated }
        guard timeOfDay(f[1]) != nil else { return "bad time" }
        if let latitudeSigma = decimal(f[6]), let longitudeSigma = decimal(f[7]) {
            epoch.gstError = 2.45 * ((latitudeSigma * latitudeSigma + longitudeSigma * longitudeSigma) / 2).squareRoot()
        }
        return nil
    }

    private mutating func zda(_ f: Fields) -> String? {
        guard f.count >= 5 else { return f.truncated }
        guard let time = timeOfDay(f[1]) else { return "bad time" }
        if epoch.timeOfDay != nil { epoch.latestTimeOfDay = time }
        guard let dayOfMonth = integer(f[2]), let month = integer(f[3]), let year = integer(f[4]),
              (1...31).contains(dayOfMonth), (1...12).contains(month), year >= 1980
        else { return "bad date" }
        day = LocalTime.daysSince1970(year: year, month: month, day: dayOfMonth)
        return nil
    }

    /// A sentence that matters here only for the time it gives gpsd's cycle (GBS, PSRFEPE).
    private mutating func timedOnly(_ f: Fields) -> String? {
        guard f.count >= 2, !f[1].isEmpty else { return nil }
        guard let time = timeOfDay(f[1]) else { return "bad time" }
        startCycle(at: time, stamps: false)
        return nil
    }

    /// A depth sounder's DBT: gpsd then lets every sentence without a time extend the cycle.
    private mutating func dbt(_ f: Fields) -> String? {
        if f.count >= 7 { cycle.continuesCycles = true }
        return nil
    }

    // MARK: Epochs

    /// A sentence timed the cycle: a new time of day starts a new epoch.
    private mutating func startCycle(at time: Double, stamps: Bool = true) {
        sentence.cycleTime = time
        defer { if stamps { epoch.latestTimeOfDay = time } }
        guard cycle.isNewCycle(at: time) else { return }
        closeEpoch()
        if let last = lastTimeOfDay, let current = day, time < last - 43_200 { day = current + 1 }
        lastTimeOfDay = time
        epoch.timeOfDay = time
    }

    /// Gives the epoch's fix, once: the first report with a position after a fix was stated.
    private mutating func reportEpoch() {
        let noFix = epoch.hasFix.map { !$0 } ?? (gsaMode == .noFix)
        guard let timeOfDay = epoch.timeOfDay, !noFix, let coordinate = epoch.coordinate else { return }
        if day == nil {
            guard !epoch.reportedUndated else { return }
            epoch.reportedUndated = true
        } else {
            guard !epoch.reported else { return }
            epoch.reported = true
            lastFixTime = timeOfDay
        }
        let mode = gsaMode.flatMap { $0 >= .twoD ? $0 : nil } ?? (epoch.hasAltitude ? .threeD : .twoD)
        let uere = epoch.dgps ? Self.rangeErrorWithDGPS : Self.rangeErrorWithoutDGPS
        let error = (epoch.hdop ?? gsaHDOP).map { $0 * uere } ?? epoch.gstError
        let time = day.map { Date(timeIntervalSince1970: Double($0) * 86400 + (epoch.latestTimeOfDay ?? timeOfDay)) }
        report.fixes.append(Fix(
            time: time, coordinate: coordinate, mode: mode, horizontalError: error,
            speed: epoch.speed, course: epoch.course))
    }

    private mutating func closeEpoch() {
        epoch = Epoch()
    }

    /// A sentence said there is no fix at `time`.
    private mutating func noFix(at time: Double) {
        if epoch.timeOfDay == time { epoch.hasFix = false }
        countNoFix(at: time)
    }

    /// Counts the last time of day a sentence said "no fix" at, unless a fix was given then,
    /// once a statement about another time (or the end of the log, `nil`) comes.
    private mutating func countNoFix(at time: Double?) {
        if let pending = pendingNoFixTime, pending != time, lastFixTime != pending {
            report.epochsWithoutFix += 1
        }
        pendingNoFixTime = time
    }

    // MARK: Fields

    private func timeOfDay(_ field: Field) -> Double? {
        guard field.count >= 6, let hours = integer(field.prefix(2)),
              let minutes = integer(field.dropFirst(2).prefix(2)), let seconds = decimal(field.dropFirst(4)),
              hours < 24, minutes < 60, seconds < 61
        else { return nil }
        return Double(hours * 3600 + minutes * 60) + seconds
    }

    /// RMC's ddmmyy as days since 1970; two-digit years 80-99 are the 1900s.
    private func date(_ field: Field) -> Int? {
        guard field.count == 6, let dayOfMonth = integer(field.prefix(2)),
              let month = integer(field.dropFirst(2).prefix(2)), let year = integer(field.suffix(2)),
              (1...31).contains(dayOfMonth), (1...12).contains(month)
        else { return nil }
        return LocalTime.daysSince1970(year: year < 80 ? 2000 + year : 1900 + year, month: month, day: dayOfMonth)
    }

    private func position(
        _ latitude: Field, _ north: Field,
        _ longitude: Field, _ east: Field
    ) -> Coordinate? {
        guard let lat = degrees(latitude), let lon = degrees(longitude) else {
            return nil
        }
        let signedLat: Double
        switch north.first {
        case UInt8(ascii: "N"): signedLat = lat
        case UInt8(ascii: "S"): signedLat = -lat
        default: return nil
        }
        let signedLon: Double
        switch east.first {
        case UInt8(ascii: "E"): signedLon = lon
        case UInt8(ascii: "W"): signedLon = -lon
        default: return nil
        }
        let coordinate = Coordinate(latitude: signedLat, longitude: signedLon)
        return coordinate.isValid ? coordinate : nil
    }

    /// "ddmm.mmmm" (or "dddmm.mmmm") as decimal degrees.
    private func degrees(_ field: Field) -> Double? {
        let dot = field.firstIndex(of: UInt8(ascii: ".")) ?? field.endIndex
        guard field.distance(from: field.startIndex, to: dot) >= 3,
              let whole = integer(field[..<(dot - 2)]), let minutes = decimal(field[(dot - 2)...]), minutes < 60
        else { return nil }
        return Double(whole) + minutes / 60
    }

    /// A decimal number (``DecimalText``); nil for anything else.
    private func decimal(_ field: Field) -> Double? {
        DecimalText.value(UnsafeBufferPointer(rebasing: field))
    }

    /// A whole number (``DecimalText``, up to 18 digits); nil for anything else.
    private func integer(_ field: Field) -> Int? {
        DecimalText.wholeNumber(field)
    }

    private func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    private func hex(_ value: UInt8) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return text.count == 1 ? "0" + text : text
    }
}
