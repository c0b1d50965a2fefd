import Foundation
import GeoAlarmCore
import Testing

/// Walks through areas that circles cannot describe: the events must come where the edges are.
struct AreaWalkTests {
    /// A point `x` metres east and `y` metres north of `origin` (flat: fine within a few kilometres).
    static func point(_ x: Double, _ y: Double, from origin: Coordinate = Coordinate(latitude: 47.0, longitude: 8.0)) -> Coordinate {
        let degreesPerMetre = 180 / .pi / Haversine.earthRadius
        var longitude = origin.longitude + x * degreesPerMetre / cos(origin.latitude * .pi / 180)
        if longitude > 180 { longitude -= 360 }
        return Coordinate(latitude: origin.latitude + y * degreesPerMetre, longitude: longitude)
    }

    static func area(_ rings: [[(Double, Double)]], from origin: Coordinate = Coordinate(latitude: 47.0, longitude: 8.0)) throws -> Area {
        try Area(polygons: [rings.map { $0.map { point($0.0, $0.1, from: origin) } }])
    }

    /// Walks from `start` to `end` (metres from the origin) in steps of `step` metres, one fix a
    /// second; returns each event as "KIND@X,Y" (metres, rounded) with its distance. Walks are
    /// laid so that no fix falls on an edge.
    static func walk(
        _ engine: inout GeofenceEngine, from start: (Double, Double), to end: (Double, Double), step: Double = 5,
        origin: Coordinate = Coordinate(latitude: 47.0, longitude: 8.0), clock: inout Double
    ) -> [(event: String, distance: Double)] {
        let length = ((end.0 - start.0) * (end.0 - start.0) + (end.1 - start.1) * (end.1 - start.1)).squareRoot()
        let count = Int(length / step)
        var events: [(String, Double)] = []
        for index in 0...count {
            let t = count == 0 ? 1 : Double(index) / Double(count)
            let (x, y) = (start.0 + t * (end.0 - start.0), start.1 + t * (end.1 - start.1))
            clock += 1
            let fix = Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + clock), coordinate: point(x, y, from: origin), horizontalError: 5)
            for event in engine.process(fix).events {
                events.append(("\(event.kind.rawValue)@\(Int(x.rounded())),\(Int(y.rounded()))", event.distance))
            }
        }
        return events
    }

    static func engine(_ area: Area, hysteresis: Double = 20) -> GeofenceEngine {
        let reminder = Reminder(id: "zone", title: "Zone", geometry: .area(area), hysteresis: hysteresis, trigger: .both)
        return GeofenceEngine(reminders: [reminder])
    }

    @Test func intoAConcaveCampusThroughItsNotch() throws {
        // A U: the notch between its arms (x 300-700, y 300-1000) is outside.
        let campus = try Self.area([[(0, 0), (1000, 0), (1000, 1000), (700, 1000), (700, 300), (300, 300), (300, 1000), (0, 1000)]])
        var engine = Self.engine(campus)
        var clock = 0.0
        // Down the notch from outside the box: nothing, though the box and a circle around it would say inside.
        #expect(Self.walk(&engine, from: (500, 1300), to: (500, 340), clock: &clock).isEmpty)
        #expect(engine.presence(of: "zone") == .outside)
        // On across the notch's floor (y = 300): inside, confirmed by the second fix within.
        let arrived = Self.walk(&engine, from: (500, 333), to: (500, 98), clock: &clock)
        #expect(arrived.map(\.event) == ["arrive@500,293"])
        #expect(arrived.first?.distance == 0, "distance_m is 0 inside an area")
        // Back out the way it came: leave once more than 20 m beyond the floor.
        let left = Self.walk(&engine, from: (500, 98), to: (500, 598), clock: &clock)
        #expect(left.map(\.event) == ["leave@500,328"])
        #expect(left.first.map { $0.distance > 20 && $0.distance < 30 } == true, "\(left)")
    }

    @Test func acrossAParkAndItsPond() throws {
        // A park 1 km square with a pond (a hole) from 400 to 600 m.
        let park = try Self.area([[(0, 0), (1000, 0), (1000, 1000), (0, 1000)], [(400, 400), (600, 400), (600, 600), (400, 600)]])
        var engine = Self.engine(park)
        var clock = 0.0
        let events = Self.walk(&engine, from: (-202, 500), to: (1198, 500), clock: &clock).map(\.event)
        // In at the west edge; out in the pond once 20 m past its shore; in again across it; out past the east edge.
        #expect(events == ["arrive@8", "leave@428", "arrive@608", "leave@1028"].map { $0 + ",500" })
    }

    @Test func acrossTheAntimeridian() throws {
        // An island's area from 179.9° E to 179.9° W, written as GeoJSON cuts it: longitudes jump from 180 to -180.
        let origin = Coordinate(latitude: -16.9, longitude: 179.8)
        let east = Self.point(10_650, 0, from: origin).longitude, west = Self.point(31_950, 0, from: origin).longitude
        #expect(east > 179 && west < -179)
        let island = try Area(polygons: [[[
            Coordinate(latitude: -17.0, longitude: east), Coordinate(latitude: -17.0, longitude: west),
            Coordinate(latitude: -16.8, longitude: west), Coordinate(latitude: -16.8, longitude: east),
        ]]])
        var engine = Self.engine(island)
        var clock = 0.0
        let events = Self.walk(&engine, from: (25, 0), to: (42_025, 0), step: 50, origin: origin, clock: &clock).map(\.event)
        #expect(events == ["arrive@10725,0", "leave@32025,0"], "in across 179.9 E, out across 179.9 W")
    }

    @Test func jitterAlongAnEdgeNeverFlaps() throws {
        let square = try Self.area([[(0, 0), (500, 0), (500, 500), (0, 500)]])
        var engine = Self.engine(square, hysteresis: 20)
        var clock = 0.0
        #expect(Self.walk(&engine, from: (250, 250), to: (250, 450), clock: &clock).isEmpty, "starting inside is silent")
        #expect(engine.presence(of: "zone") == .inside)
        // 200 fixes wandering ±15 m across the north edge (y = 500), along it.
        for index in 0..<200 {
            let y = 500 + 15 * sin(Double(index) * 1.3), x = 50 + Double(index) * 2
            #expect(Self.walk(&engine, from: (x, y), to: (x, y), clock: &clock).isEmpty)
        }
        #expect(engine.presence(of: "zone") == .inside)
        #expect(Self.walk(&engine, from: (300, 500), to: (300, 600), clock: &clock).map(\.event) == ["leave@300,530"])
    }

    @Test func areasAndCirclesShareAnEngineAndStateSurvivesOnlyUnchangedGeometry() throws {
        let square = try Self.area([[(0, 0), (500, 0), (500, 500), (0, 500)]])
        let moved = try Self.area([[(0, 0), (510, 0), (510, 500), (0, 500)]])
        let circle = Reminder(id: "circle", title: "Circle", geometry: .circle(center: Self.point(250, 250), radius: 100), hysteresis: 20, trigger: .both)
        let zone = Reminder(id: "zone", title: "Zone", geometry: .area(square), hysteresis: 20, trigger: .both)
        var engine = GeofenceEngine(reminders: [circle, zone])
        var clock = 0.0
        _ = Self.walk(&engine, from: (250, 250), to: (250, 260), clock: &clock)
        #expect(engine.presence(of: "zone") == .inside && engine.presence(of: "circle") == .inside)
        #expect(zone.fenceKey.hasPrefix("area:") && zone.fenceKey != Reminder(
            id: "zone", title: "Zone", geometry: .area(moved), hysteresis: 20).fenceKey)
        var same = zone
        same.title = "Renamed"
        var edited = zone
        edited.geometry = .area(moved)
        let kept = GeofenceEngine(reminders: [circle, same], settings: engine.settings, carryingStateFrom: engine)
        #expect(kept.presence(of: "zone") == .inside, "an unchanged area keeps its side")
        let reset = GeofenceEngine(reminders: [circle, edited], settings: engine.settings, carryingStateFrom: engine)
        #expect(reset.presence(of: "zone") == .unknown, "an edited area starts over")
        #expect(reset.presence(of: "circle") == .inside)
    }

    @Test func collectionPlacesCanBeAreas() throws {
        let template = Reminder(id: "parks", title: "In {name}", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 0), hysteresis: 20, trigger: .both)
        let places = [
            CollectionPlace(geometry: .area(try Self.area([[(0, 0), (300, 0), (300, 300), (0, 300)]])), name: "North park"),
            CollectionPlace(geometry: .circle(center: Self.point(1000, 150), radius: 50), name: "Kiosk"),
            CollectionPlace(geometry: .area(try Self.area([[(2000, 0), (2300, 0), (2300, 300), (2000, 300)]])), name: "East park"),
        ]
        var engine = GeofenceEngine(reminders: [], collections: [ReminderCollection(id: "parks", template: template, places: places)])
        var clock = 0.0
        let events = Self.walk(&engine, from: (-105, 150), to: (2395, 150), step: 10, clock: &clock).map(\.event)
        #expect(events == [
            "arrive@15,150", "leave@335,150", "arrive@965,150", "leave@1085,150", "arrive@2015,150", "leave@2335,150",
        ])
        #expect(engine.reminder(id: "parks/1")?.title == "In North park")
        #expect(engine.edgesTested > 0)
    }
}
