import Glibc

/// What systemd says of a unit: whether it is installed, enabled and running.
public struct SystemdUnitState: Sendable, Equatable {
    /// "loaded" when its file is installed, "not-found" when not.
    public var loadState: String
    /// "enabled", "disabled", "static"...; empty when not installed.
    public var unitFileState: String
    /// "active", "inactive", "failed", "activating"...
    public var activeState: String

    public init(loadState: String, unitFileState: String, activeState: String) {
        self.loadState = loadState
        self.unitFileState = unitFileState
        self.activeState = activeState
    }

    public var isInstalled: Bool { loadState == "loaded" }
    public var isEnabled: Bool { unitFileState.hasPrefix("enabled") || unitFileState == "linked" }
    public var isRunning: Bool { ["active", "reloading", "activating"].contains(activeState) }
    public var hasFailed: Bool { activeState == "failed" }

    /// Whether systemd manages this machine (it is PID 1): only then can units be asked about.
    public static var systemdIsRunning: Bool {
        (try? System.fileStatus("/run/systemd/system")).flatMap { $0 }.map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
    }

    /// Asks `systemctl [--user] show` about `unit`; nil when systemctl cannot answer (not
    /// installed, or no user manager for this session).
    public static func query(_ unit: String, user: Bool, environment: [String: String]) -> SystemdUnitState? {
        var arguments = ["systemctl"]
        if user { arguments.append("--user") }
        arguments += ["show", "--property=LoadState,UnitFileState,ActiveState", "--", unit]
        guard let output = try? capture(arguments, environment: environment) else { return nil }
        var properties: [Substring: Substring] = [:]
        for line in output.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            properties[line[..<equals]] = line[line.index(after: equals)...]
        }
        guard let load = properties["LoadState"], let active = properties["ActiveState"] else { return nil }
        return SystemdUnitState(
            loadState: String(load), unitFileState: String(properties["UnitFileState"] ?? ""), activeState: String(active))
    }

    /// Runs a command to its end and returns its standard output; nil when it exits non-zero.
    private static func capture(_ arguments: [String], environment: [String: String]) throws -> String? {
        let pipe = try System.pipe()
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(arguments, environment: environment, stdout: .descriptor(pipe.write))
        } catch {
            System.close(pipe.read)
            System.close(pipe.write)
            throw error
        }
        System.close(pipe.write)
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while output.count < 65_536, let count = try? System.read(pipe.read, into: &buffer), count > 0 {
            output += buffer[..<count]
        }
        System.close(pipe.read)
        let status = try System.wait(child.pid, block: true)
        return status == 0 ? String(decoding: output, as: UTF8.self) : nil
    }
}
