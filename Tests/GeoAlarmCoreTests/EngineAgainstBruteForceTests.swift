import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import PropertyBased
import Testing

/// The engine (grid index, only nearby and unsettled trackers visited, its packed shapes and
/// area shortcuts) reports exactly what a scan of every fence on every fix reports, asking each
/// fence's ``FenceGeometry`` plainly, on random fences (circles and areas, reminders and a
/// collection, near the poles and the antimeridian too) and random tracks with gaps, jumps and
/// bad fixes.
struct EngineAgainstBruteForceTests {
    @Test func sameEventsAndChangesAsAScanOfEveryFence() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            let scene = RandomScene(&random)
            var engine = GeofenceEngine(reminders: scene.reminders, collections: [scene.collection], settings: scene.settings)
            var scan = FullScan(scene)
            for fix in scene.track(&random) {
                let outcome = engine.process(fix)
                let expected = scan.process(fix)
                #expect(outcome.events.map { "\($0.kind):\($0.reminder.id)" } == expected.events, "seed \(seed)")
                #expect(outcome.changes.map { "\($0.presence):\($0.reminderID)" } == expected.changes, "seed \(seed)")
            }
        }
    }
}

/// A tracked device's engine keeps only the collection places it came near, one shared tracker
/// standing for the rest: it reports exactly what this machine's engine (every tracker kept)
/// reports, restored from the same sides and reloaded the same way.
struct SparseEngineTests {
    @Test func aTrackedDevicesEngineReportsWhatTheFullOneReports() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            let scene = RandomScene(&random)
            var full = GeofenceEngine(reminders: scene.reminders, collections: [scene.collection], settings: scene.settings)
            var sparse = full.copyForTrackedDevice(restoring: [:])
            let track = scene.track(&random)
            for (number, fix) in track.enumerated() {
                if number == track.count / 2 {
                    // A reload that keeps everything: both carry what they knew over.
                    let base = GeofenceEngine(reminders: scene.reminders, collections: [scene.collection], settings: scene.settings)
                    full = base.freshCopy(carryingStateFrom: full)
                    sparse = base.freshCopy(carryingStateFrom: sparse)
                }
                let (mine, theirs) = (sparse.process(fix), full.process(fix))
                #expect(mine.events.map { "\($0.kind):\($0.reminder.id)" } == theirs.events.map { "\($0.kind):\($0.reminder.id)" }, "seed \(seed)")
                #expect(mine.changes.map { "\($0.presence):\($0.reminderID)" } == theirs.changes.map { "\($0.presence):\($0.reminderID)" }, "seed \(seed)")
            }
            let ids = scene.reminders.map(\.id) + scene.collection.places.indices.map { scene.collection.member($0).id }
            #expect(ids.map { sparse.presence(of: $0) } == ids.map { full.presence(of: $0) }, "seed \(seed)")
            #expect(sparse.storedTrackers <= full.storedTrackers + 1, "seed \(seed)")
        }
    }

    /// A tracked device's engine copied from one that has seen fixes (this machine's, its cell
    /// and margins measured) starts undecided all the same: it reports what a copy of a new
    /// engine reports.
    @Test func aCopyOfAnEngineThatSawFixesStartsAfresh() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            let scene = RandomScene(&random)
            let track = scene.track(&random)
            var used = GeofenceEngine(reminders: scene.reminders, collections: [scene.collection], settings: scene.settings)
            for fix in track[..<(track.count / 2)] { _ = used.process(fix) }
            var fromUsed = used.copyForTrackedDevice(restoring: [:])
            var fromNew = GeofenceEngine(reminders: scene.reminders, collections: [scene.collection], settings: scene.settings)
                .copyForTrackedDevice(restoring: [:])
            for fix in track[(track.count / 2)...] {
                let (mine, theirs) = (fromUsed.process(fix), fromNew.process(fix))
                #expect(mine.events.map { "\($0.kind):\($0.reminder.id)" } == theirs.events.map { "\($0.kind):\($0.reminder.id)" }, "seed \(seed)")
                #expect(mine.changes.map { "\($0.presence):\($0.reminderID)" } == theirs.changes.map { "\($0.presence):\($0.reminderID)" }, "seed \(seed)")
            }
        }
    }

    /// A device that stays far from a collection of 20,000 places keeps no tracker for them.
    @Test func farPlacesCostNothing() {
        let places = (0..<20_000).map { CollectionPlace(geometry: .circle(center: Coordinate(latitude: 10 + Double($0) * 0.001, longitude: 10), radius: 50)) }
        let template = Reminder(id: "cameras", title: "{name}", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 50))
        let base = GeofenceEngine(reminders: [], collections: [ReminderCollection(id: "cameras", template: template, places: places)])
        var device = base.copyForTrackedDevice(restoring: [:])
        for second in 0..<10 {
            _ = device.process(Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: Coordinate(latitude: -30, longitude: 100)))
        }
        #expect(device.storedTrackers == 1, "the collection's shared tracker alone")
        #expect(base.storedTrackers == 20_000)
        #expect(device.presence(of: "cameras/1") == .outside)
    }
}

/// Random fences around a few random anchors, which may sit by a pole or on the antimeridian.
private struct RandomScene {
    var reminders: [Reminder] = []
    var collection: ReminderCollection
    var settings: EngineSettings
    var anchors: [Coordinate] = []

