import Foundation
import GeoAlarmCore

/// Decodes gpsd's JSON stream (`gpspipe -w`): one fix per TPV object.
///
/// Other classes (SKY, VERSION, DEVICES, WATCH...) are passed over, and so are raw NMEA lines
/// mixed into the stream (`gpspipe -w -r`), since gpsd's own decode of them is in the TPVs.
public enum GPSDJSONReader {
    public static func read(_ bytes: ArraySlice<UInt8>) -> TrackReport {
        var report = TrackReport(format: .gpsdJSON)
        forEachLine(bytes) { line, number in
            guard let first = line.first(where: { $0 != 0x20 && $0 != 0x09 }) else { return }
            guard first == UInt8(ascii: "{") else {
                if first != UInt8(ascii: "$") && first != UInt8(ascii: "!") && first != UInt8(ascii: "#") {
                    report.record(TrackProblem(line: number, reason: "not a JSON object"))
                }
                return
            }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
                report.record(TrackProblem(line: number, reason: "malformed JSON"))
                return
            }
            guard object["class"] as? String == "TPV" else { return }
            switch fix(fromTPV: object) {
            case .success(let fix?): report.fixes.append(fix)
            case .success(nil): break
            case .failure(let problem): report.record(TrackProblem(line: number, reason: problem.reason))
            }
        }
        return report
    }

    /// Why a TPV could not be used.
    public struct Problem: Error, Equatable {
        public var reason: String
    }

    /// Converts a decoded TPV object; nil when it holds no position (mode 0 or 1).
    public static func fix(fromTPV object: [String: Any]) -> Result<Fix?, Problem> {
        let mode = FixMode(rawValue: (object["mode"] as? NSNumber)?.intValue ?? 0) ?? .unknown
        guard mode >= .twoD else { return .success(nil) }
        guard let latitude = (object["lat"] as? NSNumber)?.doubleValue,
              let longitude = (object["lon"] as? NSNumber)?.doubleValue
        else { return .failure(Problem(reason: "TPV with mode \(mode.rawValue) but no lat/lon")) }
        let coordinate = Coordinate(latitude: latitude, longitude: longitude)
        guard coordinate.isValid else { return .failure(Problem(reason: "TPV position out of range")) }
        var time: Date?
        if let text = object["time"] as? String {
            guard let parsed = ISOTime.parse(text[...]) else {
                return .failure(Problem(reason: "TPV time \"\(text)\" is not ISO 8601"))
            }
            time = parsed
        }
        func number(_ key: String) -> Double? { (object[key] as? NSNumber)?.doubleValue }
        return .success(Fix(
            time: time, coordinate: coordinate, mode: mode,
            horizontalError: Fix.horizontalError(eph: number("eph"), epx: number("epx"), epy: number("epy")),
            speed: number("speed"), course: number("track"), device: object["device"] as? String))
    }
}
