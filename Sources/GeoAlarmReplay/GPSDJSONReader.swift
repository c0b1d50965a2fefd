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
        guard let first = line.first(where: { $0 != 0x20 && $0 != 0x09 }) else { return }
        guard first == UInt8(ascii: "{") else {
            if first != UInt8(ascii: "$") && first != UInt8(ascii: "!") && first != UInt8(ascii: "#") {
                report.record(TrackProblem(line: number, reason: "not a JSON object"))
            }
            return
        }
        let tpv: TPV
        do {
            tpv = try TPV(line)
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
        /// The time's UTF-8, parsed only for a TPV with a position.
        var time: ArraySlice<UInt8>?
        var device: String?

        init(_ line: ArraySlice<UInt8>) throws(JSONScanner.Failure) {
            var scanner = JSONScanner(line)
            try scanner.expect(UInt8(ascii: "{"))
            try scanner.members { scanner, key throws(JSONScanner.Failure) in
                switch key {
                case "class": isTPV = try scanner.stringValue() == "TPV"
                case "mode": mode = try scanner.numberValue().flatMap { Int(exactly: $0) } ?? 0
                case "lat": latitude = try scanner.numberValue()
                case "lon": longitude = try scanner.numberValue()
                case "eph": eph = try scanner.numberValue()
                case "epx": epx = try scanner.numberValue()
                case "epy": epy = try scanner.numberValue()
                case "speed": speed = try scanner.numberValue()
                case "track": course = try scanner.numberValue()
                case "time": time = try scanner.utf8Value()
                case "device": device = try scanner.stringValue()
                default: try scanner.skipValue()
                }
            }
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
            if let time {
                guard let parsed = ISOTime.parse(time) else {
                    return .failure(Problem(reason: "TPV time \"\(DisplayText.excerpt(time))\" is not ISO 8601"))
                }
                date = parsed
            }
            return .success(Fix(
                time: date, coordinate: coordinate, mode: mode,
                horizontalError: Fix.horizontalError(eph: eph, epx: epx, epy: epy),
                speed: speed, course: course, device: device))
        }
    }
}