    init(_ random: inout SplitMix) {
        for _ in 0..<3 {
            let latitude = random.bool() ? random.double(in: 86...89.9) * (random.bool() ? 1 : -1) : random.double(in: -60...60)
            let longitude = random.bool() ? 179.999 * (random.bool() ? 1 : -1) : random.double(in: -180...180)
            anchors.append(Coordinate(latitude: latitude, longitude: longitude))
        }
        var places: [CollectionPlace] = []
        for number in 0..<Int(random.next() % 40 + 1) {
            let center = Self.near(anchors[number % anchors.count], within: 3000, &random)
            let radius = random.double(in: 20...(random.bool() ? 400 : 20_000))
            // One in three an area: a ring of 3 to 40 points around the centre (the engine's
            // bands begin at 32 edges), where areas may be (up to 85°, across the antimeridian).
            var geometry = FenceGeometry.circle(center: center, radius: radius)
            if random.next() % 3 == 0, let area = Self.ring(around: center, within: radius, &random) {
                geometry = .area(area)
            }
            if random.bool() {
                let trigger = [Trigger.arrive, .leave, .both][Int(random.next() % 3)]
                reminders.append(Reminder(
                    id: "r\(number)", title: "R\(number)", geometry: geometry,
                    hysteresis: random.double(in: 0...50), trigger: trigger))
            } else {
                places.append(CollectionPlace(geometry: geometry, name: "p\(number)"))
            }
        }
        let template = Reminder(
            id: "pois", title: "{name}", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100),
            hysteresis: random.double(in: 0...50), trigger: .both)
        collection = ReminderCollection(id: "pois", template: template, places: places)
        settings = EngineSettings(
            maxError: 60, confirmations: Int(random.next() % 3) + 1, announceInitial: random.bool())
    }

    /// Walks between the anchors: steps of a few to a few hundred metres, jumps to another
    /// anchor, and now and then a fix without a position, too inaccurate, or with an old time.
    func track(_ random: inout SplitMix) -> [Fix] {
        var fixes: [Fix] = []
        var here = anchors[0]
        var second = 0.0
        for _ in 0..<120 {
            if random.next() % 15 == 0 {
                here = Self.near(anchors[Int(random.next() % UInt64(anchors.count))], within: 500, &random)
            } else {
                here = Self.near(here, within: random.bool() ? 30 : 400, &random)
            }
            second += random.next() % 10 == 0 ? -2 : 1
            let roll = random.next() % 20
            fixes.append(Fix(
                time: Date(timeIntervalSince1970: 1_800_000_000 + second), coordinate: here,
                mode: roll == 0 ? .noFix : .threeD, horizontalError: roll == 1 ? 500 : 5))
        }
        return fixes
    }

    /// A ring of random points up to `metres` from `center`, in angular order (so that it may
    /// still cross itself a little, as drawn areas do); nil where `Area` refuses it.
    static func ring(around center: Coordinate, within metres: Double, _ random: inout SplitMix) -> Area? {
        let count = Int(random.next() % 38) + 3
        let bearings = (0..<count).map { _ in random.double(in: 0...(2 * .pi)) }.sorted()
        let points = bearings.map { bearing in
            PropertyTests.destination(
                from: center, angle: random.double(in: (metres / 10)...metres) / Haversine.earthRadius, bearing: bearing)
        }
        return try? Area(polygons: [[points]])
    }

    /// A random point up to `metres` from `point`, wrapped onto valid coordinates.
    static func near(_ point: Coordinate, within metres: Double, _ random: inout SplitMix) -> Coordinate {
        let angle = random.double(in: 0...metres) / Haversine.earthRadius
        let destination = PropertyTests.destination(from: point, angle: angle, bearing: random.double(in: 0...(2 * .pi)))
        return Coordinate(latitude: max(-90, min(90, destination.latitude)), longitude: destination.longitude)
    }
}

/// The reference: every fence's tracker is fed every accepted fix, with the engine's rules for
/// what is announced and what is kept written out plainly.
private struct FullScan {
    struct Fence {
        var id: String
        var geometry: FenceGeometry
        var hysteresis: Double
        var dwell: Double
        var trigger: Trigger
        var isCollectionPlace: Bool
        var tracker = FenceTracker()
    }

    var fences: [Fence]
    let settings: EngineSettings
    var lastTime: Date?

    init(_ scene: RandomScene) {
        func fence(_ reminder: Reminder, isCollectionPlace: Bool) -> Fence {
            Fence(id: reminder.id, geometry: reminder.geometry, hysteresis: reminder.hysteresis, dwell: reminder.dwell,
                  trigger: reminder.trigger, isCollectionPlace: isCollectionPlace)
        }
        fences = scene.reminders.map { fence($0, isCollectionPlace: false) }
        fences += scene.collection.places.indices.map { fence(scene.collection.member($0), isCollectionPlace: true) }
        settings = scene.settings
    }

    /// "kind:id" for each event and "side:id" for each kept change, in fence order.
    mutating func process(_ fix: Fix) -> (events: [String], changes: [String]) {
        guard fix.mode >= .twoD, fix.horizontalError ?? 0 <= settings.maxError ?? .infinity else { return ([], []) }
        if let time = fix.time {
            if let lastTime, time <= lastTime { return ([], []) }
            lastTime = time
        }
        var events: [String] = []
        var changes: [String] = []
        for index in fences.indices {
            let before = fences[index].tracker.presence
            let fence = fences[index]
            guard let after = fences[index].tracker.observe(
                fence.geometry.evidence(at: fix.coordinate, hysteresis: fence.hysteresis),
                at: fix.time, dwell: fence.dwell, confirmations: settings.confirmations)
            else { continue }
            let initial = before == .unknown
            if initial, after == .outside, fences[index].isCollectionPlace { continue }
            changes.append("\(after):\(fences[index].id)")
            let kind: EventKind = after == .inside ? .arrive : .leave
            if (!initial || settings.announceInitial), fences[index].trigger.announces(kind) {
                events.append("\(kind):\(fences[index].id)")
            }
        }
        return (events, changes)
    }
}
