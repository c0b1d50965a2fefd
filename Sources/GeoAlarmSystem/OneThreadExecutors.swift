@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
import Glibc

/// Swift concurrency's main and default executors, both run by the thread that calls
/// ``run(_:)``: it sleeps in one condition wait until a job is enqueued or a timer (a
/// `Task.sleep`) is due, and wakes for nothing else.
///
/// On Linux the standard executors hand tasks to libdispatch's worker pool, whose monitor then
/// wakes the process every second for as long as it lives: a second wake-up per fix and sixty a
/// minute when idle. geoalarm's blocking work (gpsd, MQTT, inotify, the GLib loop) runs on
/// threads of its own, and its tasks only pass data along, so one thread serves them all.
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
}

/// The queue of jobs and timers, and the loop that runs them.
private final class JobLoop: @unchecked Sendable {
    /// Which executor a job was given to: the main actor's (serial) or the default one.
    enum Role { case main, task }

    private struct Timer {
        var deadline: ContinuousClock.Instant
        var job: UnownedJob
        var role: Role
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wakeUp = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var ready: [(job: UnownedJob, role: Role)] = []
    /// Sorted by deadline, the earliest last.
    private var timers: [Timer] = []
    private var loopThread: pthread_t?
    /// Whether the loop is in its condition wait (then an enqueue must wake it).
    private var isWaiting = false

    private(set) var mainExecutor: LoopMainExecutor!
    private(set) var taskExecutor: LoopTaskExecutor!

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(wakeUp, &attributes)
        pthread_condattr_destroy(&attributes)
        mainExecutor = LoopMainExecutor(loop: self)
        taskExecutor = LoopTaskExecutor(loop: self)
    }

    func enqueue(_ job: UnownedJob, role: Role) {
        pthread_mutex_lock(mutex)
        ready.append((job, role))
        wakeLoopAndUnlock()
    }

    /// Unlocks, then wakes the loop if it waits: signalled under the lock, it would wake only
    /// to block on the lock again, a second context switch.
    private func wakeLoopAndUnlock() {
        let wake = isWaiting
        pthread_mutex_unlock(mutex)
        if wake { pthread_cond_signal(wakeUp) }
    }

    func enqueue(_ job: UnownedJob, role: Role, after delay: Duration) {
        let timer = Timer(deadline: .now + max(delay, .zero), job: job, role: role)
        pthread_mutex_lock(mutex)
        let index = timers.firstIndex { $0.deadline <= timer.deadline } ?? timers.endIndex
        timers.insert(timer, at: index)
        wakeLoopAndUnlock()
    }

    /// Whether the caller is the loop's thread.
    var isLoopThread: Bool {
        guard let loopThread else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }

    func run() -> Never {
        loopThread = pthread_self()
        while true {
            for (job, role) in nextBatch() {
                switch role {
                case .main: job.runSynchronously(on: mainExecutor.asUnownedSerialExecutor())
                case .task: job.runSynchronously(on: taskExecutor.asUnownedTaskExecutor())
                }
            }
        }
    }

    /// Waits until a job is ready or a timer is due, and takes every one that is.
    private func nextBatch() -> [(job: UnownedJob, role: Role)] {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            let now = ContinuousClock.now
            while let last = timers.last, last.deadline <= now {
                ready.append((last.job, last.role))
                timers.removeLast()
            }
            if !ready.isEmpty {
                defer { ready.removeAll(keepingCapacity: true) }
                return ready
            }
            isWaiting = true
            defer { isWaiting = false }
            if let next = timers.last {
                var deadline = Self.monotonicDeadline(after: now.duration(to: next.deadline))
                pthread_cond_timedwait(wakeUp, mutex, &deadline)
            } else {
                pthread_cond_wait(wakeUp, mutex)
            }
        }
    }

    /// CLOCK_MONOTONIC's time `delay` from now, as the condition variable's deadline.
    private static func monotonicDeadline(after delay: Duration) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000) + 1
        return timespec(
            tv_sec: now.tv_sec + Int(seconds) + nanoseconds / 1_000_000_000,
            tv_nsec: nanoseconds % 1_000_000_000)
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
