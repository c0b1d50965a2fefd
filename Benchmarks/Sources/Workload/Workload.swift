// Inputs shared by the benchmarks: the hundred reminders around the demo walk, and a long
// seeded walk through them written as NMEA 0183 and as gpsd JSON, so that every benchmark and
// the Python peers read the same files.
import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import Synchronization
import GeoAlarmTestSupport

/// The repository root (Benchmarks/Sources/Workload/Workload.swift is four levels down).
public let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Where generated inputs go: Benchmarks/.work (ignored by git).
public let workDirectory = repository.appendingPathComponent("Benchmarks/.work").path

/// The geoalarm that `make bench` builds (release) and measures.
public let releaseBinary = repository.appendingPathComponent(".build/release/geoalarm")

/// A hundred reminders around the demo walk: the demo's five and 95 more at seeded random places.
public func hundredReminders() throws -> [Reminder] {
    var reminders = try ConfigLoader.load(path: repository.appendingPathComponent("config/demo.toml").path).reminders
    var random = SplitMix(seed: 20_261_121)
    while reminders.count < 100 {
        let centre = Coordinate(
            latitude: random.double(in: 38.705...38.715), longitude: random.double(in: -9.140 ... -9.132))
        reminders.append(Reminder(
            id: "r\(reminders.count)", title: "Reminder \(reminders.count)",
            geometry: .circle(center: centre, radius: random.double(in: 20...120)), hysteresis: 20, trigger: .both))
    }
    return reminders
}

/// The reminders, circles, as a config file (`[[reminder]]` tables with lat, lon, radius, hysteresis,
/// when; dwell and repeat left out, so every crossing is announced), for `geoalarm` and the peers.
public func configText(_ reminders: [Reminder]) -> String {
    var text = "# written by the benchmarks\n[defaults]\nmax_error = \"100m\"\nconfirmations = 2\n"
    for reminder in reminders {
        text += """

            [[reminder]]
            id = "\(reminder.id)"
            title = "\(reminder.title)"
            lat = \(reminder.center.latitude)
            lon = \(reminder.center.longitude)
            radius = \(reminder.geometry.circumradius)
            hysteresis = \(reminder.hysteresis)
            when = "both"

            """
    }
    return text
}

/// `count` fixes a second apart: a seeded walk (0.5-3 m a step) that wanders the box of the
/// hundred reminders, turning back at its edges, so that it crosses them again and again.
public func walk(_ count: Int) -> [Fix] {
    var random = SplitMix(seed: 42)
    var position = Coordinate(latitude: 38.71, longitude: -9.136)
    var heading = 0.0
    // In the past, and a million seconds before today: fixes more than a day ahead of the clock are ignored.
    let start = 1_791_792_000.0  // 2026-10-12T08:00:00Z
    return (0..<count).map { second in
        heading += random.double(in: -0.3...0.3)
        let step = random.double(in: 0.5...3) / Haversine.earthRadius * 180 / .pi
        var next = Coordinate(
            latitude: position.latitude + step * cos(heading),
            longitude: position.longitude + step * sin(heading) / cos(position.latitude * .pi / 180))
        if !(38.703...38.717).contains(next.latitude) || !(-9.142 ... -9.130).contains(next.longitude) {
            heading += .pi
            next = position
        }
        position = next
        // Rounded as NMEA carries it (1e-6 minute), so every reader sees the same position.
        position = Coordinate(
            latitude: (position.latitude * 60e6).rounded() / 60e6, longitude: (position.longitude * 60e6).rounded() / 60e6)
        return Fix(time: Date(timeIntervalSince1970: start + Double(second)), coordinate: position, horizontalError: 1.2 * 19)
    }
}

/// The fixes as NMEA 0183: a GGA (HDOP 1.2) and an RMC for each, with checksums.
public func nmeaText(_ fixes: [Fix]) -> String {
    var text = ""
    text.reserveCapacity(fixes.count * 150)
    let calendar = utcCalendar()
    for fix in fixes {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: fix.time!)
        let clock = String(format: "%02d%02d%02d.00", parts.hour!, parts.minute!, parts.second!)
        let date = String(format: "%02d%02d%02d", parts.day!, parts.month!, parts.year! % 100)
        let latitude = angle(fix.coordinate.latitude, degreeDigits: 2, positive: "N", negative: "S")
        let longitude = angle(fix.coordinate.longitude, degreeDigits: 3, positive: "E", negative: "W")
        text += sentence("GPGGA,\(clock),\(latitude),\(longitude),1,08,1.2,45.0,M,50.5,M,,")
        text += sentence("GPRMC,\(clock),A,\(latitude),\(longitude),002.5,180.0,\(date),,,A")
    }
    return text
}

/// The fixes as gpsd's JSON: one TPV a line, numbers printed as gpsd 3.22 prints them (lat and
/// lon with 9 decimals), eph as it would give for HDOP 1.2.
public func gpsdJSONText(_ fixes: [Fix]) -> String {
    var text = ""
    text.reserveCapacity(fixes.count * 160)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    for fix in fixes {
        text += "{\"class\":\"TPV\",\"device\":\"/dev/ttyUSB0\",\"mode\":3,\"time\":\"\(formatter.string(from: fix.time!))\","
            + String(format: "\"lat\":%.9f,\"lon\":%.9f,", fix.coordinate.latitude, fix.coordinate.longitude)
            + String(format: "\"altHAE\":95.5000,\"alt\":45.0000,\"eph\":%.3f,\"speed\":1.200,\"track\":180.0000}\n", fix.horizontalError!)
    }
    return text
}

