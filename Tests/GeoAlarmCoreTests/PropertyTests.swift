import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import PropertyBased
import Testing

struct PropertyTests {
    static let latitude = Gen.double(in: -90...90)
    static let longitude = Gen.double(in: -180...180)

    @Test func distanceIsSymmetricAndZeroOnlyToItself() async {
        await propertyCheck(input: Self.latitude, Self.longitude, Self.latitude, Self.longitude) { la1, lo1, la2, lo2 in
            let a = Coordinate(latitude: la1, longitude: lo1)
            let b = Coordinate(latitude: la2, longitude: lo2)
            let ab = Haversine.distance(a, b)
            #expect(abs(ab - Haversine.distance(b, a)) < 1e-6)
            #expect(Haversine.distance(a, a) == 0)
            #expect(ab >= 0 && ab <= .pi * Haversine.earthRadius + 1e-6)
        }
    }

    @Test func distanceObeysTheTriangleInequality() async {
        await propertyCheck(
            input: Self.latitude, Self.longitude, Self.latitude, Self.longitude, Self.latitude, Self.longitude
        ) { la1, lo1, la2, lo2, la3, lo3 in
            let a = Coordinate(latitude: la1, longitude: lo1)
            let b = Coordinate(latitude: la2, longitude: lo2)
            let c = Coordinate(latitude: la3, longitude: lo3)
            #expect(Haversine.distance(a, c) <= Haversine.distance(a, b) + Haversine.distance(b, c) + 1e-6)
        }
    }

    /// Every event is a confirmed change of side: arrive and leave alternate, and each is preceded by
    /// `confirmations` consecutive accepted fixes that are evidence for the new side.
    @Test func noEventWithoutAConfirmedSideChange() async {
        let distances = Gen.double(in: 0...300).array(of: 1...120)
        let confirmations = Gen.int(in: 1...4)
        await propertyCheck(input: distances, confirmations, Gen.bool()) { track, needed, announce in
            let radius = 100.0
            let fence = Scene.reminder(radius: radius, hysteresis: 25)
            var engine = GeofenceEngine(
                reminders: [fence], settings: EngineSettings(confirmations: needed, announceInitial: announce))
            var last: EventKind?
            for (second, metres) in track.enumerated() {
                for event in engine.process(Scene.fix(metres, at: Double(second))).events {
                    #expect(event.kind != last, "two \(event.kind) events in a row")
                    last = event.kind
                    #expect(second + 1 >= needed)
                    let streak = track[(second + 1 - needed)...second]
                    if event.kind == .arrive {
                        #expect(streak.allSatisfy { $0 <= radius })
                    } else if !event.isInitial {
                        #expect(streak.allSatisfy { $0 > radius + fence.hysteresis })
                    } else {
                        #expect(streak.allSatisfy { $0 > radius })
                    }
                }
            }
            if !announce, let first = track.first, track.allSatisfy({ $0 == first }) { #expect(last == nil) }
        }
    }

    /// The grid never misses a fence whose reach holds the point, at the poles and across the antimeridian too.
    @Test func gridCandidatesIncludeEveryFenceInReach() async {
        let fenceCount = Gen.int(in: 1...40)
        let polarOrNot = Gen.bool()
        await propertyCheck(count: 200, input: fenceCount, polarOrNot, Gen.int(in: 0...Int(Int32.max))) { count, polar, seed in
            var random = SplitMix(seed: UInt64(seed))
            let fences = (0..<count).map { index -> Reminder in
                let lat = polar ? random.double(in: 85...90) * (random.bool() ? 1 : -1) : random.double(in: -80...80)
                let lon = random.bool() ? random.double(in: 179...180) * (random.bool() ? 1 : -1) : random.double(in: -180...180)
                return Scene.reminder(
                    "f\(index)", radius: random.double(in: 1...200_000), hysteresis: random.double(in: 0...500),
                    at: Coordinate(latitude: lat, longitude: lon))
            }
            let index = GridIndex(count: fences.count) { fences[$0].geometry.boundingBox(margin: fences[$0].hysteresis) }
            for _ in 0..<50 {
                let anchor = fences[Int(random.next() % UInt64(fences.count))]
                let bearing = random.double(in: 0...(2 * .pi))
                let along = random.double(in: 0...((anchor.geometry.radius! + anchor.hysteresis) * 1.2)) / Haversine.earthRadius
                let point = Self.destination(from: anchor.center, angle: along, bearing: bearing)
                let candidates = Set(index.candidates(near: point))
                for (position, fence) in fences.enumerated() where Haversine.distance(point, fence.center) <= fence.geometry.radius! + fence.hysteresis {
                    #expect(candidates.contains(Int32(position)), "missed \(fence.id) at \(point)")
                }
            }
        }
    }

    /// A longitude and the same one any whole turns away are in one cell (the fast path for
    /// -180..<180 and the remainder for the rest agree), -180 and 180 included.
    @Test func gridCellsRepeatEveryTurn() async {
        let index = GridIndex(count: 1) { _ in
            Scene.reminder("f", radius: 50, at: Coordinate(latitude: 38.7, longitude: -9.1)).geometry.boundingBox(margin: 0)
        }
        await propertyCheck(count: 500, input: Gen.double(in: -90...90), Gen.double(in: -180...180), Gen.int(in: -3...3)) { latitude, longitude, turns in
            let point = Coordinate(latitude: latitude, longitude: longitude)
            let turned = Coordinate(latitude: latitude, longitude: longitude + 360 * Double(turns))
            #expect(index.cell(of: point) == index.cell(of: turned), "\(longitude) and \(turns) turns")
        }
        #expect(index.cell(of: Coordinate(latitude: 0, longitude: -180)) == index.cell(of: Coordinate(latitude: 0, longitude: 180)))
    }

    /// The point `angle` radians along a great circle from `start` at `bearing`.
    static func destination(from start: Coordinate, angle: Double, bearing: Double) -> Coordinate {
        let lat1 = start.latitude * .pi / 180, lon1 = start.longitude * .pi / 180
        let lat2 = asin(sin(lat1) * cos(angle) + cos(lat1) * sin(angle) * cos(bearing))
        let lon2 = lon1 + atan2(sin(bearing) * sin(angle) * cos(lat1), cos(angle) - sin(lat1) * sin(lat2))
        var longitude = lon2 * 180 / .pi
        while longitude > 180 { longitude -= 360 }
        while longitude < -180 { longitude += 360 }
        return Coordinate(latitude: lat2 * 180 / .pi, longitude: longitude)
    }
}
