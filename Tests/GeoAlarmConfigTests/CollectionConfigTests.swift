import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// `[[collection]]` tables and the CSV, GPX and GeoJSON files they load.
struct CollectionConfigTests {
    /// The ids a file takes, for `add` to choose a new one, are read without its collections'
    /// files: a file that is not there yet still gives its collection's id, where loading fails.
    @Test func takenIDsAreReadWithoutTheCollectionsFiles() throws {
        let text = """
            [[reminder]]
            title = "Buy milk"
            location = "38.7,-9.1"
            [[reminder]]
            title = "Alarm"
            at = "2026-12-24T16:00"
            [[collection]]
            file = "fuel.csv"
            [[collection]]
            id = "cameras"
            file = "later.csv"
            """
        let path = try configFolder(text, ["fuel.csv": "lat,lon\n38.75,-9.10\n"])
        let bytes = Array(try String(contentsOfFile: path, encoding: .utf8).utf8)
        #expect(try ConfigLoader.takenIDs(bytes, path: path) == ["buy-milk", "alarm", "fuel", "cameras"])
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(bytes, path: path) }
        try "lat,lon\n38.76,-9.11\n".write(toFile: URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("later.csv").path, atomically: true, encoding: .utf8)
        #expect(try ConfigLoader.parse(bytes, path: path).takenIDs == ConfigLoader.takenIDs(bytes, path: path))
        #expect(throws: ConfigError.self) { try ConfigLoader.takenIDs(Array("[[reminder]]\ntitle = 1\n".utf8), path: path) }
    }

    @Test func csvWithCommasOrSemicolonsQuotesAndPerPlaceRadius() throws {
        let path = try configFolder("""
            [defaults]
            radius = 80
            [[collection]]
            file = "speed cameras.csv"
            title = "Camera: {name}"
            when = "arrive"
            urgency = "critical"
            repeat = "10m"
            [[collection]]
            id = "fuel"
            file = "fuel.txt"
            radius = "1km"
            """, [
                "speed cameras.csv": "name,lat,lon,radius\n\"A1, km 12\",38.75,-9.10,150\n\"say \"\"hi\"\"\",38.76,-9.11,\r\nN-6,38.77,-9.12,\n",
                "fuel.txt": "\u{FEFF}# stations\nLatitude;Longitude\n40.1;-8.2\n\n40.2;-8.3\n",
            ])
        let config = try ConfigLoader.load(path: path)
        #expect(config.collections.map(\.id) == ["speed-cameras", "fuel"])
        let cameras = config.collections[0]
        #expect(cameras.places == [
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.75, longitude: -9.10), radius: 150), name: "A1, km 12"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.76, longitude: -9.11), radius: 80), name: "say \"hi\""),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.77, longitude: -9.12), radius: 80), name: "N-6"),
        ])
        let member = cameras.member(0)
        #expect(member.title == "Camera: A1, km 12")
        #expect(member.trigger == .arrive && member.alert.urgency == .critical)
        #expect(member.schedule.repetition == .cooldown(600))
        #expect(config.collections[1].places.map(\.geometry.radius) == [1000, 1000])
        #expect(config.collections[1].places.map(\.geometry.center.latitude) == [40.1, 40.2])
        #expect(config.collectionLoads.map(\.summary) == [
            "collection \"speed-cameras\": 3 places from \((path as NSString).deletingLastPathComponent)/speed cameras.csv",
            "collection \"fuel\": 2 places from \((path as NSString).deletingLastPathComponent)/fuel.txt",
        ])
    }

    /// A spreadsheet's CSV where the comma is the decimal mark: fields part at semicolons and
    /// numbers have a decimal comma (quoted or not, a radius with its unit too). In a file that
    /// parts at commas, a decimal comma stays a bad number.
    @Test func semicolonCSVFromASpreadsheetTakesDecimalCommas() throws {
        let path = try configFolder("""
            [[collection]]
            file = "lojas.csv"
            [[collection]]
            file = "commas.csv"
            """, [
                "lojas.csv": "name;latitude;longitude;radius\nPadaria;38,7105;-9,1366;50,5\n\"Correios\";\"38,7079\";-9.1365;40,5 m\nMá;38,71,05;1;\n",
                "commas.csv": "name,lat,lon\n\"Bakery\",\"38,7105\",\"-9,1366\"\n",
            ])
        let config = try ConfigLoader.load(path: path)
        #expect(config.collections[0].places == [
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.7105, longitude: -9.1366), radius: 50.5), name: "Padaria"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.7079, longitude: -9.1365), radius: 40.5), name: "Correios"),
        ])
        #expect(config.collectionLoads[0].shownProblems == ["\(config.collectionLoads[0].file):4: lat is missing or not a number; row skipped"])
        #expect(config.collections[1].places.isEmpty && config.collectionLoads[1].problemCount == 1)
    }

    @Test func badRowsAreSkippedWithTheirLineAndCounted() throws {
        var csv = "lat,lon,name,radius\n38.7,-9.1,good\n91,-9.1,north of the pole\n38.7,x,letters\n38.7\n38.7,-9.1,\"open,5\n38.7,-9.1,wide,-5\n"
        csv += String(repeating: "oops,1\n", count: 20)
        let path = try configFolder("[[collection]]\nfile = \"p.csv\"\n", ["p.csv": csv])
        let config = try ConfigLoader.load(path: path)
        let load = try #require(config.collectionLoads.first)
        let file = load.file
        #expect(config.collections[0].places.map(\.name) == ["good"])
        #expect(load.problemCount == 25)
        #expect(Array(load.shownProblems.prefix(5)) == [
            "\(file):3: lat 91 is out of range (-90 to 90); row skipped",
            "\(file):4: lon is missing or not a number; row skipped",
            "\(file):5: 1 field, too few to reach lat and lon; row skipped",
            "\(file):6: unterminated quoted field; row skipped",
            "\(file):7: radius must be a number of metres above 0; row skipped",
        ])
        #expect(load.shownProblems.count == 21)
        #expect(load.shownProblems.last == "\(file): 5 more bad rows skipped")
        #expect(load.summary.hasSuffix("1 place from \(file) (25 bad rows skipped)"))
    }

    @Test func gpxWaypointsAndGeoJSONPoints() throws {
        let gpx = """
            <?xml version="1.0"?>
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1">
              <wpt lat="46.5" lon="7.9"><name>Trailhead &amp; hut</name></wpt>
              <wpt lat="46.6"><name>no lon</name></wpt>
              <wpt lat="46.7" lon="8.0"/>
              <trk><trkseg><trkpt lat="1" lon="1"/></trkseg></trk>
            </gpx>
            """
        let geojson = """
            {"type": "FeatureCollection", "name": "huts",
             "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [7.9, 46.5]},
               "properties": {"name": "Hut \\u00e9", "radius": 250}},
              {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[7, 46], [8, 47]]}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [8.0, 46.7]}, "properties": null},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [8.0]}}
             ]}
            """
        let path = try configFolder("""
            [[collection]]
            file = "trails.gpx"
            [[collection]]
            file = "huts.geojson"
            radius = 50
            """, ["trails.gpx": gpx, "huts.geojson": geojson])
        let config = try ConfigLoader.load(path: path)
        #expect(config.collections[0].places == [
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 46.5, longitude: 7.9), radius: 100), name: "Trailhead & hut"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 46.7, longitude: 8.0), radius: 100), name: ""),
        ])
        #expect(config.collectionLoads[0].problems == [PlaceProblem(line: 4, message: "lon is missing or not a number")])
        #expect(config.collections[1].places == [
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 46.5, longitude: 7.9), radius: 250), name: "Hut é"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 46.7, longitude: 8.0), radius: 50), name: ""),
        ])
        #expect(config.collectionLoads[1].problems == [
            PlaceProblem(line: 5, message: "geometry is not a Point, Polygon or MultiPolygon"),
            PlaceProblem(line: 7, message: "a Point needs coordinates [lon, lat]"),
        ])
    }

    /// Garmin's proximity alarm in a waypoint's extensions (POI files of speed cameras carry
    /// one) is its radius, in metres; 0, text or none leaves the collection's. A proximity is a
    /// waypoint's own: one outside any waypoint changes nothing.
    @Test func gpxWaypointsTakeGarminsProximityAsTheirRadius() throws {
        let gpx = """
            <?xml version="1.0"?>
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1" xmlns:gpxx="http://www.garmin.com/xmlschemas/GpxExtensions/v3">
              <extensions><gpxx:Proximity>999</gpxx:Proximity></extensions>
              <wpt lat="38.75" lon="-9.10"><name>A1 km 12</name>
                <extensions><gpxx:WaypointExtension><gpxx:Proximity> 250.5 </gpxx:Proximity></gpxx:WaypointExtension></extensions>
              </wpt>
              <wpt lat="38.76" lon="-9.11"><name>No alarm</name></wpt>
              <wpt lat="38.77" lon="-9.12"><extensions><gpxx:WaypointExtension><gpxx:Proximity>0</gpxx:Proximity>
                </gpxx:WaypointExtension></extensions><name>Zero</name></wpt>
              <wpt lat="38.78" lon="-9.13"><extensions><gpxx:WaypointExtension><gpxx:Proximity>near</gpxx:Proximity>
                </gpxx:WaypointExtension></extensions><name>Words</name></wpt>
            </gpx>
            """
        let path = try configFolder("[[collection]]\nfile = \"cameras.gpx\"\nradius = 80\n", ["cameras.gpx": gpx])
        let places = try ConfigLoader.load(path: path).collections[0].places
        #expect(places.map(\.name) == ["A1 km 12", "No alarm", "Zero", "Words"])
        #expect(places.map(\.geometry.radius) == [250.5, 80, 80, 80])
    }

    @Test func geoJSONMembersAreReadInAnyOrderAndBadFeaturesSkipped() throws {
        let geojson = """
            {"features": [
              {"properties": {"title": "Title only", "radius": null}, "id": [1, {"x": [true, false]}],
               "geometry": {"coordinates": [-9.1, 38.7, 120.5], "bbox": [], "type": "Point"}, "type": "Feature"},
              {"geometry": {"type": "Point", "coordinates": [-9.2, 38.8]}, "properties": {"name": "B", "radius": 1e3}},
              "not a feature",
              {"geometry": null},
              {"geometry": {"type": "Point", "coordinates": ["-9", 38]}},
              {"geometry": {"type": "Point", "coordinates": {"lon": 1, "lat": 2}}},
              {"geometry": {"type": "Point", "coordinates": [1, 2]}, "properties": {"radius": "wide"}},
              {"geometry": {"type": "Point", "coordinates": [181, 2]}},
              {"geometry": {"type": "Point", "coordinates": [1, 2]}, "properties": {"radius": "50 m", "name": "C"}},
              {"geometry": {"type": "Point", "coordinates": [1, 2]}, "properties": {"radius": true}}
             ], "type": "FeatureCollection"}
            """
        let path = try configFolder("[[collection]]\nfile = \"p.json\"\nradius = 40\n", ["p.json": geojson])
        let config = try ConfigLoader.load(path: path)
        #expect(config.collections[0].places == [
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.7, longitude: -9.1), radius: 40), name: "Title only"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.8, longitude: -9.2), radius: 1000), name: "B"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 2, longitude: 1), radius: 50), name: "C"),
        ])
        #expect(config.collectionLoads[0].problems == [
            PlaceProblem(line: 5, message: "a feature must be an object"),
            PlaceProblem(line: 6, message: "feature without a geometry"),
            PlaceProblem(line: 7, message: "a Point needs coordinates [lon, lat]"),
            PlaceProblem(line: 8, message: "a Point needs coordinates [lon, lat]"),
            PlaceProblem(line: 9, message: "properties.radius must be a number of metres or a length such as \"50 m\""),
            PlaceProblem(line: 10, message: "lon 181 is out of range (-180 to 180)"),
            PlaceProblem(line: 12, message: "properties.radius must be a number of metres or a length such as \"50 m\""),
        ])
    }

    @Test func textAfterTheGeoJSONIsRefused() throws {
        let path = try configFolder("[[collection]]\nfile = \"twice.geojson\"\n", [
            "twice.geojson": "{\"features\": []}\n{\"features\": []}\n",
        ])
        let directory = (path as NSString).deletingLastPathComponent
        do {
            _ = try ConfigLoader.load(path: path)
            Issue.record("accepted two JSON values in one file")
        } catch {
            #expect(error.diagnostics.map(\.description) == [
                "\(path):2: collection \"twice\" (#1): file: \(directory)/twice.geojson: line 2: more text after the end of the JSON value",
            ])
        }
    }

    @Test func unusableCollectionsAreConfigErrors() throws {
        let path = try configFolder("""
            [[reminder]]
            title = "Cameras"
            lat = 1
            lon = 1
            [[collection]]
            id = "cameras"
            file = "c.csv"
            [[collection]]
            file = "missing.csv"
            [[collection]]
            file = "places.kml"
            [[collection]]
            file = "broken.geojson"
            [[collection]]
            file = "noheader.csv"
            [[collection]]
            title = "no file"
            colour = "red"
            """, [
                "c.csv": "lat,lon\n1,1\n", "broken.geojson": "{\"features\": [\n{\"type\": \"Feature\",\n}",
                "noheader.csv": "name,x,y\n",
            ])
        let directory = (path as NSString).deletingLastPathComponent
        do {
            _ = try ConfigLoader.load(path: path)
            Issue.record("accepted a bad config")
        } catch {
            #expect(error.diagnostics.map(\.description) == [
                "\(path):6: collection \"cameras\" (#1): id: duplicate id \"cameras\" (first used by reminder #1)",
                "\(path):9: collection \"missing\" (#2): file: \(directory)/missing.csv: cannot read: No such file or directory",
                "\(path):10: collection \"places\" (#3): format: cannot tell from the name \"places.kml\"; give format = \"csv\", \"gpx\" or \"geojson\"",
                "\(path):13: collection \"broken\" (#4): file: \(directory)/broken.geojson: line 3: expected '\"'",
                "\(path):15: collection \"noheader\" (#5): file: \(directory)/noheader.csv: line 1: the header \"name,x,y\" needs lat and lon columns (separated by commas or semicolons)",
                "\(path):18: collection (#6): colour: unknown key",
                "\(path):16: collection (#6): file: missing: the CSV, GPX or GeoJSON file of places",
            ])
        }
    }
}

/// A GPX file over 10 MB (libxml2 refuses a document that size given at once, which the first,
/// XMLParser-based waypoint reader did) loads whole.
struct LargeCollectionTests {
    @Test func gpxWaypointsOverTenMegabytesLoadWhole() throws {
        var gpx = "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n"
        for index in 0..<200_000 { gpx += "<wpt lat=\"46.5\" lon=\"7.9\"><name>Waypoint number \(index)</name></wpt>\n" }
        gpx += "</gpx>\n"
        #expect(gpx.utf8.count > 10_000_000)
        let path = try configFolder("[[collection]]\nfile = \"big.gpx\"\n", ["big.gpx": gpx])
        let config = try ConfigLoader.load(path: path)
        #expect(config.collections.first?.places.count == 200_000)
        #expect(config.collections.first?.places.last?.name == "Waypoint number 199999")
    }
}
