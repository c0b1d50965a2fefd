import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// Areas against brute force on random polygons, and walks that must give the right events.
struct AreaTests {
    typealias Ring = [Coordinate]

    /// A star-shaped ring around `center` (a simple polygon: one vertex per angle, in order,
    /// no two neighbours more than half a turn apart): convex when every vertex is at `outer`
    /// degrees, concave when `inner` < `outer`.
    static func star(around center: Coordinate, vertices: Int, inner: Double, outer: Double, _ random: inout SplitMix) -> Ring {
        let angles = (0..<vertices).map { 2 * .pi * (Double($0) + random.double(in: 0...0.4)) / Double(vertices) }
        return angles.map { angle in
            let reach = random.double(in: inner...outer)
            return Coordinate(
                latitude: center.latitude + reach * sin(angle),
                longitude: Area.wrapped(center.longitude + reach * cos(angle) / cos(center.latitude * .pi / 180)))
        }
    }

    /// Brute force inside: the winding number of each ring (not even-odd), in longitudes
    /// unwrapped next to `reference`; inside an outer ring and in none of its holes.
    static func bruteContains(_ polygons: [[Ring]], _ point: Coordinate, reference: Double) -> Bool {
        func unwrap(_ longitude: Double) -> Double {
            var value = longitude
            while value - reference > 180 { value -= 360 }
            while value - reference < -180 { value += 360 }
            return value
        }
        func winding(_ ring: Ring) -> Int {
            var count = 0
            let (x, y) = (unwrap(point.longitude), point.latitude)
            for index in ring.indices {
                let a = ring[index], b = ring[(index + 1) % ring.count]
                let (ax, ay, bx, by) = (unwrap(a.longitude), a.latitude, unwrap(b.longitude), b.latitude)
                let side = (bx - ax) * (y - ay) - (x - ax) * (by - ay)
                if ay <= y, by > y, side > 0 { count += 1 }
                if ay > y, by <= y, side < 0 { count -= 1 }
            }
            return count
        }
        return polygons.contains { rings in winding(rings[0]) != 0 && rings.dropFirst().allSatisfy { winding($0) == 0 } }
    }

    /// Brute force distance: haversine to points every 1/400 of each edge (straight in lon/lat).
    static func bruteDistance(_ polygons: [[Ring]], _ point: Coordinate, reference: Double) -> (distance: Double, step: Double) {
        var best = Double.infinity, step = 0.0
        for ring in polygons.joined() {
            for index in ring.indices {
                let a = ring[index], b = ring[(index + 1) % ring.count]
                var turn = b.longitude - a.longitude
                if turn > 180 { turn -= 360 } else if turn < -180 { turn += 360 }
                step = max(step, Haversine.distance(a, b) / 400)
                for k in 0...400 {
                    let t = Double(k) / 400
                    let sample = Coordinate(latitude: a.latitude + t * (b.latitude - a.latitude), longitude: Area.wrapped(a.longitude + t * turn))
                    best = min(best, Haversine.distance(point, sample))
                }
            }
        }
        return (best, step)
    }

    enum Kind: String, CaseIterable { case convex, concave, holes, antimeridian }

    static func polygons(_ kind: Kind, _ random: inout SplitMix) -> (polygons: [[Ring]], center: Coordinate) {
        let center = kind == .antimeridian
            ? Coordinate(latitude: random.double(in: -60...60), longitude: [179.995, -179.995].randomElement(using: &random)!)
            : Coordinate(latitude: random.double(in: -80...80), longitude: random.double(in: -179...179))
        let size = random.double(in: 0.002...0.05)
        let vertices = Int.random(in: 3...(kind == .holes ? 90 : 60), using: &random)
        switch kind {
        case .convex:
            return ([[star(around: center, vertices: vertices, inner: size, outer: size, &random)]], center)
        case .concave, .antimeridian:
            return ([[star(around: center, vertices: vertices, inner: size * 0.2, outer: size, &random)]], center)
        case .holes:
            let outer = star(around: center, vertices: vertices, inner: size * 0.5, outer: size, &random)
            let hole = star(around: center, vertices: Int.random(in: 3...40, using: &random), inner: size * 0.1, outer: size * 0.4, &random)
            return ([[outer, hole]], center)
        }
    }

