import Foundation
import GeoAlarmSystem
import Synchronization
import Testing

/// The agent's one loop: jobs, descriptors, timers and stopping, each waited for on its event
/// with a deadline that only bounds a failure.
struct EventLoopTests {
    /// Collects what a loop's callbacks report, for a test to wait on.
    final class Reports<Value: Sendable>: Sendable {
        private let values = Mutex<[Value]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func add(_ value: Value) {
            values.withLock { $0.append(value) }
            arrived.signal()
        }

        /// Waits until `count` values came; what came (fewer after `seconds`).
        func wait(for count: Int, seconds: Double = 30) -> [Value] {
            let end = DispatchTime.now() + seconds
            while values.withLock({ $0.count }) < count, arrived.wait(timeout: end) == .success {}
            return values.withLock { $0 }
        }

        var all: [Value] { values.withLock { $0 } }
    }

    @Test func tasksPreferringTheLoopRunOnItsThread() async throws {
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        #expect(!loop.isCurrent)
        let onLoop = await Task(executorPreference: loop) { loop.isCurrent }.value
        #expect(onLoop)
        // Child tasks inherit the preference.
        let children = await Task(executorPreference: loop) {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 { group.addTask { loop.isCurrent } }
                return await group.reduce(true) { $0 && $1 }
            }
        }.value
        #expect(children)
    }

    @Test func aWatchedPipeWakesItsCallbackOnTheLoopUntilUnwatched() throws {
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let pipe = try System.pipe(nonBlocking: true)
        defer { [pipe.read, pipe.write].forEach(System.close) }
        let reads = Reports<(Bool, [UInt8])>()
        let watch = loop.watch(pipe.read) { ready in
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = (try? System.read(pipe.read, into: &buffer)) ?? 0
            reads.add((ready.contains(.readable) && loop.isCurrent, Array(buffer.prefix(count))))
        }
        try System.writeAll(pipe.write, [1, 2, 3])
        let first = reads.wait(for: 1)
        #expect(first.count == 1 && first[0].0 && first[0].1 == [1, 2, 3])
        // Once unwatched (on the loop), more data wakes nothing; a later timer proves the loop went on.
        let done = Reports<Int>()
        loop.execute {
            loop.unwatch(watch)
            try? System.writeAll(pipe.write, [4])
            loop.schedule(at: .now) { done.add(1) }
        }
        #expect(done.wait(for: 1) == [1])
        #expect(reads.all.count == 1)
        #expect(fcntl(pipe.read, F_GETFD) != -1, "the descriptor is still the caller's, open")
    }

    @Test func aWritableWatchAndAnInterestChanged() throws {
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let pipe = try System.pipe(nonBlocking: true)
        defer { [pipe.read, pipe.write].forEach(System.close) }
        let ready = Reports<EventLoop.Interest>()
        let paused = Reports<Int>()
        let watchBox = Mutex<EventLoop.Watch?>(nil)
        // Watched from a job on the loop, so that the callback, which runs on the loop too, cannot
        // come before the watch is in the box (from another thread it can, and then spins).
        loop.execute {
            let watch = loop.watch(pipe.write, for: .writable) { interest in
                ready.add(interest)
                // Paused after the first call: an empty pipe stays writable, and would call again.
                if let watch = watchBox.withLock({ $0 }) { loop.update(watch, interest: []) }
                loop.schedule(at: .now) { paused.add(1) }
            }
            watchBox.withLock { $0 = watch }
        }
        #expect(ready.wait(for: 1).first?.contains(.writable) == true)
        #expect(paused.wait(for: 1) == [1])
        #expect(ready.all.count == 1, "a paused watch is not called")
        loop.execute { watchBox.withLock { $0 }.map(loop.unwatch) }
    }

    /// Blocking work runs on a thread of its own; its result comes on the loop. (That the thread
    /// is joined first is not checked here: Linux lists an ended thread in /proc for a moment
    /// after its join returns. The thread tests count a connected agent's threads.)
    @Test func workOnAThreadReportsOnTheLoopAfterTheThreadEnded() throws {
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let name = "work-\(UInt32.random(in: 0...UInt32.max))"
        @Sendable func threadNames() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { task in
                (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        let seen = Reports<(Bool, Bool, Bool)>()
        try loop.runOnThread(named: name, { (loop.isCurrent, threadNames().contains(name)) }) { result in
            seen.add((result.0, result.1, loop.isCurrent))
        }
        let report = try #require(seen.wait(for: 1).first)
        #expect(!report.0 && report.1, "the work ran off the loop, on its named thread")
        #expect(report.2, "its result came on the loop")
    }

    @Test func timersFireInDeadlineOrderAndACancelledOneNever() throws {
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let fired = Reports<String>()
        // Scheduled and cancelled in one job on the loop, which fires no timer until the job
        // ends: from another thread, a pause of 10 ms (a loaded machine) would let "cancelled"
        // fire, or "third" before "first" is scheduled.
        loop.execute {
            let now = ContinuousClock.now
            loop.schedule(at: now + .milliseconds(30)) { fired.add("third") }
            let cancelled = loop.schedule(at: now + .milliseconds(10)) { fired.add("cancelled") }
            loop.schedule(at: now + .milliseconds(20)) { fired.add("second") }
            loop.schedule(at: now) { fired.add("first") }
            loop.cancel(cancelled)
        }
        #expect(fired.wait(for: 3) == ["first", "second", "third"])
    }

    @Test func stopEndsRunFromAnotherThread() throws {
        let loop = EventLoop()
        let ended = DispatchSemaphore(value: 0)
        try System.startThread(named: "loop under test") {
            loop.run()
            ended.signal()
        }
        let ran = Reports<Int>()
        loop.execute { ran.add(1) }
        #expect(ran.wait(for: 1) == [1], "the loop runs")
        loop.stop()
        #expect(ended.wait(timeout: .now() + 30) == .success, "run() returned")
    }

    /// A signal blocked and read from a signalfd, as the agent reads SIGTERM, SIGINT and SIGHUP.
    @Test func aBlockedSignalIsReadFromItsDescriptor() throws {
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let signals = Reports<Int32>()
        let descriptor = Mutex<Int32>(-1)
        // Blocked on the loop's thread, which reads it: a process-directed signal goes to a
        // thread that does not block it, so it is sent to that thread.
        let thread = Reports<pthread_t>()
        loop.execute {
            System.blockSignals([SIGUSR2])
            guard let signalfd = try? System.signalDescriptor([SIGUSR2]) else { return thread.add(0) }
            descriptor.withLock { $0 = signalfd }
            _ = loop.watch(signalfd) { _ in
                for signal in System.readSignals(signalfd) { signals.add(signal) }
            }
            thread.add(pthread_self())
        }
        let target = try #require(thread.wait(for: 1).first)
        #expect(target != 0)
        pthread_kill(target, SIGUSR2)
        #expect(signals.wait(for: 1) == [SIGUSR2])
        System.close(descriptor.withLock { $0 })
    }

    /// State confined to the loop's thread is checked on every access: off that thread it traps
    /// (in a child process, so the trap ends only it).
    @Test func aConfinedValueTouchedOffItsThreadTraps() async throws {
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let confined = Confined(1, on: loop)
        let onLoop = Reports<Int>()
        loop.execute { onLoop.add(confined.value) }
        #expect(onLoop.wait(for: 1) == [1])
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop.startOnNewThread()
            _ = Confined(1, on: loop).value
        }
    }
}
