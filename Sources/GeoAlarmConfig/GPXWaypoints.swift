import GeoAlarmCore
import GeoAlarmScanners

/// The waypoints (`wpt`) of a GPX 1.0 or 1.1 file: `lat` and `lon` attributes and a `<name>`
/// (its direct child: names deeper in a waypoint's extensions are not its name).
/// GPX has no radius, so every waypoint takes the collection's.
///
/// Read with ``XMLScanner`` (GeoAlarmScanners); a document that is not well-formed is refused
/// with the line of its first fault.
enum GPXWaypoints {
    static func read(_ bytes: [UInt8], defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        var scanner = XMLScanner(bytes)
        var list = PlaceList()
        var waypoint: OpenWaypoint?
        /// The UTF-8 of the open waypoint's name, in one buffer for all of them.
        var name: [UInt8] = []
        do throws(XMLScanner.Failure) {
            while let event = try scanner.next() {
                switch event {
                case .start(let tag):
                    if waypoint == nil, scanner.tag(tag, isNamed: "wpt") {
                        name.removeAll(keepingCapacity: true)
                        waypoint = OpenWaypoint(
                            line: tag.line, depth: scanner.depth,
                            latitude: scanner.number("lat"), longitude: scanner.number("lon"))
                    } else if scanner.depth == waypoint.map({ $0.depth + 1 }), scanner.tag(tag, isNamed: "name") {
                        waypoint?.inName = true
                    }
                case .text(let text):
                    if waypoint?.inName == true { name += scanner.bytes(of: text) }
                case .end:
                    guard let open = waypoint else { continue }
                    if scanner.depth < open.depth {
                        list.add(
                            latitude: open.latitude, longitude: open.longitude, radius: nil, name: XMLScanner.trimmed(name),
                            line: open.line, defaultRadius: defaultRadius)
                        waypoint = nil
                    } else if scanner.depth == open.depth {
                        waypoint?.inName = false
                    }
                }
            }
        } catch {
            throw CollectionFileError("line \(error.line): not well-formed XML: \(error.message)")
        }
        return list
    }

    /// The waypoint being read: where it starts, and its attributes.
    private struct OpenWaypoint {
        var line: Int
        /// The scanner's depth inside it.
        var depth: Int
        var latitude: Double?
        var longitude: Double?
        var inName = false
    }
}