    @Test(arguments: Kind.allCases)
    func insideAndDistanceAgreeWithBruteForce(_ kind: Kind) throws {
        var random = SplitMix(seed: 0xA5EA + UInt64(kind.rawValue.count))
        var checked = 0, inside = 0
        for _ in 0..<60 {
            let (polygons, center) = Self.polygons(kind, &random)
            let area = try Area(polygons: polygons)
            for _ in 0..<40 {
                let spread = (area.north - area.south) * 0.8
                let point = Coordinate(
                    latitude: center.latitude + random.double(in: -spread...spread),
                    longitude: Area.wrapped(center.longitude + random.double(in: -spread...spread) / cos(center.latitude * .pi / 180)))
                var tested = 0
                let contains = area.contains(point, tested: &tested)
                #expect(contains == Self.bruteContains(polygons, point, reference: center.longitude),
                        "\(kind): \(point) in \(polygons)")
                let distance = area.distanceToEdge(from: Haversine.Origin(point), tested: &tested)
                let brute = Self.bruteDistance(polygons, point, reference: center.longitude)
                // Sampled brute force overstates by at most half a step; the projection errs by tan|φ|·d/R.
                let tolerance = brute.step + brute.distance * (0.001 + abs(tan(point.latitude * .pi / 180)) * brute.distance / Haversine.earthRadius) + 0.01
                #expect(abs(distance - brute.distance) <= tolerance, "\(kind): \(distance) vs \(brute.distance) at \(point)")
                checked += 1
                if contains { inside += 1 }
            }
        }
        #expect(inside > checked / 10 && inside < checked * 9 / 10, "the points fall on both sides: \(inside) of \(checked)")
    }

    @Test func largeRingsUseBandsAndStillAgree() throws {
        var random = SplitMix(seed: 77)
        let center = Coordinate(latitude: 47.5, longitude: 8.5)
        let ring = Self.star(around: center, vertices: 3000, inner: 0.05, outer: 0.3, &random)
        let area = try Area(polygons: [[ring]])
        var testedBanded = 0, checked = 0
        for _ in 0..<300 {
            let point = Coordinate(latitude: center.latitude + random.double(in: -0.35...0.35), longitude: center.longitude + random.double(in: -0.5...0.5))
            var tested = 0
            #expect(area.contains(point, tested: &tested) == Self.bruteContains([[ring]], point, reference: center.longitude))
            testedBanded += tested
            checked += 1
        }
        #expect(testedBanded / checked < area.edgeCount / 10, "a test reads a band, not every edge: \(testedBanded / checked) of \(area.edgeCount)")
    }

    @Test func badGeometryIsRefusedWithItsReason() {
        let square = [(0.0, 0.0), (0, 1), (1, 1), (1, 0)].map { Coordinate(latitude: $0.0, longitude: $0.1) }
        #expect(throws: AreaProblem.tooFewPoints(polygon: 0, ring: 0, count: 2)) {
            try Area(polygons: [[[square[0], square[1], square[0]]]])
        }
        #expect(throws: AreaProblem.noSurface(polygon: 0, ring: 0)) {
            try Area(polygons: [[[Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 1, longitude: 1), Coordinate(latitude: 2, longitude: 2)]]])
        }
        let bowTie = [(0.0, 0.0), (1, 1), (1, 0), (0, 1)].map { Coordinate(latitude: $0.0, longitude: $0.1) }
        #expect(throws: AreaProblem.self) { try Area(polygons: [[bowTie]]) }
        do {
            _ = try Area(polygons: [[bowTie]])
        } catch {
            #expect(error.description.hasPrefix("the outer ring crosses itself near "))
        }
        #expect(throws: AreaProblem.nearPole(polygon: 0, ring: 0, latitude: 86)) {
            try Area(polygons: [[[Coordinate(latitude: 80, longitude: 0), Coordinate(latitude: 86, longitude: 10), Coordinate(latitude: 80, longitude: 20)]]])
        }
        #expect(throws: AreaProblem.self) {
            try Area(polygons: [[[Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 91, longitude: 1), Coordinate(latitude: 1, longitude: 0)]]])
        }
        #expect(throws: AreaProblem.noPolygon) { try Area(polygons: []) }
        // A closing repeat of the first point is dropped, not counted.
        #expect(throws: Never.self) { try Area(polygons: [[square + [square[0]]]]) }
    }

    /// A box 200° wide as written could be meant as the other 160° across the antimeridian: it
    /// is refused, not silently turned into the other one; 170 to -170 is clearly 20° across.
    @Test func aWidthThatCouldBeMeantEitherWayIsRefused() throws {
        func box(_ west: Double, _ east: Double) -> [Coordinate] {
            [(-10.0, west), (-10, east), (10, east), (10, west)].map { Coordinate(latitude: $0.0, longitude: $0.1) }
        }
        #expect(throws: AreaProblem.ambiguousEdge(polygon: 0, ring: 0, from: -100, to: 100)) { try Area(polygons: [[box(-100, 100)]]) }
        do {
            _ = try Area(polygons: [[box(-100, 100)]])
        } catch {
            #expect(error.description.contains("200° as written, 160° the other way round across the antimeridian"))
        }
        let across = try Area(polygons: [[box(170, -170)]])
        var tested = 0
        #expect(across.contains(Coordinate(latitude: 0, longitude: 180), tested: &tested))
        #expect(!across.contains(Coordinate(latitude: 0, longitude: 0), tested: &tested))
        // Written with a point between, 200° wide as meant: more than an area may be.
        let wide = [(-10.0, -100.0), (-10, 0), (-10, 100), (10, 100), (10, 0), (10, -100)].map { Coordinate(latitude: $0.0, longitude: $0.1) }
        #expect(throws: AreaProblem.tooWide(degrees: 200)) { try Area(polygons: [[wide]]) }
    }

    @Test func theDigestFollowsTheGeometry() throws {
        let square = [(0.0, 0.0), (0, 1), (1, 1), (1, 0)].map { Coordinate(latitude: $0.0, longitude: $0.1) }
        let moved = square.map { Coordinate(latitude: $0.latitude + 0.0001, longitude: $0.longitude) }
        #expect(try Area(polygons: [[square]]).key == Area(polygons: [[square + [square[0]]]]).key)
        #expect(try Area(polygons: [[square]]).key != Area(polygons: [[moved]]).key)
    }
}

