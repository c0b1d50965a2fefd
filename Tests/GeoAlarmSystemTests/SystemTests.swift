import Foundation
@testable import GeoAlarmSystem
import Synchronization
import Testing

/// Counts SIGUSR1s and wakes a waiter for each: `sem_post` is safe in a signal handler.
nonisolated(unsafe) private var handled = sem_t()

/// The system-call layer: EINTR is retried, other failures are typed errors naming the call,
/// descriptors it makes close on exec.
struct SystemTests {
    @Test func eintrIsRetriedAndAnyOtherErrorNamesItsCall() throws {
        var calls = 0
        let result = try System.retrying("read") { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(result == 42 && calls == 3)
        calls = 0
        #expect(throws: SystemError(call: "read", code: EBADF)) {
            try System.retrying("read") { () -> Int in
                calls += 1
                errno = EBADF
                return -1
            }
        }
        #expect(calls == 1)
    }

    /// A real signal, caught by a handler installed without SA_RESTART, interrupts a read blocked
    /// on an empty pipe: the plain call returns EINTR, `System.read` goes on and gets the data.
    /// In a process of its own, where the handler disturbs no other test.
    @Test func aSignalDuringABlockedReadIsRetried() async {
        await #expect(processExitsWith: .success) {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in sem_post(&handled) }
            action.sa_flags = 0
            sigemptyset(&action.sa_mask)
            sigaction(SIGUSR1, &action, nil)

            /// Reads one byte from an empty pipe on a thread, signalling that thread until the
            /// read has ended (or `limit` times), then writes the byte; what the read returned.
            func readInterrupted(
                signals limit: Int = .max, _ read: @escaping @Sendable (Int32) -> Result<Int, SystemError>
            ) throws -> Result<Int, SystemError>? {
                let pipe = try System.pipe()
                defer { [pipe.read, pipe.write].forEach(System.close) }
                sem_init(&handled, 0, 0)
                let outcome = Mutex<Result<Int, SystemError>?>(nil)
                let reader = try System.startThread(named: "reader", detached: false) {
                    // Dispatch's threads block most signals, and a thread starts with its maker's mask.
                    var unblocked = sigset_t()
                    sigemptyset(&unblocked)
                    sigaddset(&unblocked, SIGUSR1)
                    pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
                    let result = read(pipe.read)
                    outcome.withLock { $0 = result }
                    // A signal sent after the read ended, to a thread about to end, may find no
                    // thread to run its handler: this wakes the wait for it.
                    sem_post(&handled)
                }
                // Signals until the read ended or enough have come to be sure some found it
                // blocked; each waits for its handler to run, so none is merged with the next.
                // (On a busy machine the reader may reach its read only after many.)
                var sent = 0
                while outcome.withLock({ $0 == nil }), sent < limit {
                    pthread_kill(reader, SIGUSR1)
                    sem_wait(&handled)
                    sent += 1
                }
                try System.writeAll(pipe.write, [7])
                System.join(reader)
                return outcome.withLock { $0 }
            }

            let plain = try readInterrupted({ descriptor in
                var byte: UInt8 = 0
                let count = Glibc.read(descriptor, &byte, 1)
                return count < 0 ? .failure(SystemError(call: "read", code: errno)) : .success(count)
            })
            #expect(plain == .failure(SystemError(call: "read", code: EINTR)), "the signal interrupts a plain read")

            // This read never ends on a signal: 200 of them, then the byte.
            let retried = try readInterrupted(signals: 200, { descriptor in
                var buffer = [UInt8](repeating: 0, count: 1)
                return Result { () throws(SystemError) in try System.read(descriptor, into: &buffer) }
            })
            #expect(retried == .success(1), "System.read went on through the signals and read the byte")
        }
    }

    /// A read lands at the offset asked, takes no more than the limit, and leaves the bytes
    /// before and after as they were.
    @Test func aReadLandsAtItsOffsetWithinItsLimit() throws {
        let pipe = try System.pipe()
        defer { [pipe.read, pipe.write].forEach(System.close) }
        try System.writeAll(pipe.write, [1, 2, 3, 4, 5, 6])
        var buffer = [UInt8](repeating: 9, count: 8)
        #expect(try System.read(pipe.read, into: &buffer, at: 3, limit: 4) == 4)
        #expect(buffer == [9, 9, 9, 1, 2, 3, 4, 9])
        // The rest of what was written; the buffer's end bounds this one.
        #expect(try System.read(pipe.read, into: &buffer, at: 6) == 2)
        #expect(buffer == [9, 9, 9, 1, 2, 3, 5, 6])
    }

    /// What the layer opens does not leak into the programs geoalarm starts.
    @Test func descriptorsItMakesCloseOnExec() throws {
        let pipe = try System.pipe()
        let event = try System.eventDescriptor()
        let file = try System.open("/dev/null", O_RDONLY)
        defer { [pipe.read, pipe.write, event, file].forEach(System.close) }
        for descriptor in [pipe.read, pipe.write, event, file] {
            #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0, "descriptor \(descriptor)")
        }
    }
}

