// The engine's cost per fix with 1, 100, 10k and 1M fences: the grid index (what geoalarm
// runs) against a brute-force scan of every fence (the baseline, measured in the same run).
// Fences are scattered over mainland Portugal (50-500 m), with up to 40 on the track's path;
// the track is a seeded random walk through the same area, one fix a second at
// walking-to-driving speeds. Both sides must report the same events, or the run fails.
import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import Workload

var random = SplitMix(seed: 20_261_122)  // the same fences and track on every run

/// `count` fences: up to 40 small ones on the path of the track's first `reach` fixes (so that
/// it crosses some), the rest scattered.
func fences(_ count: Int, along track: [Fix], reach: Int, _ random: inout SplitMix) -> [Reminder] {
    let onPath = min(count, 40)
    return (0..<count).map { index in
        if index < onPath {
            let fix = track[min(reach - 1, 2 + index * max(1, (reach - 2) / onPath))]
            return Reminder(
                id: "f\(index)", title: "Fence \(index)",
                geometry: .circle(center: fix.coordinate, radius: Double.random(in: 5...20, using: &random)),
                hysteresis: 5, trigger: .both)
        }
        return Reminder(
            id: "f\(index)", title: "Fence \(index)",
            geometry: .circle(
                center: Coordinate(latitude: Double.random(in: 37...42, using: &random), longitude: Double.random(in: -9.5 ... -6.2, using: &random)),
                radius: Double.random(in: 50...500, using: &random)),
            hysteresis: 25, trigger: .both)
    }
}

func track(_ count: Int, _ random: inout SplitMix) -> [Fix] {
    var position = Coordinate(latitude: 38.72, longitude: -9.14)
    var heading = 0.3
    return (0..<count).map { second in
        heading += Double.random(in: -0.2...0.2, using: &random)
        let step = Double.random(in: 1...30, using: &random) / Haversine.earthRadius * 180 / .pi
        position.latitude = min(42, max(37, position.latitude + step * cos(heading)))
        position.longitude = min(-6.2, max(-9.5, position.longitude + step * sin(heading) / cos(position.latitude * .pi / 180)))
        return Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: position, horizontalError: 5)
    }
}

/// Nanoseconds per fix over all fixes but the first, in each of `rounds` rounds. `body`
/// processes the first fix untimed, then calls `timed` around the rest; it returns the events
/// of the timed part.
func nanosecondsPerFix(_ fixes: [Fix], rounds: Int, _ body: ([Fix], (() -> Int) -> Int) -> Int) -> ([Double], Int) {
    var samples: [Double] = []
    var events = 0
    for _ in 0..<rounds {
        var elapsed = Duration.zero
        events = body(fixes) { work in
            let start = ContinuousClock.now
            defer { elapsed = ContinuousClock.now - start }
            return work()
        }
        samples.append(seconds(elapsed) * 1e9 / Double(fixes.count - 1))
    }
    return (samples, events)
}

/// An engine for `reminders` settled where `track` starts: two fixes there before it, 10 s
/// apart, so that the second reads proximities. Made anew for each round, not copied from one
/// engine: a copy shares the engine's million trackers until its first write copies them, and
/// that write need not come with the first fix (a fix that changes no tracker writes none).
func settledEngine(_ reminders: [Reminder], before track: [Fix], trackedDevice: Bool = false) -> GeofenceEngine {
    var engine = GeofenceEngine(reminders: reminders, settings: EngineSettings())
    if trackedDevice { engine = engine.copyForTrackedDevice(restoring: [:]) }
    for fix in warmUp(before: track) { _ = engine.process(fix) }
    return engine
}

/// Two fixes where `track` starts, 20 s and 10 s before it: what settles an engine, and the
/// brute-force scan's trackers, before the timed fixes.
func warmUp(before track: [Fix]) -> [Fix] {
    [-20.0, -10.0].map { offset in
        Fix(time: track[0].time!.addingTimeInterval(offset), coordinate: track[0].coordinate, horizontalError: 5)
    }
}

