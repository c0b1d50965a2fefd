import Foundation
import GeoAlarmSystem

/// Runs the built `geoalarm` binary and captures what it printed.
public struct Command {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
    public var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }

    /// The repository root (where `config/` lives): Tests/Support/Command.swift is three levels down.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The binary built beside the test bundle, or `$GEOALARM_BIN`.
    public static let binary: URL = {
        if let given = ProcessInfo.processInfo.environment["GEOALARM_BIN"] { return URL(fileURLWithPath: given) }
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("geoalarm")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        return root.appendingPathComponent(".build/debug/geoalarm")
    }()

    /// Runs `geoalarm ARGUMENTS` (or another executable) in the repository root, with `stdin` as
    /// standard input. A command still running after `seconds` (a bound on a failure: one that
    /// hangs) is killed, and its status is then 128 + SIGKILL.
    ///
    /// Started as ``Background`` starts its programs, not with Foundation's Process, which closes
    /// and inherits descriptors by their numbers as it saw them before the spawn: with the tests
    /// of a suite starting programs at once on other threads, that is racy.
    public static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil, executable: String? = nil,
        seconds: Double = Deadline.failure
    ) throws -> Command {
        let input = try stdin.map(Self.readable)
        defer { input.map(System.close) }
        let child = try Background(
            arguments, executable: executable.map(URL.init(fileURLWithPath:)) ?? binary, environment: environment, stdin: input)
        let status: Int32
        if let ended = child.exitStatus(within: seconds) {
            status = ended
        } else {
            child.stop()
            status = child.exitStatus(within: 0) ?? 128 + SIGKILL
        }
        return Command(status: status, stdout: child.stdout, stderr: child.stderr)
    }

    /// A descriptor reading `text` from its start: a file made for it and already unlinked.
    private static func readable(_ text: String) throws -> Int32 {
        let path = try temporaryFile(text, named: "stdin")
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
        return try System.open(path, O_RDONLY)
    }

    /// A state file path in a new temporary folder, so that runs do not share state by accident.
    public static func scratchState() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-state-\(UUID().uuidString)/state.sqlite").path
    }

    /// Writes `text` to a new temporary file and returns its path.
    public static func temporaryFile(_ text: String, named name: String = "config.toml") throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// Writes the program `text` (a `#!` script) to `path`, executable (0755). It is copied
    /// there by `cp` from a draft, never written by this process: a child that another test
    /// starts meanwhile holds, until it runs its program, every descriptor this process has
    /// open, and a program that any process holds open for writing cannot be run ("Text file
    /// busy"), as a hook or a dunst script would then fail at random.
    public static func writeScript(_ text: String, to path: String) throws {
        let draft = path + ".draft-\(UUID().uuidString)"
        try Data(text.utf8).write(to: URL(fileURLWithPath: draft))
        defer { try? FileManager.default.removeItem(atPath: draft) }
        let copy = try run([draft, path], executable: "/bin/cp")
        guard copy.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        chmod(path, 0o755)
    }

    /// ``writeScript(_:to:)`` into a new temporary folder, as `name`; its path.
    public static func temporaryScript(_ text: String, named name: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try writeScript(text, to: path)
        return path
    }
}
