import Foundation
import GeoAlarmHooks
import GeoAlarmSystem

/// A `geoalarm` (or other) process left running while a test talks to it.
///
/// Started as the agent starts hooks (``ChildProcess``), not with Foundation's Process: the
/// test runner's threads block most signals, and a child inheriting that mask never hears
/// SIGTERM or SIGCHLD (gpsfake then never stops its gpsd).
public final class Background: @unchecked Sendable {
    private let child: ChildProcess
    /// Becomes readable when the process ends (opened before it can be reaped).
    private let processFD: Int32
    private let scratch: String
    private let outPath: String
    private let errPath: String
    private var status: Int32?

    /// Starts `executable ARGUMENTS` in the repository root with output captured to files;
    /// `stdin` is a descriptor of the caller's to read from (by default, nothing), and `stdout`
    /// one to write to instead of the capture file (a pipe, `/dev/full`).
    public init(_ arguments: [String], executable: URL = Command.binary, environment: [String: String]? = nil,
                stdin: Int32? = nil, stdout: Int32? = nil) throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-bg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        outPath = scratch + "/out"
        errPath = scratch + "/err"
        // env -C runs the program in the repository root (posix_spawn's chdir action is not in Swift's Glibc).
        child = try ChildProcess.spawn(
            ["/usr/bin/env", "-C", Command.root.path, executable.path] + arguments,
            environment: environment ?? ProcessInfo.processInfo.environment,
            stdin: stdin.map { .descriptor($0) } ?? .nullDevice, stdout: stdout.map { .descriptor($0) } ?? .file(outPath),
            stderr: .file(errPath))
        processFD = try System.processDescriptor(child.pid)
    }

    public var pid: pid_t { child.pid }

    public var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }
    public var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
    public var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }

    /// Whether the process still runs (reaping it once it has ended).
    public var isRunning: Bool {
        if status == nil { status = (try? System.wait(child.pid, block: false)) ?? nil }
        return status == nil
    }

    /// Waits until `condition` holds, looking again whenever the process writes its output or
    /// a file in `folders`, or ends; false when `seconds` pass first (a bound on a failure, not a
    /// speed test), or when the process has ended without it. `condition` must depend on this
    /// process's output or on those files.
    @discardableResult
    public func waitUntil(seconds: Double = Deadline.failure, watching folders: [String] = [],
                          _ condition: (Background) -> Bool) -> Bool {
        EventWait(folders: [scratch] + folders, processes: [processFD]).until(seconds: seconds) { condition(self) }
    }

    /// Sends `number` to the process, through its pidfd: once it has ended and been reaped,
    /// its pid may already be another process's (another test's gpsfake, say).
    public func signal(_ number: Int32) {
        System.signal(processDescriptor: processFD, number)
    }

    /// Waits for the process to end; its exit status, or nil when it is still running after `seconds`.
    public func exitStatus(within seconds: Double = Deadline.failure) -> Int32? {
        _ = EventWait(folders: [], processes: [processFD]).until(seconds: seconds) { !isRunning }
        return status
    }

    /// Ends the process and its group if it is still running.
    public func stop() {
        if isRunning {
            System.killGroup(child.pid, SIGKILL)
            _ = exitStatus(within: 5)
        }
    }

    deinit {
        stop()
        System.close(processFD)
        try? FileManager.default.removeItem(atPath: scratch)
    }
}

