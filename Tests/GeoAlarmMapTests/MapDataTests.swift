import Foundation
import GeoAlarmConfig
import GeoAlarmCore
@testable import GeoAlarmMap
@testable import GeoAlarmStore
import GeoAlarmTestSupport
import Testing

/// What the page is sent: reminders with their shape and state, places in view, the position.
struct MapDataTests {
    /// A config with two reminders and a collection of 2,500 places on a 50 × 50 grid.
    static func config() throws -> Config {
        let path = try Command.temporaryFile("""
            [[reminder]]
            id = "bread"
            title = "Buy bread"
            location = "38.7105,-9.1366"
            radius = "30m"

            [[reminder]]
            id = "block"
            title = "The block"
            polygon = [[38.70, -9.14], [38.70, -9.13], [38.71, -9.13]]

            [[collection]]
            id = "grid"
            file = "grid.csv"
            title = "Point {name}"
            radius = "10m"

            """)
        var rows = "name,lat,lon\n"
        for i in 0..<50 { for j in 0..<50 { rows += "p\(i)-\(j),\(40 + Double(i) * 0.01),\(-8 + Double(j) * 0.01)\n" } }
        try rows.write(toFile: URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("grid.csv").path, atomically: false, encoding: .utf8)
        return try ConfigLoader.load(path: path)
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func theSnapshotHoldsShapesSidesLifecyclesAndThePosition() throws {
        var data = MapData(config: try Self.config())
        let bread = try #require(data.config.reminders.first { $0.id == "bread" })
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        data.state.presence = [
            "bread": SavedPresence(presence: .inside, time: now, fenceKey: bread.fenceKey),
            "block": SavedPresence(presence: .inside, time: now, fenceKey: "an old fence"),
        ]
        data.state.lifecycles = ["block": Lifecycle(snoozedUntil: now.addingTimeInterval(60))]
        data.state.proximities = [
            "bread": SavedProximity(
                proximity: Proximity(distance: 6213.4, direction: .towards, eta: 540.2), time: now, fenceKey: bread.fenceKey),
            "block": SavedProximity(proximity: Proximity(distance: 10, direction: .away), time: now, fenceKey: "an old fence"),
        ]
        data.state.lastFix = Fix(time: now, coordinate: Coordinate(latitude: 38.71, longitude: -9.135), horizontalError: 12.5)
        let shapes = try Self.object(data.remindersJSON())
        let states = try #require(try Self.object(data.stateJSON(now: now))["reminders"] as? [String: [String: Any]])
        let reminders = try #require(shapes["reminders"] as? [[String: Any]]).map { shape in
            shape.merging(states[shape["id"] as? String ?? ""] ?? [:]) { old, _ in old }
        }
        #expect(reminders.map { $0["id"] as? String } == ["bread", "block"])
        #expect(Set(states.keys) == ["bread", "block"], "the state part has every reminder's state")
        #expect(shapes["position"] == nil && states["bread"]?["radius"] == nil, "shapes and state apart")
        #expect(shapes["snooze"] as? Double == 3600 && shapes["snooze_label"] as? String == "Snooze 1 h", "the Snooze button's length")
        let snapshot = try Self.object(data.stateJSON(now: now))
        #expect(reminders[0]["shape"] as? String == "circle" && reminders[0]["radius"] as? Double == 30)
        #expect(reminders[0]["center"] as? [Double] == [38.7105, -9.1366])
        #expect(reminders[0]["state"] as? String == "inside")
        #expect(reminders[0]["direction"] as? String == "towards" && reminders[0]["eta_s"] as? Double == 540)
        #expect(reminders[0]["edge_m"] as? Double == 6213)
        #expect(reminders[1]["direction"] is NSNull, "a proximity noted for another fence is not this one's")
        #expect(reminders[1]["shape"] as? String == "area" && (reminders[1]["polygons"] as? [[[[Double]]]])?.first?.first?.count == 3)
        #expect(reminders[1]["state"] as? String == "unknown", "a side saved for another fence is not this one's")
        #expect(reminders[1]["snoozed_until"] as? String == "2027-01-15T08:01:00Z")
        #expect(reminders[0]["starts"] is NSNull, "no start: nothing to wait for")
        let position = try #require(snapshot["position"] as? [String: Any])
        #expect(position["lat"] as? Double == 38.71 && position["error"] as? Double == 12.5)
        #expect((shapes["collections"] as? [[String: Any]])?.first?["places"] as? Double == 2500)
    }

