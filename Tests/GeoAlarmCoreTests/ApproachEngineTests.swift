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
        #expect(engine.shownState(lifecycles: [:]).proximities["home"]?.direction == .towards)
    }

    /// A fix's changes name their reminders through the engine's table of names: each one the
    /// engine gives out, at a reading or for an approach between readings, must name the
    /// reminder it was read for, and equal a change made of the same values (and not one of
    /// another fence).
    @Test func everyProximityChangeNamesItsOwnReminder() {
        let places = (1...5).map { number -> Reminder in
            let step = Double(number)
            let center = Coordinate(latitude: Scene.centre.latitude + step * 0.02, longitude: Scene.centre.longitude - step * 0.01)
            return Scene.reminder("place\(number)", radius: 50 * step, hysteresis: step, at: center)
        }
        let reminders = [Self.home()] + places
        let byID: [String: Reminder] = Dictionary(uniqueKeysWithValues: reminders.map { ($0.id, $0) })
        var engine = GeofenceEngine(reminders: reminders)
        var named: Set<String> = []
        for fix in Self.driveIn(seconds: 300) {
            for change in engine.process(fix).proximities {
                guard let reminder = byID[change.reminderID] else {
                    Issue.record("a change names no reminder: \(change.reminderID)")
                    continue
                }
                named.insert(reminder.id)
                #expect(change.fenceKey == reminder.fenceKey)
                let same = ProximityChange(
                    reminderID: reminder.id, fenceKey: reminder.fenceKey, proximity: change.proximity, time: change.time)
                #expect(change == same)
                let other = ProximityChange(
                    reminderID: reminder.id, fenceKey: reminder.fenceKey + "0", proximity: change.proximity, time: change.time)
                #expect(change != other)
            }
        }
        #expect(named == Set(byID.keys))
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

    /// The proximities the state shows (`status`, Home Assistant) against brute force, each read
    /// afresh at the last fix: every one is within what the engine documents (see
    /// `ApproachTracker`): one noticeable change (50 m or 5 %), plus the way travelled since it
    /// was last read, which is the last reading for every reminder of a usual config and for a
    /// place that reading's fix was inside, and at most `ceil(count / 8)` readings back for the
    /// others among more than a thousand.
    @Test(arguments: [(UInt64(1), 300), (2, 3_000), (3, 3_000)])
    func theProximitiesShownAreTheBruteForceOnesWithinTheirStaleness(seed: UInt64, count: Int) throws {
        var random = SplitMix(seed: seed)
        let start = Coordinate(latitude: 47, longitude: 8)
        let degreesPerMetre = 1 / 111_195.0
        // A walk at walking to driving pace, one fix a second, for longer than a whole turn takes.
        let turns = (count + 7) / 8
        var position = start
        var heading = random.double(in: 0...(2 * .pi))
        let fixes = (0..<(turns + 30) * 10).map { second -> Fix in
            heading += random.double(in: -0.3...0.3)
            let step = random.double(in: 0...20) * degreesPerMetre
            position.latitude += step * cos(heading)
            position.longitude += step * sin(heading) / cos(position.latitude * .pi / 180)
            return Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: position, horizontalError: 5)
        }
        // Reminders 100-300 m wide: 20 around the fixes of the walk's last minutes (one of which
        // a reading reads), the rest scattered over 40 x 40 km around its start.
        let reminders = (0..<count).map { index -> Reminder in
            let near = index < 20 ? fixes[fixes.count - 1 - index].coordinate : start
            let reach = index < 20 ? 50.0 : 20_000
            let centre = Coordinate(
                latitude: near.latitude + random.double(in: -reach...reach) * degreesPerMetre,
                longitude: near.longitude + random.double(in: -reach...reach) * degreesPerMetre / cos(near.latitude * .pi / 180))
            return Reminder(id: "r\(index)", title: "R\(index)", geometry: .circle(center: centre, radius: random.double(in: 100...300)))
        }
        var engine = GeofenceEngine(reminders: reminders)
        for fix in fixes { _ = engine.process(fix) }
        let shown = engine.shownState(lifecycles: [:]).proximities
        // The readings, as documented: the first dated fix, then each 10 s of fix time on.
        var readings: [Int] = []
        for (index, fix) in fixes.enumerated() {
            if let last = readings.last, fix.time!.timeIntervalSince(fixes[last].time!) < 10 { continue }
            readings.append(index)
        }
        /// Metres walked from the fix at `index` to the last.
        func walked(since index: Int) -> Double {
            zip(fixes[index...], fixes[(index + 1)...]).reduce(0) { $0 + Haversine.distance($1.0.coordinate, $1.1.coordinate) }
        }
        let last = try #require(fixes.last).coordinate
        let lastReading = try #require(readings.last)
        let sinceLastReading = walked(since: lastReading)
        let sinceATurn = walked(since: readings[max(0, readings.count - 1 - turns)])
        var checked = (near: 0, far: 0)
        for reminder in reminders {
            let proximity = try #require(shown[reminder.id], "\(reminder.id) shows no proximity")
            let truth = max(0, reminder.distance(from: last) - reminder.geometry.circumradius)
            let isNear = count <= 1_000 || reminder.distance(from: fixes[lastReading].coordinate) <= reminder.geometry.circumradius
            let stale = isNear ? sinceLastReading : sinceATurn
            let bound = max(50, proximity.distance / 20) + stale + truth * 0.005 + 1
            #expect(abs(proximity.distance - truth) <= bound, "\(reminder.id): shows \(proximity.distance) m, is \(truth) m, bound \(bound) m")
            if isNear { checked.near += 1 } else { checked.far += 1 }
        }
        #expect(checked.near > 0)
    }
}
