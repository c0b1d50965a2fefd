@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
import Glibc

/// Swift concurrency's main and default executors, both run by the thread that calls
/// ``run(_:)``: it sleeps in one `poll` until a job is enqueued, a timer (a `Task.sleep`) is
/// due or a watched descriptor is readable, and wakes for nothing else.
///
/// On Linux the standard executors hand tasks to libdispatch's worker pool, whose monitor then
/// wakes the process every second for as long as it lives: a second wake-up per fix and sixty a
/// minute when idle. geoalarm's tasks only pass data along, so one thread serves them all; a
/// source that reads a socket can have this thread wait on it too (``watch(_:onReadable:)``),
/// so that a report from gpsd wakes one thread, not a reader and then the loop.
public enum OneThreadExecutors {
    private static let loop = JobLoop()

    private enum Factory: ExecutorFactory {
        static var mainExecutor: any MainExecutor { loop.mainExecutor }
        static var defaultExecutor: any TaskExecutor { loop.taskExecutor }
    }

    /// Installs these executors, runs `body` as the first task on the calling thread, and exits
    /// the process with the status `body` returns.
    public static func run(_ body: @escaping @Sendable () async -> Int32) -> Never {
        _createExecutors(factory: Factory.self)
        Task { exit(await body()) }
        loop.run()
    }

    /// A descriptor the loop waits on, until ``unwatch(_:)`` or its callback ends the watch.
    public struct Watch: Sendable, Equatable {
        let number: Int
    }

    /// Has the loop call `onReadable` on its thread whenever `descriptor` is readable (or has
    /// hung up), until `onReadable` returns false or ``unwatch(_:)`` is called. Nil when these
    /// executors are not running (in tests, say): the caller then waits on a thread of its own.
    public static func watch(_ descriptor: Int32, onReadable: @escaping @Sendable () -> Bool) -> Watch? {
        loop.watch(descriptor, onReadable: onReadable)
    }

    /// Ends a watch. When it returns, the watch's callback is not running and will not run again
    /// (unless called from that callback itself, which is then still running).
    public static func unwatch(_ watch: Watch) {
        loop.unwatch(watch)
    }
}

/// The queue of jobs, timers and watched descriptors, and the loop that serves them.
private final class JobLoop: @unchecked Sendable {
    /// Which executor a job was given to: the main actor's (serial) or the default one.
    enum Role { case main, task }

    private struct Timer {
        var deadline: ContinuousClock.Instant
        var job: UnownedJob
        var role: Role
    }

    private struct WatchedDescriptor {
        var watch: OneThreadExecutors.Watch
        var descriptor: Int32
        var onReadable: @Sendable () -> Bool
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled when the loop has finished a watch's callback (``unwatch(_:)`` may wait for it).
    private let callbackDone = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// An eventfd that wakes the loop from its `poll`, or why none could be made.
    private let wakeEvent: Result<Int32, SystemError>
    private var ready: [(job: UnownedJob, role: Role)] = []
    /// Sorted by deadline, the earliest last.
    private var timers: [Timer] = []
    private var watched: [WatchedDescriptor] = []
    private var nextWatchNumber = 0
    /// The watch whose callback the loop is running.
    private var runningCallback: OneThreadExecutors.Watch?
    private var loopThread: pthread_t?
    /// Whether the loop is in its `poll` (then an enqueue must wake it).
    private var isWaiting = false

    private(set) var mainExecutor: LoopMainExecutor!
    private(set) var taskExecutor: LoopTaskExecutor!

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(callbackDone, nil)
        wakeEvent = Result { () throws(SystemError) in try System.eventDescriptor() }
        mainExecutor = LoopMainExecutor(loop: self)
        taskExecutor = LoopTaskExecutor(loop: self)
    }

    func enqueue(_ job: UnownedJob, role: Role) {
        pthread_mutex_lock(mutex)
        ready.append((job, role))
        wakeLoopAndUnlock()
    }

    /// Unlocks, then wakes the loop if it waits.
    private func wakeLoopAndUnlock() {
        let wake = isWaiting
        isWaiting = false
        pthread_mutex_unlock(mutex)
        if wake, case .success(let wakeEvent) = wakeEvent { System.signalEvent(wakeEvent) }
    }

    func enqueue(_ job: UnownedJob, role: Role, after delay: Duration) {
        let timer = Timer(deadline: .now + max(delay, .zero), job: job, role: role)
        pthread_mutex_lock(mutex)
        let index = timers.firstIndex { $0.deadline <= timer.deadline } ?? timers.endIndex
        timers.insert(timer, at: index)
        wakeLoopAndUnlock()
    }

    func watch(_ descriptor: Int32, onReadable: @escaping @Sendable () -> Bool) -> OneThreadExecutors.Watch? {
        pthread_mutex_lock(mutex)
        guard loopThread != nil else {
            pthread_mutex_unlock(mutex)
            return nil
        }
        nextWatchNumber += 1
        let watch = OneThreadExecutors.Watch(number: nextWatchNumber)
        watched.append(WatchedDescriptor(watch: watch, descriptor: descriptor, onReadable: onReadable))
        wakeLoopAndUnlock()
        return watch
    }

