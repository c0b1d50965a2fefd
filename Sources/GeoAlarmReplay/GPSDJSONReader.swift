import FoundationEssentials
import GeoAlarmCore
import GeoAlarmScanners

/// Decodes gpsd's JSON stream (`gpspipe -w`): one fix per TPV object.
///
/// Other classes (SKY, VERSION, DEVICES, WATCH...) are passed over, and so are raw NMEA lines
/// mixed into the stream (`gpspipe -w -r`), since gpsd's own decode of them is in the TPVs.
public struct GPSDJSONReader {
    var report = TrackReport(format: .gpsdJSON)

    public init() {}

    /// Decodes a whole stream.
    public static func read(_ bytes: ArraySlice<UInt8>) -> TrackReport {
        var reader = GPSDJSONReader()
        forEachLine(bytes) { line, number in reader.feed(line, lineNumber: number) }
        return reader.report
    }

    /// Takes one line; a TPV with a position is appended to the report's fixes.
    public mutating func feed(_ line: ArraySlice<UInt8>, lineNumber number: Int) {
        line.withUnsafeBufferPointer { feed($0[...], lineNumber: number) }
    }

    /// ``feed(_:lineNumber:)-(ArraySlice<UInt8>,_)`` of a line in a buffer the caller holds.
    mutating func feed(_ line: Slice<UnsafeBufferPointer<UInt8>>, lineNumber number: Int) {
        guard let first = line.first(where: { $0 != 0x20 && $0 != 0x09 }) else { return }
        guard first == UInt8(ascii: "{") else {
            if first != UInt8(ascii: "$") && first != UInt8(ascii: "!") && first != UInt8(ascii: "#") {
                report.record(TrackProblem(line: number, reason: "not a JSON object"))
            }
            return
        }
        // Read in place, not returned: a report is some two hundred bytes, copied on each return.
        var tpv = TPV()
        do {
            try JSONScanner.scan(UnsafeBufferPointer(rebasing: line)) { scanner throws(JSONScanner.Failure) in try tpv.read(&scanner) }
        } catch {
            report.record(TrackProblem(line: number, reason: "malformed JSON"))
            return
        }
        guard tpv.isTPV else { return }
        switch tpv.fix() {
        case .success(let fix?): report.fixes.append(fix)
        case .success(nil): break
        case .failure(let problem): report.record(TrackProblem(line: number, reason: problem.reason))
        }
    }

    /// Why a TPV could not be used.
    public struct Problem: Error, Equatable {
        public var reason: String
    }

    /// The members of a report that a fix needs, read from its line with a ``JSONScanner``
    /// (every other member is passed over without being built).
    struct TPV {
        var isTPV = false
        var mode = 0
        var latitude, longitude, eph, epx, epy, speed, course: Double?
        /// The time, read where it stands in the line; a time that is not ISO 8601 is a problem
        /// only for a TPV with a position.
        var time: Result<Date, Problem>?
        var device: String?

        /// Takes the members of the object `scanner` is at.
        mutating func read(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) {
            try scanner.expect(UInt8(ascii: "{"))
            try scanner.members { scanner, key throws(JSONScanner.Failure) in
                switch key {
                case "class": isTPV = try scanner.stringValue(is: "TPV")
                case "mode": mode = try scanner.numberValue().flatMap { Int(exactly: $0) } ?? 0
                case "lat": latitude = try scanner.numberValue()
                case "lon": longitude = try scanner.numberValue()
                case "eph": eph = try scanner.numberValue()
                case "epx": epx = try scanner.numberValue()
                case "epy": epy = try scanner.numberValue()
                case "speed": speed = try scanner.numberValue()
                case "track": course = try scanner.numberValue()
                case "time": time = try scanner.utf8Value(Self.time)
                case "device": device = try scanner.stringValue()
                default: try scanner.skipValue()
                }
            }
        }

        private static func time(_ utf8: UnsafeBufferPointer<UInt8>) -> Result<Date, Problem> {
            guard let date = ISOTime.parse(utf8) else {
                return .failure(Problem(reason: "TPV time \"\(DisplayText.excerpt(utf8))\" is not ISO 8601"))
            }
            return .success(date)
        }

        /// The fix; nil when it holds no position (mode 0 or 1).
        func fix() -> Result<Fix?, Problem> {
            let mode = FixMode(rawValue: mode) ?? .unknown
            guard mode >= .twoD else { return .success(nil) }
            guard let latitude, let longitude
            else { return .failure(Problem(reason: "TPV with mode \(mode.rawValue) but no lat/lon")) }
            let coordinate = Coordinate(latitude: latitude, longitude: longitude)
            guard coordinate.isValid else { return .failure(Problem(reason: "TPV position out of range")) }
            var date: Date?
            switch time {
            case .success(let parsed): date = parsed
            case .failure(let problem): return .failure(problem)
            case nil: break
            }
            return .success(Fix(
                time: date, coordinate: coordinate, mode: mode,
                horizontalError: Fix.horizontalError(eph: eph, epx: epx, epy: epy),
                speed: speed, course: course, device: device))
        }
    }
}
