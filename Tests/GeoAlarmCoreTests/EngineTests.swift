import Foundation
import GeoAlarmCore
import Testing

/// The tracker's rules, one complaint about geofencing systems at a time.
struct EngineTests {
    func engine(_ reminders: [Reminder] = [Scene.reminder()], settings: EngineSettings = EngineSettings()) -> GeofenceEngine {
        GeofenceEngine(reminders: reminders, settings: settings)
    }

    @Test func startingInsideIsSilentAndLeavingFires() {
        var e = engine()
        #expect(Scene.run(&e, [10, 12, 11]) == [])
        #expect(e.presence(of: "office") == .inside)
        #expect(Scene.run(&e, [300, 310, 320], start: 3) == ["4:leave:office"])
    }

    @Test func startingOutsideIsSilentAndArrivingFires() {
        var e = engine()
        #expect(Scene.run(&e, [500, 480]) == [])
        #expect(e.presence(of: "office") == .outside)
        #expect(Scene.run(&e, [50, 40], start: 2) == ["3:arrive:office"])
    }

    @Test func announceInitialFiresTheStartState() {
        var inside = engine(settings: EngineSettings(announceInitial: true))
        #expect(Scene.run(&inside, [10, 12]) == ["1:arrive:office"])
        var outside = engine(settings: EngineSettings(announceInitial: true))
        let events = outside.process(Scene.fix(900, at: 0)).events + outside.process(Scene.fix(900, at: 1)).events
        #expect(events.map(\.kind) == [.leave])
        #expect(events.allSatisfy { $0.isInitial })
    }

    @Test func jitterAroundTheBoundaryDoesNotFlap() {
        var e = engine()
        _ = Scene.run(&e, [20, 20])
        // Parked at the edge: the radius is 100 m, jitter takes fixes to 92-122 m: inside the hysteresis band.
        let jitter: [Double] = (0..<600).map { 107 + 15 * sin(Double($0) * 1.7) }
        #expect(Scene.run(&e, jitter, start: 2) == [])
        #expect(e.presence(of: "office") == .inside)
    }

    @Test func jitterAcrossTheBoundaryFromOutsideArrivesOnce() {
        var e = engine()
        _ = Scene.run(&e, [400, 400])
        let jitter: [Double] = (0..<300).map { 100 + 20 * sin(Double($0) * 2.3) }
        #expect(Scene.run(&e, jitter, start: 2).count == 1)
    }

    @Test func oneStrayAccurateFixChangesNothing() {
        var e = engine()
        _ = Scene.run(&e, [10, 10])
        #expect(Scene.run(&e, [10, 2000, 10, 10], start: 2) == [])
        var outside = engine()
        _ = Scene.run(&outside, [2000, 2000])
        #expect(Scene.run(&outside, [2000, 5, 2000, 2000], start: 2) == [])
    }

    @Test func anInaccurateSpikeIsIgnored() {
        var e = engine(settings: EngineSettings(maxError: 100))
        _ = Scene.run(&e, [2000, 2000])
        for second in 2..<6 {
            #expect(e.process(Scene.fix(5, at: Double(second), error: 400)) == .rejected(.inaccurate))
        }
        #expect(e.presence(of: "office") == .outside)
        // An estimate at the limit counts; no estimate at all counts.
        #expect(e.process(Scene.fix(5, at: 6, error: 100)).events.isEmpty)
        #expect(e.process(Scene.fix(5, at: 7, error: nil)).events.map(\.kind) == [.arrive])
    }

    @Test func noFixIsRejected() {
        var e = engine()
        #expect(e.process(Scene.fix(5, at: 0, mode: .noFix)) == .rejected(.noFix))
        var bad = Scene.fix(5, at: 1)
        bad.coordinate.latitude = 123
        #expect(e.process(bad) == .rejected(.noFix))
    }

    @Test func aChangeAcrossAGapFiresOnTheFirstConfirmedFixesAfterIt() throws {
        var e = engine()
        _ = Scene.run(&e, [10, 10, 10])
        // The receiver loses the sky for an hour (no fixes at all, then mode 1 fixes).
        for second in 3..<10 { _ = e.process(Scene.fix(0, at: Double(second), mode: .noFix)) }
        #expect(e.presence(of: "office") == .inside)
        let first = e.process(Scene.fix(5000, at: 3600))
        let second = e.process(Scene.fix(5001, at: 3601))
        #expect(first.events.isEmpty)
        let event = try #require(second.events.first)
        #expect(event.kind == .leave)
        #expect(event.fix.time == Date(timeIntervalSince1970: 1_800_000_000 + 3601))
    }

    /// One fix from a receiver with a bad date (20 years ahead) is set aside as in the future,
    /// and the fixes at the true time that follow it are used at once.
    @Test func aFixFarAheadOfTheClockDoesNotHoldBackTheTrueOnes() {
        var e = engine()
        let clock = Date(timeIntervalSince1970: 1_800_000_000 + 10)
        #expect(e.process(Scene.fix(10, at: 0), receivedAt: clock) != .rejected(.future))
        #expect(e.process(Scene.fix(10, at: 20 * 365 * 86400), receivedAt: clock) == .rejected(.future))
        #expect(e.process(Scene.fix(10, at: 86400 + 11), receivedAt: clock) == .rejected(.future))
        let next = e.process(Scene.fix(10, at: 1), receivedAt: clock)
        #expect(next.events.map(\.kind) == [], "a true fix is used: the second one confirms inside, silently")
        #expect(e.presence(of: "office") == .inside)
        #expect(e.process(Scene.fix(5000, at: 86400), receivedAt: clock) != .rejected(.future), "a day ahead is still fine")
        #expect(e.lastFixTime == Date(timeIntervalSince1970: 1_800_000_000 + 86400))
    }