    func unwatch(_ watch: OneThreadExecutors.Watch) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        watched.removeAll { $0.watch == watch }
        while runningCallback == watch, !isLoopThread { pthread_cond_wait(callbackDone, mutex) }
    }

    /// Whether the caller is the loop's thread.
    var isLoopThread: Bool {
        guard let loopThread else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }

    func run() -> Never {
        guard case .success(let wakeEvent) = wakeEvent else {
            if case .failure(let error) = wakeEvent {
                try? System.writeAll(2, Array("geoalarm: cannot make an eventfd for its task loop: \(error.reason)\n".utf8))
            }
            exit(70)
        }
        pthread_mutex_lock(mutex)
        loopThread = pthread_self()
        pthread_mutex_unlock(mutex)
        while true {
            let (jobs, readable) = nextBatch(wakeEvent: wakeEvent)
            for watch in readable { runCallback(of: watch) }
            for (job, role) in jobs {
                switch role {
                case .main: job.runSynchronously(on: mainExecutor.asUnownedSerialExecutor())
                case .task: job.runSynchronously(on: taskExecutor.asUnownedTaskExecutor())
                }
            }
        }
    }

    /// Runs a readable descriptor's callback, unless its watch has ended meanwhile, and ends the
    /// watch when the callback asks to.
    private func runCallback(of watch: OneThreadExecutors.Watch) {
        pthread_mutex_lock(mutex)
        guard let callback = watched.first(where: { $0.watch == watch })?.onReadable else {
            pthread_mutex_unlock(mutex)
            return
        }
        runningCallback = watch
        pthread_mutex_unlock(mutex)
        let keep = callback()
        pthread_mutex_lock(mutex)
        runningCallback = nil
        if !keep { watched.removeAll { $0.watch == watch } }
        pthread_cond_broadcast(callbackDone)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until a job is ready, a timer is due or a watched descriptor is readable, and takes
    /// every job that is ready and every watch that is readable.
    private func nextBatch(wakeEvent: Int32) -> (jobs: [(job: UnownedJob, role: Role)], readable: [OneThreadExecutors.Watch]) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var readable: [OneThreadExecutors.Watch] = []
        while true {
            let now = ContinuousClock.now
            while let last = timers.last, last.deadline <= now {
                ready.append((last.job, last.role))
                timers.removeLast()
            }
            if !ready.isEmpty || !readable.isEmpty {
                defer { ready.removeAll(keepingCapacity: true) }
                return (ready, readable)
            }
            var descriptors = [pollfd(fd: wakeEvent, events: Int16(POLLIN), revents: 0)]
            descriptors += watched.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            let watches = watched.map(\.watch)
            let wait = System.pollTimeout(until: timers.last?.deadline, from: now, atMost: .seconds(3600))
            isWaiting = true
            pthread_mutex_unlock(mutex)
            _ = try? System.poll(&descriptors, milliseconds: wait)
            pthread_mutex_lock(mutex)
            isWaiting = false
            if descriptors[0].revents != 0 { System.clearEvent(wakeEvent) }
            readable = zip(watches, descriptors.dropFirst()).filter { $0.1.revents != 0 }.map(\.0)
        }
    }

    /// A delay on any clock as a duration; a clock other than Swift's own counts as no delay.
    static func duration(_ delay: some DurationProtocol) -> Duration {
        delay as? Duration ?? .zero
    }
}

/// An executor that hands its jobs, now or after a delay, to the loop.
private protocol LoopExecutor: SchedulingExecutor {
    var loop: JobLoop { get }
    /// How the loop runs the jobs given to this executor.
    static var role: JobLoop.Role { get }
}

extension LoopExecutor {
    func enqueue(_ job: consuming ExecutorJob) { loop.enqueue(UnownedJob(job), role: Self.role) }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
        loop.enqueue(UnownedJob(job), role: Self.role, after: JobLoop.duration(delay))
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        enqueue(job, after: clock.now.duration(to: instant), tolerance: tolerance, clock: clock)
    }
}

/// The main actor's executor: serial, on the loop's thread.
private final class LoopMainExecutor: MainExecutor, LoopExecutor, @unchecked Sendable {
    static let role = JobLoop.Role.main
    unowned let loop: JobLoop

    init(loop: JobLoop) { self.loop = loop }

    func isIsolatingCurrentContext() -> Bool? { loop.isLoopThread }

    func checkIsolated() {
        precondition(loop.isLoopThread, "not on the main actor's thread")
    }

    /// The loop runs from ``OneThreadExecutors/run(_:)``, never through the runtime.
    func run() throws {}
    func stop() {}
}

/// The default executor of tasks: the same thread.
private final class LoopTaskExecutor: TaskExecutor, LoopExecutor, @unchecked Sendable {
    static let role = JobLoop.Role.task
    unowned let loop: JobLoop

    init(loop: JobLoop) { self.loop = loop }
}
