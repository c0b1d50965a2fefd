import FoundationEssentials
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmSystem
import Glibc
import Logging
import ServiceLifecycle
import Synchronization

/// How one hook run ended.
public enum HookOutcome: Sendable, Equatable {
    case succeeded
    case failed(status: Int32)
    /// Still running at its timeout (counted from its start): its process group was stopped.
    case timedOut
    /// Still running when the agent stopped: its process group was stopped.
    case stoppedAtShutdown
    /// Never started (no such program, no pipes), or dropped from a full queue.
    case notRun(String)
}

/// Runs command hooks for every event: the reminder's `exec` and every executable in the hooks
/// directory (looked at anew for each event), as gammastep runs its hooks. An event sink, and a
/// service whose graceful shutdown ends the hooks still running.
///
/// Each command gets the event in `GEOALARM_*` environment variables and as one JSON line on
/// stdin. Commands are argv arrays, never shell strings. The agent's event loop watches each
/// hook's pipes and a pidfd that says when it ends, so a slow hook never delays the log or
/// another hook, whatever it does with its pipes:
/// - the timeout counts from the hook's start; then its process group gets SIGTERM, and SIGKILL
///   after a grace period; the same happens to every hook still running when the agent stops;
/// - stdin is written without blocking, and what the hook does not read is dropped;
/// - at most ``keptStderr`` bytes of stderr are kept; a hook's end is its process's end, even
///   while a child it left behind still holds the pipes;
/// - every child is reaped; at most ``maximumRunning`` hooks run at once and at most
///   ``maximumQueued`` more wait (a hook is taken while fewer than both together are running or
///   waiting, however far the supervisor has got in starting them), so a burst of events cannot
///   grow processes or descriptors without bound.
public final class HookRunner: EventSink, Service {
    private let directory: String?
    private let supervisor: HookSupervisor
    private let logger: Logger

    /// How much of a hook's stderr is kept for the log.
    public static let keptStderr = 2048
    /// Hooks running at once; more wait in the queue.
    public static let maximumRunning = 16
    /// Hooks waiting to start; more are dropped, each logged.
    public static let maximumQueued = 256
    /// Seconds between SIGTERM and SIGKILL.
    public static let killGrace = 2.0

    /// Runs hooks on `loop`; `observer`, when given, hears how each hook run ended (after it is logged).
    public init(
        directory: String?, timeout: Double, loop: EventLoop, logger: Logger,
        observer: (@Sendable ([String], HookOutcome) -> Void)? = nil
    ) {
        self.directory = directory
        self.logger = logger
        supervisor = HookSupervisor(timeout: timeout, loop: loop, logger: logger, observer: observer)
    }

    /// Waits for graceful shutdown, then ends the hooks (see ``shutdown()``).
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// The commands that run for `event`, in order: the reminder's own, then the directory's.
    public func commands(for announcement: Announcement) -> [[String]] {
        var commands: [[String]] = announcement.alert.command.isEmpty ? [] : [announcement.alert.command]
        if let directory, let problem = FileSafety.hooksFolderProblem(directory) {
            logger.warning("hooks not run: \(problem)")
            return commands
        }
        if let directory { commands += Self.hooks(in: directory).executable.map { ["\(directory)/\($0)"] } }
        return commands
    }

