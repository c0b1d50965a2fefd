import Foundation
import GeoAlarmTestSupport
import Testing

/// The state file in trouble while `geoalarm run` runs (a real gpsd, a real SQLite file): it is
/// deleted, or its disk fills up. The agent notices, says so once, recovers by itself, and no
/// event is lost.
@Suite(.serialized)
struct StateTroubleTests {
    /// The demo walk in three parts: the first two events (leaving home, the bakery), the
    /// parcel's arrival, then leaving the post office and the ferry.
    static let parts = [0..<450, 450..<1000, 1000..<1308]

    /// Deleted while the agent runs (`rm state.sqlite*`), then a reminder completed by a command,
    /// which makes a new file: the agent makes its own writes to that file, carries its sides
    /// over, and reads the completion (the parcel's arrival is not announced).
    @Test func aDeletedStateFileIsMadeAgainAndACompletionInItIsRead() throws {
        let config = try RestartTests.demo()
        let state = Command.scratchState()
        let gpsd = try GPSFake()
        try gpsd.load(Command.temporaryFile(LiveAgentTests.walkEpochs(Self.parts[0]), named: "first.nmea"))
        let agent = try Background(["run", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdoutLines.count == 2, "\(agent.stdout)")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state + suffix) }
        let complete = try Command.run(["complete", "parcel", "-c", config, "--state", state])
        #expect(complete.status == 0, "\(complete.stderr)")
        #expect(agent.waitUntil { $0.stderr.contains("was deleted or replaced") }, "\(agent.stderr)")
        try gpsd.load(Command.temporaryFile(LiveAgentTests.walkEpochs(Self.parts[1].lowerBound...), named: "rest.nmea"))
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(!agent.stdout.contains("parcel"), "the completion in the new file was read: \(agent.stdout)")
        #expect(agent.stderr.contains("arrive parcel not announced: the reminder is completed"), "\(agent.stderr)")
        #expect(agent.stderr.components(separatedBy: "was deleted or replaced").count == 2, "said once: \(agent.stderr)")
        let status = try Command.run(["status", "-c", config, "--state", state])
        #expect(status.stdoutLines.contains { $0.hasPrefix("ferry ") && $0.contains("inside") }, "\(status.stdout)")
        #expect(status.stdoutLines.contains { $0.hasPrefix("bread ") && $0.contains("outside") }, "sides carried over: \(status.stdout)")
        let history = try Command.run(["history", "--state", state])
        #expect(history.stdoutLines.contains { $0.contains("arrive  ferry") }, "events after the deletion are kept: \(history.stdout)")
    }

    /// The state file's disk fills up while the agent runs (a Raspberry Pi's SD card), then has
    /// room again: the failure is said once, the events meanwhile wait in memory, and every
    /// event of the walk is in the file in the end. The disk is a 16 MiB tmpfs of the agent's
    /// own, in a mount namespace (`unshare`), which the test fills and empties through
    /// `/proc/PID/root`.
    @Test func aFullDiskLosesNoEventAndTheAgentWritesAgainByItself() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-disk-\(UUID().uuidString)").path
        let disk = folder + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = try RestartTests.demo()
        let state = disk + "/state.sqlite"
        let gpsd = try GPSFake()
        try gpsd.load(Command.temporaryFile(LiveAgentTests.walkEpochs(Self.parts[0]), named: "first.nmea"))
        let agent = try Background(
            ["--user", "--map-root-user", "--mount", "/bin/sh", "-c", #"mount -t tmpfs -o size=16m tmpfs "$0" && exec "$@""#, disk,
             Command.binary.path, "run", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(gpsd.port)"],
            executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        defer {
            agent.signal(SIGKILL)
            _ = agent.exitStatus()
        }
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdoutLines.count == 2, "\(agent.stdout) \(agent.stderr)")
        // The agent's view of its disk.
        let seen = "/proc/\(agent.pid)/root" + disk
        let filler = seen + "/filler"
        #expect(FileManager.default.fileExists(atPath: seen + "/state.sqlite"), "the state file is on the agent's own disk")
        try Self.fill(filler)
        try gpsd.load(Command.temporaryFile(LiveAgentTests.walkEpochs(Self.parts[1]), named: "second.nmea"))
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdoutLines.contains { $0.contains("arrive  parcel") }, "announced while the disk is full: \(agent.stdout)")
        #expect(agent.stderr.contains("database or disk is full"), "\(agent.stderr)")
        #expect(agent.stderr.components(separatedBy: "database or disk is full").count == 2, "said once: \(agent.stderr)")
        try FileManager.default.removeItem(atPath: filler)
        try gpsd.load(Command.temporaryFile(LiveAgentTests.walkEpochs(Self.parts[2]), named: "third.nmea"))
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stderr.contains("is written again"), "\(agent.stderr)")
        // A copy of the file and its write-ahead log (SQLite resolves /proc/PID/root to this
        // namespace's root, where the agent's disk is not), read by SQLite's own shell.
        let copy = folder + "/copy.sqlite"
        for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: seen + "/state.sqlite" + suffix, toPath: copy + suffix) }
        let history = try Command.run([copy, "SELECT event || ' ' || reminder FROM history ORDER BY id;"], executable: "/usr/bin/sqlite3")
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdoutLines == [
            "leave water-the-plants-before-you-go", "arrive bread", "arrive parcel", "leave parcel", "arrive ferry",
        ], "every event is in the file")
        #expect(agent.stdoutLines.count == 5, "\(agent.stdout)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
    }

    /// Writes zeros to `path` until its disk is full.
    static func fill(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let block = [UInt8](repeating: 0, count: 64 * 1024)
        while block.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
