// How many updates GeoClue gives geoalarm on a replayed commute when geoalarm asks only for
// those that can matter (the distance threshold from the nearest line of a fence, the accuracy
// level from the smallest fence near), against thresholds of 0 (every update), in the same run;
// and whether the events are the same.
//
// GeoClue's filter is modelled as GeoClue 2.6 applies it to a client (gclue-service-client's
// distance check): a location is given when it lies at least DistanceThreshold metres from the
// last one given. Every update given wakes the agent once (one D-Bus signal, one Location read):
// wake-ups are updates. The time at each level says how long GeoClue would keep the receiver
// (exact), Wi-Fi lookups (street) or neither (neighbourhood) on.
//
//   GeoClueUpdates [GPX]   (default: ../shared/testdata/gpx/around-visnjan-with-car.gpx)
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmGeoClue
import GeoAlarmReplay
import GeoAlarmSystem
import Glibc
import Workload

let track = CommandLine.arguments.dropFirst().first
    ?? repository.deletingLastPathComponent().appendingPathComponent("shared/testdata/gpx/around-visnjan-with-car.gpx").path

var read: [Fix] = []
for await report in TrackSource(path: track).reports() {
    if case .fixes(let some, _) = report { read += some.filter { $0.time != nil } }
}
let fixes = read
guard fixes.count > 10, let start = fixes.first?.time, let end = fixes.last?.time else {
    print("GeoClueUpdates: \(track) holds no timed track")
    exit(1)
}
let hours = end.timeIntervalSince(start) / 3600

// Places along the way, as a commute's reminders: at each sixth of the track, 100 m wide but
// for a 30 m one (a shop's door) and a 300 m one (a quarter).
let radii = [100.0, 30, 100, 300, 100]
let reminders = radii.enumerated().map { index, radius in
    let at = fixes[fixes.count * (index + 1) / (radii.count + 1)].coordinate
    return Reminder(id: "place\(index)", title: "Place \(index)", geometry: .circle(center: at, radius: radius), hysteresis: 25, trigger: .both)
}

struct Run {
    var updates = 0
    var events: [String] = []
    var secondsAt: [GeoClueAccuracy: Double] = [:]
}

/// The fixes GeoClue would give with `asking` (false: thresholds of 0, exact), through an engine.
func replay(asking: Bool, fixes: [Fix], reminders: [Reminder]) -> Run {
    var engine = GeofenceEngine(reminders: reminders)
    var run = Run()
    var last: (coordinate: Coordinate, time: Date)?
    var request = GeoClueRequest.everyUpdate
    for fix in fixes {
        if let last, Haversine.distance(last.coordinate, fix.coordinate) < Double(request.distanceThreshold) { continue }
        if let last { run.secondsAt[request.accuracy, default: 0] += fix.time!.timeIntervalSince(last.time) }
        last = (fix.coordinate, fix.time!)
        run.updates += 1
        for event in engine.process(fix).events { run.events.append("\(event.kind.rawValue) \(event.reminder.id)") }
        if asking { request = GeoClueRequest(need: engine.locationNeed(at: fix)) }
    }
    return run
}

let every = replay(asking: false, fixes: fixes, reminders: reminders)
let asked = replay(asking: true, fixes: fixes, reminders: reminders)
func perHour(_ count: Int) -> String { String(format: "%.0f", Double(count) / hours) }
func share(_ run: Run, _ level: GeoClueAccuracy) -> String {
    String(format: "%.0f%%", 100 * (run.secondsAt[level] ?? 0) / max(1, run.secondsAt.values.reduce(0, +)))
}
print("GeoClueUpdates: \(PathParts.split(track).name), \(fixes.count) fixes over \(String(format: "%.2f", hours)) h, \(reminders.count) reminders")
print("  thresholds of 0:   \(every.updates) updates (\(perHour(every.updates))/h), \(every.events.count) events")
print("  geoalarm's asks:   \(asked.updates) updates (\(perHour(asked.updates))/h), \(asked.events.count) events")
print(String(format: "  updates and wake-ups: %.3fx of thresholds of 0 (%.1fx fewer)", Double(asked.updates) / Double(every.updates),
             Double(every.updates) / Double(max(1, asked.updates))))
print("  time at each level: exact \(share(asked, .exact)), street \(share(asked, .street)), neighbourhood \(share(asked, .neighborhood))")
print("  same events: \(asked.events == every.events ? "yes" : "NO: \(asked.events) against \(every.events)")")
