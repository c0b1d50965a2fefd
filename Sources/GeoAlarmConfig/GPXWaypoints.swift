import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import GeoAlarmCore

/// The waypoints (`wpt`) of a GPX 1.0 or 1.1 file: `lat` and `lon` attributes and a `<name>`.
/// GPX has no radius, so every waypoint takes the collection's.
enum GPXWaypoints {
    static func read(_ bytes: [UInt8], defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        // Streamed: given all at once, libxml2 refuses a document over 10 MB ("huge input lookup").
        let parser = XMLParser(stream: InputStream(data: Data(bytes)))
        let collector = WaypointCollector(defaultRadius: defaultRadius)
        parser.delegate = collector
        guard parser.parse() else {
            let code = collector.errorCode ?? (parser.parserError as NSError?)?.code ?? 0
            throw CollectionFileError("line \(collector.errorLine ?? parser.lineNumber): not well-formed XML (libxml2 error \(code))")
        }
        return collector.list
    }
}

/// XMLParser delegate that gathers waypoints.
private final class WaypointCollector: NSObject, XMLParserDelegate {
    let defaultRadius: Double
    var list = PlaceList()
    var errorLine: Int?
    var errorCode: Int?
    /// The open waypoint: its line and attributes.
    private var waypoint: (line: Int, latitude: String?, longitude: String?)?
    private var name = ""
    private var inName = false

    init(defaultRadius: Double) {
        self.defaultRadius = defaultRadius
    }

    func parser(
        _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        switch Self.localName(element) {
        case "wpt":
            waypoint = (parser.lineNumber, attributes["lat"], attributes["lon"])
            name = ""
        case "name" where waypoint != nil:
            inName = true
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if inName { name += string }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        switch Self.localName(element) {
        case "name":
            inName = false
        case "wpt":
            guard let open = waypoint else { return }
            waypoint = nil
            list.add(
                latitude: open.latitude.flatMap(Double.init), longitude: open.longitude.flatMap(Double.init), radius: nil,
                name: name.trimmingCharacters(in: .whitespacesAndNewlines), line: open.line, defaultRadius: defaultRadius)
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred error: Error) {
        if errorLine == nil {
            errorLine = parser.lineNumber
            errorCode = (error as NSError).code
        }
    }

    private static func localName(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }
}