extension Area {
    /// A longitude moved into -180...180, for building test rings.
    static func wrapped(_ longitude: Double) -> Double {
        var value = longitude
        while value > 180 { value -= 360 }
        while value < -180 { value += 360 }
        return value
    }
}

/// A comb of tall teeth: every edge spans nearly the whole area's height, the worst case for
/// latitude bands (they are coarsened for it); it is still answered right.
struct AreaCombTests {
    @Test func aCombOfTallTeethIsAnsweredRight() throws {
        var ring: [Coordinate] = [Coordinate(latitude: 46.0, longitude: 8.0)]
        let teeth = 2000
        for tooth in 0..<teeth {
            let west = 8.0 + Double(tooth) * 0.001
            ring.append(Coordinate(latitude: 47.0, longitude: west + 0.0002))
            ring.append(Coordinate(latitude: 46.01, longitude: west + 0.0008))
        }
        ring.append(Coordinate(latitude: 46.0, longitude: 8.0 + Double(teeth) * 0.001))
        let area = try Area(polygons: [[ring]])
        var tested = 0
        #expect(area.contains(Coordinate(latitude: 46.005, longitude: 8.5), tested: &tested), "the comb's back")
        #expect(area.contains(Coordinate(latitude: 46.5, longitude: 8.0003), tested: &tested), "inside the first tooth")
        #expect(!area.contains(Coordinate(latitude: 46.9, longitude: 8.0011), tested: &tested), "between two teeth")
        #expect(tested <= 3 * area.edgeCount)
        let near = area.distanceToEdge(from: Haversine.Origin(Coordinate(latitude: 46.9, longitude: 8.0011)), tested: &tested)
        #expect(near > 0 && near < 10, "between two teeth, a few metres from one: \(near)")
    }
}

