import Foundation
@testable import GeoAlarmCore
import GeoAlarmTestSupport
import PropertyBased
import Testing

struct DistanceTests {
    /// Reference values: the haversine formula on a 6,371,008.8 m sphere, computed independently.
    @Test(arguments: [
        (Coordinate(latitude: 38.7223, longitude: -9.1393), Coordinate(latitude: 40.4168, longitude: -3.7038), 502_447.916),
        (Coordinate(latitude: 51.5007, longitude: -0.1246), Coordinate(latitude: 40.6892, longitude: -74.0445), 5_574_848.157),
        (Coordinate(latitude: -33.8688, longitude: 151.2093), Coordinate(latitude: -36.8485, longitude: 174.7633), 2_155_901.304),
    ])
    func knownPairs(a: Coordinate, b: Coordinate, metres: Double) {
        #expect(abs(Haversine.distance(a, b) - metres) < 0.01)
    }

    @Test func oneDegreeOfLatitudeIsTheMeanRadiusArc() {
        let d = Haversine.distance(Coordinate(latitude: 10, longitude: 20), Coordinate(latitude: 11, longitude: 20))
        #expect(abs(d - 6_371_008.8 * .pi / 180) < 0.001)
    }

    @Test func acrossTheAntimeridianIsShort() {
        let east = Coordinate(latitude: 0, longitude: 179.9995)
        let west = Coordinate(latitude: 0, longitude: -179.9995)
        #expect(abs(Haversine.distance(east, west) - 111.195) < 0.001)
    }

    @Test func acrossThePoleIsShort() {
        let a = Coordinate(latitude: 89.9999, longitude: 0)
        let b = Coordinate(latitude: 89.9999, longitude: 180)
        #expect(abs(Haversine.distance(a, b) - 22.239) < 0.001)
        // At the pole itself longitude means nothing.
        #expect(Haversine.distance(Coordinate(latitude: 90, longitude: 0), Coordinate(latitude: 90, longitude: 120)) < 1e-6)
    }

    @Test func antipodesAreHalfACircumference() {
        let d = Haversine.distance(Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 180))
        #expect(abs(d - .pi * 6_371_008.8) < 0.001)
    }

    /// The engine's two trigonometry-free bounds, anywhere (across the antimeridian, at the
    /// poles). It skips a settled fence's haversine when the lower bound puts the fix beyond the
    /// reach by 1e-9 of it, so that bound must never exceed the distance by that much, and must
    /// be tight near the fix, or it saves nothing. (The haversine itself is off by up to some
    /// 1e-10 of a short distance: it differences latitudes in radians.) It sums the way between
    /// fixes with the upper bound, each step padded by ten nanometres, so that bound must never
    /// fall short of the distance by more, and should stay close to it over the steps between
    /// fixes, where the margins it keeps are spent.
    @Test func theBoundsNeverClaimTooMuchAndAreTightNearby() async {
        await propertyCheck(
            input: Gen.double(in: -90...90), Gen.double(in: -180...180), Gen.double(in: -0.1...0.1), Gen.double(in: -0.1...0.1)
        ) { latitude, longitude, northward, eastward in
            let (origin, centre) = Self.pair(latitude, longitude, northward, eastward)
            let distance = origin.distance(to: centre)
            #expect(origin.distanceLowerBound(to: centre) <= distance * (1 + 1e-9))
            #expect(origin.distanceUpperBound(to: centre) + 1e-8 >= distance)
            // Within 60° of latitude, the upper bound is within half as much again (the way
            // along a parallel then a meridian, against the diagonal), and within 10 km the
            // lower bound is within half a percent.
            if abs(latitude) <= 60 {
                #expect(origin.distanceUpperBound(to: centre) <= distance * 1.5 + 1e-9)
                if distance < 10_000 { #expect(origin.distanceLowerBound(to: centre) >= distance * 0.995) }
            }
        }
    }

    /// A fix and a point up to 0.1° away from it in each direction, wrapped onto valid coordinates.
    private static func pair(_ latitude: Double, _ longitude: Double, _ northward: Double, _ eastward: Double) -> (Haversine.Origin, Coordinate) {
        var east = longitude + eastward
        if east > 180 { east -= 360 } else if east < -180 { east += 360 }
        let centre = Coordinate(latitude: min(90, max(-90, latitude + northward)), longitude: east)
        return (Haversine.Origin(Coordinate(latitude: latitude, longitude: longitude)), centre)
    }

    @Test func theBoundsHoldOnTheEdgeAndAcrossTheWorld() {
        for (fix, centre) in [
            (Coordinate(latitude: 38.72, longitude: -9.14), Coordinate(latitude: 38.7209, longitude: -9.14)),
            (Coordinate(latitude: 38.72, longitude: -9.14), Coordinate(latitude: 38.7201, longitude: -9.1389)),
            (Coordinate(latitude: 38.72, longitude: -9.14), Coordinate(latitude: -38.72, longitude: 170.86)),
            (Coordinate(latitude: 38.72, longitude: -9.14), Coordinate(latitude: 90, longitude: 0)),
            (Coordinate(latitude: 89.9999, longitude: 0), Coordinate(latitude: 89.9999, longitude: 180)),
            (Coordinate(latitude: 0.0001, longitude: 179.9999), Coordinate(latitude: -0.0001, longitude: -179.9999)),
        ] {
            let origin = Haversine.Origin(fix)
            let distance = origin.distance(to: centre)
            #expect(origin.distanceLowerBound(to: centre) <= distance * (1 + 1e-9))
            #expect(origin.distanceLowerBound(to: centre) > distance * 0.99 || abs(fix.latitude) > 60 || distance > 10_000)
            #expect(origin.distanceUpperBound(to: centre) + 1e-8 >= distance)
        }
    }

    @Test func coordinateValidityAndText() {
        #expect(Coordinate(latitude: 90, longitude: -180).isValid)
        #expect(!Coordinate(latitude: 90.1, longitude: 0).isValid)
        #expect(!Coordinate(latitude: .nan, longitude: 0).isValid)
        #expect(Coordinate(latitude: 38.7226, longitude: -9.1094).description == "38.722600,-9.109400")
        #expect(Coordinate(latitude: -0.5, longitude: 0.0000004).description == "-0.500000,0.000000")
    }
}

