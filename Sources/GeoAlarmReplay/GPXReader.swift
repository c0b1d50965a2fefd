import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import GeoAlarmCore

/// Decodes GPX 1.0 and 1.1 tracks and routes: one fix per `trkpt` or `rtept`, in file order.
///
/// A point's `<time>` becomes the fix time (points without one are kept, untimed);
/// `<fix>none</fix>` marks it as no fix and `<fix>2d</fix>` as 2D; `<hdop>` gives the
/// horizontal error by gpsd's rule (HDOP × 19 m). Waypoints (`wpt`) are not part of a track.
public enum GPXReader {
    public static func read(_ bytes: ArraySlice<UInt8>) -> TrackReport {
        // Streamed: given all at once, libxml2 refuses a document over 10 MB ("huge input lookup").
        let parser = XMLParser(stream: InputStream(data: Data(bytes)))
        let collector = PointCollector()
        parser.delegate = collector
        if !parser.parse(), collector.report.problemCount == 0 {
            collector.report.record(TrackProblem(line: parser.lineNumber, reason: "XML error"))
        }
        return collector.report
    }
}

/// XMLParser delegate that gathers track and route points.
private final class PointCollector: NSObject, XMLParserDelegate {
    var report = TrackReport(format: .gpx)
    private var point: Fix?
    private var pointLine = 0
    private var element = ""
    private var text = ""

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let local = Self.localName(name)
        if local == "trkpt" || local == "rtept" {
            pointLine = parser.lineNumber
            guard let lat = attributes["lat"].flatMap(Double.init), let lon = attributes["lon"].flatMap(Double.init)
            else {
                report.record(TrackProblem(line: pointLine, reason: "\(local) without numeric lat and lon"))
                return
            }
            let coordinate = Coordinate(latitude: lat, longitude: lon)
            guard coordinate.isValid else {
                report.record(TrackProblem(line: pointLine, reason: "\(local) position out of range"))
                return
            }
            point = Fix(time: nil, coordinate: coordinate, mode: .threeD)
        }
        element = local
        text = ""
    }

    func parser(_ parser: XMLParser, parseErrorOccurred error: Error) {
        let code = (error as NSError).code
        report.record(TrackProblem(line: parser.lineNumber, reason: "XML error (libxml2 code \(code))"))
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let local = Self.localName(name)
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        text = ""
        guard var current = point else { return }
        switch local {
        case "time":
            guard let time = ISOTime.parse(value[...]) else {
                report.record(TrackProblem(line: parser.lineNumber, reason: "time \"\(value)\" is not ISO 8601"))
                point = nil
                return
            }
            current.time = time
        case "fix":
            if value == "none" { current.mode = .noFix } else if value == "2d" { current.mode = .twoD }
        case "hdop":
            if let hdop = Double(value) { current.horizontalError = hdop * NMEAReader.rangeErrorWithoutDGPS }
        case "trkpt", "rtept":
            report.fixes.append(current)
            point = nil
            return
        default:
            break
        }
        point = current
    }

    private static func localName(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }
}