/// How gpsd's and the broker's clients retry: waits doubling to a minute, from the start again
/// once connected; a reason told once while it stays the same, and again after a connection.
struct PathPartsTests {
    @Test func aPathSplitsIntoItsFolderAndName() {
        #expect(PathParts.split("/a/b/c") == ("/a/b", "c"))
        #expect(PathParts.split("/a/b/c//") == ("/a/b", "c"))
        #expect(PathParts.split("c") == (".", "c"))
        #expect(PathParts.split("/c") == ("/", "c"))
        #expect(PathParts.split("/") == ("/", ""))
    }
}

struct ReconnectionTests {
    @Test func waitsDoubleToAMinuteAndStartOverOnceConnected() throws {
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        var reconnection = Reconnection()
        var waits: [Double] = []
        var news: [Bool] = []
        for reason in ["refused", "refused", "refused", "timed out", "timed out", "refused", "refused", "refused"] {
            waits.append(reconnection.nextWait)
            news.append(reconnection.failed(reason, on: loop) {})
            reconnection.cancel(on: loop)
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60])
        #expect(news == [true, false, false, true, false, true, false, false])
        reconnection.connected()
        #expect(reconnection.nextWait == 1)
        #expect(reconnection.failed("refused", on: loop) {}, "the same reason after a connection is news")
        reconnection.cancel(on: loop)
    }
}

/// Files the user named: regular files only, read to their end, up to a limit.
struct UserFileTests {
    /// procfs says a size of 0 for files that have content: they are read whole, not as empty.
    @Test func aFileLongerThanItsSaidSizeIsReadToItsEnd() throws {
        let status = try UserFile.contents(of: "/proc/self/status", limit: 1 << 20)
        #expect(String(decoding: status, as: UTF8.self).hasPrefix("Name:"), "\(status.count) bytes")
        #expect(throws: UserFile.ReadError.self, "the limit holds past the size said too") {
            try UserFile.contents(of: "/proc/self/status", limit: 16)
        }
    }

    @Test func aFileIsReadWholeAndOnlyARegularOne() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("userfile-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = Array(repeating: "0123456789", count: 1000).joined()
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try UserFile.contents(of: path, limit: 10_000) == Array(text.utf8))
        #expect(throws: UserFile.ReadError.self) { try UserFile.contents(of: path, limit: 9_999) }
        #expect(throws: UserFile.ReadError.self) { try UserFile.contents(of: "/dev/zero", limit: 10) }
    }

    /// A link is followed unless the caller says not to; then the open refuses it.
    @Test func aLinkIsFollowedOnlyWhenAsked() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("userfile-\(UUID().uuidString)").path
        defer { for name in [path, path + ".link"] { try? FileManager.default.removeItem(atPath: name) } }
        try Data("text".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.createSymbolicLink(atPath: path + ".link", withDestinationPath: path)
        #expect(try UserFile.contents(of: path + ".link", limit: 100) == Array("text".utf8))
        #expect(try UserFile.contents(of: path, limit: 100, followingLinks: false) == Array("text".utf8))
        let refused = #expect(throws: UserFile.ReadError.self) { try UserFile.contents(of: path + ".link", limit: 100, followingLinks: false) }
        #expect(refused?.description == "Too many levels of symbolic links", "\(String(describing: refused))")
    }
}
