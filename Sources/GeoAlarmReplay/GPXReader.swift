import FoundationEssentials
import GeoAlarmCore
import GeoAlarmScanners

/// Decodes GPX 1.0 and 1.1 tracks and routes: one fix per `trkpt` or `rtept`, in file order.
///
/// A point's `<time>` becomes the fix time (points without one are kept, untimed);
/// `<fix>none</fix>` marks it as no fix and `<fix>2d</fix>` as 2D; `<hdop>` gives the
/// horizontal error by gpsd's rule (HDOP × 19 m). Waypoints (`wpt`) are not part of a track.
/// Read with ``XMLScanner``: a document that is not well-formed is read up to its first fault,
/// which is reported with its line.
public enum GPXReader {
    public static func read(_ bytes: ArraySlice<UInt8>) -> TrackReport {
        var scanner = XMLScanner(Array(bytes))
        var report = TrackReport(format: .gpx)
        var point: Fix?
        /// The text of the element open inside the point.
        var text: [UInt8] = []
        do throws(XMLScanner.Failure) {
            while let event = try scanner.next() {
                switch event {
                case .start(let tag):
                    text.removeAll(keepingCapacity: true)
                    let kind: StaticString? = scanner.tag(tag, isNamed: "trkpt") ? "trkpt" : scanner.tag(tag, isNamed: "rtept") ? "rtept" : nil
                    guard let kind else { continue }
                    point = nil
                    guard let lat = scanner.number("lat"), let lon = scanner.number("lon") else {
                        report.record(TrackProblem(line: tag.line, reason: "\(kind) without numeric lat and lon"))
                        continue
                    }
                    let coordinate = Coordinate(latitude: lat, longitude: lon)
                    guard coordinate.isValid else {
                        report.record(TrackProblem(line: tag.line, reason: "\(kind) position out of range"))
                        continue
                    }
                    point = Fix(time: nil, coordinate: coordinate, mode: .threeD)
                case .text(let characters):
                    if point != nil { text += scanner.bytes(of: characters) }
                case .end(let tag):
                    guard var current = point else { continue }
                    let value = String(decoding: text, as: UTF8.self).trimmingWhitespace()
                    text.removeAll(keepingCapacity: true)
                    if scanner.tag(tag, isNamed: "time") {
                        guard let time = ISOTime.parse(value[...]) else {
                            report.record(TrackProblem(line: tag.line, reason: "time \"\(DisplayText.excerpt(value.utf8))\" is not ISO 8601"))
                            point = nil
                            continue
                        }
                        current.time = time
                    } else if scanner.tag(tag, isNamed: "fix") {
                        if value == "none" { current.mode = .noFix } else if value == "2d" { current.mode = .twoD }
                    } else if scanner.tag(tag, isNamed: "hdop") {
                        if let hdop = Double(value) { current.horizontalError = hdop * NMEAReader.rangeErrorWithoutDGPS }
                    } else if scanner.tag(tag, isNamed: "trkpt") || scanner.tag(tag, isNamed: "rtept") {
                        report.fixes.append(current)
                        point = nil
                        continue
                    }
                    point = current
                }
            }
        } catch {
            report.record(TrackProblem(line: error.line, reason: "XML error: \(error.message)"))
        }
        return report
    }
}
