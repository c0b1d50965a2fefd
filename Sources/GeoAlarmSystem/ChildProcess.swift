import Glibc

/// A child process started with posix_spawn, the way a daemon should start one.
///
/// The child gets an empty signal mask and default signal handlers (threads of a Swift
/// program block most signals, and a child would inherit that and never hear SIGTERM), and a
/// process group of its own, so that `kill(-pid)` ends it together with whatever it started.
public struct ChildProcess: Sendable {
    public let pid: pid_t

    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        case nullDevice
        /// A file, created or truncated for output, read for input.
        case file(String)
        /// An open descriptor of ours, duplicated into the child; the caller closes its own copy.
        case descriptor(Int32)
    }

    /// Why a child could not be started.
    public struct SpawnError: Error, Sendable, CustomStringConvertible {
        public var program: String
        public var code: Int32
        public var description: String { "cannot start \(program): \(String(cString: strerror(code)))" }
    }

    /// Starts `arguments[0]` (a path, or a name looked up on PATH) with `arguments` and exactly `environment`.
    public static func spawn(
        _ arguments: [String], environment: [String: String],
        stdin: Stream = .nullDevice, stdout: Stream = .nullDevice, stderr: Stream = .nullDevice
    ) throws(SpawnError) -> ChildProcess {
        precondition(!arguments.isEmpty, "a command needs a program")
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
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .nullDevice:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                let flags = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                posix_spawn_file_actions_addopen(&actions, target, path, flags, 0o644)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        // The child gets its three streams and nothing else: no socket, pipe, database or file of
        // this process that lacks close-on-exec (a script's write descriptor held open by a child
        // makes running that script fail with "Text file busy").
        _ = closeFrom?(&actions, 3)

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError(program: arguments[0], code: result) }
        return ChildProcess(pid: pid)
    }
}

/// The C type of glibc's `posix_spawn_file_actions_addclosefrom_np`.
private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), found at run time: its
/// header declares it only under `_GNU_SOURCE`, which defines `fd_set` in a way the Glibc module
/// cannot share. Nil on an older C library (children then inherit what lacks close-on-exec).
private let closeFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
    unsafeBitCast($0, to: CloseFrom.self)
}

extension ChildProcess {
    /// What a finished command said: its exit status (128 + the signal that ended it) and its output.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: [UInt8]
        public var stderr: [UInt8]
        /// Whether it was stopped at the timeout (its status is then SIGKILL's).
        public var timedOut = false
        /// Whether it wrote more than the limit on standard output (the rest was dropped).
        public var stdoutCut = false
    }

    /// Runs `arguments` to its end and returns what it wrote (each stream up to `limit` bytes, the
    /// rest read and dropped); a command still running after `timeout` is killed, with its group,
    /// whether or not it still holds its output open (a keyring helper that forks a daemon
    /// closes it and lives on: the wait for its end is bounded too).
    /// It blocks: run it on a thread of its own (``EventLoop/runOnThread(named:_:then:)``).
    public static func run(
        _ arguments: [String], environment: [String: String], limit: Int = 64 << 10, timeout: Duration = .seconds(30)
    ) throws(SpawnError) -> Output {
        guard let stdout = try? System.pipe(), let stderr = try? System.pipe() else {
            throw SpawnError(program: arguments.first ?? "", code: EMFILE)
        }
        let child: ChildProcess
        do {
            child = try spawn(arguments, environment: environment, stdout: .descriptor(stdout.write), stderr: .descriptor(stderr.write))
        } catch {
            [stdout.read, stdout.write, stderr.read, stderr.write].forEach(System.close)
            throw error
        }
        System.close(stdout.write)
        System.close(stderr.write)
        var output = Output(status: -1, stdout: [], stderr: [])
        var open = [stdout.read, stderr.read]
        let deadline = ContinuousClock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !open.isEmpty {
            let waiting = System.pollTimeout(until: deadline, atMost: timeout)
            var polled = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard waiting > 0, (try? System.poll(&polled, milliseconds: waiting)) != nil else { break }
            for entry in polled where entry.revents != 0 {
                let count = (try? System.read(entry.fd, into: &chunk)) ?? 0
                if count == 0 {
                    System.close(entry.fd)
                    open.removeAll { $0 == entry.fd }
                } else if entry.fd == stdout.read {
                    if output.stdout.count + count > limit { output.stdoutCut = true }
                    output.stdout += chunk.prefix(min(count, limit - output.stdout.count))
                } else {
                    output.stderr += chunk.prefix(min(count, limit - output.stderr.count))
                }
            }
        }
        if !open.isEmpty {
            output.timedOut = true
        } else if let ended = try? System.processDescriptor(child.pid) {
            // Its output closed: its end, within what is left of the timeout (a pidfd turns readable when it ends).
            var polled = [pollfd(fd: ended, events: Int16(POLLIN), revents: 0)]
            let waiting = System.pollTimeout(until: deadline, atMost: timeout)
            output.timedOut = waiting <= 0 || ((try? System.poll(&polled, milliseconds: waiting)) ?? 0) == 0
            System.close(ended)
        }
        if output.timedOut { System.killGroup(child.pid, SIGKILL) }
        open.forEach(System.close)
        output.status = ((try? System.wait(child.pid, block: true)) ?? nil) ?? -1
        return output
    }
}
