import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// Approaches and proximities through the engine and the announcer, as the agent runs them.
struct ApproachEngineTests {
    static let speed = 50 / 3.6

    /// Home, 100 m wide, with a 10-minute and a 2 km approach.
    static func home(repetition: Repeat = .always) -> Reminder {
        var reminder = Scene.reminder("home", hysteresis: 10, trigger: .arrive)
        reminder.approach = ApproachRule(within: 2000, eta: 600)
        reminder.schedule.repetition = repetition
        return reminder
    }

    /// From 20 km north, parked 30 s, then straight in at 50 km/h (but for a `stop` of as many
    /// seconds from second 900); `rate` fixes a second, each up to 5 m off; the fixes of the
    /// first `seconds`.
    static func driveIn(seconds: Double, rate: Double = 1, stop: Double = 0) -> [Fix] {
        var random = SplitMix(seed: 1)
        return (0..<Int(seconds * rate)).map { index in
            let second = Double(index) / rate
            let driven = max(0, second - 30) - min(stop, max(0, second - 900))
            return Scene.fix(max(0, 20_000 - driven * speed) + random.double(in: -5...5), at: second)
        }
    }

    @Test func theEngineAnnouncesBothApproachesThenTheArrival() throws {
        var engine = GeofenceEngine(reminders: [Self.home()])
        var events: [(second: Double, event: GeofenceEvent)] = []
        for fix in Self.driveIn(seconds: 1500) {
            for event in engine.process(fix).events { events.append((fix.time!.timeIntervalSince1970 - 1_800_000_000, event)) }
        }
        #expect(events.map(\.event.kind) == [.approach, .approach, .arrive])
        // Ten minutes out (8.3 km): the edge is 19,900 m away at the start.
        let byTime = try #require(events.first)
        #expect(abs(byTime.second - (30 + (19_900 - 600 * Self.speed) / Self.speed)) <= 30)
        #expect(abs((byTime.event.proximity?.eta ?? 0) - 600) <= 30)
        let byDistance = try #require(events.dropFirst().first)
        #expect(abs(byDistance.event.distance - 2000) <= Self.speed + 5, "within one fix of 2 km: \(byDistance.event.distance)")
        #expect(byDistance.event.proximity?.direction == .towards)
    }

    /// Ten fixes a second, parked then driving: what shows proximity hears of a change every few
    /// seconds at most, not ten times a second.
    @Test func proximityChangesComeOnlyWhenTheyAreNoticeable() {
        var engine = GeofenceEngine(reminders: [Self.home()])
        var parked = 0, driving = 0
        for fix in Self.driveIn(seconds: 630, rate: 10) {
            let second = fix.time!.timeIntervalSince1970 - 1_800_000_000
            let count = engine.process(fix).proximities.count
            if second < 30 { parked += count } else { driving += count }
        }
        // Parked: the first (unknown), then stationary once the window fills.
        #expect(parked <= 2, "\(parked)")
        // 600 s at 50 km/h is 8.3 km: one change per 50 m at most, plus the turns of direction and estimate.
        #expect(driving > 0 && driving <= Int(600 * Self.speed / 50) + 10, "\(driving) changes from 6000 fixes")
        #expect(engine.proximities.first??.direction == .towards)
    }

    @Test func anApproachDoesNotCompleteAOnceReminderNorCountAsItsFiring() {
        var engine = GeofenceEngine(reminders: [Self.home(repetition: .once)])
        var announcer = Announcer(timeZone: .utc)
        var announced: [EventKind] = []
        for fix in Self.driveIn(seconds: 1500) {
            for event in engine.process(fix).events where announcer.decide(event) == nil { announced.append(event.kind) }
        }
        #expect(announced == [.approach, .approach, .arrive])
        #expect(announcer.lifecycles["home"]?.completedAt != nil, "the arrival completes it")
    }

    @Test func aSnoozedOrCompletedReminderMakesNoApproach() {
        for lifecycle in [Lifecycle(snoozedUntil: Date(timeIntervalSince1970: 1_900_000_000)), Lifecycle(completedAt: Date())] {
            var engine = GeofenceEngine(reminders: [Self.home()])
            var announcer = Announcer(timeZone: .utc, lifecycles: ["home": lifecycle])
            var silences: [Silence] = []
            for fix in Self.driveIn(seconds: 1500) {
                for event in engine.process(fix).events { if let silence = announcer.decide(event) { silences.append(silence) } }
            }
            #expect(silences.count == 3 && Set(silences.map(\.description)).count == 1, "\(silences)")
        }
    }

    /// A cooldown counts approaches apart from arrivals: the arrival after an approach is announced.
    @Test func anApproachHasACooldownOfItsOwn() {
        var engine = GeofenceEngine(reminders: [Self.home(repetition: .cooldown(3600))])
        var announcer = Announcer(timeZone: .utc)
        var outcome: [String] = []
        for fix in Self.driveIn(seconds: 1500) {
            for event in engine.process(fix).events {
                outcome.append("\(event.kind.rawValue):\(announcer.decide(event).map(\.description) ?? "announced")")
            }
        }
        // The distance approach comes minutes after the time one: within the hour, so quiet.
        #expect(outcome.count == 3 && outcome[0] == "approach:announced" && outcome[2] == "arrive:announced", "\(outcome)")
        #expect(outcome[1].hasPrefix("approach:") && outcome[1] != "approach:announced")
    }

    /// A reloaded config whose reminder is unchanged keeps its approach as it was: fired, it does
    /// not fire again after a stop on the way in (a new watch would: the stop would arm it).
    @Test func aReloadKeepsAnApproachThatFired() {
        var engine = GeofenceEngine(reminders: [Self.home()])
        var kinds: [EventKind] = []
        for fix in Self.driveIn(seconds: 1700, stop: 120) {
            if fix.time == Date(timeIntervalSince1970: 1_800_000_950) {
                engine = GeofenceEngine(reminders: [Self.home()], settings: EngineSettings(), carryingStateFrom: engine)
            }
            kinds += engine.process(fix).events.map(\.kind)
        }
        #expect(kinds == [.approach, .approach, .arrive])
    }
}
