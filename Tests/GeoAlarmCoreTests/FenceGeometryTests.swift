import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import PropertyBased
import Testing

/// A fence's geometry answers for itself: inside, how far, which box holds it, the circle
/// around it, and whether two are the same.
struct FenceGeometryTests {
    static func point(_ x: Double, _ y: Double) -> Coordinate { AreaWalkTests.point(x, y) }
    /// A 300 m square with a 100 m square hole in its middle.
    static let yard = try! AreaWalkTests.area([
        [(0, 0), (300, 0), (300, 300), (0, 300)],
        [(100, 100), (200, 100), (200, 200), (100, 200)],
    ])

    @Test func aCircleIsItsRadiusAroundItsCentre() {
        let circle = FenceGeometry.circle(center: Self.point(0, 0), radius: 100)
        #expect(circle.center == Self.point(0, 0))
        #expect(circle.contains(Self.point(0, 0)) && circle.contains(Self.point(99, 0)))
        #expect(!circle.contains(Self.point(101, 0)))
        #expect(circle.evidence(at: Self.point(0, 110), hysteresis: 25) == .margin)
        #expect(circle.evidence(at: Self.point(0, 130), hysteresis: 25) == .outside)
        #expect(abs(circle.distance(from: Self.point(0, 50)) - 50) < 0.1, "a circle's distance is to its centre")
        #expect(circle.circumradius == 100)
    }

    @Test func anAreaIsItsRingsWithoutItsHoles() {
        let yard = FenceGeometry.area(Self.yard)
        #expect(yard.contains(Self.point(50, 50)))
        #expect(!yard.contains(Self.point(150, 150)), "in the hole")
        #expect(!yard.contains(Self.point(350, 150)))
        #expect(yard.evidence(at: Self.point(150, 150), hysteresis: 60) == .margin, "50 m from the hole's edge")
        #expect(yard.evidence(at: Self.point(150, 150), hysteresis: 40) == .outside)
        #expect(yard.distance(from: Self.point(50, 50)) == 0, "an area's distance is 0 inside")
        #expect(abs(yard.distance(from: Self.point(320, 150)) - 20) < 0.1, "and to its edge outside")
        // The centre is the middle of its box; the farthest point is a corner.
        #expect(abs(Haversine.distance(yard.center, Self.point(150, 150))) < 0.1)
        #expect(abs(yard.circumradius - 150 * 2.0.squareRoot()) < 0.5)
    }

    /// Every point within `margin` of a fence lies in its box, at the poles and across the
    /// antimeridian too: the grid files a fence under its box, so a point outside it would be missed.
    @Test func theBoxHoldsEveryPointWithinTheMargin() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            let latitude = random.bool() ? random.double(in: 80...84) * (random.bool() ? 1 : -1) : random.double(in: -60...60)
            let longitude = random.bool() ? 179.99 * (random.bool() ? 1 : -1) : random.double(in: -180...180)
            let origin = Coordinate(latitude: latitude, longitude: longitude)
            let size = random.double(in: 10...5000)
            let geometry: FenceGeometry = random.bool()
                ? .circle(center: origin, radius: size)
                : .area(try! AreaWalkTests.area([[(0, 0), (size, 0), (size / 2, size)]], from: origin))
            let margin = random.double(in: 0...500)
            let box = geometry.boundingBox(margin: margin)
            for _ in 0..<50 {
                let point = PropertyTests.destination(
                    from: geometry.center, angle: random.double(in: 0...(2 * size + margin)) / Haversine.earthRadius,
                    bearing: random.double(in: 0...(2 * .pi)))
                guard geometry.evidence(at: point, hysteresis: margin) != .outside else { continue }
                // The point's longitude moved by whole turns to at or east of the box's west side.
                let turned = box.west + ((point.longitude - box.west).truncatingRemainder(dividingBy: 360) + 360)
                    .truncatingRemainder(dividingBy: 360)
                #expect(point.latitude >= box.south && point.latitude <= box.north, "seed \(seed): \(point) \(box)")
                #expect(box.everyLongitude || turned <= box.east, "seed \(seed): \(point) \(box)")
            }
        }
    }

    @Test func aFenceNearAPoleHoldsEveryLongitude() {
        let polar = FenceGeometry.circle(center: Coordinate(latitude: 89.95, longitude: 10), radius: 20_000)
        #expect(polar.boundingBox(margin: 0).everyLongitude)
        #expect(!FenceGeometry.circle(center: Self.point(0, 0), radius: 100).boundingBox(margin: 0).everyLongitude)
    }

    /// The key is written into the state file beside each side confirmed: it must stay as it was,
    /// or an upgrade would forget where everyone is.
    @Test func keysAreTheOnesStateFilesHold() throws {
        let circle = Reminder(id: "a", title: "A", geometry: .circle(center: Coordinate(latitude: 38.5, longitude: -9.25), radius: 100), hysteresis: 25)
        #expect(circle.fenceKey == "38.5,-9.25;100.0;25.0")
        let area = Reminder(id: "b", title: "B", geometry: .area(Self.yard), hysteresis: 10)
        #expect(area.fenceKey == "area:\(Self.yard.key);10.0")
    }

    @Test func sameShapesAreEqualHoweverMade() throws {
        let again = try AreaWalkTests.area([
            [(0, 0), (300, 0), (300, 300), (0, 300)],
            [(100, 100), (200, 100), (200, 200), (100, 200)],
        ])
        #expect(FenceGeometry.area(Self.yard) == .area(again))
        #expect(FenceGeometry.area(Self.yard) != .area(try AreaWalkTests.area([[(0, 0), (300, 0), (300, 300)]])))
        #expect(FenceGeometry.circle(center: Self.point(0, 0), radius: 10) == .circle(center: Self.point(0, 0), radius: 10))
        #expect(FenceGeometry.circle(center: Self.point(0, 0), radius: 10) != .circle(center: Self.point(0, 0), radius: 11))
        #expect(FenceGeometry.area(Self.yard) != .circle(center: Self.yard.center, radius: 150))
    }
}
