// Wake-ups, CPU and memory of `geoalarm run` against gpsd's own gpxlogger, both connected to the
// same private gpsd in the same run: at 1 and 10 fixes a second (gpsfake pacing the demo walk),
// with gpsd down, and with gpsd up but no receiver. A wake-up is a context switch of any thread
// (voluntary or not), read from /proc; CPU time from each thread's schedstat.
// Usage: Wakeups GEOALARM [GEOALARM_STATIC]
import Foundation
import GeoAlarmTestSupport
import Workload

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: Wakeups GEOALARM [GEOALARM_STATIC]\n".utf8))
    exit(2)
}
let geoalarm = URL(fileURLWithPath: arguments[1])
let staticGeoalarm = arguments.count > 2 ? URL(fileURLWithPath: arguments[2]) : nil
let gpxlogger = URL(fileURLWithPath: "/usr/bin/gpxlogger")
let walk = repository.appendingPathComponent("config/demo/walk.nmea").path
let config = try writeWorkFile("reminders-100.toml", configText(try hundredReminders()))

/// What /proc says of a process: context switches and CPU nanoseconds summed over its threads.
struct Sample {
    var switches = 0
    var cpuNanoseconds = 0

    init(_ pid: pid_t) {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            for line in status.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    switches += Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            let schedstat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            cpuNanoseconds += Int(schedstat.split(separator: " ").first ?? "0") ?? 0
        }
    }
}

/// Resident and private memory of a process, in MB, and whether ICU is mapped into it.
func memory(_ pid: pid_t) -> (resident: Double, privateMB: Double, icu: Bool) {
    let rollup = (try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)) ?? ""
    func kilobytes(_ key: String) -> Double {
        rollup.split(separator: "\n").first { $0.hasPrefix(key + ":") }
            .flatMap { Double($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
    }
    let maps = (try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)) ?? ""
    return (kilobytes("Rss") / 1024, (kilobytes("Private_Clean") + kilobytes("Private_Dirty")) / 1024,
            maps.contains("libicu") || maps.contains("FoundationInternationalization"))
}

/// Starts a fresh agent (or gpxlogger) on `port`.
func start(_ program: URL, port: Int) throws -> Background {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("wakeups-\(UUID().uuidString)/state.sqlite").path
    if program == gpxlogger {
        return try Background(["-e", "sockets", "-r", "-f", "/dev/null", "localhost:\(port)"], executable: program)
    }
    return try Background(
        ["run", "-c", config, "--headless", "--state", state, "--gpsd", "localhost:\(port)"], executable: program)
}

/// Runs `programs` for `settle` seconds, then measures them over `window` seconds.
func measure(_ programs: [Background], settle: Double, window: Double) -> [(Sample, Sample)] {
    Thread.sleep(forTimeInterval: settle)
    let before = programs.map { Sample($0.pid) }
    Thread.sleep(forTimeInterval: window)
    let after = programs.map { Sample($0.pid) }
    return Array(zip(before, after))
}

func stopAll(_ programs: [Background]) {
    for program in programs {
        program.signal(SIGTERM)
        _ = program.exitStatus(within: 10)
        program.stop()
    }
}

var rows: [String] = []
var figures: [String: Double] = [:]

/// 1 or 10 fixes a second: gpsfake writes the walk's three sentences an epoch at that pace.
for rate in [1.0, 10.0] {
    let gpsd = try GPSFake()
    try gpsd.play(walk, pace: 1 / (3 * rate))
    let programs = [try start(geoalarm, port: gpsd.port), try start(gpxlogger, port: gpsd.port)]
    let window = rate == 1 ? 30.0 : 20.0
    let results = measure(programs, settle: 5, window: window)
    let fixes = rate * window
    for (name, (before, after)) in zip(["geoalarm", "gpxlogger"], results) {
        let perFix = Double(after.switches - before.switches) / fixes
        let cpuPerHour = Double(after.cpuNanoseconds - before.cpuNanoseconds) / 1e9 * 3600 / window
        figures["\(name) \(Int(rate))"] = perFix
        rows.append(String(format: "| %@ | %.0f fix/s | %.2f wake-ups per fix | %.2f CPU s per hour |", name, rate, perFix, cpuPerHour))
    }
    if rate == 1 {
        for (name, program) in zip(["geoalarm", "gpxlogger"], programs) {
            let (resident, privateMB, icu) = memory(program.pid)
            rows.append(String(format: "| %@ | memory at 1 fix/s | %.1f MB resident | %.1f MB private%@ |",
                               name, resident, privateMB, icu ? ", ICU mapped" : ""))
        }
    }
    stopAll(programs)
    gpsd.stop()
}

/// Idle: gpsd down (nothing listens on the port), then gpsd up with no receiver.
let closedPort = try GPSFake().port
let downPrograms = [try start(geoalarm, port: closedPort), try start(gpxlogger, port: closedPort)]
let down = measure(downPrograms, settle: 5, window: 120)
for (name, (before, after)) in zip(["geoalarm", "gpxlogger"], down) {
    let alive = downPrograms[name == "geoalarm" ? 0 : 1].isRunning
    rows.append(String(format: "| %@ | gpsd down | %.1f wake-ups per minute%@ | |", name,
                       Double(after.switches - before.switches) / 2, alive ? "" : " (it exited)"))
}
stopAll(downPrograms)

let idlePort = try GPSFake().port
let gpsdAlone = try Background(["-N", "-S", String(idlePort)], executable: URL(fileURLWithPath: "/usr/sbin/gpsd"))
Thread.sleep(forTimeInterval: 1)
var idlePrograms = [try start(geoalarm, port: idlePort), try start(gpxlogger, port: idlePort)]
if let staticGeoalarm { idlePrograms.append(try start(staticGeoalarm, port: idlePort)) }
let idle = measure(idlePrograms, settle: 5, window: 60)
for (name, (before, after)) in zip(["geoalarm", "gpxlogger", "geoalarm (static stdlib)"], idle) {
    rows.append(String(format: "| %@ | gpsd up, no receiver | %.1f wake-ups per minute | |", name, Double(after.switches - before.switches)))
}
for (name, program) in zip(["geoalarm", "gpxlogger", "geoalarm (static stdlib)"], idlePrograms) {
    let (resident, privateMB, icu) = memory(program.pid)
    rows.append(String(format: "| %@ | memory, connected and idle | %.1f MB resident | %.1f MB private%@ |",
                       name, resident, privateMB, icu ? ", ICU mapped" : ""))
}
stopAll(idlePrograms)
gpsdAlone.signal(SIGTERM)
_ = gpsdAlone.exitStatus(within: 5)
gpsdAlone.stop()

print("wake-ups (context switches of all threads), CPU and memory: geoalarm (100 reminders) against gpxlogger on the same gpsd")
print("| program | case | figure | |")
print("| --- | --- | --- | --- |")
for row in rows { print(row) }
for rate in [1, 10] {
    let ours = figures["geoalarm \(rate)"] ?? .nan, theirs = figures["gpxlogger \(rate)"] ?? .nan
    print(String(format: "at %d fix/s: geoalarm / gpxlogger = %.2fx; goal at most 2 wake-ups per fix: %@",
                 rate, ours / theirs, ours <= 2 ? "met" : "NOT met"))
}