    /// The files in a hooks folder, by name, sorted: those that run (executable regular files)
    /// and those skipped for not being executable. Dot files and folders are not hooks.
    public static func hooks(in directory: String) -> (executable: [String], notExecutable: [String]) {
        var found: (executable: [String], notExecutable: [String]) = ([], [])
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return found }
        for name in names.sorted() where !name.hasPrefix(".") {
            let path = "\(directory)/\(name)"
            guard let status = try? System.fileStatus(path), status.st_mode & S_IFMT != S_IFDIR else { continue }
            if System.isExecutableFile(path) {
                found.executable.append(name)
            } else {
                found.notExecutable.append(name)
            }
        }
        return found
    }

    public func announce(_ announcement: Announcement) {
        let commands = commands(for: announcement)
        guard !commands.isEmpty else { return }
        let environment = ProcessInfo.processInfo.environment.merging(Self.variables(for: announcement)) { _, new in new }
        let input = Array((EventFormat.json.line(for: announcement) + "\n").utf8)
        for command in commands {
            supervisor.submit(HookRequest(command: command, environment: environment, input: input))
        }
    }

    /// Stops every running hook's process group (SIGTERM, then SIGKILL after the grace period),
    /// drops those still queued, reaps every child, and returns when none is left; later events
    /// run no hook.
    public func shutdown() async {
        await supervisor.shutdown()
    }

    /// The longest text a `GEOALARM_*` variable holds: Linux refuses to start a program with a
    /// variable over 128 KiB. The whole text is always in the JSON line on stdin.
    public static let longestVariable = 32 * 1024

    /// The `GEOALARM_*` variables describing `announcement` (position and distance empty for a time alarm).
    public static func variables(for announcement: Announcement) -> [String: String] {
        func text(_ value: String) -> String {
            value.utf8.count <= longestVariable ? value : String(decoding: value.utf8.prefix(longestVariable), as: UTF8.self)
        }
        var variables = [
            "GEOALARM_EVENT": announcement.kind.rawValue,
            "GEOALARM_REMINDER": announcement.id,
            "GEOALARM_TITLE": text(announcement.title),
            "GEOALARM_NOTES": text(announcement.notes ?? ""),
            "GEOALARM_LAT": "",
            "GEOALARM_LON": "",
            "GEOALARM_DISTANCE_M": "",
            "GEOALARM_ETA_S": "",
            "GEOALARM_TIME": announcement.time.map(Timestamp.iso8601) ?? "",
        ]
        if case .crossing(let event) = announcement {
            variables["GEOALARM_LAT"] = JSONText.number(event.fix.coordinate.latitude)
            variables["GEOALARM_LON"] = JSONText.number(event.fix.coordinate.longitude)
            variables["GEOALARM_DISTANCE_M"] = JSONText.number((event.distance * 10).rounded() / 10)
            // An approach's estimated seconds to the edge.
            if let eta = event.proximity?.eta, eta.isFinite { variables["GEOALARM_ETA_S"] = JSONText.number(eta.rounded()) }
        }
        // Only for a tracked device's event (OwnTracks): this machine's own events have none.
        if let device = announcement.device { variables["GEOALARM_DEVICE"] = text(device) }
        return variables
    }
}

/// One hook to run.
struct HookRequest: Sendable {
    var command: [String]
    var environment: [String: String]
    var input: [UInt8]

    var name: String { DisplayText.escaped(command.joined(separator: " ")) }
}

/// Starts hooks, feeds and drains their pipes, and reaps them, on the agent's event loop: each
/// running hook's pidfd and pipes are watched there, and its deadline is a timer there.
final class HookSupervisor: Sendable {
    /// Hooks taken and not yet ended, counted as they are submitted (from any thread), so that
    /// admission does not depend on how soon the loop starts them.
    private struct Admission {
        var count = 0
        var stopping = false
    }

    /// What the loop keeps of the hooks.
    private struct Hooks {
        var queue: [HookRequest] = []
        var running: [Int: ActiveHook] = [:]
        var nextNumber = 0
        /// Shutdowns waiting for the last hook to end.
        var whenDone: [CheckedContinuation<Void, Never>] = []
    }

    /// A running hook with the loop's watches on its descriptors and its deadline's timer.
    private struct ActiveHook {
        var hook: RunningHook
        var watches: [EventLoop.Watch] = []
        var watched: [Int32] = []
        var timer: EventLoop.Timer?
        var deadline: ContinuousClock.Instant?
    }

    private let timeout: Double
    private let logger: Logger
    private let observer: (@Sendable ([String], HookOutcome) -> Void)?
    private let loop: EventLoop
    private let admission = Mutex(Admission())
    private let hooks: Confined<Hooks>

    init(timeout: Double, loop: EventLoop, logger: Logger, observer: (@Sendable ([String], HookOutcome) -> Void)?) {
        self.timeout = timeout
        self.logger = logger
        self.observer = observer
        self.loop = loop
        hooks = Confined(Hooks(), on: loop)
    }

    func submit(_ request: HookRequest) {
        let accepted = admission.withLock { admission in
            guard !admission.stopping,
                  admission.count < HookRunner.maximumQueued + HookRunner.maximumRunning else { return false }
            admission.count += 1
            return true
        }
        guard accepted else {
            return report(request.command, .notRun("\(HookRunner.maximumRunning) hooks running and \(HookRunner.maximumQueued) waiting (or the agent is stopping)"))
        }
        loop.execute { [self] in
            hooks.value.queue.append(request)
            startWaiting()
        }
    }