/// A private gpsd fed by gpsfake, on a loopback port reserved for it (never gpsd's 2947).
///
/// gpsfake starts gpsd with the log loaded and holds the log before its first sentence until
/// the test lets it play (`-i`: gpsfake reads a line of its standard input before each
/// sentence), so that playback starts once the reader watches, never after a guessed number of
/// seconds. gpsd runs with `-D 3`, which logs what it answers each client (its answer to `?WATCH`
/// is the sign that a client watches) and when it has activated the device: before that, gpsd
/// probes the device at several speeds, and each speed change flushes what gpsfake has written.
public final class GPSFake: @unchecked Sendable {
    private let reservation: PortReservation
    /// gpsfake's TMPDIR, this instance's alone: gpsfake names gpsd's control socket
    /// `$TMPDIR/gpsfake-PID.sock` and takes it as ready once that path exists, so a file left
    /// by a killed gpsd whose PID came round again made it add no device at all.
    private let folder: String
    public var port: Int { reservation.port }
    public private(set) var fake: Background?
    /// The write end of gpsfake's standard input, until the log plays.
    private var goAhead: Int32?
    /// `yes ''`, writing the lines that let gpsfake play.
    private var feed: ChildProcess?

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reserves a port; gpsd starts on it with ``load(_:pace:linger:)`` (or never: nothing listens there).
    public init() throws {
        reservation = try PortReservation()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-gpsfake-\(UUID().uuidString)").path
    }

    /// Starts gpsd on the port with `log` loaded (`pace` seconds between sentences), held before
    /// its first sentence; returns once gpsd listens.
    public func load(_ log: String, pace: Double = 0.002, linger: Int = 1) throws {
        stop()
        var path = log.hasPrefix("/") ? log : Command.root.appendingPathComponent(log).path
        if !Self.isText(path) {
            // gpsfake 3.22 cannot print its prompt for a binary packet (its hexdump fails on
            // Python 3), but prints the raw bytes of a log that starts as text: a sentence that
            // gives gpsd no fix and no time comes first.
            let copy = try Command.temporaryFile("", named: URL(fileURLWithPath: path).lastPathComponent)
            try (Data("$GPTXT,01,01,02,lead-in*6B\r\n".utf8) + Data(contentsOf: URL(fileURLWithPath: path)))
                .write(to: URL(fileURLWithPath: copy))
            path = copy
        }
        // gpsfake and its gpsd are a test tool, not what is tested: a start in which gpsfake
        // ended before gpsd was ready (seen twice in hundreds of runs, gpsd having logged only
        // "launching") is said on stderr, with how gpsfake ended, and made again.
        var failures: [String] = []
        for _ in 0..<3 {
            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let (read, write) = try System.pipe()
            defer { System.close(read) }
            let fake = try Background(
                ["-i", "-n", "-q", "-1", "-D", "3", "-c", String(pace), "-W", String(linger), "-P", String(port), path],
                executable: URL(fileURLWithPath: "/usr/bin/gpsfake"),
                environment: ProcessInfo.processInfo.environment.merging(["TMPDIR": folder]) { _, new in new }, stdin: read)
            // The first prompt comes once gpsfake has asked gpsd to add the device; gpsd reads the
            // device's sentences once it has probed and activated it.
            if fake.waitUntil(seconds: Self.startBound, { $0.stdout.contains("? ") && $0.stderr.contains(Self.activated) }) {
                self.fake = fake
                goAhead = write
                return
            }
            System.close(write)
            let ended = fake.isRunning ? "still running" : "ended with status \(fake.exitStatus(within: 0).map(String.init) ?? "?")"
            fake.stop()
            let failure = "gpsfake (\(ended)) did not start gpsd on port \(port): \(fake.stderr)"
            FileHandle.standardError.write(Data("GPSFake: \(failure); starting it again\n".utf8))
            failures.append(failure)
        }
        throw StartError(description: failures.joined(separator: "\n"))
    }

    /// What gpsd logs (from `-D 3`) once it reads the device.
    private static let activated = "activated GPS"
    /// How long a start may take before it is taken as stuck and made again: gpsd activates the
    /// device within a second or two even on a loaded machine, and a start that hung (seen once in
    /// a clean clone's run: gpsfake still running, gpsd never reading the device) held its test
    /// for the whole failure bound before this. A slow start past it costs a second try, no more.
    private static let startBound: Double = 60

