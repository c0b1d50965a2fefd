import Foundation
@testable import GeoAlarmSystem
import Testing

/// A command run to its end (a password command): bounded in time whatever its output does,
/// and in what it may print, each said as such.
struct ChildProcessTests {
    /// One that prints, closes its output and lives on (a keyring helper that forks a daemon):
    /// stopped at the bound with its group, its output kept, the stop said.
    @Test func aCommandThatClosesItsOutputAndLingersIsStoppedAtTheBound() throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-linger-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        let output = try ChildProcess.run(
            ["/bin/sh", "-c", "echo secret; exec >&- 2>&-; sleep 1000 & echo $! > \(pidFile); wait"], environment: [:],
            timeout: .seconds(2))
        #expect(output.timedOut && output.status == 128 + SIGKILL, "\(output)")
        #expect(String(decoding: output.stdout, as: UTF8.self) == "secret\n")
        // What it started went with it: its group was stopped.
        let sleeper = try #require(pid_t(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Its end, waited on (a pidfd turns readable then; none is had for one gone already).
        if let ended = try? System.processDescriptor(sleeper) {
            defer { System.close(ended) }
            var polled = [pollfd(fd: ended, events: Int16(POLLIN), revents: 0)]
            #expect(try System.poll(&polled, milliseconds: 10_000) == 1, "the sleeper it started lives on")
        }
    }

    /// One that ends at once is not said to have timed out; one that prints past the limit is cut, and said so.
    @Test func anEndAndAnOverlongOutputAreSaidForWhatTheyAre() throws {
        let quick = try ChildProcess.run(["/bin/sh", "-c", "echo secret"], environment: [:])
        #expect(!quick.timedOut && !quick.stdoutCut && quick.status == 0 && quick.stdout == Array("secret\n".utf8))
        let long = try ChildProcess.run(["/bin/sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x"], environment: [:], limit: 64 << 10)
        #expect(long.stdoutCut && long.stdout.count == 64 << 10 && !long.timedOut, "\(long.stdout.count)")
    }
}