print("engine cost per fix, grid index against a brute-force scan, nanoseconds, median of 5 rounds (low-high)")
print("(index: as `run` has it, proximity read; crossings only: the same engine reading no proximity, as a tracked device's)")
print("| fences | index ns/fix | crossings only ns/fix | brute force ns/fix | brute / index | events, index | events, brute |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for count in [1, 100, 10_000, 1_000_000] {
    let fixes = track(count >= 1_000_000 ? 2_000 : 20_000, &random)
    // Brute force over 1M fences is slow: it gets a prefix of the track, and so does the agreement check.
    let common = Array(fixes.prefix(count >= 1_000_000 ? 20 : (count >= 10_000 ? 500 : fixes.count)))
    let reminders = fences(count, along: fixes, reach: common.count, &random)
    // Both start settled (``warmUp(before:)``).
    var settledTrackers = Array(repeating: FenceTracker(), count: reminders.count)
    for fix in warmUp(before: fixes) {
        for (slot, reminder) in reminders.enumerated() {
            _ = settledTrackers[slot].observe(
                reminder.geometry.evidence(at: fix.coordinate, hysteresis: reminder.hysteresis), at: fix.time,
                dwell: reminder.dwell, confirmations: 2)
        }
    }
    func indexRun(_ fixes: [Fix], _ timed: (() -> Int) -> Int) -> Int {
        run(trackedDevice: false, fixes, timed)
    }
    // One round on a newly settled engine: as `run` has it, or a tracked device's, which reads no
    // proximity (what crossings alone cost).
    func run(trackedDevice: Bool, _ fixes: [Fix], _ timed: (() -> Int) -> Int) -> Int {
        var engine = settledEngine(reminders, before: fixes, trackedDevice: trackedDevice)
        _ = engine.process(fixes[0])
        return timed { eventCount(processing: fixes.dropFirst(), with: &engine) }
    }
    func bruteRun(_ fixes: [Fix], _ timed: (() -> Int) -> Int) -> Int {
        var trackers = settledTrackers
        func observe(_ fix: Fix) -> Int {
            var events = 0
            for (slot, reminder) in reminders.enumerated() {
                let evidence = reminder.geometry.evidence(at: fix.coordinate, hysteresis: reminder.hysteresis)
                if trackers[slot].observe(evidence, at: fix.time, dwell: reminder.dwell, confirmations: 2) != nil {
                    events += 1
                }
            }
            return events
        }
        _ = observe(fixes[0])
        return timed { fixes.dropFirst().reduce(0) { $0 + observe($1) } }
    }
    let indexed = spread(nanosecondsPerFix(fixes, rounds: 5, indexRun).0)
    let crossings = spread(nanosecondsPerFix(fixes, rounds: 5) { run(trackedDevice: true, $0, $1) }.0)
    let (bruteSamples, bruteEvents) = nanosecondsPerFix(common, rounds: 5, bruteRun)
    let brute = spread(bruteSamples)
    let indexEvents = indexRun(common) { $0() }
    // A ratio under 10 (one fence, where the scan wins) with a decimal: rounded, it read "0x".
    let ratio = brute.median / indexed.median
    let ratioText = String(format: ratio < 10 ? "%.1f" : "%.0f", ratio)
    print(String(
        format: "| %d | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %@x | %d | %d |", count, indexed.median, indexed.low,
        indexed.high, crossings.median, crossings.low, crossings.high, brute.median, brute.low, brute.high, ratioText, indexEvents,
        bruteEvents))
    guard indexEvents == bruteEvents else {
        FileHandle.standardError.write(Data("the index and brute force disagree with \(count) fences\n".utf8))
        exit(1)
    }
}

