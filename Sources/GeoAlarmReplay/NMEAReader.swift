import Foundation
import GeoAlarmCore
import GeoAlarmScanners

/// Decodes NMEA 0183 logs into one fix per reporting epoch, the way gpsd does.
///
/// - Sentences: RMC, GGA, GLL and GNS give position and time, GSA the fix mode and HDOP, GST the
///   error ellipse, ZDA the date. Any talker (GP, GN, GL, GA, BD, GB, GQ...) is accepted;
///   other sentences, AIS (`!`) lines and `#` comments are passed over.
/// - Checksums are verified where present; a sentence without one is accepted when its
///   fields are complete, as gpsd does. Bad lines are counted and skipped.
/// - Sentences sharing a UTC time of day form one epoch; the epoch becomes a fix when a
///   sentence with another time arrives; within an epoch the last position given wins, as
///   in gpsd. The date comes from RMC or ZDA (or, for a log that never carries one, from the
///   caller, as `replay --date` gives it) and is carried forward (rolling over at midnight);
///   until a date is known, fixes have no time.
/// - An epoch counts as without a fix only when a sentence said so (RMC or GLL status V, GGA
///   quality 0, GNS mode N, or GSA mode 1 standing): an epoch of a ZDA or GST alone is not one.
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
    /// Storage for where the fields of the sentence being decoded are.
    private var fieldBuffer: [Range<Int>] = []

    /// The fields of a sentence, as ranges of its bytes: an array of slices would retain and
    /// release the file's storage for every field of every sentence.
    private struct Fields {
        var sentence: ArraySlice<UInt8>
        var bounds: [Range<Int>]
        var count: Int { bounds.count }
        subscript(index: Int) -> ArraySlice<UInt8> { sentence[bounds[index]] }
    }

    /// What the sentences of one epoch said.
    private struct Epoch {
        var timeOfDay: Double?
        var coordinate: Coordinate?
        /// What GGA, RMC, GLL or GNS said of the fix: true for a fix, false for none.
        var hasFix: Bool?
        var dgps = false
        var hasAltitude = false
        var hdop: Double?
        var gstError: Double?
        var speed: Double?
        var course: Double?
        var dateSeen = false
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
        guard let first = line.first else { return }
        if first == UInt8(ascii: "#") || first == UInt8(ascii: "!") { return }
        guard first == UInt8(ascii: "$") else {
            report.record(TrackProblem(line: lineNumber, reason: "not an NMEA sentence"))
            return
        }
        var body = line.dropFirst()
        if let star = body.lastIndex(of: UInt8(ascii: "*")) {
            let given = body[(star + 1)...]
            body = body[..<star]
            let computed = body.reduce(UInt8(0), ^)
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
        // The sentence type first, from the bytes: most sentences of a log are not used.
        guard body.count >= 5, body.first != UInt8(ascii: "P"),
              body.count == 5 || body[body.startIndex + 5] == UInt8(ascii: ",")
        else { return }
        let type = body[(body.startIndex + 2)..<(body.startIndex + 5)]
        let decode: ((inout NMEAReader, Fields) -> String?)?
        switch (type[type.startIndex], type[type.startIndex + 1], type[type.startIndex + 2]) {
        case (0x52, 0x4D, 0x43): decode = { $0.rmc($1) }  // RMC
        case (0x47, 0x47, 0x41): decode = { $0.gga($1) }  // GGA
        case (0x47, 0x4C, 0x4C): decode = { $0.gll($1) }  // GLL
        case (0x47, 0x4E, 0x53): decode = { $0.gns($1) }  // GNS
        case (0x47, 0x53, 0x41): decode = { $0.gsa($1) }  // GSA
        case (0x47, 0x53, 0x54): decode = { $0.gst($1) }  // GST
        case (0x5A, 0x44, 0x41): decode = { $0.zda($1) }  // ZDA
        default: decode = nil
        }
        guard let decode else { return }
        // One array of fields, kept from sentence to sentence.
        var bounds = fieldBuffer
        fieldBuffer = []
        bounds.removeAll(keepingCapacity: true)
        var start = body.startIndex
        while let comma = body[start...].firstIndex(of: UInt8(ascii: ",")) {
            bounds.append(start..<comma)
            start = comma + 1
        }
        bounds.append(start..<body.endIndex)
        let fields = Fields(sentence: body, bounds: bounds)
        if let problem = decode(&self, fields) {
            report.record(TrackProblem(line: lineNumber, reason: "\(DisplayText.excerpt(type, limit: 12)): \(problem)"))
        }
        fieldBuffer = fields.bounds
    }

    /// Emits the epoch still open at the end of the log.
    public mutating func finish() {
        flushEpoch()
    }

    // MARK: Sentences (each returns a problem, or nil when it was used)

    private mutating func rmc(_ f: Fields) -> String? {
        guard f.count >= 10 else { return "truncated (\(f.count) fields)" }
        guard let time = timeOfDay(f[1]) else { return f[2].first == UInt8(ascii: "A") ? "bad time" : nil }
        startEpoch(at: time)
        if let date = date(f[9]) {
            day = date
            epoch.dateSeen = true
        }
        let valid = f[2].first == UInt8(ascii: "A")
        epoch.hasFix = valid
        if f.count >= 13, f[12].first == UInt8(ascii: "D") { epoch.dgps = true }
        if let knots = DecimalText.value(f[7]) { epoch.speed = knots * 1852 / 3600 }
        if let course = DecimalText.value(f[8]) { epoch.course = course }
        guard valid else { return nil }
        guard let coordinate = position(f[3], f[4], f[5], f[6]) else { return "bad position" }
        epoch.coordinate = coordinate
        return nil
    }

    private mutating func gga(_ f: Fields) -> String? {
        guard f.count >= 10 else { return "truncated (\(f.count) fields)" }
        let quality = integer(f[6]) ?? 0
        guard let time = timeOfDay(f[1]) else { return quality > 0 ? "bad time" : nil }
        startEpoch(at: time)
        epoch.hasFix = quality > 0
        if quality == 2 { epoch.dgps = true }
        if let hdop = DecimalText.value(f[8]) { epoch.hdop = hdop }
        epoch.hasAltitude = !f[9].isEmpty
        guard quality > 0 else { return nil }
        guard let coordinate = position(f[2], f[3], f[4], f[5]) else { return "bad position" }
        epoch.coordinate = coordinate
        return nil
    }

    private mutating func gll(_ f: Fields) -> String? {
        guard f.count >= 7 else { return "truncated (\(f.count) fields)" }
        let valid = f[6].first == UInt8(ascii: "A")
        guard let time = timeOfDay(f[5]) else { return valid ? "bad time" : nil }
        startEpoch(at: time)
        epoch.hasFix = valid
        guard valid else { return nil }
        guard let coordinate = position(f[1], f[2], f[3], f[4]) else { return "bad position" }
        epoch.coordinate = coordinate
        return nil
    }

    private mutating func gns(_ f: Fields) -> String? {
        guard f.count >= 10 else { return "truncated (\(f.count) fields)" }
        let modes = f[6]
        let valid = modes.contains { $0 != UInt8(ascii: "N") }
        guard let time = timeOfDay(f[1]) else { return valid ? "bad time" : nil }
        startEpoch(at: time)
        epoch.hasFix = valid
        guard valid else { return nil }
        if modes.contains(UInt8(ascii: "D")) { epoch.dgps = true }
        if let hdop = DecimalText.value(f[8]) { epoch.hdop = hdop }
        epoch.hasAltitude = !f[9].isEmpty
        guard let coordinate = position(f[2], f[3], f[4], f[5]) else { return "bad position" }
        epoch.coordinate = coordinate
        return nil
    }

    private mutating func gsa(_ f: Fields) -> String? {
        guard f.count >= 18 else { return "truncated (\(f.count) fields)" }
        switch f[2].first {
        case UInt8(ascii: "1"): gsaMode = .noFix
        case UInt8(ascii: "2"): gsaMode = .twoD
        case UInt8(ascii: "3"): gsaMode = .threeD
        default: return "bad mode"
        }
        gsaHDOP = DecimalText.value(f[16])
        return nil
    }

    private mutating func gst(_ f: Fields) -> String? {
        guard f.count >= 9 else { return "truncated (\(f.count) fields)" }
        guard let time = timeOfDay(f[1]) else { return "bad time" }
        startEpoch(at: time)
        if let latitudeSigma = DecimalText.value(f[6]), let longitudeSigma = DecimalText.value(f[7]) {
            epoch.gstError = 2.45 * ((latitudeSigma * latitudeSigma + longitudeSigma * longitudeSigma) / 2).squareRoot()
        }
        return nil
    }

    private mutating func zda(_ f: Fields) -> String? {
        guard f.count >= 5 else { return "truncated (\(f.count) fields)" }
        guard let time = timeOfDay(f[1]) else { return "bad time" }
        startEpoch(at: time)
        guard let dayOfMonth = integer(f[2]), let month = integer(f[3]), let year = integer(f[4]),
              (1...31).contains(dayOfMonth), (1...12).contains(month), year >= 1980
        else { return "bad date" }
        day = ISOTime.daysFromCivil(year: year, month: month, day: dayOfMonth)
        epoch.dateSeen = true
        return nil
    }

    // MARK: Epochs

    private mutating func startEpoch(at time: Double) {
        if let current = epoch.timeOfDay, current == time { return }
        flushEpoch()
        epoch.timeOfDay = time
    }

    private mutating func flushEpoch() {
        defer { epoch = Epoch() }
        guard let timeOfDay = epoch.timeOfDay else { return }
        if !epoch.dateSeen, let last = lastTimeOfDay, let current = day, timeOfDay < last - 43_200 {
            day = current + 1
        }
        lastTimeOfDay = timeOfDay
        let noFix = epoch.hasFix.map { !$0 } ?? (gsaMode == .noFix)
        guard let coordinate = epoch.coordinate, !noFix else {
            if noFix { report.epochsWithoutFix += 1 }
            return
        }
        let mode = gsaMode.flatMap { $0 >= .twoD ? $0 : nil } ?? (epoch.hasAltitude ? .threeD : .twoD)
        let uere = epoch.dgps ? Self.rangeErrorWithDGPS : Self.rangeErrorWithoutDGPS
        let error = (epoch.hdop ?? gsaHDOP).map { $0 * uere } ?? epoch.gstError
        let time = day.map { Date(timeIntervalSince1970: Double($0) * 86400 + timeOfDay) }
        report.fixes.append(Fix(
            time: time, coordinate: coordinate, mode: mode, horizontalError: error,
            speed: epoch.speed, course: epoch.course))
    }

    // MARK: Fields

    private func timeOfDay(_ field: ArraySlice<UInt8>) -> Double? {
        guard field.count >= 6, let hours = integer(field.prefix(2)),
              let minutes = integer(field.dropFirst(2).prefix(2)), let seconds = DecimalText.value(field.dropFirst(4)),
              hours < 24, minutes < 60, seconds < 61
        else { return nil }
        return Double(hours * 3600 + minutes * 60) + seconds
    }

    /// RMC's ddmmyy as days since 1970; two-digit years 80-99 are the 1900s.
    private func date(_ field: ArraySlice<UInt8>) -> Int? {
        guard field.count == 6, let dayOfMonth = integer(field.prefix(2)),
              let month = integer(field.dropFirst(2).prefix(2)), let year = integer(field.suffix(2)),
              (1...31).contains(dayOfMonth), (1...12).contains(month)
        else { return nil }
        return ISOTime.daysFromCivil(year: year < 80 ? 2000 + year : 1900 + year, month: month, day: dayOfMonth)
    }

    private func position(
        _ latitude: ArraySlice<UInt8>, _ north: ArraySlice<UInt8>,
        _ longitude: ArraySlice<UInt8>, _ east: ArraySlice<UInt8>
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
    private func degrees(_ field: ArraySlice<UInt8>) -> Double? {
        let dot = field.firstIndex(of: UInt8(ascii: ".")) ?? field.endIndex
        guard field.distance(from: field.startIndex, to: dot) >= 3,
              let whole = integer(field[..<(dot - 2)]), let minutes = DecimalText.value(field[(dot - 2)...]), minutes < 60
        else { return nil }
        return Double(whole) + minutes / 60
    }

    /// A whole number of up to 18 digits (more could overflow); nil for anything else.
    private func integer(_ field: ArraySlice<UInt8>) -> Int? {
        guard !field.isEmpty, field.count <= 18 else { return nil }
        var value = 0
        for byte in field {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
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
