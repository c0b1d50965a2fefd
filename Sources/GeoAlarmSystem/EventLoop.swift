import Glibc
import Synchronization

/// One thread that waits in one `poll` for everything a process waits on: Swift tasks' jobs (it
/// is a `TaskExecutor`), readable or writable descriptors, timers and signals. It wakes for
/// nothing else.
///
/// Swift's default executor on Linux hands tasks to libdispatch's worker pool, whose monitor then
/// wakes the process every second for as long as it lives. geoalarm's tasks only pass data
/// along, so its commands run every task on this loop instead (``Task(executorPreference:)``,
/// public API; child tasks inherit the preference), and the agent's sources and sinks hand it
/// their descriptors (gpsd's socket, the MQTT socket, inotify, hooks' pidfds and pipes, a
/// signalfd), so that a report from gpsd wakes one thread, once.
///
/// Callbacks of watches and timers run on the loop's thread, one at a time, between jobs.
/// ``Confined`` holds state that only that thread may touch, and checks it.
public final class EventLoop: TaskExecutor, Sendable {
    /// What a watch waits for.
    public struct Interest: OptionSet, Sendable, Hashable {
        public let rawValue: Int16
        public init(rawValue: Int16) { self.rawValue = rawValue }
        public static let readable = Interest(rawValue: Int16(POLLIN))
        public static let writable = Interest(rawValue: Int16(POLLOUT))
    }

    /// A descriptor the loop waits on, until ``unwatch(_:)``.
    public struct Watch: Sendable, Hashable {
        let number: Int
    }

    /// A callback the loop runs once at a moment, unless ``cancel(_:)`` comes first.
    public struct Timer: Sendable, Hashable {
        let number: Int
    }

    private struct Watched {
        var watch: Watch
        var descriptor: Int32
        var interest: Interest
        /// Called with what the descriptor is ready for (a hang-up or error counts as readable).
        var callback: @Sendable (Interest) -> Void
    }

    private struct Scheduled {
        var timer: Timer
        var deadline: ContinuousClock.Instant
        var callback: @Sendable () -> Void
    }

    private struct State: ~Copyable {
        var jobs: [UnownedJob] = []
        var watched: [Watched] = []
        /// Sorted by deadline, the earliest last.
        var timers: [Scheduled] = []
        var nextNumber = 0
        /// Whether the loop sits in `poll` (then an enqueue must wake it).
        var isWaiting = false
        var isStopped = false
    }

    private let state = Mutex(State())
    /// The thread running the loop (0 when none): read on every access to a ``Confined`` value,
    /// so it is an atomic, not behind the state's lock.
    private let thread = Atomic<UInt>(0)
    /// The eventfd that wakes the loop from its `poll`, or why none could be made.
    private let wakeEvent: Result<Int32, SystemError>

    public init() {
        wakeEvent = Result { () throws(SystemError) in try System.eventDescriptor() }
    }

    /// The loop of the process's commands: ``run()`` by `main` on the main thread.
    public static let main = EventLoop()

    /// Whether the caller runs on the loop's thread.
    public var isCurrent: Bool {
        thread.load(ordering: .relaxed) == UInt(pthread_self())
    }