    /// Stops every running hook's process group (SIGTERM, then SIGKILL after the grace period),
    /// drops those still queued, and returns once every child is reaped.
    func shutdown() async {
        admission.withLock { $0.stopping = true }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                let dropped = hooks.value.queue
                hooks.value.queue = []
                admission.withLock { $0.count -= dropped.count }
                for request in dropped { report(request.command, .notRun("the agent is stopping")) }
                for number in hooks.value.running.keys {
                    guard var active = hooks.value.running[number] else { continue }
                    active.hook.stop(.stoppedAtShutdown, grace: HookRunner.killGrace)
                    hooks.value.running[number] = follow(number, active)
                }
                if hooks.value.running.isEmpty {
                    done.resume()
                } else {
                    hooks.value.whenDone.append(done)
                }
            }
        }
    }

    /// Starts queued hooks while fewer than ``HookRunner/maximumRunning`` run.
    private func startWaiting() {
        while hooks.value.running.count < HookRunner.maximumRunning, !hooks.value.queue.isEmpty {
            let request = hooks.value.queue.removeFirst()
            switch RunningHook.start(request, timeout: timeout) {
            case .success(let hook):
                hooks.value.nextNumber += 1
                let number = hooks.value.nextNumber
                hooks.value.running[number] = follow(number, ActiveHook(hook: hook))
            case .failure(let failure):
                admission.withLock { $0.count -= 1 }
                report(request.command, .notRun(failure.reason))
            }
        }
    }

    /// Watches the descriptors the hook has open now and sets its deadline's timer, changing
    /// only what changed.
    private func follow(_ number: Int, _ active: ActiveHook) -> ActiveHook {
        var active = active
        let descriptors = active.hook.pollDescriptors
        if descriptors.map(\.fd) != active.watched {
            for watch in active.watches { loop.unwatch(watch) }
            active.watches = descriptors.map { descriptor in
                let interest = EventLoop.Interest(rawValue: descriptor.events)
                return loop.watch(descriptor.fd, for: interest) { [self] _ in serve(number) }
            }
            active.watched = descriptors.map(\.fd)
        }
        if active.deadline != active.hook.deadline {
            if let timer = active.timer { loop.cancel(timer) }
            active.timer = loop.schedule(at: active.hook.deadline) { [self] in serve(number) }
            active.deadline = active.hook.deadline
        }
        return active
    }

    /// Acts on whatever the hook's descriptors and deadline say now.
    private func serve(_ number: Int) {
        guard var active = hooks.value.running[number] else { return }
        var descriptors = active.hook.pollDescriptors
        do {
            _ = try System.poll(&descriptors, milliseconds: 0)
        } catch {
            logger.error("hooks: \(error.call) failed: \(error.reason)")
        }
        guard let outcome = active.hook.handle(descriptors, now: .now) else {
            hooks.value.running[number] = follow(number, active)
            return
        }
        for watch in active.watches { loop.unwatch(watch) }
        if let timer = active.timer { loop.cancel(timer) }
        hooks.value.running[number] = nil
        admission.withLock { $0.count -= 1 }
        log(active.hook, outcome)
        startWaiting()
        if hooks.value.running.isEmpty, hooks.value.queue.isEmpty {
            let waiting = hooks.value.whenDone
            hooks.value.whenDone = []
            for done in waiting { done.resume() }
        }
    }

    private func log(_ hook: RunningHook, _ outcome: HookOutcome) {
        let name = hook.request.name
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let start = hook.stderr.firstIndex { !isBlank($0) } ?? hook.stderr.endIndex
        let end = hook.stderr.lastIndex { !isBlank($0) }.map { $0 + 1 } ?? start
        let trimmed = DisplayText.excerpt(hook.stderr[start..<max(start, end)], limit: 300)
        switch outcome {
        case .succeeded:
            logger.debug("hook \(name) done\(trimmed.isEmpty ? "" : ": \(trimmed)")")
        case .failed(let status):
            logger.warning("hook \(name) failed with exit status \(status)\(trimmed.isEmpty ? "" : ": \(trimmed)")")
        case .timedOut:
            logger.warning("hook \(name) still running after \(JSONText.number(timeout)) s; stopped it")
        case .stoppedAtShutdown:
            logger.warning("hook \(name) still running when the agent stopped; stopped it")
        case .notRun:
            break
        }
        observer?(hook.request.command, outcome)
    }

    private func report(_ command: [String], _ outcome: HookOutcome) {
        if case .notRun(let reason) = outcome {
            logger.warning("hook \(DisplayText.escaped(command.joined(separator: " "))) not run: \(reason)")
        }
        observer?(command, outcome)
    }
}

/// A started hook: its process, the pidfd that says when it ends, our ends of its pipes, and its deadline.
struct RunningHook {
    let request: HookRequest
    let child: ChildProcess
    private var processDescriptor: Int32
    private var stdinDescriptor: Int32
    private var stderrDescriptor: Int32
    private var written = 0
    private(set) var stderr: [UInt8] = []
    /// When the hook must end by (its timeout), or when SIGKILL follows SIGTERM.
    private(set) var deadline: ContinuousClock.Instant
    /// Set once SIGTERM was sent: why the hook is being stopped.
    private var stopping: HookOutcome?

    /// Why a hook could not be started.
    struct NotStarted: Error {
        var reason: String
    }

