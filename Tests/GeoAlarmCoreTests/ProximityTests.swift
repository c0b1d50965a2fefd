import Foundation
@testable import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// Approaches on generated drives and walks, with GPS noise: when they fire, and when they
/// must not.
struct ProximityTests {
    /// The place: a 100 m circle.
    static let place = Coordinate(latitude: 38.7105, longitude: -9.1366)
    static let fence = FenceGeometry.circle(center: place, radius: 100)

    /// One fix a second along `path` (east, north metres at second t), with up to `noise` metres
    /// of error each way; returns, for each second, whether each watch fired and the estimate.
    static func drive(
        seconds: Int, noise: Double = 5, seed: UInt64 = 1, watches: [ApproachWatch.Threshold],
        jump: (second: Int, metres: Double)? = nil, _ path: (Double) -> (Double, Double)
    ) -> (firings: [[Int]], estimates: [Proximity]) {
        var random = SplitMix(seed: seed)
        var motion = MotionEstimator()
        var alerts = watches.map(ApproachWatch.init)
        var firings = Array(repeating: [Int](), count: watches.count)
        var estimates: [Proximity] = []
        for second in 0..<seconds {
            var (east, north) = path(Double(second))
            east += random.double(in: -noise...noise)
            north += random.double(in: -noise...noise)
            if let jump, jump.second == second { east += jump.metres }
            let fix = Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: NMEADrive.point(place, north: north, east: east))
            motion.record(fix, time: Double(second))
            let estimate = Proximity(
                fence, at: fix.coordinate, moving: motion.motion(in: LocalFrame(at: fix.coordinate)),
                previous: estimates.last?.direction ?? .unknown)
            estimates.append(estimate)
            for index in alerts.indices where alerts[index].update(estimate) { firings[index].append(second) }
        }
        return (firings, estimates)
    }

    static let speed = 50 / 3.6

    /// Parked 30 s, 20 km south, then straight north at 50 km/h to the place's centre.
    static func straightIn(_ t: Double) -> (Double, Double) {
        (0, min(0, -20_000 + max(0, t - 30) * speed))
    }

    /// When, driving straight in, the edge is `seconds` away.
    static func trueSecond(eta seconds: Double) -> Double {
        30 + (20_000 - 100 - seconds * speed) / speed
    }

    @Test func drivingStraightInFiresATenMinuteApproachWithinHalfAMinuteOfTheTrueTime() {
        let (firings, estimates) = Self.drive(seconds: 1500, watches: [.eta(600)], Self.straightIn)
        #expect(firings[0].count == 1, "\(firings)")
        let fired = Double(firings[0].first ?? -1000)
        #expect(abs(fired - Self.trueSecond(eta: 600)) <= 30, "fired at \(fired) s, true \(Self.trueSecond(eta: 600)) s")
        #expect(estimates[700].direction == .towards && abs((estimates[700].closingSpeed ?? 0) - Self.speed) < 0.5)
        #expect(estimates.last?.direction == .arrived)
    }

    @Test func aDistanceApproachFiresWithinOneFixOfTheCrossing() {
        let (firings, estimates) = Self.drive(seconds: 1500, watches: [.distance(2000)], Self.straightIn)
        let crossing = estimates.firstIndex { $0.distance <= 2000 } ?? -1
        #expect(firings[0].count == 1 && abs((firings[0].first ?? -100) - crossing) <= 1, "\(firings) vs \(crossing)")
    }

    /// A straight road that passes the place 3 km off: the distance falls for a while, but the
    /// way you drive never points at it.
    @Test func drivingPastFiresNothing() {
        let (firings, estimates) = Self.drive(seconds: 3000, watches: [.eta(600), .distance(2000)]) { t in
            (3000, -20_000 + t * Self.speed)
        }
        #expect(firings.allSatisfy { $0.isEmpty }, "\(firings)")
        // From afar the road points almost at the place; nearer, it plainly passes it by.
        #expect(!estimates.contains { $0.direction == .towards && $0.distance < 6000 })
    }

    @Test func circlingAtAConstantDistanceFiresNothing() {
        let (firings, estimates) = Self.drive(seconds: 1200, watches: [.eta(600), .distance(2000)]) { t in
            let angle = t * (30 / 3.6) / 1500
            return (1500 * cos(angle), 1500 * sin(angle))
        }
        #expect(firings.allSatisfy { $0.isEmpty }, "\(firings)")
        #expect(estimates.dropFirst(20).allSatisfy { $0.direction == .stationary }, "\(Set(estimates.map(\.direction)))")
    }

    @Test func jitterWhileParkedFiresNothing() {
        for seed in 1...5 as ClosedRange<UInt64> {
            let (firings, estimates) = Self.drive(seconds: 1800, noise: 15, seed: seed, watches: [.eta(600), .distance(2000)]) { _ in
                (0, -1500)
            }
            #expect(firings.allSatisfy { $0.isEmpty }, "seed \(seed): \(firings)")
            #expect(!estimates.contains { $0.direction == .towards || $0.direction == .away }, "seed \(seed)")
        }
    }

    /// 50 km/h for 60 s, stopped 45 s, again and again: one approach, once.
    @Test func stopAndGoTrafficFiresOnce() {
        func position(_ t: Double) -> Double {
            let cycles = (t / 105).rounded(.down)
            let within = t - cycles * 105
            return cycles * 60 * Self.speed + min(within, 60) * Self.speed
        }
        let (firings, estimates) = Self.drive(seconds: 3000, watches: [.eta(600), .distance(2000)]) { t in
            (0, -15_000 + position(t))
        }
        #expect(firings[0].count == 1 && firings[1].count == 1, "\(firings)")
        #expect(estimates.contains { $0.direction == .stationary }, "the stops are seen")
    }

    /// A fix 300 m off on the way in neither fires early nor cancels.
    @Test func aStrayFixChangesNothing() {
        let (firings, _) = Self.drive(seconds: 1500, watches: [.eta(600)], jump: (second: 500, metres: 300), Self.straightIn)
        #expect(firings[0].count == 1)
        #expect(abs(Double(firings[0].first ?? -1000) - Self.trueSecond(eta: 600)) <= 30, "\(firings)")
    }

    /// Already close when watching starts: learnt silently, as the engine learns a side.
    @Test func startingCloseFiresNothingUntilAnotherApproach() {
        let (firings, _) = Self.drive(seconds: 400, watches: [.eta(600), .distance(2000)]) { t in
            (0, -1800 + t * Self.speed)
        }
        #expect(firings.allSatisfy { $0.isEmpty }, "\(firings)")
    }

    /// In from 10 km, a minute at the place, out 5 km, a minute parked, back in: two approaches
    /// each, the leaving having re-armed them.
    @Test func arrivingAndLeavingReArms() {
        let pace = 10_000.0 / 1200
        func north(_ t: Double) -> Double {
            switch t {
            case ..<30: -10_000
            case ..<1230: -10_000 + (t - 30) * pace
            case ..<1290: 0
            case ..<1890: -(t - 1290) * pace
            case ..<1950: -5000
            default: -5000 + min(5000, (t - 1950) * pace)
            }
        }
        let (firings, _) = Self.drive(seconds: 2600, watches: [.eta(180), .distance(1000)]) { t in (0, north(t)) }
        #expect(firings[0].count == 2 && firings[1].count == 2, "\(firings)")
    }

    @Test func thePairedSlopeIgnoresAFewOutliers() {
        let times = (0..<22).map(Double.init)
        var values = times.map { 2 * $0 + 1 }
        values[5] = 500
        values[16] = -400
        #expect(abs(Self.pairedSlope(times, values) - 2) < 0.01)
        #expect(Self.pairedSlope([3], [1]) == 0)
        #expect(Self.pairedSlope([], []) == 0)
    }

    private static func pairedSlope(_ times: [Double], _ values: [Double]) -> Double {
        times.withUnsafeBufferPointer { times in
            values.withUnsafeBufferPointer { values in
                withUnsafeTemporaryAllocation(of: Double.self, capacity: times.count) { work in
                    MotionEstimator.pairedSlope(times, values, work: work)
                }
            }
        }
    }

    /// The median found by selection is the one a sort gives, exactly, for any count (odd,
    /// even, one, none) and with many equal values (a window at rest) or none.
    @Test(arguments: 0..<200) func theMedianBySelectionIsTheSortedMedian(seed: UInt64) {
        var random = SplitMix(seed: seed)
        let count = Int.random(in: 0...40, using: &random)
        // One level (all equal), three (many ties) or a thousand (nearly all distinct).
        let levels = [1, 3, 1000][Int.random(in: 0...2, using: &random)]
        let values = (0..<count).map { _ in Double(Int.random(in: 0..<levels, using: &random)) / 7 - 20 }
        let sorted = values.sorted()
        let expected = count == 0 ? 0 : count % 2 == 1 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2
        var work = values
        let median = work.withUnsafeMutableBufferPointer { MotionEstimator.median($0) }
        #expect(median == expected, "\(values)")
        #expect(work.sorted() == sorted, "selection only reorders")
    }

    @Test func theMedianOfAWindowWithNaNEnds() {
        var values: [Double] = [.nan, 1, .nan, 2, 3, .nan]
        let median = values.withUnsafeMutableBufferPointer { MotionEstimator.median($0) }
        #expect(median.isNaN || (1...3).contains(median))
    }

    /// Changes kept as plain values give back, when read, the changes they were made of: each
    /// with its own reminder, time and device, in order; equal as their changes are.
    @Test func proximityChangesGiveBackTheChangesTheyKeep() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let changes = [
            ProximityChange(reminderID: "home", fenceKey: "k1", proximity: Proximity(distance: 900, direction: .away), time: start),
            ProximityChange(
                reminderID: "work", fenceKey: "k2", proximity: Proximity(distance: 40, direction: .towards, closingSpeed: 2, eta: 20),
                time: start.addingTimeInterval(5), device: "phone"),
            ProximityChange(reminderID: "home", fenceKey: "k3", proximity: Proximity(distance: 0, direction: .arrived), time: start),
        ]
        let kept = ProximityChanges(changes)
        #expect(Array(kept) == changes)
        #expect(kept.count == 3 && kept[1].device == "phone" && kept[2].fenceKey == "k3")
        #expect(kept == [changes[0], changes[1], changes[2]])
        #expect(kept != ProximityChanges(changes.dropLast()))
        var moved = changes
        moved[1].time = start
        #expect(kept != ProximityChanges(moved))
        #expect(ProximityChanges([]).isEmpty)
    }
}
