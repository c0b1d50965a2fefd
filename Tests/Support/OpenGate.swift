import Foundation
import GeoAlarmSystem

/// Holds every open of a file in one folder by another process until the test lets it
/// through (`Tests/Tasks/open_gate.py`, fanotify: root only), so that a test can do something
/// at an exact point of another program's work: rename a file over the one it has just
/// opened, or keep it waiting inside a read.
public final class OpenGate {
    private let helper: Background
    private let answers: Int32
    /// How many opens were held (and answered or still held) so far.
    private var held = 0
    private var closed = false

    /// Starts watching `folder`; returns once the gate is in place.
    public init(_ folder: String) throws {
        let (read, write) = try System.pipe()
        defer { System.close(read) }
        answers = write
        helper = try Background(
            [Command.root.appendingPathComponent("Tests/Tasks/open_gate.py").path, folder],
            executable: URL(fileURLWithPath: "/usr/bin/python3"), stdin: read)
        guard helper.waitUntil({ $0.stdout.hasPrefix("watching") }) else {
            let said = helper.stderr
            close()
            throw POSIXError(.EPERM, userInfo: [NSLocalizedDescriptionKey: "open_gate.py did not start: \(said)"])
        }
    }

    /// The name of the file of the next open held, once it is held; nil when none came within
    /// the failure bound. It stays held until ``allow()``.
    public func nextOpen() -> String? {
        guard helper.waitUntil({ $0.stdoutLines.count > held + 1 }) else { return nil }
        held += 1
        return helper.stdoutLines[held].split(separator: " ").dropFirst().first.map(String.init)
    }

    /// What the gate has seen and how its helper is, for a test's message when ``nextOpen()``
    /// gave nil: the opens held so far, and the helper's end and stderr if it has ended.
    public var account: String {
        let opens = helper.stdoutLines.dropFirst().joined(separator: "; ")
        let state = helper.exitStatus(within: 0).map { "ended (status \($0))" } ?? "running"
        return "open_gate.py \(state), held: [\(opens)] \(helper.stderr)"
    }

    /// Lets the open held last go on.
    public func allow() {
        try? System.writeAll(answers, Array("allow\n".utf8))
    }

    /// Lets every open go on from now on, the held one included.
    public func close() {
        guard !closed else { return }
        closed = true
        System.close(answers)
        helper.stop()
    }

    deinit {
        close()
    }
}
