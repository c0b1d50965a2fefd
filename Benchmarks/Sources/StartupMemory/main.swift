// Startup time to ready and peak resident memory of the real agent (`geoalarm run`, release
// build, headless, state in a new SQLite file), with 100 reminders and with a collection of
// 1M places. "Ready" is the log line saying what it watches, after config, collection file,
// state and engine are loaded. gpsfake then plays the demo walk into it, and the peak
// (VmHWM) is read once the walk is over. The baseline of the same run has no reminders.
import Foundation
import GeoAlarmTestSupport
import Workload

let walkLog = repository.appendingPathComponent("config/demo/walk.nmea").path

/// A million places scattered over mainland Portugal, 50-500 m, as a CSV, a GeoJSON and a GPX
/// collection (GPX has no radius: its places take 100 m); returns a config for each.
func millionPlacesConfigs() throws -> (csv: String, geojson: String, gpx: String) {
    var random = SplitMix(seed: 7)
    var csv = "name,lat,lon,radius\n", geojson = "{\"type\": \"FeatureCollection\", \"features\": [\n"
    var gpx = "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n"
    for index in 0..<1_000_000 {
        let latitude = (Double.random(in: 37...42, using: &random) * 1e6).rounded() / 1e6
        let longitude = (Double.random(in: -9.5 ... -6.2, using: &random) * 1e6).rounded() / 1e6
        let radius = Int.random(in: 50...500, using: &random)
        csv += "Place \(index),\(latitude),\(longitude),\(radius)\n"
        geojson += (index == 0 ? "" : ",\n") + "{\"type\": \"Feature\", \"geometry\": {\"type\": \"Point\", \"coordinates\": "
            + "[\(longitude), \(latitude)]}, \"properties\": {\"name\": \"Place \(index)\", \"radius\": \(radius)}}"
        gpx += "<wpt lat=\"\(latitude)\" lon=\"\(longitude)\"><name>Place \(index)</name></wpt>\n"
    }
    try writeWorkFile("places-1m.csv", csv)
    try writeWorkFile("places-1m.geojson", geojson + "\n]}\n")
    try writeWorkFile("places-1m.gpx", gpx + "</gpx>\n")
    func config(_ file: String) throws -> String {
        try writeWorkFile("collection-1m-\(file.split(separator: ".").last!).toml", "[[collection]]\nfile = \"\(file)\"\ntitle = \"Near {name}\"\n")
    }
    return (try config("places-1m.csv"), try config("places-1m.geojson"), try config("places-1m.gpx"))
}

/// Starts the agent on `config` against a gpsfake playing the walk; returns seconds to ready,
/// resident memory at ready, the peak after the walk, and the private (anonymous) part of the
/// resident memory then, in MB.
func measure(config: String) throws -> (ready: Double, readyMB: Double, peakMB: Double, privateMB: Double) {
    let gpsd = try GPSFake()
    try gpsd.play(walkLog, pace: 0.002)
    let stateDirectory = "\(workDirectory)/state-\(UUID().uuidString)"
    let state = "\(stateDirectory)/state.sqlite"
    defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
    let start = Date()
    let agent = try Background(
        ["run", "--config", config, "--gpsd", "127.0.0.1:\(gpsd.port)", "--headless", "--state", state], executable: releaseBinary)
    defer { agent.stop() }
    // Polled every 2 ms (Background.waitUntil's 50 ms would round start-up to its steps).
    let deadline = start.addingTimeInterval(120)
    while !agent.stderr.contains("watching ") {
        guard Date() < deadline, agent.isRunning else {
            FileHandle.standardError.write(Data("the agent did not get ready:\n\(agent.stderr)\n".utf8))
            exit(1)
        }
        usleep(2_000)
    }
    let ready = Date().timeIntervalSince(start)
    let readyMB = memory(of: agent.pid, "VmRSS")
    gpsd.waitForEnd()
    return (ready, readyMB, memory(of: agent.pid, "VmHWM"), memory(of: agent.pid, "RssAnon"))
}

/// A memory figure of /proc/PID/status, in MB.
func memory(of pid: pid_t, _ field: String) -> Double {
    let status = procFile("/proc/\(pid)/status")
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "") ?? .nan) / 1024
}

let empty = try writeWorkFile("empty.toml", "# no reminders\n")
let millions = try millionPlacesConfigs()
let cases = [
    ("baseline: no reminders", empty),
    ("100 reminders", try writeWorkFile("reminders-100.toml", configText(try hundredReminders()))),
    ("1M collection places (CSV)", millions.csv),
    ("1M collection places (GeoJSON)", millions.geojson),
    ("1M collection places (GPX)", millions.gpx),
]
print("agent start-up to ready and memory (geoalarm run, release), median of 3 runs (low-high)")
print("| config | ready, s | ready / baseline | RSS at ready, MB | peak RSS after the walk, MB | peak / baseline | private (RssAnon) after the walk, MB |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
var base: (ready: Double, peak: Double)?
for (name, config) in cases {
    let runs = try (0..<3).map { _ in try measure(config: config) }
    let ready = spread(runs.map(\.ready)), resident = spread(runs.map(\.readyMB)), peak = spread(runs.map(\.peakMB))
    let privately = spread(runs.map(\.privateMB))
    if base == nil { base = (ready.median, peak.median) }
    print(String(
        format: "| %@ | %.3f (%.3f-%.3f) | %.1fx | %.1f | %.1f (%.1f-%.1f) | %.1fx | %.1f |", name, ready.median, ready.low,
        ready.high, ready.median / base!.ready, resident.median, peak.median, peak.low, peak.high, peak.median / base!.peak,
        privately.median))
}
print("goal: a live agent with 100 reminders under 25 MB resident; 1M places loaded well under 2 s")

print("")
print("loading a collection of 1M places by format (geoalarm check: read, validate), seconds, median of 3 runs (low-high)")
print("| file | seconds | ratio to an empty config |")
print("| --- | ---: | ---: |")
let emptySeconds = spread(try (0..<3).map { _ in try secondsToRun(releaseBinary, ["check", "--config", empty]) }).median
print(String(format: "| empty config (baseline) | %.3f | 1.0x |", emptySeconds))
for (name, config) in [("CSV", millions.csv), ("GeoJSON", millions.geojson), ("GPX waypoints", millions.gpx)] {
    let seconds = spread(try (0..<3).map { _ in try secondsToRun(releaseBinary, ["check", "--config", config]) })
    print(String(format: "| %@ | %.3f (%.3f-%.3f) | %.0fx |", name, seconds.median, seconds.low, seconds.high, seconds.median / emptySeconds))
}
