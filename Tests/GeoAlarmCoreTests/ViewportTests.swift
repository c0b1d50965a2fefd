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
}
