// How long `geoalarm run` takes to end after SIGTERM, whatever it waits on, against gpsd's own
// gpxlogger connected to the same gpsd. The tests check that the agent stops cleanly; how fast
// it stops is measured here, never asserted there.
import Foundation
import GeoAlarmTestSupport
import Workload

let geoalarm = CommandLine.arguments.count > 1 ? URL(fileURLWithPath: CommandLine.arguments[1]) : releaseBinary
let gpxlogger = URL(fileURLWithPath: "/usr/bin/gpxlogger")
let config = repository.appendingPathComponent("config/demo.toml").path
let rounds = 10

/// Starts `program ARGUMENTS`, waits until `ready` says it is in the state to measure, sends
/// SIGTERM, and returns how long it took to end; nil when it never got ready or never ended.
func timeToStop(_ program: URL, _ arguments: [String], ready: (Background) -> Bool) throws -> Duration? {
    let process = try Background(arguments, executable: program)
    guard ready(process) else { return nil }
    let start = ContinuousClock.now
    process.signal(SIGTERM)
    guard process.exitStatus(within: 30) != nil else { return nil }
    return ContinuousClock.now - start
}

func agentArguments(port: Int) -> [String] {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("stop-\(UUID().uuidString)/state.sqlite").path
    return ["run", "-c", config, "--headless", "--state", state, "--gpsd", "localhost:\(port)"]
}

/// Milliseconds, median and largest, of `rounds` measurements.
func summary(_ name: String, _ state: String, _ measure: () throws -> Duration?) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<rounds {
        if let time = try measure() { times.append(seconds(time) * 1000) }
    }
    times.sort()
    guard !times.isEmpty else {
        print("| \(name) | \(state) | no measurement | |")
        return .nan
    }
    print(String(format: "| %@ | %@ | %.1f | %.1f | %d |", name, state, times[times.count / 2], times.last!, times.count))
    return times[times.count / 2]
}

print("time from SIGTERM to the process's end, in milliseconds (\(rounds) rounds each)")
print("| program | waiting on | median | max | rounds |")
print("| --- | --- | ---: | ---: | ---: |")

// Connected to a gpsd that reports once a second: both wait on its socket between reports.
let gpsd = try GPSFake()
try gpsd.play(repository.appendingPathComponent("config/demo/walk.nmea").path, pace: 1.0 / 3)
let agentConnected = try summary("geoalarm", "gpsd's socket (1 fix/s), a timer set") {
    try timeToStop(geoalarm, agentArguments(port: gpsd.port)) { $0.waitUntil { $0.stderr.contains("connected to gpsd") } }
}
let peerConnected = try summary("gpxlogger", "gpsd's socket (1 fix/s)") {
    let watching = gpsd.watchers
    return try timeToStop(gpxlogger, ["-e", "sockets", "-f", "/dev/null", "localhost:\(gpsd.port)"]) { _ in
        gpsd.fake?.waitUntil { _ in gpsd.watchers > watching } ?? false
    }
}
gpsd.stop()

// gpsd away: the agent waits out its back-off (gpxlogger gives up at once, so has no figure).
let nothingListens = try GPSFake()
let agentAway = try summary("geoalarm", "its back-off, gpsd away") {
    try timeToStop(geoalarm, agentArguments(port: nothingListens.port)) { $0.waitUntil { $0.stderr.contains("unavailable") } }
}
print(String(format: "ratio geoalarm / gpxlogger, median, connected: %.2fx; geoalarm backing off / connected: %.2fx",
             agentConnected / peerConnected, agentAway / agentConnected))
