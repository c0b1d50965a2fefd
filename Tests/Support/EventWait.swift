import Foundation
import GeoAlarmSystem

/// How long a test waits for what it needs before calling it a failure. Only a bound on a
/// failure: every wait returns as soon as its event comes. Generous, because a run with two
/// CPU hogs and the whole suite beside it has made steps ten times slower than usual.
public enum Deadline {
    public static let failure: Double = 300
}

/// Waits for something another process does, woken by the events that announce it: a change
/// to a file in watched folders (inotify) or the end of a process (a pidfd). Never a timer: the
/// deadline only bounds a failure, so a slow machine makes a test slower, never wrong.
public struct EventWait {
    /// The folders whose files are watched for writes, creations and renames.
    public var folders: [String]
    /// Processes whose end is awaited too; once one has ended, its output no longer changes.
    public var processes: [Int32]

    /// `processes` are pidfds (``System/processDescriptor(_:)``), owned by the caller.
    public init(folders: [String], processes: [Int32] = []) {
        self.folders = folders
        self.processes = processes
    }

    /// Waits until `condition` holds; false when `seconds` pass first, or when a watched process
    /// has ended and the condition still does not hold.
    public func until(seconds: Double = Deadline.failure, _ condition: () -> Bool) -> Bool {
        let inotify: Int32
        do {
            inotify = try System.inotify()
        } catch {
            return givingUp(error, condition)
        }
        defer { System.close(inotify) }
        let changes = System.FileEvents(rawValue: UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE))
        for folder in folders { _ = try? System.watch(inotify, folder: folder, for: changes) }
        var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
            + processes.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        var drain = [UInt8](repeating: 0, count: 4096)
        while true {
            // Watching began before this first look: a change after it wakes the poll below.
            if condition() { return true }
            if descriptors.dropFirst().contains(where: { $0.revents != 0 }) { return condition() }
            let timeout = System.pollTimeout(until: deadline, atMost: .seconds(3600))
            if timeout == 0 { return condition() }
            do {
                _ = try System.poll(&descriptors, milliseconds: timeout)
            } catch {
                return givingUp(error, condition)
            }
            if descriptors[0].revents != 0 {
                while ((try? System.read(inotify, into: &drain)) ?? 0) > 0 {}
            }
        }
    }

    /// The condition as it is now, when the wait cannot go on: the reason is said on stderr, so
    /// that a failure it causes is not taken for the awaited event's not coming.
    private func givingUp(_ error: SystemError, _ condition: () -> Bool) -> Bool {
        FileHandle.standardError.write(Data("EventWait: cannot wait for events: \(error.call): \(error.reason)\n".utf8))
        return condition()
    }

    /// Waits until the file at `path` exists and its text satisfies `complete`; the text, or nil
    /// when `seconds` pass first.
    public static func forFile(_ path: String, seconds: Double = Deadline.failure, until complete: (String) -> Bool) -> String? {
        var text: String?
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let done = EventWait(folders: [folder]).until(seconds: seconds) {
            text = try? String(contentsOfFile: path, encoding: .utf8)
            return text.map(complete) ?? false
        }
        return done ? text : nil
    }
}

extension EventWait {
    /// Runs a blocking wait on a thread of its own, so that an async test waiting for another
    /// process leaves Swift's cooperative threads (as many as cores, two here) to the tasks that
    /// must run for the event to come.
    public static func onOwnThread<T: Sendable>(_ wait: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: wait()) }.start()
        }
    }
}

/// A loopback TCP port held for a server the test starts: sockets bound to 127.0.0.1 and ::1
/// that do not listen, with `SO_REUSEADDR`, so that the server (gpsd and mosquitto set it too)
/// can bind and listen on the port, while the kernel hands it to no other socket that asks for
/// any free port. It is held until released, across restarts of the server on the same port.
public final class PortReservation: @unchecked Sendable {
    public let port: Int
    private let sockets: [Int32]

    public init() throws {
        for _ in 0..<20 {
            guard let v4 = Self.bound(AF_INET, port: 0) else { continue }
            let port = Self.localPort(v4)
            guard let v6 = Self.bound(AF_INET6, port: port) else {
                Glibc.close(v4)
                continue
            }
            self.port = port
            sockets = [v4, v6]
            return
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// A socket of `family` bound to its loopback address and `port` (0: any free port).
    private static func bound(_ family: Int32, port: Int) -> Int32? {
        let socketFD = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketFD >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(socketFD, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var result: Int32
        if family == AF_INET6 {
            setsockopt(socketFD, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            address.sin6_port = UInt16(port).bigEndian
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard result == 0 else {
            Glibc.close(socketFD)
            return nil
        }
        return socketFD
    }

    private static func localPort(_ socketFD: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { sockets.forEach { Glibc.close($0) } }
}