    /// The recent events are the objects `geoalarm history --json` prints, oldest first: the
    /// same keys as the agent's event log, so that whoever reads one reads the other.
    @Test func theHistoryIsListedAsTheEventLogWritesIt() throws {
        var data = MapData(config: try Self.config())
        let at = Coordinate(latitude: 38.7104, longitude: -9.1365)
        data.state.history = [
            EventHistory.Entry(
                time: Date(timeIntervalSince1970: 1_800_000_000), kind: .arrive, reminderID: "bread", title: "Buy bread",
                coordinate: at, distance: 12.34),
            EventHistory.Entry(
                time: Date(timeIntervalSince1970: 1_800_000_600), kind: .leave, reminderID: "block", title: "The block",
                coordinate: at, distance: 80),
        ]
        let history = try #require(try Self.object(data.stateJSON(now: Date()))["history"] as? [[String: Any]])
        #expect(history.map { $0["event"] as? String } == ["arrive", "leave"])
        #expect(history.map { $0["reminder"] as? String } == ["bread", "block"])
        #expect(history[0]["title"] as? String == "Buy bread" && history[0]["time"] as? String == "2027-01-15T08:00:00Z")
        #expect(history[0]["lat"] as? Double == 38.7104 && history[0]["lon"] as? Double == -9.1365)
        #expect(history[0]["distance_m"] as? Double == 12.3)
        #expect(history[0]["kind"] == nil && history[0]["id"] == nil, "no second vocabulary for an event")
    }

    /// A view over the whole grid is capped and says so; a small view lists all it holds.
    @Test func placesInViewAreCappedAndSaySo() throws {
        let data = MapData(config: try Self.config())
        let now = Date()
        let everything = try Self.object(data.places(in: GeoBox(south: 39, north: 41, west: -9, east: -7), limit: 100, now: now))
        #expect((everything["places"] as? [Any])?.count == 100)
        #expect(everything["complete"] as? Bool == false)
        // 40.095...40.125 by -7.905...-7.875: rows 10, 11, 12 by columns 10, 11, 12.
        let small = try Self.object(data.places(in: GeoBox(south: 40.095, north: 40.125, west: -7.905, east: -7.875), limit: 100, now: now))
        let ids = (small["places"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        #expect(Set(ids) == Set((10...12).flatMap { i in (10...12).map { j in "Point p\(i)-\(j)" } }), "\(ids)")
        #expect(small["complete"] as? Bool == true)
        let reminders = try Self.object(data.places(in: GeoBox(south: 38.6, north: 38.8, west: -9.2, east: -9.1), limit: 100, now: now))
        #expect((reminders["places"] as? [Any])?.isEmpty == true, "reminders are in their own part, not among places")
    }

    /// A collection snoozed whole (`geoalarm snooze grid`, or a task at a collection's places
    /// snoozed at one of them) is silent at every place: the map says so of each, as of one
    /// snoozed alone; a snooze that has ended says nothing.
    @Test func aPlaceOfACollectionSnoozedWholeIsShownSnoozed() throws {
        var data = MapData(config: try Self.config())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let view = GeoBox(south: 40.095, north: 40.105, west: -7.905, east: -7.895)
        func snoozedUntil() throws -> [String?] {
            let places = try #require(try Self.object(data.places(in: view, limit: 10, now: now))["places"] as? [[String: Any]])
            return places.map { $0["snoozed_until"] as? String }
        }
        #expect(try snoozedUntil() == [nil])
        data.state.lifecycles = ["grid": Lifecycle(snoozedUntil: now.addingTimeInterval(600))]
        #expect(try snoozedUntil() == ["2027-01-15T08:10:00Z"])
        data.state.lifecycles = ["grid": Lifecycle(snoozedUntil: now.addingTimeInterval(-1))]
        #expect(try snoozedUntil() == [nil])
    }
}
