import Foundation

/// A `geoalarm` (or other) process left running while a test talks to it.
///
/// Started with posix_spawn rather than Foundation's Process: the test runner's threads block
/// most signals, and a child inheriting that mask never hears SIGTERM or SIGCHLD (gpsfake then
/// never reaps or stops its gpsd). Here the child gets an empty mask, default handlers and a
/// process group of its own, so `stop()` ends it together with anything it started.
public final class Background: @unchecked Sendable {
    public let pid: pid_t
    private let outPath: String
    private let errPath: String
    private var status: Int32?

    /// Starts `executable ARGUMENTS` in the repository root with output captured to files.
    public init(_ arguments: [String], executable: URL = Command.binary, environment: [String: String]? = nil) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-bg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        outPath = scratch.appendingPathComponent("out").path
        errPath = scratch.appendingPathComponent("err").path

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        // env -C runs the program in the repository root (posix_spawn's chdir action is not in Swift's Glibc).
        let argv = (["/usr/bin/env", "-C", Command.root.path, executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, "/usr/bin/env", &actions, &attributes, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        pid = child
    }

    public var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }
    public var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Whether the process still runs (reaping it once it has ended).
    public var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
        // WIFEXITED / WEXITSTATUS, or 128 + the signal that ended it.
        status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        return false
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
            kill(-pid, SIGKILL)
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