    @Test func timeGoingBackwardsIsIgnored() {
        var e = engine()
        _ = Scene.run(&e, [10, 10], start: 100)
        #expect(e.process(Scene.fix(5000, at: 50)) == .rejected(.outOfOrder))
        #expect(e.process(Scene.fix(5000, at: 101)) == .rejected(.repeated))
        #expect(e.process(Scene.fix(5000, at: 60)) == .rejected(.outOfOrder))
        #expect(e.presence(of: "office") == .inside)
        #expect(e.lastFixTime == Date(timeIntervalSince1970: 1_800_000_000 + 101))
    }

    @Test func dwellSilencesDrivePastsButNotStops() {
        var e = engine([Scene.reminder(dwell: 120)])
        _ = Scene.run(&e, [900, 900])
        // Driving through in 60 s: no arrive.
        #expect(Scene.run(&e, Array(repeating: 50, count: 60) + [900, 900], start: 2) == [])
        // Stopping: arrive once the stay has lasted 120 s of fix time.
        let stay = Scene.run(&e, Array(repeating: 50, count: 200), start: 100)
        #expect(stay == ["220:arrive:office"])
    }

    @Test func triggersFilterButStateStillMoves() {
        var e = engine([Scene.reminder("in", trigger: .arrive), Scene.reminder("out", trigger: .leave)])
        _ = Scene.run(&e, [900, 900])
        #expect(Scene.run(&e, [10, 10], start: 2) == ["3:arrive:in"])
        #expect(Scene.run(&e, [900, 900], start: 4) == ["5:leave:out"])
        #expect(e.presence(of: "in") == .outside)
    }

    @Test func confirmationsAreConfigurable() {
        var once = engine(settings: EngineSettings(confirmations: 1))
        _ = Scene.run(&once, [900])
        #expect(Scene.run(&once, [10], start: 1) == ["1:arrive:office"])
        var thrice = engine(settings: EngineSettings(confirmations: 3))
        _ = Scene.run(&thrice, [900, 900, 900])
        #expect(Scene.run(&thrice, [10, 10, 900, 10, 10, 10], start: 3) == ["8:arrive:office"])
    }

    @Test func disabledRemindersAreNotTracked() {
        var off = Scene.reminder("off")
        off.isEnabled = false
        let e = engine([off, Scene.reminder("on")])
        #expect(e.reminders.map(\.id) == ["on"])
        #expect(e.presence(of: "off") == nil)
    }

    @Test func eventsCarryTheFixAndItsDistance() throws {
        var e = engine()
        _ = Scene.run(&e, [900, 900])
        _ = e.process(Scene.fix(40, at: 2))
        let event = try #require(e.process(Scene.fix(30, at: 3)).events.first)
        #expect(abs(event.distance - 30) < 0.01)
        #expect(event.reminder.id == "office")
        #expect(!event.isInitial)
        #expect(event.fix == Scene.fix(30, at: 3))
    }

    @Test func untimedFixesStillConfirmSides() {
        var e = engine()
        var kinds: [EventKind] = []
        for metres in [900.0, 900, 10, 10] {
            var fix = Scene.fix(metres, at: 0)
            fix.time = nil
            kinds += e.process(fix).events.map(\.kind)
        }
        #expect(kinds == [.arrive])
        #expect(e.lastFixTime == nil)
    }

    @Test func manyFarFencesDoNotDisturbNearOnes() {
        let far = (0..<500).map { Scene.reminder("far\($0)", at: Coordinate(latitude: 10 + Double($0) * 0.01, longitude: 20)) }
        var e = engine(far + [Scene.reminder()])
        _ = Scene.run(&e, [900, 900])
        #expect(Scene.run(&e, [10, 10], start: 2) == ["3:arrive:office"])
        #expect(e.presence(of: "far3") == .outside)
    }
}

/// A reloaded config keeps what the engine knew about unchanged reminders.
struct ReloadTests {
    @Test func unchangedRemindersKeepTheirStateAndEditedOnesStartOver() {
        var old = GeofenceEngine(reminders: [Scene.reminder("same"), Scene.reminder("moved"), Scene.reminder("resized")])
        _ = Scene.run(&old, [10, 10])
        #expect(old.presence(of: "same") == .inside)
        var moved = Scene.reminder("moved", at: Coordinate(latitude: 38.73, longitude: -9.1094))
        moved.title = "Renamed titles do not matter"
        let new = GeofenceEngine(
            reminders: [Scene.reminder("same"), moved, Scene.reminder("resized", radius: 300), Scene.reminder("added")],
            settings: EngineSettings(), carryingStateFrom: old)
        #expect(new.presence(of: "same") == .inside)
        #expect(new.presence(of: "moved") == .unknown)
        #expect(new.presence(of: "resized") == .unknown)
        #expect(new.presence(of: "added") == .unknown)
        #expect(new.lastFixTime == old.lastFixTime)
        #expect(new.keptStates == 1)
    }

    @Test func aKeptInsideStateStillLeavesAfterReload() {
        var old = GeofenceEngine(reminders: [Scene.reminder()])
        _ = Scene.run(&old, [10, 10])
        var new = GeofenceEngine(reminders: [Scene.reminder()], settings: EngineSettings(), carryingStateFrom: old)
        #expect(Scene.run(&new, [900, 900], start: 2) == ["3:leave:office"])
        // A fix older than the last one before the reload is still refused.
        #expect(new.process(Scene.fix(10, at: 1)) == .rejected(.outOfOrder))
    }
}