    /// Whether a log is NMEA text: its first byte outside `#` comment lines is a `$` or `!`.
    private static func isText(_ path: String) -> Bool {
        guard let bytes = FileManager.default.contents(atPath: path) else { return true }
        var atLineStart = true, inComment = false
        for byte in bytes {
            if atLineStart && byte == UInt8(ascii: "#") { inComment = true }
            if !inComment && byte != 10 && byte != 13 { return byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!") }
            atLineStart = byte == 10
            if atLineStart { inComment = false }
        }
        return true
    }

    /// Lets the loaded log play.
    public func play() throws {
        guard let goAhead else { return }
        feed = try ChildProcess.spawn(["/usr/bin/yes", ""], environment: [:], stdout: .descriptor(goAhead))
        System.close(goAhead)
        self.goAhead = nil
    }

    /// Loads `log` and plays it at once: for readers that need no start (they wait for fixes).
    public func play(_ log: String, pace: Double = 0.002, linger: Int = 1) throws {
        try load(log, pace: pace, linger: linger)
        try play()
    }

    /// How many clients gpsd has answered a watch request.
    public var watchers: Int {
        (fake?.stderr.components(separatedBy: #"{"class":"WATCH","enable":true"#).count ?? 1) - 1
    }

    /// Plays the loaded log once `count` clients watch; false when none came within `seconds`.
    @discardableResult
    public func playWhenWatched(by count: Int = 1, seconds: Double = Deadline.failure) throws -> Bool {
        guard let fake, fake.waitUntil(seconds: seconds, { _ in watchers >= count }) else { return false }
        try play()
        return true
    }

    /// Plays the loaded log once `agent` (a `geoalarm run`) watches, and waits until the agent has
    /// read all of it: gpsd ends with the log, and the agent says it lost gpsd only after
    /// handling everything gpsd sent before. False when either did not happen within `seconds`.
    public func playThrough(to agent: Background, seconds: Double = Deadline.failure) throws -> Bool {
        let lost = "unavailable: connection lost"
        let before = agent.stderr.components(separatedBy: lost).count
        guard try playWhenWatched(seconds: seconds) else {
            report("no client watched within \(seconds) s")
            return false
        }
        waitForEnd(seconds: seconds)
        if fake?.isRunning == true { report("gpsfake still runs \(seconds) s after the log began to play") }
        guard agent.waitUntil(seconds: seconds, { $0.stderr.components(separatedBy: lost).count > before }) else {
            report("the agent did not say it lost gpsd")
            return false
        }
        return true
    }

    /// Says on the test's stderr what gpsfake and gpsd were doing when a wait failed.
    private func report(_ problem: String) {
        // Looked at without reaping it: the feed is reaped (and its group killed) only in reapFeed.
        let feeding = feed.map { Self.hasEnded($0.pid) ? "ended" : "running" } ?? "not started"
        let text = """
            GPSFake on port \(port): \(problem); \(sentencesPlayed) sentences played, \(watchers) watchers, \
            the feed \(feeding); gpsfake's stderr ends:
            \(String((fake?.stderr ?? "").suffix(2000)))

            """
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// How many sentences gpsfake has written so far (it prompts before each one).
    public var sentencesPlayed: Int {
        max(0, (fake?.stdout.components(separatedBy: "? ").count ?? 1) - 2)
    }

    /// Waits until at least `count` sentences were played; false when the log ended first.
    @discardableResult
    public func waitUntilPlayed(_ count: Int, seconds: Double = Deadline.failure) -> Bool {
        fake?.waitUntil(seconds: seconds) { _ in sentencesPlayed >= count } ?? false
    }

    /// Waits for the log to end (gpsfake then stops its gpsd).
    public func waitForEnd(seconds: Double = Deadline.failure) {
        _ = fake?.exitStatus(within: seconds)
        reapFeed()
    }

    public func stop() {
        fake?.stop()
        fake = nil
        if let goAhead { System.close(goAhead) }
        goAhead = nil
        reapFeed()
    }

    /// Whether a child of ours has ended, leaving it to be reaped (`WNOWAIT`).
    private static func hasEnded(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid == pid
    }

    /// `yes` ends on a broken pipe once gpsfake has gone. Its group is killed before it is
    /// reaped, while its pid is still its own.
    private func reapFeed() {
        guard fake?.isRunning != true, let feed else { return }
        System.killGroup(feed.pid, SIGKILL)
        _ = try? System.wait(feed.pid, block: true)
        self.feed = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
