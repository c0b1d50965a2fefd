import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import PropertyBased
import Testing

/// A map asks which fences are in its view: the engine answers through its grid index exactly
/// what a scan of every fence answers, up to a cap.
struct ViewportTests {
    @Test func boxesMeetAcrossTheAntimeridian() {
        let fiji = GeoBox(south: -20, north: -15, west: 177, east: 182)
        #expect(fiji.intersects(GeoBox(south: -18, north: -17, west: -179, east: -178)), "east of the line")
        #expect(fiji.intersects(GeoBox(south: -18, north: -17, west: 178, east: 179)))
        #expect(!fiji.intersects(GeoBox(south: -18, north: -17, west: -170, east: -160)))
        #expect(!fiji.intersects(GeoBox(south: 0, north: 1, west: 178, east: 179)), "another latitude")
        #expect(GeoBox(south: 80, north: 90, west: 0, east: 0, everyLongitude: true)
            .intersects(GeoBox(south: 85, north: 86, west: -100, east: -99)))
    }

    @Test func theViewHoldsWhatAScanFinds() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            // Places around a few anchors (one may be on the antimeridian or near a pole).
            let anchors = (0..<3).map { _ in
                Coordinate(latitude: random.bool() ? random.double(in: 80...84) : random.double(in: -60...60),
                           longitude: random.bool() ? 179.99 : random.double(in: -180...180))
            }
            var places: [CollectionPlace] = []
            for number in 0..<Int(random.next() % 300 + 1) {
                let anchor = anchors[number % anchors.count]
                let centre = PropertyTests.destination(
                    from: anchor, angle: random.double(in: 0...50_000) / Haversine.earthRadius, bearing: random.double(in: 0...(2 * .pi)))
                let radius = random.double(in: 10...2000)
                let geometry: FenceGeometry = random.next() % 4 == 0
                    ? (try? AreaWalkTests.area([[(0, 0), (radius, 0), (radius / 2, radius)]], from: centre)).map(FenceGeometry.area)
                        ?? .circle(center: centre, radius: radius)
                    : .circle(center: centre, radius: radius)
                places.append(CollectionPlace(geometry: geometry, name: "p\(number)"))
            }
            let template = Reminder(id: "pois", title: "{name}", geometry: .circle(center: anchors[0], radius: 1), hysteresis: random.double(in: 0...100))
            let collection = ReminderCollection(id: "pois", template: template, places: places)
            let engine = GeofenceEngine(reminders: [], collections: [collection])
            for _ in 0..<20 {
                let anchor = anchors[Int(random.next() % 3)]
                let half = random.double(in: 0.001...(random.bool() ? 0.5 : 30))
                let view = GeoBox(south: max(anchor.latitude - half, -90), north: min(anchor.latitude + half, 90),
                                  west: anchor.longitude - half * 2, east: anchor.longitude + half * 2)
                let expected = places.indices.filter { places[$0].geometry.boundingBox(margin: 0).intersects(view) }
                    .map { "pois/\($0 + 1)" }
                let all = engine.fences(in: view, limit: 10_000)
                #expect(all.complete && all.fences.map(\.id) == expected, "seed \(seed): \(view)")
                let capped = engine.fences(in: view, limit: 5)
                #expect(capped.fences.count == min(5, expected.count), "seed \(seed)")
                #expect(capped.complete == (expected.count <= 5), "seed \(seed)")
                #expect(Set(capped.fences.map(\.id)).isSubset(of: Set(expected)), "seed \(seed)")
            }
        }
    }

    /// A page's view, as Leaflet gives it: longitudes past ±180, a west side east of the east
    /// side across the antimeridian; and what cannot be a view at all.
    @Test func aViewIsReadAsThePageMeantIt() throws {
        let across = try GeoBox.view(south: -18, north: -17, west: 179, east: -179).get()
        #expect(across.west == 179 && across.east == 181 && !across.everyLongitude)
        let turned = try GeoBox.view(south: 0, north: 1, west: -900.5, east: -899.5).get()
        #expect(turned.west == 179.5 && turned.east == 180.5)
        #expect(try GeoBox.view(south: 0, north: 1, west: 10, east: 9.99).get().east - 10 > 359.98, "all but 0.01° of longitude")
        let farWest = try GeoBox.view(south: -18, north: -17.5, west: 179.5, east: -1070).get()
        #expect(farWest.west == 179.5 && farWest.east == 370, "an east side turns away is the longitude it is (found by the map's fuzz target)")
        #expect(try GeoBox.view(south: 0, north: 1, west: -1e308, east: 1e308).get().everyLongitude)
        #expect(try GeoBox.view(south: 0, north: 1, west: 1e19, east: 1e19).get().east < 540)
        #expect(GeoBox.view(south: 1e300, north: 1e301, west: 0, east: 1) == .failure(.latitudeOutOfRange))
        #expect(GeoBox.view(south: 5, north: 4, west: 0, east: 1) == .failure(.southAboveNorth))
        #expect(GeoBox.view(south: .nan, north: 4, west: 0, east: 1) == .failure(.notFinite))
    }

    /// Whatever box a caller builds (a pole beyond 90°, a west side east of the east side, huge
    /// or non-finite numbers, south above north), the index answers without trapping; a view
    /// across the antimeridian finds what a scan finds.
    @Test func anyBoxIsAnsweredAndTheAntimeridianToo() async {
        let places = [(-17.8, 179.9), (-17.8, -179.9), (-17.8, 170.0), (40.0, 10.0)].enumerated().map { number, point in
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: point.0, longitude: point.1), radius: 50), name: "p\(number)")
        }
        let template = Reminder(id: "p", title: "{name}", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 1))
        let engine = GeofenceEngine(reminders: [], collections: [ReminderCollection(id: "p", template: template, places: places)])
        let across = engine.fences(in: GeoBox(south: -18, north: -17, west: 179.5, east: -179.5), limit: 10)
        #expect(across.complete && across.fences.map(\.id) == ["p/1", "p/2"])
        let odd: [Double] = [-1e308, -1e19, -400, -180, -90, 0, 90, 180, 400, 1e19, 1e308, .infinity, -.infinity, .nan]
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            func side() -> Double { random.bool() ? odd[Int(random.next() % UInt64(odd.count))] : random.double(in: -200...200) }
            let box = GeoBox(south: side(), north: side(), west: side(), east: side())
            _ = engine.fences(in: box, limit: Int(random.next() % 5) + 1)
        }
    }
}
