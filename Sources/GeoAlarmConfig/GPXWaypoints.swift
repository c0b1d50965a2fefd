import GeoAlarmCore
import GeoAlarmScanners

/// The waypoints (`wpt`) of a GPX 1.0 or 1.1 file: `lat` and `lon` attributes and a `<name>`
/// (its direct child: names deeper in a waypoint's extensions are not its name). GPX has no
/// radius; a waypoint with Garmin's proximity alarm (`<gpxx:Proximity>` in its extensions, in
/// metres, as POI files of speed cameras carry it) has that one, the others the collection's.
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
        /// The UTF-8 of the open waypoint's proximity alarm, likewise.
        var proximity: [UInt8] = []
        do throws(XMLScanner.Failure) {
            while let event = try scanner.next() {
                switch event {
                case .start(let tag):
                    if waypoint == nil, scanner.tag(tag, isNamed: "wpt") {
                        name.removeAll(keepingCapacity: true)
                        proximity.removeAll(keepingCapacity: true)
                        waypoint = OpenWaypoint(
                            line: tag.line, depth: scanner.depth,
                            latitude: scanner.number("lat"), longitude: scanner.number("lon"))
                    } else if scanner.depth == waypoint.map({ $0.depth + 1 }), scanner.tag(tag, isNamed: "name") {
                        waypoint?.inName = true
                    } else if waypoint != nil, waypoint?.proximityDepth == nil, scanner.tag(tag, isNamed: "Proximity") {
                        waypoint?.proximityDepth = scanner.depth
                    }
                case .text(let text):
                    if waypoint?.inName == true { name += scanner.bytes(of: text) }
                    if waypoint?.inProximity == true { proximity += scanner.bytes(of: text) }
                case .end:
                    guard let open = waypoint else { continue }
                    if scanner.depth < open.depth {
                        // A proximity of 0 (or none that reads) is no alarm: the collection's radius.
                        let metres = DecimalText.value(XMLScanner.trimmedBytes(proximity)).flatMap { $0 > 0 ? $0 : nil }
                        list.add(
                            latitude: open.latitude, longitude: open.longitude, radius: metres, name: XMLScanner.trimmed(name),
                            line: open.line, defaultRadius: defaultRadius)
                        waypoint = nil
                    } else if scanner.depth == open.depth {
                        waypoint?.inName = false
                    }
                    if let depth = open.proximityDepth, scanner.depth < depth { waypoint?.inProximity = false }
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
        /// The scanner's depth inside its proximity alarm, once one has begun (the first only).
        var proximityDepth: Int? {
            didSet { inProximity = proximityDepth != nil }
        }
        var inProximity = false
    }
}
