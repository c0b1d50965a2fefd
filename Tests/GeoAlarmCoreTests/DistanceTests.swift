@testable import GeoAlarmCore
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
