// Wake-ups, CPU and memory of `geoalarm run` against gpsd's own gpxlogger, both connected to the
// same private gpsd in the same run: at 1 and 10 fixes a second (gpsfake pacing the demo walk),
// with gpsd down, and with gpsd up but no receiver. A wake-up is a context switch of any thread
// (voluntary or not), read from /proc; CPU time from each thread's schedstat. With the package's
// binary (the Swift runtime linked in, stripped as the .deb installs it), that one too at 1 fix/s
// and idle, with its memory by mapping and its size: issue 29's goals.
// Usage: Wakeups GEOALARM [PACKAGE_BINARY]
import Foundation
import GeoAlarmTestSupport
import Workload

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: Wakeups GEOALARM [PACKAGE_BINARY]\n".utf8))
    exit(2)
}
let geoalarm = URL(fileURLWithPath: arguments[1])
let packaged = arguments.count > 2 ? URL(fileURLWithPath: arguments[2]) : nil
// A binary written moments ago (strip's output) has its pages dirty in the page cache, and smaps
// counts those as the process's private memory until they are written back.
sync()
let gpxlogger = URL(fileURLWithPath: "/usr/bin/gpxlogger")
let walk = repository.appendingPathComponent("config/demo/walk.nmea").path
let config = try writeWorkFile("reminders-100.toml", configText(try hundredReminders()))

/// Resident and private memory of a process, in MB, and whether ICU is mapped into it.
func memory(_ pid: pid_t) -> (resident: Double, privateMB: Double, icu: Bool) {
    let (resident, privately) = residentAndPrivateMemory(of: pid)
    let maps = procFile("/proc/\(pid)/maps")
    return (resident, privately, maps.contains("libicu") || maps.contains("FoundationInternationalization"))
}

/// Resident and private kilobytes of a process by mapping: each file by name, the heap, the
/// stacks, and anonymous memory; the largest first.
func memoryByMapping(_ pid: pid_t) -> [(name: String, resident: Double, privateKB: Double)] {
    let smaps = procFile("/proc/\(pid)/smaps")
    var totals: [String: (resident: Double, privateKB: Double)] = [:]
    var current = "anonymous"
    for line in smaps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if let first = fields.first, first.contains("-"), fields.count >= 5 {
            let path = fields.count >= 6 ? String(fields[5]) : "anonymous"
            current = path.hasPrefix("/") ? String(path.split(separator: "/").last ?? "") : path
            continue
        }
        guard fields.count >= 2, let kilobytes = Double(fields[1]) else { continue }
        switch fields[0] {
        case "Rss:": totals[current, default: (0, 0)].resident += kilobytes
        case "Private_Clean:", "Private_Dirty:": totals[current, default: (0, 0)].privateKB += kilobytes
        default: break
        }
    }
    return totals.map { ($0.key, $0.value.resident, $0.value.privateKB) }.sorted { $0.resident > $1.resident }
}

/// Starts a fresh agent (or gpxlogger) on `port`, under perf: on gpsd alone, as gpxlogger reads
/// it, unless `source` says otherwise (`auto`, the default of `run`, also turns to GeoClue
/// while gpsd gives no fix).
func start(_ program: URL, port: Int, source: String = "gpsd") throws -> Measured {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("wakeups-\(UUID().uuidString)/state.sqlite").path
    if program == gpxlogger {
        return try Measured(program, ["-e", "sockets", "-r", "-f", "/dev/null", "localhost:\(port)"])
    }
    return try Measured(program, ["run", "-c", config, "--headless", "--state", state, "--gpsd", "localhost:\(port)", "--source", source])
}

/// What a program did in the measured window, and its memory at the end when it was asked for.
struct Outcome {
    let switches: Double
    let cpuSeconds: Double
    let memory: (resident: Double, privateMB: Double, icu: Bool)?
    let mappings: [(name: String, resident: Double, privateKB: Double)]
}

/// Runs `programs` for `settle` then `window` seconds, stops them, and returns what each did in the window.
func measure(_ programs: [Measured], settle: Double, window: Double, memoryAtEnd: Bool = false) -> [Outcome] {
    Thread.sleep(forTimeInterval: settle + window + 0.7)
    let memories = programs.map { memoryAtEnd ? (memory($0.pid), memoryByMapping($0.pid)) : nil }
    for program in programs { program.stop() }
    return zip(programs, memories).map { program, memory in
        let (switches, cpu) = program.counts(from: settle, to: settle + window)
        return Outcome(switches: switches, cpuSeconds: cpu, memory: memory?.0, mappings: memory?.1 ?? [])
    }
}

var rows: [String] = []
var figures: [String: Double] = [:]
/// The package's memory by mapping at 1 fix/s.
var mappings: [(name: String, resident: Double, privateKB: Double)] = []
/// The package's memory and CPU at 1 fix/s, for the goals.
var packageFigures: (resident: Double, privateMB: Double, cpuPerHour: Double, wakeups: Double)?

