internal import FlyingSocks
import GeoAlarmSystem
import Synchronization

/// FlyingFox's sockets waited on by the process's ``EventLoop``: the map server's listening
/// socket and its connections are descriptors of the one loop, as the state file's watch is,
/// and no other thread polls.
///
/// A socket that would block suspends its task (``suspendSocket(_:untilReadyFor:)``) until the
/// loop sees it ready, or the task is cancelled.
final class LoopSocketPool: AsyncSocketPool {
    private let loop: EventLoop
    private let waits = Mutex(Waits())

    private struct Waits {
        var next = 0
        var entries: [Int: Entry] = [:]
        /// Resumed by `run()`'s cancellation.
        var running: CheckedContinuation<Void, any Error>?
        var runCancelled = false
    }

    /// One task waiting for a socket. Cancellation may come before it starts to wait.
    private enum Entry {
        case starting
        case cancelledBeforeWaiting
        case waiting(EventLoop.Watch, CheckedContinuation<Void, any Error>)
    }

    init(loop: EventLoop) {
        self.loop = loop
    }

    func prepare() async throws {}

    /// Returns only when the server's task is cancelled: the loop does the waiting.
    func run() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = waits.withLock { waits in
                    if !waits.runCancelled { waits.running = continuation }
                    return waits.runCancelled
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let running = waits.withLock { waits in
                waits.runCancelled = true
                defer { waits.running = nil }
                return waits.running
            }
            running?.resume(throwing: CancellationError())
        }
    }

    func suspendSocket(_ socket: Socket, untilReadyFor events: Socket.Events) async throws {
        let descriptor = socket.file.rawValue
        let interest: EventLoop.Interest = events.contains(.write) ? (events.contains(.read) ? [.readable, .writable] : .writable) : .readable
        let id = waits.withLock { waits in
            waits.next += 1
            waits.entries[waits.next] = .starting
            return waits.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = waits.withLock { waits in
                    guard case .starting = waits.entries[id] else {
                        waits.entries[id] = nil
                        return true
                    }
                    let watch = loop.watch(descriptor, for: interest) { [self] _ in ready(id) }
                    waits.entries[id] = .waiting(watch, continuation)
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            cancel(id)
        }
    }

    /// The socket of wait `id` is ready (on the loop's thread).
    private func ready(_ id: Int) {
        guard case .waiting(let watch, let continuation) = waits.withLock({ $0.entries.removeValue(forKey: id) }) else { return }
        loop.unwatch(watch)
        continuation.resume()
    }

    /// Wait `id`'s task is cancelled (on any thread).
    private func cancel(_ id: Int) {
        let waiting: (EventLoop.Watch, CheckedContinuation<Void, any Error>)? = waits.withLock { waits in
            switch waits.entries[id] {
            case .starting:
                waits.entries[id] = .cancelledBeforeWaiting
                return nil
            case .waiting(let watch, let continuation):
                waits.entries[id] = nil
                return (watch, continuation)
            case .cancelledBeforeWaiting, nil:
                return nil
            }
        }
        guard let (watch, continuation) = waiting else { return }
        loop.execute { [loop] in loop.unwatch(watch) }
        continuation.resume(throwing: CancellationError())
    }
}