/// Writes `text` to `name` in the work folder and returns its path.
@discardableResult
public func writeWorkFile(_ name: String, _ text: String) throws -> String {
    try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
    let path = "\(workDirectory)/\(name)"
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
}

/// Seconds one run of `executable` with `arguments` takes, start-up included, its output
/// discarded. A run that fails ends the benchmark: its time would measure the failure.
public func secondsToRun(_ executable: URL, _ arguments: [String]) throws -> Double {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let start = ContinuousClock.now
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        FileHandle.standardError.write(Data("\(executable.path) \(arguments.joined(separator: " ")) failed\n".utf8))
        exit(1)
    }
    return seconds(ContinuousClock.now - start)
}

/// A duration in seconds.
public func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The whole text of a file in /proc, "" when it cannot be read. `String(contentsOfFile:)` reads
/// no more than the first 4 KB of these files, which report a size of 0.
public func procFile(_ path: String) -> String {
    guard let file = FileHandle(forReadingAtPath: path) else { return "" }
    defer { try? file.close() }
    return String(decoding: (try? file.readToEnd()) ?? Data(), as: UTF8.self)
}

/// Resident and private (clean and dirty) memory of a running process in MB, from its
/// `/proc/PID/smaps_rollup`; zeros once it is gone.
public func residentAndPrivateMemory(of pid: pid_t) -> (resident: Double, privately: Double) {
    let rollup = procFile("/proc/\(pid)/smaps_rollup")
    func kilobytes(_ key: String) -> Double {
        rollup.split(separator: "\n").first { $0.hasPrefix(key + ":") }
            .flatMap { Double($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
    }
    return (kilobytes("Rss") / 1024, (kilobytes("Private_Clean") + kilobytes("Private_Dirty")) / 1024)
}

/// Median and the range of `samples`.
public func spread(_ samples: [Double]) -> (median: Double, low: Double, high: Double) {
    let sorted = samples.sorted()
    return (sorted[sorted.count / 2], sorted.first!, sorted.last!)
}

private func utcCalendar() -> Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar
}

/// "3842.834700,N": degrees and minutes with six decimals.
private func angle(_ value: Double, degreeDigits: Int, positive: String, negative: String) -> String {
    let magnitude = abs(value)
    let degrees = Int(magnitude)
    let minutes = (magnitude - Double(degrees)) * 60
    let degreeText = String(format: "%0\(degreeDigits)d", degrees)
    return degreeText + String(format: "%09.6f", minutes) + "," + (value < 0 ? negative : positive)
}

private func sentence(_ body: String) -> String {
    let checksum = body.utf8.reduce(0) { $0 ^ $1 }
    return "$" + body + String(format: "*%02X\r\n", checksum)
}

/// Runs `fixes` through `engine`, in order, and returns how many events it gave. A function of
/// a module of its own, where a benchmark would write a closure in its top-level code: such a
/// closure is the main actor's, and checks that it runs there each time it is called (a lookup
/// of the main executor and a runtime call: some 65 ns a fix here, counted as the engine's cost).
public func eventCount(processing fixes: ArraySlice<Fix>, with engine: inout GeofenceEngine) -> Int {
    var events = 0
    for index in fixes.indices { events += engine.process(fixes[index]).events.count }
    return events
}

/// Counts the events it is given: the sink the benchmarks use where a count is all they need.
public final class EventCounter: EventSink {
    public let count = Mutex(0)

    public init() {}

    public func announce(_ announcement: Announcement) { count.withLock { $0 += 1 } }
}

/// A program run under `perf stat -I 1000`, which counts context switches and CPU time of all its
/// threads (also those that come and go), a second at a time.
public struct Measured {
    public let perf: Background
    let output: String

    public init(_ program: URL, _ arguments: [String]) throws {
        output = FileManager.default.temporaryDirectory.appendingPathComponent("perf-\(UUID().uuidString).csv").path
        perf = try Background(
            ["stat", "-I", "1000", "-x", ",", "-e", "context-switches,task-clock", "-o", output, "--", program.path] + arguments,
            executable: URL(fileURLWithPath: "/usr/bin/perf"))
    }

    /// The measured program's process id (perf's child).
    public var pid: pid_t {
        let children = procFile("/proc/\(perf.pid)/task/\(perf.pid)/children")
        return pid_t(children.split(separator: " ").first ?? "") ?? perf.pid
    }

    /// Stops the program (SIGINT, as a terminal would) and waits for perf's last lines.
    public func stop() {
        kill(pid, SIGINT)
        _ = perf.exitStatus(within: 15)
        perf.stop()
    }

    /// Context switches and CPU seconds in the intervals that ended after `from` and by `to` seconds.
    public func counts(from: Double, to: Double) -> (switches: Double, cpuSeconds: Double) {
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        var switches = 0.0, cpu = 0.0
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count >= 4, let time = Double(fields[0].trimmingCharacters(in: .whitespaces)),
                  time > from, time <= to + 0.5, let value = Double(fields[1]) else { continue }
            if fields[3] == "context-switches" { switches += value }
            if fields[3] == "task-clock" { cpu += value / 1000 }
        }
        return (switches, cpu)
    }
}
