import Foundation
import GeoAlarmSystem
import GeoAlarmTestSupport
import Testing

/// Standard output that goes away: a pipe whose reader has gone (`geoalarm run | head -1`), or
/// a full disk. A one-shot command ends: quietly with status 0 when the reader has gone (it has
/// what it wanted), with the reason and status 1 on a full disk; the agent goes on.
@Suite(.serialized)
struct StdoutGoneTests {
    /// A pipe whose reading end is already closed: every write to it fails with EPIPE.
    static func brokenPipe() throws -> Int32 {
        let (read, write) = try System.pipe()
        System.close(read)
        return write
    }

    @Test func replayIntoAPipeNobodyReadsEndsQuietly() throws {
        let pipe = try Self.brokenPipe()
        defer { System.close(pipe) }
        let replay = try Background(["replay", "-c", "config/demo.toml", "config/demo/walk.nmea"], stdout: pipe)
        #expect(replay.exitStatus() == 0, "no crash, no SIGPIPE: \(replay.stderr)")
        #expect(!replay.stderr.contains("standard output"), "\(replay.stderr)")
    }

    /// An unreadable track before it: the status still says so.
    @Test func replaysFailureOutlivesItsReader() throws {
        let pipe = try Self.brokenPipe()
        defer { System.close(pipe) }
        let replay = try Background(["replay", "-c", "config/demo.toml", "/nonexistent/track.nmea", "config/demo/walk.nmea"], stdout: pipe)
        #expect(replay.exitStatus() == 1, "\(replay.stderr)")
        #expect(replay.stderr.contains("/nonexistent/track.nmea") && !replay.stderr.contains("standard output"), "\(replay.stderr)")
    }

    @Test func replayToAFullDiskEndsWithTheReason() throws {
        let full = try System.open("/dev/full", O_WRONLY)
        defer { System.close(full) }
        let replay = try Background(["replay", "--json", "-c", "config/demo.toml", "config/demo/walk.nmea"], stdout: full)
        #expect(replay.exitStatus() == 1, "\(replay.stderr)")
        #expect(replay.stderr.contains("cannot write to standard output: No space left on device"), "\(replay.stderr)")
    }

    @Test func aCommandsOutputIntoAPipeNobodyReadsEndsQuietly() throws {
        let pipe = try Self.brokenPipe()
        defer { System.close(pipe) }
        let list = try Background(["list", "-c", "config/demo.toml"], stdout: pipe)
        #expect(list.exitStatus() == 0, "\(list.stderr)")
        #expect(list.stderr.isEmpty, "\(list.stderr)")
    }

    /// `doctor | head`: the status still says a check failed (here the config cannot be read).
    @Test func doctorsFailureOutlivesItsReader() throws {
        let pipe = try Self.brokenPipe()
        defer { System.close(pipe) }
        let doctor = try Background(["doctor", "-c", "/nonexistent/geoalarm.toml", "--wait", "0"], stdout: pipe)
        #expect(doctor.exitStatus() == 1, "\(doctor.stderr)")
        #expect(!doctor.stderr.contains("standard output"), "\(doctor.stderr)")
    }

    /// The agent says once that stdout is gone, and goes on recording every event.
    @Test func theAgentOutlivesItsStdout() throws {
        let pipe = try Self.brokenPipe()
        defer { System.close(pipe) }
        let gpsd = try GPSFake()
        try gpsd.load(LiveAgentTests.walk)
        let state = Command.scratchState()
        let agent = try Background(
            ["run", "--headless", "-c", "config/demo.toml", "--state", state, "--gpsd", "localhost:\(gpsd.port)"], stdout: pipe)
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
        #expect(agent.stderr.components(separatedBy: "standard output is gone (Broken pipe)").count == 2, "said once: \(agent.stderr)")
        let history = try Command.run(["history", "--state", state])
        #expect(history.stdoutLines.count == 5, "every event recorded: \(history.stdout)\(history.stderr)")
    }
}
