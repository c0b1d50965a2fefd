import Foundation
import GeoAlarmCore
import GeoAlarmOutput
import Logging
import Synchronization

/// Runs command hooks for every event: the reminder's `exec` and every executable in the hooks
/// directory (looked at anew for each event), as gammastep runs its hooks.
///
/// Each command gets the event in `GEOALARM_*` environment variables and as one JSON line on
/// stdin. Commands are argv arrays, never shell strings. Each runs on a thread of its own, so a
/// slow hook never delays the log or another hook; one still running after the timeout is
/// killed with its process group; every child is reaped; a failure is logged with its exit
/// status and the start of its stderr.
public final class HookRunner: EventSink {
    private let directory: String?
    private let timeout: Double
    private let logger: Logger
    /// How much of a hook's stderr is kept for the log.
    static let keptStderr = 2048

    public init(directory: String?, timeout: Double, logger: Logger) {
        self.directory = directory
        self.timeout = timeout
        self.logger = logger
        // A hook that exits without reading its stdin must not take the agent down with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    /// The commands that run for `event`, in order: the reminder's own, then the directory's.
    public func commands(for event: GeofenceEvent) -> [[String]] {
        var commands: [[String]] = event.reminder.alert.command.isEmpty ? [] : [event.reminder.alert.command]
        if let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) {
            for name in names.sorted() where !name.hasPrefix(".") {
                let path = "\(directory)/\(name)"
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                   FileManager.default.isExecutableFile(atPath: path) {
                    commands.append([path])
                }
            }
        }
        return commands
    }

    public func deliver(_ event: GeofenceEvent) {
        let commands = commands(for: event)
        guard !commands.isEmpty else { return }
        let environment = ProcessInfo.processInfo.environment.merging(Self.variables(for: event)) { _, new in new }
        let input = EventFormat.json.line(for: event) + "\n"
        for command in commands {
            let thread = Thread { [self] in run(command, environment: environment, input: input) }
            thread.name = "hook"
            thread.start()
        }
    }

    /// The `GEOALARM_*` variables describing `event` (position and distance empty for a time alarm).
    public static func variables(for event: GeofenceEvent) -> [String: String] {
        func number(_ value: Double) -> String { value.isFinite ? JSONText.number(value) : "" }
        return [
            "GEOALARM_EVENT": event.kind.rawValue,
            "GEOALARM_REMINDER": event.reminder.id,
            "GEOALARM_TITLE": event.reminder.title,
            "GEOALARM_NOTES": event.reminder.notes ?? "",
            "GEOALARM_LAT": number(event.fix.coordinate.latitude),
            "GEOALARM_LON": number(event.fix.coordinate.longitude),
            "GEOALARM_DISTANCE_M": number((event.distance * 10).rounded() / 10),
            "GEOALARM_TIME": event.fix.time.map(Timestamp.iso8601) ?? "",
        ]
    }

    /// Runs one hook to its end (or its timeout) on the calling thread.
    func run(_ command: [String], environment: [String: String], input: String) {
        var stdinPipe: [Int32] = [0, 0], stderrPipe: [Int32] = [0, 0]
        // One spawn at a time: a child started between pipe() and FD_CLOEXEC would inherit
        // another hook's pipe ends and keep them open.
        let started = Self.spawning.withLock { _ -> Result<ChildProcess, ChildProcess.SpawnError>? in
            guard Self.closeOnExecPipe(&stdinPipe), Self.closeOnExecPipe(&stderrPipe) else { return nil }
            return Result { () throws(ChildProcess.SpawnError) in
                try ChildProcess.spawn(
                    command, environment: environment, stdin: .descriptor(stdinPipe[0]), stderr: .descriptor(stderrPipe[1]))
            }
        }
        let child: ChildProcess
        switch started {
        case .success(let spawned)?:
            child = spawned
        case .failure(let error)?:
            [stdinPipe[0], stdinPipe[1], stderrPipe[0], stderrPipe[1]].forEach { close($0) }
            return logFailure(command, error.description)
        case nil:
            return logFailure(command, "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        close(stdinPipe[0])
        close(stderrPipe[1])
        var bytes = Array(input.utf8)
        _ = bytes.withUnsafeMutableBytes { write(stdinPipe[1], $0.baseAddress, $0.count) }
        close(stdinPipe[1])

        let (stderr, timedOut) = drain(stderrPipe[0], until: Date().addingTimeInterval(timeout))
        close(stderrPipe[0])
        if timedOut { child.signalGroup(SIGKILL) }
        let status = child.wait()
        let name = command.joined(separator: " ")
        let said = String(decoding: stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if timedOut {
            logger.warning("hook \(name) still running after \(JSONText.number(timeout)) s; killed it")
        } else if status != 0 {
            logger.warning("hook \(name) failed with exit status \(status)\(said.isEmpty ? "" : ": \(said)")")
        } else {
            logger.debug("hook \(name) done\(said.isEmpty ? "" : ": \(said)")")
        }
    }

    private static let spawning = Mutex(())

    /// A pipe whose two ends close on exec (only the child's dup2 copies survive).
    private static func closeOnExecPipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        return true
    }

    /// Reads `descriptor` until end of file or `deadline`; what was read (its start) and whether time ran out.
    private func drain(_ descriptor: Int32, until deadline: Date) -> ([UInt8], Bool) {
        var kept: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return (kept, true) }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining * 1000, 1000).rounded(.up)))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { return (kept, false) }
            kept.append(contentsOf: chunk[..<min(count, max(0, Self.keptStderr - kept.count))])
        }
    }

    private func logFailure(_ command: [String], _ reason: String) {
        logger.warning("hook \(command.joined(separator: " ")) not run: \(reason)")
    }
}
