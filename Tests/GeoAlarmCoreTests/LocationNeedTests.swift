import Foundation
import GeoAlarmCore
import Testing

/// What the engine needs of a source that can be told (GeoClue): the distance to the nearest
/// line where something could change, and the smallest fence near.
struct LocationNeedTests {
    /// The office (100 m, margin 25 m) settled outside from `metres` north of its centre.
    static func settled(at metres: Double, dwell: Double = 0) -> GeofenceEngine {
        var engine = GeofenceEngine(reminders: [Scene.reminder(dwell: dwell)])
        _ = Scene.run(&engine, [metres, metres, metres])
        return engine
    }

    @Test func settledOutsideTheNeedIsTheWayToTheMarginLessTheError() {
        let need = Self.settled(at: 400).locationNeed(at: Scene.fix(400, at: 3))
        // 400 m from the centre: 275 m to the margin's edge at 125 m, less the fix's 5 m.
        #expect(abs(need.distance - 270) < 0.5, "\(need)")
        #expect(need.smallestNearRadius == 100)
    }

    @Test func insideTheNeedIsTheWayToTheEdge() {
        let need = Self.settled(at: 30).locationNeed(at: Scene.fix(30, at: 3))
        #expect(abs(need.distance - 65) < 0.5, "70 m to the edge, less 5 m: \(need)")
    }

    @Test func farFromEveryFenceTheWindowIsTheNeed() {
        let need = Self.settled(at: 5000).locationNeed(at: Scene.fix(5000, at: 3, error: nil))
        #expect(need == LocationNeed(distance: LocationNeed.window, smallestNearRadius: LocationNeed.window))
    }

    @Test func aFenceThatWaitsForFixesOrADwellAsksForEveryFix() {
        // One fix: the office has no side yet.
        var engine = GeofenceEngine(reminders: [Scene.reminder()])
        _ = Scene.run(&engine, [400])
        #expect(engine.locationNeed(at: Scene.fix(400, at: 1)).distance == 0)
        // A streak toward inside begun: the confirming fix may land anywhere.
        var crossing = Self.settled(at: 400)
        _ = Scene.run(&crossing, [50], start: 3)
        #expect(crossing.locationNeed(at: Scene.fix(50, at: 3)).distance == 0)
        // Inside a fence with a dwell, only a later fix confirms it, standing still.
        #expect(Self.settled(at: 30, dwell: 60).locationNeed(at: Scene.fix(30, at: 3)).distance == 0)
    }

    @Test func anApproachRingIsALineToo() {
        var reminder = Scene.reminder()
        reminder.approach = ApproachRule(within: 200)
        var engine = GeofenceEngine(reminders: [reminder])
        _ = Scene.run(&engine, [400, 400, 400])
        // 300 m beyond the edge; the ring is 200 m out: 100 m, less the error.
        #expect(abs(engine.locationNeed(at: Scene.fix(400, at: 3)).distance - 95) < 0.5)
    }
}