/// How rings may meet: never crossing, parts apart (or in another's hole), holes inside their ring.
struct AreaNestingTests {
    static func square(_ south: Double, _ west: Double, _ size: Double) -> [Coordinate] {
        [(south, west), (south, west + size), (south + size, west + size), (south + size, west)]
            .map { Coordinate(latitude: $0.0, longitude: $0.1) }
    }

    @Test func overlappingPartsAndStrayHolesAreRefusedWithWhere() throws {
        #expect(throws: AreaProblem.self) { try Area(polygons: [[Self.square(0, 0, 2)], [Self.square(1, 1, 2)]]) }
        do {
            _ = try Area(polygons: [[Self.square(0, 0, 2)], [Self.square(1, 1, 2)]])
        } catch {
            #expect(error.description.hasPrefix("the outer ring of polygon 2 crosses the outer ring near ")
                || error.description.hasPrefix("the outer ring crosses the outer ring of polygon 2 near "), "\(error)")
        }
        #expect(throws: AreaProblem.partInsidePart(polygon: 1, otherPolygon: 0)) {
            try Area(polygons: [[Self.square(0, 0, 4)], [Self.square(1, 1, 1)]])
        }
        #expect(throws: AreaProblem.holeOutside(polygon: 0, ring: 1)) {
            try Area(polygons: [[Self.square(0, 0, 2), Self.square(5, 5, 1)]])
        }
        #expect(throws: AreaProblem.holeOutside(polygon: 0, ring: 2)) {
            try Area(polygons: [[Self.square(0, 0, 4), Self.square(1, 1, 2), Self.square(1.5, 1.5, 0.5)]])
        }
        #expect(throws: AreaProblem.self) { try Area(polygons: [[Self.square(0, 0, 2), Self.square(1, 1, 2)]]) }
        // An island in a lake: a part inside another's hole is inside; the water around it is not.
        let lake = try Area(polygons: [[Self.square(0, 0, 4), Self.square(1, 1, 2)], [Self.square(1.5, 1.5, 1)]])
        var tested = 0
        #expect(lake.contains(Coordinate(latitude: 2, longitude: 2), tested: &tested), "on the island")
        #expect(!lake.contains(Coordinate(latitude: 1.2, longitude: 1.2), tested: &tested), "in the lake")
        #expect(lake.contains(Coordinate(latitude: 0.5, longitude: 0.5), tested: &tested), "on the shore")
    }

    /// A comb of 80,000 points with long teeth, lying either way or slanted, is checked (a ring
    /// with one crossing added is refused at it): each tooth is tested against its neighbours only.
    @Test(arguments: [0.0, 90.0, 45.0])
    func aLargeCombIsCheckedAndACrossingInItFound(turn degrees: Double) throws {
        let teeth = 20_000
        var points: [(Double, Double)] = [(0, 0)]
        for tooth in 0..<teeth {
            let x = Double(tooth) * 0.0001
            points += [(x + 0.00002, 1.0), (x + 0.00008, 1.0), (x + 0.00008, 0.001), (x + 0.0001, 0.001)]
        }
        points.append((Double(teeth) * 0.0001, 0))
        let angle = degrees * .pi / 180
        func ring(_ points: [(Double, Double)]) -> [Coordinate] {
            points.map { x, y in
                Coordinate(latitude: 40 + x * sin(angle) + y * cos(angle), longitude: 8 + x * cos(angle) - y * sin(angle))
            }
        }
        let comb = try Area(polygons: [[ring(points)]])
        #expect(comb.edgeCount == points.count)
        // One tooth's tip pulled over its neighbour's.
        var crossed = points
        crossed[4 * 5000 + 2] = (Double(5001) * 0.0001 + 0.00005, 0.5)
        #expect(throws: AreaProblem.self) { try Area(polygons: [[ring(crossed)]]) }
    }

    @Test func anAreaOfTooManyPointsIsRefused() {
        let many = (0..<(Area.mostPoints + 1)).map { index -> Coordinate in
            let angle = Double(index) / Double(Area.mostPoints + 1) * 2 * .pi
            return Coordinate(latitude: 10 * sin(angle), longitude: 10 * cos(angle))
        }
        #expect(throws: AreaProblem.tooManyPoints(count: Area.mostPoints + 1)) { try Area(polygons: [[many]]) }
    }
}