    // MARK: Tasks

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wake = state.withLock { state in
            state.jobs.append(job)
            return Self.takeWaiting(&state)
        }
        if wake { wakeUp() }
    }

    // MARK: Descriptors

    /// Has the loop call `callback` on its thread whenever `descriptor` is ready for `interest`
    /// (a hang-up or an error counts as readable), until ``unwatch(_:)``.
    public func watch(_ descriptor: Int32, for interest: Interest = .readable,
                      _ callback: @escaping @Sendable (Interest) -> Void) -> Watch {
        let (watch, wake) = state.withLock { state in
            state.nextNumber += 1
            let watch = Watch(number: state.nextNumber)
            state.watched.append(Watched(watch: watch, descriptor: descriptor, interest: interest, callback: callback))
            return (watch, Self.takeWaiting(&state))
        }
        if wake { wakeUp() }
        return watch
    }

    /// Changes what a watch waits for (an empty interest pauses it).
    public func update(_ watch: Watch, interest: Interest) {
        let wake = state.withLock { state in
            guard let index = state.watched.firstIndex(where: { $0.watch == watch }),
                  state.watched[index].interest != interest else { return false }
            state.watched[index].interest = interest
            return Self.takeWaiting(&state)
        }
        if wake { wakeUp() }
    }

    /// Ends a watch; called on the loop's thread (where every callback runs), its callback is not
    /// called again once this returns, and the descriptor is the caller's to close.
    public func unwatch(_ watch: Watch) {
        state.withLock { state in state.watched.removeAll { $0.watch == watch } }
    }

    // MARK: Timers

    /// Has the loop call `callback` on its thread at `deadline` (at once if it has passed).
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ callback: @escaping @Sendable () -> Void) -> Timer {
        let (timer, wake) = state.withLock { state in
            state.nextNumber += 1
            let timer = Timer(number: state.nextNumber)
            let index = state.timers.firstIndex { $0.deadline <= deadline } ?? state.timers.endIndex
            state.timers.insert(Scheduled(timer: timer, deadline: deadline, callback: callback), at: index)
            return (timer, Self.takeWaiting(&state))
        }
        if wake { wakeUp() }
        return timer
    }

    /// Has the loop call `body` on its thread soon, after what it has been given before.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        schedule(at: .now, body)
    }

    /// Runs `work` on a thread of its own (a call that blocks, such as a connect), then `done`
    /// with its result on the loop, once that thread has ended and been joined: a client that
    /// connected leaves no thread behind.
    public func runOnThread<Result: Sendable>(
        named name: String, _ work: @escaping @Sendable () -> Result, then done: @escaping @Sendable (Result) -> Void
    ) throws(SystemError) {
        try System.startThread(named: name, detached: false) { [self] in
            let result = work()
            let thread = pthread_self()
            execute {
                System.join(thread)
                done(result)
            }
        }
    }

    /// Cancels a timer that has not fired; one that fired or was cancelled already is no matter.
    public func cancel(_ timer: Timer) {
        state.withLock { state in state.timers.removeAll { $0.timer == timer } }
    }

    // MARK: Running

    /// Runs the loop on the calling thread until ``stop()``. Exits the process with status 70 when
    /// the loop could not make its eventfd (the process is out of descriptors at start).
    public func run() {
        guard case .success(let wakeEvent) = wakeEvent else {
            if case .failure(let error) = wakeEvent {
                try? System.writeAll(2, Array("geoalarm: cannot make an eventfd for its loop: \(error.reason)\n".utf8))
            }
            exit(70)
        }
        thread.store(UInt(pthread_self()), ordering: .relaxed)
        defer { thread.store(0, ordering: .relaxed) }
        while let batch = nextBatch(wakeEvent: wakeEvent) {
            for (watch, ready) in batch.ready { runCallback(of: watch, ready: ready) }
            for callback in batch.timers { callback() }
            for job in batch.jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// Ends ``run()`` after the batch it runs now (from any thread).
    public func stop() {
        let wake = state.withLock { state in
            state.isStopped = true
            return Self.takeWaiting(&state)
        }
        if wake { wakeUp() }
    }

    /// Starts a thread that runs a new loop until ``stop()`` (for tests and tools that have no
    /// loop of their own on their main thread).
    public static func startOnNewThread() throws(SystemError) -> EventLoop {
        let loop = EventLoop()
        let started = Mutex(false)
        try System.startThread(named: "event loop") {
            loop.thread.store(UInt(pthread_self()), ordering: .relaxed)
            started.withLock { $0 = true }
            loop.run()
        }
        while !started.withLock({ $0 }) { sched_yield() }
        return loop
    }

    private static func takeWaiting(_ state: inout State) -> Bool {
        defer { state.isWaiting = false }
        return state.isWaiting
    }

    private func wakeUp() {
        if case .success(let wakeEvent) = wakeEvent { System.signalEvent(wakeEvent) }
    }

    private func runCallback(of watch: Watch, ready: Interest) {
        // A callback run earlier in this batch may have ended the watch.
        let callback = state.withLock { state in state.watched.first { $0.watch == watch }?.callback }
        callback?(ready)
    }

    private struct Batch {
        var jobs: [UnownedJob]
        var timers: [@Sendable () -> Void]
        var ready: [(Watch, Interest)]
    }

    /// Waits until a job is ready, a timer is due or a watched descriptor is ready, and takes
    /// them all; nil once stopped.
    private func nextBatch(wakeEvent: Int32) -> Batch? {
        var ready: [(Watch, Interest)] = []
        while true {
            let (batch, descriptors, watches, timeout): (Batch?, [pollfd], [Watch], Int32) = state.withLock { state in
                if state.isStopped { return (nil, [], [], 0) }
                let now = ContinuousClock.now
                var due: [@Sendable () -> Void] = []
                while let last = state.timers.last, last.deadline <= now {
                    due.append(last.callback)
                    state.timers.removeLast()
                }
                if !state.jobs.isEmpty || !due.isEmpty || !ready.isEmpty {
                    defer { state.jobs.removeAll(keepingCapacity: true) }
                    return (Batch(jobs: state.jobs, timers: due, ready: ready), [], [], 0)
                }
                let active = state.watched.filter { !$0.interest.isEmpty }
                let descriptors = [pollfd(fd: wakeEvent, events: Int16(POLLIN), revents: 0)]
                    + active.map { pollfd(fd: $0.descriptor, events: $0.interest.rawValue, revents: 0) }
                state.isWaiting = true
                let timeout = System.pollTimeout(until: state.timers.last?.deadline, from: now, atMost: .seconds(3600))
                return (nil, descriptors, active.map(\.watch), timeout)
            }
            if let batch { return batch }
            if descriptors.isEmpty { return nil }
            var polled = descriptors
            _ = try? System.poll(&polled, milliseconds: timeout)
            state.withLock { $0.isWaiting = false }
            if polled[0].revents != 0 { System.clearEvent(wakeEvent) }
            ready = zip(watches, polled.dropFirst()).compactMap { watch, descriptor in
                guard descriptor.revents != 0 else { return nil }
                var interest = Interest(rawValue: descriptor.revents & Int16(POLLIN | POLLOUT))
                if descriptor.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { interest.insert(.readable) }
                return (watch, interest)
            }
        }
    }
}

/// A value that only one thread may touch (an event loop's, GLib's): every access checks that
/// it runs there, so the confinement that makes it safe to share is enforced, not just stated.
public final class Confined<Value>: @unchecked Sendable {
    private let isOwner: @Sendable () -> Bool
    private var stored: Value

    /// A value that only the thread for which `isOwner` says true may touch.
    public init(_ value: Value, owner isOwner: @escaping @Sendable () -> Bool) {
        self.isOwner = isOwner
        stored = value
    }

    /// A value that only `loop`'s thread may touch.
    public convenience init(_ value: Value, on loop: EventLoop) {
        self.init(value) { loop.isCurrent }
    }

    /// The value; traps when read or changed off its thread.
    public var value: Value {
        get {
            precondition(isOwner(), "a thread-confined value touched off its thread")
            return stored
        }
        _modify {
            precondition(isOwner(), "a thread-confined value touched off its thread")
            yield &stored
        }
    }
}
