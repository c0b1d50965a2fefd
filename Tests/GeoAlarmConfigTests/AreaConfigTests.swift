import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// Areas in the config: `area = "FILE.geojson"` (with `area_feature`), inline `polygon`, and
/// Polygon features in GeoJSON collections; the fixtures are in Tests/Fixtures/areas.
struct AreaConfigTests {
    static let fixtures = Command.root.appendingPathComponent("Tests/Fixtures/areas").path

    /// A config in a new folder holding copies of the fixtures.
    func folder(_ config: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-areas-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.fixtures) {
            try FileManager.default.copyItem(atPath: "\(Self.fixtures)/\(name)", toPath: "\(directory)/\(name)")
        }
        try config.write(toFile: "\(directory)/config.toml", atomically: true, encoding: .utf8)
        return "\(directory)/config.toml"
    }

    /// The messages of a config that must fail, with the folder's path taken out.
    func problems(_ config: String) throws -> [String] {
        let path = try folder(config)
        let directory = (path as NSString).deletingLastPathComponent
        do {
            _ = try ConfigLoader.load(path: path)
            Issue.record("the config loaded")
            return []
        } catch {
            return error.diagnostics.map { $0.description.replacingOccurrences(of: directory + "/", with: "") }
        }
    }

    @Test func areasArePickedByNameByIdOrAsTheOnlyOne() throws {
        let config = try ConfigLoader.load(path: try folder("""
            [[reminder]]
            title = "Campus by name"
            area = "campus.geojson"
            area_feature = "North campus"

            [[reminder]]
            title = "Campus by property id"
            area = "campus.geojson"
            area_feature = "north"

            [[reminder]]
            title = "Campus by feature id"
            area = "campus.geojson"
            area_feature = "17"
            hysteresis = "30m"

            [[reminder]]
            title = "Park"
            area = "campus.geojson"
            area_feature = "City park"

            [[reminder]]
            title = "Island"
            area = "island.geojson"

            [[reminder]]
            title = "Triangle"
            polygon = [[47.01, 8.0], [47.02, 8.0], [47.02, 8.01]]
            """))
        let areas = config.reminders.map { $0.geometry.area }
        #expect(areas.allSatisfy { $0 != nil })
        #expect(areas[0] == areas[1] && areas[1] == areas[2], "one feature, however it is named")
        #expect(areas[0]?.edgeCount == 8)
        #expect(config.reminders[2].hysteresis == 30)
        #expect(areas[3]?.polygons.first?.count == 2, "the park and its pond")
        #expect(areas[4]?.polygons.count == 2 && areas[4]?.west ?? 0 < 180 && areas[4]?.east ?? 0 > 180,
                "the island's two halves are one area across the antimeridian")
        #expect(areas[5]?.edgeCount == 3, "an inline polygon closes by itself")
        var tested = 0
        #expect(areas[3]?.contains(Coordinate(latitude: 47.0045, longitude: 8.0265), tested: &tested) == false, "the pond is not the park")
        #expect(areas[3]?.contains(Coordinate(latitude: 47.0020, longitude: 8.0265), tested: &tested) == true)
        #expect(areas[4]?.contains(Coordinate(latitude: -16.9, longitude: -179.95), tested: &tested) == true)
        #expect(areas[4]?.contains(Coordinate(latitude: -16.9, longitude: 179.95), tested: &tested) == true)
        #expect(config.reminders[0].fenceKey.hasPrefix("area:"))
    }

    @Test func badAreasAreExplainedWithFileAndFeature() throws {
        let names = ["Unclosed", "Bow tie", "Two points", "Far north", "Off the map", "Not rings"]
        let config = names.map { "[[reminder]]\ntitle = \"\($0)\"\narea = \"broken.geojson\"\narea_feature = \"\($0)\"\n" }
            .joined(separator: "\n")
        #expect(try problems(config) == [
            "config.toml:3: reminder \"unclosed\" (#1): area: broken.geojson:2: feature \"Unclosed\": the outer ring does not end where it starts (a GeoJSON ring repeats its first position last)",
            "config.toml:8: reminder \"bow-tie\" (#2): area: broken.geojson:4: feature \"Bow tie\": the outer ring crosses itself near 47.050000,8.050000",
            "config.toml:13: reminder \"two-points\" (#3): area: broken.geojson:6: feature \"Two points\": the outer ring has 2 distinct points: a ring needs at least 3",
            "config.toml:18: reminder \"far-north\" (#4): area: broken.geojson:8: feature \"Far north\": the outer ring reaches latitude 86.0: areas must lie between -85 and 85",
            "config.toml:23: reminder \"off-the-map\" (#5): area: broken.geojson:10: feature \"Off the map\": the outer ring has a point out of range (47.0, 200.0)",
            "config.toml:28: reminder \"not-rings\" (#6): area: broken.geojson:12: feature \"Not rings\": a polygon needs coordinates [[[lon, lat], ...]]",
        ])
    }

    @Test func whereAnAreaIsNotSaidRightTheMessageSaysWhatToDo() throws {
        #expect(try problems("""
            [[reminder]]
            title = "Which one"
            area = "campus.geojson"

            [[reminder]]
            title = "No such"
            area = "campus.geojson"
            area_feature = "South campus"

            [[reminder]]
            title = "Missing file"
            area = "nowhere.geojson"

            [[reminder]]
            title = "With a radius"
            polygon = [[47.01, 8.0], [47.02, 8.0], [47.02, 8.01]]
            radius = 50

            [[reminder]]
            title = "Feature alone"
            location = "47,8"
            area_feature = "x"

            [[reminder]]
            title = "Bad point"
            polygon = [[47.01, 8.0], [47.02], [47.02, 8.01]]

            [[reminder]]
            title = "Two wheres"
            polygon = [[47.01, 8.0], [47.02, 8.0], [47.02, 8.01]]
            location = "47,8"
            """) == [
            "config.toml:3: reminder \"which-one\" (#1): area: campus.geojson has 2 areas: choose one with area_feature (\"North campus\", \"City park\")",
            "config.toml:8: reminder \"no-such\" (#2): area_feature: no Polygon or MultiPolygon feature named \"South campus\" in campus.geojson (it has \"North campus\", \"City park\")",
            "config.toml:12: reminder \"missing-file\" (#3): area: nowhere.geojson: cannot read: No such file or directory",
            "config.toml:17: reminder \"with-a-radius\" (#4): radius: does not apply to an area (hysteresis is its margin beyond the edge)",
            "config.toml:22: reminder \"feature-alone\" (#5): area_feature: only applies with area = \"FILE.geojson\"",
            "config.toml:26: reminder \"bad-point\" (#6): polygon: point 2 is not [lat, lon]: it must be an array of [lat, lon] pairs, such as [[38.71, -9.14], [38.72, -9.14], [38.72, -9.13]]",
            "config.toml:28: reminder \"two-wheres\" (#7): location, polygon: give only one of lat/lon, place, location, area or polygon",
        ])
    }

    @Test func geoJSONCollectionsHoldAreasBesidePointsAndSkipBadOnes() throws {
        let config = try ConfigLoader.load(path: try folder("""
            [[collection]]
            id = "campus"
            file = "campus.geojson"
            radius = 40

            [[collection]]
            id = "broken"
            file = "broken.geojson"
            """))
        let campus = config.collections[0].places
        #expect(campus.map(\.name) == ["North campus", "City park", "Bakery"])
        #expect(campus.map { $0.geometry.area != nil } == [true, true, false])
        #expect(campus[2].geometry.radius == 40)
        #expect(config.collections[1].places.map(\.name) == ["Fine"])
        #expect(config.collectionLoads[1].problems.map(\.line) == [2, 4, 6, 8, 10, 12])
        #expect(config.collectionLoads[1].problems[1].message.hasPrefix("the outer ring crosses itself"))
        #expect(config.collections[0].member(1).geometry == campus[1].geometry)
    }
}