    static func start(_ request: HookRequest, timeout: Double) -> Result<RunningHook, NotStarted> {
        // A hook that exits without reading its stdin must not take the agent down with SIGPIPE.
        System.ignoreBrokenPipes()
        let stdin: (read: Int32, write: Int32)
        let stderr: (read: Int32, write: Int32)
        do {
            stdin = try System.pipe()
        } catch {
            return .failure(NotStarted(reason: "cannot make a pipe: \(error.reason)"))
        }
        do {
            stderr = try System.pipe()
        } catch {
            [stdin.read, stdin.write].forEach(System.close)
            return .failure(NotStarted(reason: "cannot make a pipe: \(error.reason)"))
        }
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(
                request.command, environment: request.environment,
                stdin: .descriptor(stdin.read), stderr: .descriptor(stderr.write))
        } catch {
            [stdin.read, stdin.write, stderr.read, stderr.write].forEach(System.close)
            return .failure(NotStarted(reason: error.description))
        }
        System.close(stdin.read)
        System.close(stderr.write)
        let deadline = ContinuousClock.now + .milliseconds(Int64((timeout * 1000).rounded()))
        let process: Int32
        do {
            try System.setNonBlocking(stdin.write)
            try System.setNonBlocking(stderr.read)
            process = try System.processDescriptor(child.pid)
        } catch {
            System.killGroup(child.pid, SIGKILL)
            _ = try? System.wait(child.pid, block: true)
            [stdin.write, stderr.read].forEach(System.close)
            return .failure(NotStarted(reason: "cannot watch it: \(error.call): \(error.reason)"))
        }
        return .success(RunningHook(
            request: request, child: child, processDescriptor: process, stdinDescriptor: stdin.write,
            stderrDescriptor: stderr.read, deadline: deadline))
    }

    /// What to poll: the pidfd, then stdin while input is left, then stderr while open.
    var pollDescriptors: [pollfd] {
        var list = [pollfd(fd: processDescriptor, events: Int16(POLLIN), revents: 0)]
        if stdinDescriptor >= 0 { list.append(pollfd(fd: stdinDescriptor, events: Int16(POLLOUT), revents: 0)) }
        if stderrDescriptor >= 0 { list.append(pollfd(fd: stderrDescriptor, events: Int16(POLLIN), revents: 0)) }
        return list
    }

    /// Sends SIGTERM to the hook's group (once) and gives it `grace` seconds before SIGKILL.
    mutating func stop(_ reason: HookOutcome, grace: Double) {
        guard stopping == nil else { return }
        stopping = reason
        System.killGroup(child.pid, SIGTERM)
        deadline = ContinuousClock.now + .milliseconds(Int64(grace * 1000))
        closeStdin()
    }

    /// Acts on what `poll` said of this hook's descriptors (in ``pollDescriptors`` order) and on
    /// the clock; returns how the hook ended once its process has ended and been reaped.
    mutating func handle(_ events: [pollfd], now: ContinuousClock.Instant) -> HookOutcome? {
        var next = 1
        if stdinDescriptor >= 0 {
            if events[next].revents != 0 { feedStdin() }
            next += 1
        }
        if stderrDescriptor >= 0, events[next].revents != 0 { drainStderr() }
        if events[0].revents != 0 {
            // The process has ended: what it wrote before it ended is in the pipe already.
            if stderrDescriptor >= 0 { drainStderr() }
            let status = (try? System.wait(child.pid, block: true)) ?? nil
            closeAll()
            if let stopping { return stopping }
            return status == 0 ? .succeeded : .failed(status: status ?? -1)
        }
        if now >= deadline {
            if stopping == nil {
                stop(.timedOut, grace: HookRunner.killGrace)
            } else {
                System.killGroup(child.pid, SIGKILL)
                deadline = now + .seconds(60)
            }
        }
        return nil
    }

    private mutating func feedStdin() {
        let remaining = request.input[written...]
        do {
            written += try System.writeSome(stdinDescriptor, remaining)
        } catch {
            // EPIPE: the hook closed its stdin; what it did not read is dropped.
            return closeStdin()
        }
        if written == request.input.count { closeStdin() }
    }

    private mutating func drainStderr() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count: Int
        do {
            count = try System.read(stderrDescriptor, into: &chunk)
        } catch where error.code == EAGAIN || error.code == EWOULDBLOCK {
            return
        } catch {
            count = 0
        }
        guard count > 0 else {
            System.close(stderrDescriptor)
            stderrDescriptor = -1
            return
        }
        stderr += chunk[..<min(count, max(0, HookRunner.keptStderr - stderr.count))]
    }

    private mutating func closeStdin() {
        guard stdinDescriptor >= 0 else { return }
        System.close(stdinDescriptor)
        stdinDescriptor = -1
    }

    private mutating func closeAll() {
        closeStdin()
        if stderrDescriptor >= 0 { System.close(stderrDescriptor) }
        stderrDescriptor = -1
        System.close(processDescriptor)
        processDescriptor = -1
    }
}
