import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// The byte-level waypoint reader: what XML allows, what it refuses, and agreement with
/// Foundation's XMLParser on real GPX files.
struct GPXWaypointTests {
    /// Writes `bytes` to a fresh file and reads it as a GPX collection (100 m default radius).
    static func read(_ bytes: [UInt8]) throws(CollectionFileError) -> PlaceList {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-\(UUID().uuidString).gpx").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try CollectionFile.read(path: path, format: .gpx, defaultRadius: 100)
    }

    static func read(_ text: String) throws(CollectionFileError) -> PlaceList {
        try read(Array(text.utf8))
    }

    /// The message a broken document is refused with.
    static func refusal(_ text: String) -> String? {
        do {
            _ = try read(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func entitiesCDATAPrefixesCommentsAndSelfClosingWaypoints() throws {
        let list = try Self.read("""
            <?xml version="1.0" encoding="UTF-8" standalone="no"?>
            <!DOCTYPE gpx [ <!ELEMENT gpx ANY> ]>
            <!-- made by hand -->
            <g:gpx xmlns:g='http://www.topografix.com/GPX/1/1' version = "1.1">
              <g:wpt lat='46.5' lon="7.9"><g:name> Fish &amp; chips &#233;&#x263A; </g:name></g:wpt>
              <g:wpt
                 lat="-33.5" lon="151.25"><g:name><![CDATA[Tom & Jerry's <hut>]]></g:name>
                 <g:extensions><x:place xmlns:x="urn:x"><x:name>not this</x:name></x:place></g:extensions>
              </g:wpt>
              <g:wpt lat="0" lon="-180"/>
              <?processing instruction?>
            </g:gpx>
            <!-- after the root -->

            """)
        #expect(list.places == [
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 46.5, longitude: 7.9), radius: 100), name: "Fish & chips é☺"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: -33.5, longitude: 151.25), radius: 100), name: "Tom & Jerry's <hut>"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 0, longitude: -180), radius: 100), name: ""),
        ])
        #expect(list.problemCount == 0)
    }

    @Test func latin1NamesAreDecodedAsTheDeclarationSays() throws {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<gpx><wpt lat=\"1\" lon=\"2\"><name>Caf".utf8)
        bytes += [0xE9] + Array("</name></wpt></gpx>\n".utf8)
        #expect(try Self.read(bytes).places.map(\.name) == ["Café"])
    }

    @Test func badWaypointsAreSkippedWithTheirLine() throws {
        let list = try Self.read("""
            <gpx>
            <wpt lat="91" lon="0"/>
            <wpt lat="1" lon="east"><name>bad lon</name></wpt>
            <wpt lat="1" lon="2"><name>good</name></wpt>
            </gpx>
            """)
        #expect(list.places.map(\.name) == ["good"])
        #expect(list.problems == [
            PlaceProblem(line: 2, message: "lat 91 is out of range (-90 to 90)"),
            PlaceProblem(line: 3, message: "lon is missing or not a number"),
        ])
    }

    @Test func documentsThatAreNotWellFormedAreRefusedWithTheirLine() {
        let cases: [(String, String)] = [
            ("<gpx>\n<wpt lat=\"1\" lon=\"2\">\n</gpx>\n", "line 3: not well-formed XML: </gpx> closes <wpt> (line 2)"),
            ("<gpx>\n<wpt lat=\"1\" lon=\"2\"/>\n", "line 3: not well-formed XML: the file ends before <gpx> (line 1) is closed"),
            ("<gpx>\n<wpt lat=1 lon=\"2\"/></gpx>", "line 2: not well-formed XML: the value of the attribute lat is not in quotes"),
            ("<gpx>\n<wpt lat=\"1\"lon=\"2\"/></gpx>", "line 2: not well-formed XML: expected a blank between the attributes of <wpt>"),
            ("<gpx><wpt lat=\"1\" lon=\"2\">\n<name>a &nbsp; b</name></wpt></gpx>", "line 2: not well-formed XML: unknown entity &nbsp;"),
            ("<gpx><name>R&D</name></gpx>", "line 1: not well-formed XML: '&' that starts no entity (write &amp;)"),
            ("stray\n<gpx/>", "line 2: not well-formed XML: text outside the root element"),
            ("<gpx/>\n<gpx/>", "line 2: not well-formed XML: a second root element <gpx> after the first one closed"),
            ("<gpx>\n<!-- never closed\n</gpx>", "line 2: not well-formed XML: a comment is not closed"),
            ("<gpx></gpx></gpx>", "line 1: not well-formed XML: </gpx> closes no element"),
            ("<gpx>< wpt/></gpx>", "line 1: not well-formed XML: expected a name after '<'"),
            ("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><gpx/>",
             "line 1: not well-formed XML: the encoding \"shift_jis\" is not supported; save the file as UTF-8"),
            ("", "line 1: not well-formed XML: there is no element in the file"),
        ]
        for (text, message) in cases {
            #expect(Self.refusal(text) == message, "\(text)")
        }
        #expect(throws: CollectionFileError.self) { try Self.read([0xFF, 0xFE, 0x3C, 0x00]) }
    }

    /// Every GPX file in the shared test data: the same waypoints, in the same order, as
    /// Foundation's XMLParser (libxml2) finds.
    @Test(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent"))
    func agreesWithXMLParserOnRealFiles() throws {
        let folder = try #require(TestData.root).appendingPathComponent("gpx")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".gpx") }.sorted()
        #expect(files.count >= 10)
        var waypoints = 0
        for file in files {
            let bytes = try TestData.bytes("gpx/\(file)")
            let expected = ReferenceWaypoints(bytes).places
            let places = try Self.read(bytes).places
            #expect(places == expected, "\(file)")
            waypoints += places.count
        }
        #expect(waypoints >= 20)
    }
}

/// Waypoints as Foundation's XMLParser (libxml2) reads them: the reference the scanner is held to.
private final class ReferenceWaypoints: NSObject, XMLParserDelegate {
    private(set) var places: [CollectionPlace] = []
    private var depth = 0
    /// The open waypoint: how deep it is, its position, its name so far, and whether its `<name>` is open.
    private var waypoint: (depth: Int, center: Coordinate, name: String, inName: Bool)?

    init(_ bytes: [UInt8]) {
        super.init()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = self
        _ = parser.parse()
    }

    func parser(
        _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        depth += 1
        if element == "wpt", waypoint == nil, let latitude = attributes["lat"].flatMap(Double.init),
           let longitude = attributes["lon"].flatMap(Double.init) {
            waypoint = (depth, Coordinate(latitude: latitude, longitude: longitude), "", false)
        } else if element == "name", waypoint?.depth == depth - 1 {
            waypoint?.inName = true
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if waypoint?.inName == true { waypoint?.name += string }
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        if waypoint?.inName == true { waypoint?.name += String(decoding: block, as: UTF8.self) }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        if element == "name", waypoint?.depth == depth - 1 {
            waypoint?.inName = false
        } else if let open = waypoint, open.depth == depth {
            let name = open.name.trimmingCharacters(in: .whitespacesAndNewlines)
            places.append(CollectionPlace(geometry: .circle(center: open.center, radius: 100), name: name))
            waypoint = nil
        }
        depth -= 1
    }
}