/// The travel an area's settled tracker may be passed over for, from its widened box
/// (``Area/leastTravelToNear(from:margin:)``) and from its edges
/// (``Area/leastTravelToEdge(from:distance:)``): wherever a fix goes within it, the area must
/// answer as it did, for areas of a few metres to tens of degrees, by the latitude limit and
/// across the antimeridian.
struct AreaTravelBoundTests {
    @Test func noFixWithinTheBoundComesNear() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            guard let area = Self.randomArea(&random) else { return }
            let height = max(area.north - area.south, 1e-4)
            let margin = random.double(in: 0...500)
            for _ in 0..<20 {
                let away = random.double(in: 0...(height * .pi / 180 * 3 + 5_000 / Haversine.earthRadius))
                let fix = PropertyTests.destination(from: area.center, angle: away, bearing: random.double(in: 0...(2 * .pi)))
                let gap = area.leastTravelToNear(from: Haversine.Origin(fix), margin: margin)
                #expect(gap >= 0)
                guard gap > 0 else { continue }
                #expect(area.isBeyond(fix, margin: margin), "seed \(seed): \(fix) reported \(gap) m away")
                // As far as `CellMargins` lets the fixes go: its margin shaved, any direction.
                for _ in 0..<5 {
                    let travel = random.double(in: 0...1) * max(0, gap * (1 - 1e-8) - 1e-6)
                    let moved = PropertyTests.destination(
                        from: fix, angle: travel / Haversine.earthRadius, bearing: random.double(in: 0...(2 * .pi)))
                    #expect(area.isBeyond(moved, margin: margin), "seed \(seed): \(moved), \(travel) m from \(fix), within \(gap) m")
                }
            }
        }
    }

    /// From a point outside an area, measured from its edges: within the travel told, beyond
    /// the reach, no fix is inside, and none is within the reach of an edge. From a point
    /// inside: within the travel told, every fix is inside.
    @Test func noFixWithinTheBoundFromTheEdgesCrossesOne() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            guard let area = Self.randomArea(&random) else { return }
            let height = max(area.north - area.south, 1e-4)
            var tested = 0
            for _ in 0..<20 {
                let away = random.double(in: 0...(height * .pi / 180 * 2))
                let fix = PropertyTests.destination(from: area.center, angle: away, bearing: random.double(in: 0...(2 * .pi)))
                let inside = area.contains(fix, tested: &tested)
                let origin = Haversine.Origin(fix)
                let distance = area.distanceToEdge(from: origin, tested: &tested)
                let reach = inside ? 0 : random.double(in: 0...distance)
                let travel = area.leastTravelToEdge(from: origin, distance: distance)
                #expect(travel >= 0 && travel <= distance)
                // What `CellMargins` lets the fixes go (outside, beyond the reach).
                let allowed = travel * (1 - 1e-8) - 1e-6 - reach
                guard allowed > 0 else { continue }
                for _ in 0..<5 {
                    let moved = PropertyTests.destination(
                        from: fix, angle: random.double(in: 0...allowed) / Haversine.earthRadius, bearing: random.double(in: 0...(2 * .pi)))
                    #expect(area.contains(moved, tested: &tested) == inside, "seed \(seed): \(moved) crossed, from \(fix) \(distance) m in or out")
                    if !inside {
                        #expect(area.distanceToEdge(from: Haversine.Origin(moved), tested: &tested) > reach, "seed \(seed): \(moved) within \(reach) m, from \(fix)")
                    }
                }
            }
        }
    }

    /// A star of 3 to 12 points, a few metres to tens of degrees across, in mid latitudes or
    /// by the latitude limit, across the antimeridian or not; nil where `Area` refuses it.
    static func randomArea(_ random: inout SplitMix) -> Area? {
        let latitude = random.bool() ? random.double(in: 78...84) * (random.bool() ? 1 : -1) : random.double(in: -70...70)
        let longitude = random.bool() ? 179.99 * (random.bool() ? 1 : -1) : random.double(in: -180...180)
        let outer = [random.double(in: 0.0005...0.02), random.double(in: 0.02...1), random.double(in: 1...40)][Int(random.next() % 3)]
        let ring = AreaTests.star(
            around: Coordinate(latitude: latitude, longitude: longitude), vertices: Int(random.next() % 10) + 3,
            inner: outer / 2, outer: outer, &random)
        return try? Area(polygons: [[ring]])
    }

    /// Close to the true way where it matters: a square of about 200 m at 38.7° N, a fix 1 km
    /// south or west of its box widened by a 25 m reach, and 100 m from its edge, out or in.
    @Test func theBoundIsNearlyTheWayThere() throws {
        let metresPerDegree = Haversine.earthRadius * .pi / 180
        let (south, west) = (38.7, -9.14)
        let side = 200 / metresPerDegree
        let east = west + side / cos(south * .pi / 180)
        let square: [Coordinate] = [
            Coordinate(latitude: south, longitude: west), Coordinate(latitude: south, longitude: east),
            Coordinate(latitude: south + side, longitude: east), Coordinate(latitude: south + side, longitude: west),
        ]
        let area = try Area(polygons: [[square]])
        let below = Coordinate(latitude: south - 1025 / metresPerDegree, longitude: (west + east) / 2)
        let gapSouth = area.leastTravelToNear(from: Haversine.Origin(below), margin: 25)
        #expect(abs(gapSouth - 1000) < 1, "\(gapSouth)")
        let beside = Coordinate(latitude: south + side / 2, longitude: west - 1025 / metresPerDegree / cos((south + side / 2) * .pi / 180))
        let gapWest = area.leastTravelToNear(from: Haversine.Origin(beside), margin: 25)
        #expect(gapWest > 995 && gapWest < 1000, "\(gapWest)")
        #expect(area.leastTravelToNear(from: Haversine.Origin(Coordinate(latitude: south + side / 2, longitude: west)), margin: 25) == 0)
        var tested = 0
        for metres in [-100.0, 100] {
            let point = Coordinate(latitude: south + metres / metresPerDegree, longitude: (west + east) / 2)
            let origin = Haversine.Origin(point)
            let distance = area.distanceToEdge(from: origin, tested: &tested)
            #expect(abs(distance - 100) < 0.01)
            let travel = area.leastTravelToEdge(from: origin, distance: distance)
            #expect(travel > 99.99 && travel <= distance, "\(travel)")
        }
    }
}