/// 1 or 10 fixes a second: gpsfake writes the walk's three sentences an epoch at that pace.
for rate in [1.0, 10.0] {
    let gpsd = try GPSFake()
    try gpsd.play(walk, pace: 1 / (3 * rate))
    var programs = [try start(geoalarm, port: gpsd.port), try start(gpxlogger, port: gpsd.port)]
    var names = ["geoalarm", "gpxlogger"]
    if rate == 1, let packaged {
        programs.append(try start(packaged, port: gpsd.port))
        names.append("package")
    }
    let window = rate == 1 ? 60.0 : 30.0
    let results = measure(programs, settle: 5, window: window, memoryAtEnd: rate == 1)
    let fixes = rate * window
    for (name, result) in zip(names, results) {
        let perFix = result.switches / fixes
        figures["\(name) \(Int(rate))"] = perFix
        if name == "package", let (resident, privateMB, _) = result.memory {
            packageFigures = (resident, privateMB, result.cpuSeconds * 3600 / window, perFix)
            mappings = result.mappings
        }
        rows.append(String(format: "| %@ | %.0f fix/s | %.2f wake-ups per fix | %.2f CPU s per hour |",
                           name, rate, perFix, result.cpuSeconds * 3600 / window))
        if let (resident, privateMB, icu) = result.memory {
            rows.append(String(format: "| %@ | memory at 1 fix/s | %.1f MB resident | %.1f MB private%@ |",
                               name, resident, privateMB, icu ? ", ICU mapped" : ""))
        }
    }
    gpsd.stop()
}

/// Idle: gpsd down (nothing listens; measured after the back-off has grown to its longest), then
/// gpsd up with no receiver (a control socket keeps it running without a device).
let closedPort = try GPSFake().port
let down = measure(
    [try start(geoalarm, port: closedPort), try start(geoalarm, port: closedPort, source: "auto"), try start(gpxlogger, port: closedPort)],
    settle: 130, window: 120)
for (name, result) in zip(["geoalarm", "geoalarm, source auto", "gpxlogger"], down) {
    rows.append(String(format: "| %@ | gpsd down | %.1f wake-ups per minute | %.3f CPU s per hour |", name,
                       result.switches / 2, result.cpuSeconds * 30))
}

let idlePort = try GPSFake().port
let control = FileManager.default.temporaryDirectory.appendingPathComponent("gpsd-\(UUID().uuidString).sock").path
let gpsdAlone = try Background(["-N", "-S", String(idlePort), "-F", control], executable: URL(fileURLWithPath: "/usr/sbin/gpsd"))
Thread.sleep(forTimeInterval: 1)
var idlePrograms = [try start(geoalarm, port: idlePort), try start(geoalarm, port: idlePort, source: "auto"), try start(gpxlogger, port: idlePort)]
var idleNames = ["geoalarm", "geoalarm, source auto", "gpxlogger"]
if let packaged {
    idlePrograms.append(try start(packaged, port: idlePort))
    idleNames.append("package")
}
// Measured from 30 s in: past `auto`'s turn to GeoClue (gpsd silent for 10 s: GeoClue's thread,
// GLib's, the library loaded) and the end of GLib's pool thread 15 s later, so that the figure is
// the idle agent's, not its switch.
let idle = measure(idlePrograms, settle: 30, window: 60, memoryAtEnd: true)
for (name, result) in zip(idleNames, idle) {
    rows.append(String(format: "| %@ | gpsd up, no receiver | %.1f wake-ups per minute | %.3f CPU s per hour |", name,
                       result.switches, result.cpuSeconds * 60))
    if let (resident, privateMB, icu) = result.memory {
        rows.append(String(format: "| %@ | memory, connected and idle | %.1f MB resident | %.1f MB private%@ |",
                           name, resident, privateMB, icu ? ", ICU mapped" : ""))
    }
}
gpsdAlone.signal(SIGTERM)
_ = gpsdAlone.exitStatus(within: 5)
gpsdAlone.stop()

print("wake-ups (context switches of all threads, from perf), CPU and memory: geoalarm (100 reminders) against gpxlogger on the same gpsd")
print("| program | case | figure | |")
print("| --- | --- | --- | --- |")
for row in rows { print(row) }
for rate in [1, 10] {
    let ours = figures["geoalarm \(rate)"] ?? .nan, theirs = figures["gpxlogger \(rate)"] ?? .nan
    print(String(format: "at %d fix/s: geoalarm / gpxlogger = %.2fx; goal at most 2 wake-ups per fix: %@",
                 rate, ours / theirs, ours <= 2 ? "met" : "NOT met"))
}

if let packaged, let package = packageFigures {
    print("\nthe package's binary at 1 fix/s, by mapping (KB):")
    print("| mapping | resident | private |")
    print("| --- | ---: | ---: |")
    for mapping in mappings.prefix(12) { print(String(format: "| %@ | %.0f | %.0f |", mapping.name, mapping.resident, mapping.privateKB)) }
    let size = Double((try? FileManager.default.attributesOfItem(atPath: packaged.path)[.size] as? Int) ?? 0) / 1_000_000
    let theirs = figures["gpxlogger 1"] ?? .nan
    print("\n| goal (issue 29) | measured | met? |")
    print("| --- | --- | --- |")
    func verdict(_ met: Bool) -> String { met ? "yes" : "NOT met" }
    print(String(format: "| resident at most 12 MB | %.1f MB | %@ |", package.resident, verdict(package.resident <= 12)))
    print(String(format: "| private at most 6 MB | %.1f MB | %@ |", package.privateMB, verdict(package.privateMB <= 6)))
    print(String(format: "| binary at most 15 MB | %.1f MB | %@ |", size, verdict(size <= 15)))
    print(String(format: "| CPU under 1 s per hour at 1 fix/s | %.2f s | %@ |", package.cpuPerHour, verdict(package.cpuPerHour < 1)))
    print(String(format: "| wake-ups per fix (gpxlogger's in the same run: %.2f) | %.2f | |", theirs, package.wakeups))
}