// Areas beside circles: the same fences, each once as its circle and once as a polygon of 6 to
// 16 vertices around the same centre (inscribed in the circle, its vertices 70-100% of the
// radius out), so that both cost what their shape costs and nothing else differs.
print("")
print("areas beside circles: the same fences as circles and as 6-16-vertex polygons, nanoseconds per fix, median of 5 rounds (low-high)")
print("| fences | circles ns/fix | areas ns/fix | areas / circles | area edges tested per fix | events, circles | events, areas |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for count in [10_000, 1_000_000] {
    let fixes = track(count >= 1_000_000 ? 2_000 : 20_000, &random)
    let circles = fences(count, along: fixes, reach: min(fixes.count, 500), &random)
    let areas = circles.map { circle -> Reminder in
        let vertices = Int.random(in: 6...16, using: &random)
        let ring = (0..<vertices).map { index -> Coordinate in
            let angle = 2 * Double.pi * (Double(index) + Double.random(in: 0...0.4, using: &random)) / Double(vertices)
            let reach = circle.geometry.circumradius * Double.random(in: 0.7...1, using: &random) / Haversine.earthRadius * 180 / .pi
            return Coordinate(
                latitude: circle.center.latitude + reach * sin(angle),
                longitude: circle.center.longitude + reach * cos(angle) / cos(circle.center.latitude * .pi / 180))
        }
        var area = circle
        area.geometry = .area(try! Area(polygons: [[ring]]))
        return area
    }
    func run(_ reminders: [Reminder]) -> (samples: [Double], events: Int, edges: Double) {
        var edges = 0.0
        let (samples, events) = nanosecondsPerFix(fixes, rounds: 5) { fixes, timed in
            var engine = settledEngine(reminders, before: fixes)
            _ = engine.process(fixes[0])
            let before = engine.edgesTested
            let events = timed { eventCount(processing: fixes.dropFirst(), with: &engine) }
            edges = Double(engine.edgesTested - before) / Double(fixes.count - 1)
            return events
        }
        return (samples, events, edges)
    }
    let circleRun = run(circles), areaRun = run(areas)
    let (circleCost, areaCost) = (spread(circleRun.samples), spread(areaRun.samples))
    print(String(
        format: "| %d | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %.2fx | %.1f | %d | %d |", count, circleCost.median, circleCost.low,
        circleCost.high, areaCost.median, areaCost.low, areaCost.high, areaCost.median / circleCost.median, areaRun.edges,
        circleRun.events, areaRun.events))
}

// A map's view (issue 27): the fences whose box meets the view, asked of the engine's grid
// index, against a scan of every fence's box (the baseline); both must find the same fences.
// The million fences above, scattered over mainland Portugal; views of a town (2 km), a region
// (50 km) and the whole country, at most 1,000 fences shown (the map says "zoom in" beyond).
print("")
print("map views over 1,000,000 fences (at most 1,000 shown), milliseconds per view, median of 20 (low-high)")
print("| view | index ms | scan ms | scan / index | in view | shown |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
do {
    let fixes = track(2_000, &random)
    let million = fences(1_000_000, along: fixes, reach: 20, &random)
    let engine = GeofenceEngine(reminders: million, settings: EngineSettings())
    let boxes = million.map { $0.geometry.boundingBox(margin: 0) }
    func view(_ name: String, halfDegrees: Double) {
        let centre = Coordinate(latitude: 38.72, longitude: -9.14)
        let box = GeoBox(south: centre.latitude - halfDegrees, north: centre.latitude + halfDegrees,
                         west: centre.longitude - halfDegrees * 1.3, east: centre.longitude + halfDegrees * 1.3)
        var indexTimes: [Double] = [], scanTimes: [Double] = []
        var shown = 0, inView = 0
        for _ in 0..<20 {
            let start = ContinuousClock.now
            let answer = engine.fences(in: box, limit: 1000)
            indexTimes.append(seconds(ContinuousClock.now - start) * 1000)
            shown = answer.fences.count
            let scanStart = ContinuousClock.now
            let found = boxes.indices.filter { boxes[$0].intersects(box) }
            scanTimes.append(seconds(ContinuousClock.now - scanStart) * 1000)
            inView = found.count
            let expected = found.prefix(1000).map { million[$0].id }
            guard answer.fences.map(\.id) == expected || (!answer.complete && shown == 1000) else {
                fatalError("the index and the scan disagree on \(name): \(shown) shown, \(inView) in view")
            }
        }
        let (index, scan) = (spread(indexTimes), spread(scanTimes))
        print(String(format: "| %@ | %.2f (%.2f-%.2f) | %.1f (%.1f-%.1f) | %.0fx | %d | %d |", name, index.median, index.low,
                     index.high, scan.median, scan.low, scan.high, scan.median / index.median, inView, shown))
    }
    view("town, 2 km", halfDegrees: 0.01)
    view("region, 50 km", halfDegrees: 0.25)
    view("country", halfDegrees: 3)
}
