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
    private let outPath: String
    private let errPath: String
    private var status: Int32?

    /// Starts `executable ARGUMENTS` in the repository root with output captured to files.
    public init(_ arguments: [String], executable: URL = Command.binary, environment: [String: String]? = nil) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-bg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        outPath = scratch.appendingPathComponent("out").path
        errPath = scratch.appendingPathComponent("err").path
        // env -C runs the program in the repository root (posix_spawn's chdir action is not in Swift's Glibc).
        child = try ChildProcess.spawn(
            ["/usr/bin/env", "-C", Command.root.path, executable.path] + arguments,
            environment: environment ?? ProcessInfo.processInfo.environment,
            stdout: .file(outPath), stderr: .file(errPath))
    }

    public var pid: pid_t { child.pid }

    public var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }
    public var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Whether the process still runs (reaping it once it has ended).
    public var isRunning: Bool {
        if status == nil { status = (try? System.wait(child.pid, block: false)) ?? nil }
        return status == nil
    }

    /// Waits until `condition` holds, polling; false when `seconds` pass first (a liveness limit, not a speed test).
    @discardableResult
    public func waitUntil(seconds: Double = 60, _ condition: (Background) -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition(self) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition(self)
    }

    public func signal(_ number: Int32) {
        kill(pid, number)
    }

    /// Waits for the process to end; its exit status, or nil when it is still running after `seconds`.
    public func exitStatus(within seconds: Double = 30) -> Int32? {
        let end = Date().addingTimeInterval(seconds)
        while isRunning, Date() < end { Thread.sleep(forTimeInterval: 0.05) }
        return status
    }

    /// Ends the process and its group if it is still running.
    public func stop() {
        if isRunning {
            System.killGroup(child.pid, SIGKILL)
            _ = exitStatus(within: 5)
        }
    }

    deinit { stop() }
}

/// A private gpsd on a free loopback port, fed a log by gpsfake.
public final class GPSFake: @unchecked Sendable {
    public let port: Int
    public private(set) var fake: Background?

    public init() throws {
        port = try GPSFake.freePort()
    }

    private init(port: Int) {
        self.port = port
    }

    /// A gpsd to start on the same port as an earlier one (a restart).
    public static func onPort(_ port: Int) -> GPSFake { GPSFake(port: port) }

    /// Plays `log` once into a new gpsd on `port` (`seconds` between sentences), and waits for gpsd to listen.
    public func play(_ log: String, pace: Double = 0.005, linger: Int = 1) throws {
        fake = try Background(
            ["-n", "-q", "-1", "-c", String(pace), "-W", String(linger), "-P", String(port), log],
            executable: URL(fileURLWithPath: "/usr/bin/gpsfake"))
        let end = Date().addingTimeInterval(30)
        while !GPSFake.isListening(port), Date() < end { Thread.sleep(forTimeInterval: 0.02) }
    }

    /// Waits for the log to end (gpsfake then stops its gpsd).
    public func waitForEnd(seconds: Double = 120) {
        _ = fake?.exitStatus(within: seconds)
    }

    public func stop() { fake?.stop() }

    /// A port nothing listens on now, never gpsd's 2947.
    static func freePort() throws -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) == 0 && getsockname(socketFD, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func isListening(_ port: Int) -> Bool {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    deinit { stop() }
}
