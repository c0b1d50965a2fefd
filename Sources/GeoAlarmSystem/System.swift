import CSystem
import Glibc

/// A system call that failed: which call, on what, and the errno it set.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call, such as `open` or `rename`.
    public var call: String
    /// The errno value.
    public var code: Int32

    public typealias Code = Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// The system's words for the error: "No such file or directory".
    public var reason: String { String(cString: strerror(code)) }

    public var description: String { reason }
}

/// Thin wrappers over the system calls geoalarm makes: each retries on EINTR and turns a
/// failure into a ``SystemError``, so that no caller reads errno itself.
public enum System {
    /// The errno a C library's call that failed left: for the libraries that report a failure
    /// through it (libgps, libmosquitto), so that no adapter reads errno itself.
    public static var lastError: SystemError.Code { errno }

    /// Runs `body` until it does not fail with EINTR; a result of -1 becomes a ``SystemError``.
    @inline(__always)
    static func retrying<T: FixedWidthInteger>(_ call: String, _ body: () -> T) throws(SystemError) -> T {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code != EINTR { throw SystemError(call: call, code: code) }
        }
    }

    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> Int32 {
        try retrying("open") { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    public static func close(_ descriptor: Int32) {
        // EINTR from close leaves the descriptor closed on Linux: never retry it.
        _ = Glibc.close(descriptor)
    }

    /// Reads into `buffer` from `offset` on, up to its end or `limit` bytes, whichever is less;
    /// how many (0 at the end of the file). `offset` is at most `buffer.count`.
    public static func read(
        _ descriptor: Int32, into buffer: inout [UInt8], at offset: Int = 0, limit: Int = .max
    ) throws(SystemError) -> Int {
        precondition(offset >= 0 && offset <= buffer.count, "a read's offset lies within its buffer")
        return try retrying("read") {
            buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress.map { $0 + offset }, min(limit, $0.count - offset)) }
        }
    }

    /// Reads up to `count` bytes to `pointer`; how many (0 at the end of the file).
    public static func read(_ descriptor: Int32, to pointer: UnsafeMutableRawPointer, count: Int) throws(SystemError) -> Int {
        try retrying("read") { Glibc.read(descriptor, pointer, count) }
    }

    /// Writes all of `bytes`, looping over short writes.
    public static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            offset += try retrying("write") {
                bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            }
        }
    }

    /// Writes what it can of `bytes` to a non-blocking descriptor; 0 when it would block.
    public static func writeSome(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) throws(SystemError) -> Int {
        do {
            return try retrying("write") { bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } }
        } catch where error.code == EAGAIN || error.code == EWOULDBLOCK {
            return 0
        }
    }

    public static func fstat(_ descriptor: Int32) throws(SystemError) -> Glibc.stat {
        var info = Glibc.stat()
        _ = try retrying("fstat") { Glibc.fstat(descriptor, &info) }
        return info
    }

    /// `stat` of a path (following links); nil when nothing is there.
    public static func fileStatus(_ path: String) throws(SystemError) -> Glibc.stat? {
        var info = Glibc.stat()
        do {
            _ = try retrying("stat") { stat(path, &info) }
        } catch where error.code == ENOENT {
            return nil
        }
        return info
    }

    /// Whether something is at `path` (following links); false also when it cannot be looked at.
    public static func exists(_ path: String) -> Bool {
        ((try? fileStatus(path)) ?? nil) != nil
    }

    /// Whether this process may write to `path` (`access` with `W_OK`).
    public static func isWritable(_ path: String) -> Bool {
        access(path, W_OK) == 0
    }

    /// Whether `path` is a regular file this process may run (following links).
    public static func isExecutableFile(_ path: String) -> Bool {
        guard let status = (try? fileStatus(path)) ?? nil, status.st_mode & S_IFMT == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }

    /// Where `program` is run from, as `posix_spawnp` finds it: itself when it holds a slash,
    /// else the first folder of `searchPath` (PATH's colon-separated list; an empty entry is
    /// the current folder) that holds it as a file that may be run; nil where none does.
    public static func programPath(_ program: String, searchPath: String) -> String? {
        guard !program.contains("/") else { return isExecutableFile(program) ? program : nil }
        for folder in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + program
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    /// `lstat` of a path: a symbolic link itself, not what it points to; nil when nothing is there.
    public static func linkStatus(_ path: String) throws(SystemError) -> Glibc.stat? {
        var info = Glibc.stat()
        do {
            _ = try retrying("lstat") { lstat(path, &info) }
        } catch where error.code == ENOENT {
            return nil
        }
        return info
    }

    /// The names in the folder `path` (not `.` and `..`), in no set order.
    public static func folderEntries(_ path: String) throws(SystemError) -> [String] {
        guard let folder = opendir(path) else { throw SystemError(call: "opendir", code: errno) }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Makes the folder `path` and the missing folders above it, with `mode` (less the umask);
    /// folders already there are no error.
    public static func makeDirectories(_ path: String, mode: mode_t) throws(SystemError) {
        if try fileStatus(path) != nil { return }
        let parent = PathParts.split(path).folder
        if parent != path { try makeDirectories(parent, mode: mode) }
        do {
            _ = try retrying("mkdir") { Glibc.mkdir(path, mode) }
        } catch where error.code == EEXIST {
            return
        }
    }

    /// A non-blocking TCP socket listening on `host` (an IPv4 or IPv6 address, no name) and
    /// `port` (0: one the system picks), with the port it got. An address that is not one
    /// fails as `inet_pton` with EINVAL.
    public static func listen(host: String, port: UInt16, backlog: Int32 = 32) throws(SystemError) -> (descriptor: Int32, port: UInt16) {
        let isIPv6 = host.contains(":")
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = try retrying("socket") { socket(isIPv6 ? AF_INET6 : AF_INET, type, 0) }
        do throws(SystemError) {
            var on: Int32 = 1
            _ = try retrying("setsockopt") { setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) }
            if isIPv6 {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = port.bigEndian
                guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw SystemError(call: "inet_pton", code: EINVAL) }
                try bind(descriptor, to: address)
            } else {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw SystemError(call: "inet_pton", code: EINVAL) }
                try bind(descriptor, to: address)
            }
            _ = try retrying("listen") { Glibc.listen(descriptor, backlog) }
            // The port is at the same place in both address families' structures.
            var bound = sockaddr_in6()
            var size = socklen_t(MemoryLayout<sockaddr_in6>.size)
            _ = try retrying("getsockname") { withUnsafeMutablePointer(to: &bound) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &size) }
            } }
            return (descriptor, UInt16(bigEndian: bound.sin6_port))
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// CLOCK_MONOTONIC in microseconds: the clock systemd's notifications are stamped with.
    public static func monotonicMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    /// A datagram socket of the local (AF_UNIX) family, closed on exec; bound to `path` when
    /// given (to receive). A path that begins with "@" is in the abstract namespace.
    public static func localDatagramSocket(boundTo path: String? = nil) throws(SystemError) -> Int32 {
        let descriptor = try retrying("socket") { socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        guard let path else { return descriptor }
        do throws(SystemError) {
            let (address, size) = try localAddress(path)
            try bind(descriptor, to: address, size: size)
            return descriptor
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// Sends `bytes` as one datagram to the local socket at `path` ("@name": in the abstract
    /// namespace) without waiting: a receiver whose queue is full fails it with EAGAIN.
    public static func sendDatagram(_ descriptor: Int32, _ bytes: [UInt8], toLocalPath path: String) throws(SystemError) {
        let (address, size) = try localAddress(path)
        _ = try retrying("sendto") {
            bytes.withUnsafeBytes { buffer in
                withUnsafePointer(to: address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), $0, size)
                    }
                }
            }
        }
    }

    /// The address of a local socket and its length; a path too long for one fails as
    /// ENAMETOOLONG, an empty one as EINVAL.
    private static func localAddress(_ path: String) throws(SystemError) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        guard !bytes.isEmpty else { throw SystemError(call: "socket address", code: EINVAL) }
        // The abstract namespace: a leading NUL, and the length counts exactly the name's bytes.
        let isAbstract = bytes[0] == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw SystemError(call: "socket address", code: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let size = MemoryLayout<sa_family_t>.size + bytes.count + (isAbstract ? 0 : 1)
        return (address, socklen_t(size))
    }

    /// Binds a socket to `address`, a `sockaddr_in`, `sockaddr_in6` or `sockaddr_un` (whose
    /// `size` counts only the bytes of its path that are used).
    private static func bind<Address>(
        _ descriptor: Int32, to address: Address, size: socklen_t = socklen_t(MemoryLayout<Address>.size)
    ) throws(SystemError) {
        var address = address
        _ = try retrying("bind") {
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, size) }
            }
        }
    }

    /// A connection waiting on a listening socket, non-blocking and closed on exec; nil when none
    /// waits. A connection the peer dropped before it was taken is passed over.
    ///
    /// `accept` and then `fcntl`, not `accept4`: that is a GNU extension, and declaring it takes
    /// `_GNU_SOURCE` over `sys/socket.h`, whose `fd_set` then clashes with the Glibc module's in a
    /// clean build. Between the two calls a child could inherit the descriptor only if another
    /// thread started one; `ChildProcess` closes all inherited descriptors in its children anyway.
    public static func accept(_ descriptor: Int32) throws(SystemError) -> Int32? {
        while true {
            let connection: Int32
            do throws(SystemError) {
                connection = try retrying("accept") { Glibc.accept(descriptor, nil, nil) }
            } catch where error.code == EAGAIN || error.code == EWOULDBLOCK {
                return nil
            } catch where error.code == ECONNABORTED {
                continue
            }
            do throws(SystemError) {
                _ = try retrying("fcntl") { fcntl(connection, F_SETFD, FD_CLOEXEC) }
                try setNonBlocking(connection)
                return connection
            } catch {
                close(connection)
                throw error
            }
        }
    }

    public static func fsync(_ descriptor: Int32) throws(SystemError) {
        _ = try retrying("fsync") { Glibc.fsync(descriptor) }
    }

    public static func fchmod(_ descriptor: Int32, _ mode: mode_t) throws(SystemError) {
        _ = try retrying("fchmod") { Glibc.fchmod(descriptor, mode) }
    }

    public static func fchown(_ descriptor: Int32, _ owner: uid_t, _ group: gid_t) throws(SystemError) {
        _ = try retrying("fchown") { Glibc.fchown(descriptor, owner, group) }
    }

    public static func rename(_ from: String, _ to: String) throws(SystemError) {
        _ = try retrying("rename") { Glibc.rename(from, to) }
    }

    /// Sets a file's mode; a file that is not there is not an error.
    public static func chmod(_ path: String, _ mode: mode_t) throws(SystemError) {
        do {
            _ = try retrying("chmod") { Glibc.chmod(path, mode) }
        } catch where error.code == ENOENT {
            return
        }
    }

    /// Asks for transparent huge pages under `count` bytes at `address` (a hint: never an error).
    public static func adviseHugePages(_ address: UnsafeMutableRawPointer, _ count: Int) {
        _ = madvise(address, count, MADV_HUGEPAGE)
    }

    /// Ignores SIGPIPE: a write to a pipe whose reader has gone then fails with EPIPE.
    public static func ignoreBrokenPipes() {
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
    }

    /// Deletes the file at `path`.
    public static func remove(_ path: String) throws(SystemError) {
        _ = try retrying("unlink") { Glibc.unlink(path) }
    }

    public static func unlink(_ path: String) {
        _ = Glibc.unlink(path)
    }

    /// Takes an exclusive lock on the whole file (waiting for it).
    public static func lockExclusive(_ descriptor: Int32) throws(SystemError) {
        _ = try retrying("flock") { flock(descriptor, LOCK_EX) }
    }

    /// Releases a `flock` without closing the descriptor.
    public static func unlock(_ descriptor: Int32) {
        _ = flock(descriptor, LOCK_UN)
    }

    /// The absolute path with every symbolic link resolved.
    public static func realPath(_ path: String) throws(SystemError) -> String {
        guard let resolved = Glibc.realpath(path, nil) else { throw SystemError(call: "realpath", code: errno) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A pipe whose two ends close on exec; `nonBlocking` sets O_NONBLOCK on both.
    public static func pipe(nonBlocking: Bool = false) throws(SystemError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        let flags = O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0)
        _ = try retrying("pipe2") { pipe2(&ends, flags) }
        return (ends[0], ends[1])
    }

    public static func setNonBlocking(_ descriptor: Int32) throws(SystemError) {
        let flags = try retrying("fcntl") { fcntl(descriptor, F_GETFL) }
        _ = try retrying("fcntl") { fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Waits for events on `descriptors` for up to `milliseconds` (-1: without limit); how many are ready.
    /// A signal ends the wait early with 0, so that the caller can look at the clock again.
    public static func poll(_ descriptors: inout [pollfd], milliseconds: Int32) throws(SystemError) -> Int {
        let result = descriptors.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        if result < 0 {
            if errno == EINTR { return 0 }
            throw SystemError(call: "poll", code: errno)
        }
        return Int(result)
    }

    /// Whether `descriptor` has something to read now (or is at its end), without waiting.
    public static func isReadable(_ descriptor: Int32) -> Bool {
        guard descriptor >= 0 else { return false }
        var polled = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        return ((try? poll(&polled, milliseconds: 0)) ?? 0) > 0 && polled[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
    }

    /// `poll`'s timeout for waking at `deadline`: the whole milliseconds left, rounded up so that
    /// the deadline has passed when the wait ends, and at most `limit` (which must fit `poll`'s
    /// 32-bit milliseconds); -1, waiting without limit, when there is no deadline.
    public static func pollTimeout(until deadline: ContinuousClock.Instant?, from now: ContinuousClock.Instant = .now,
                                   atMost limit: Duration) -> Int32 {
        guard let deadline else { return -1 }
        let remaining = min(max(now.duration(to: deadline), .zero), limit)
        return Int32((remaining / .milliseconds(1)).rounded(.up))
    }

    /// Sends `signal` to the process a pidfd stands for (``processDescriptor(_:)``): never to
    /// another process that took its number once it was reaped, as `kill` could (a pid comes
    /// round again soon where `pid_max` is 32768). A process that has ended is not an error.
    public static func signal(processDescriptor descriptor: Int32, _ signal: Int32) {
        _ = pidfd_send_signal(descriptor, signal, nil, 0)
    }

    /// Sends `signal` to a process group; a group that is gone already is not an error.
    public static func killGroup(_ group: pid_t, _ signal: Int32) {
        _ = Glibc.kill(-group, signal)
    }

    /// The exit status of a child that has ended (128 + the signal when a signal ended it);
    /// nil while it runs, with `block` false.
    public static func wait(_ pid: pid_t, block: Bool) throws(SystemError) -> Int32? {
        var raw: Int32 = 0
        let result = try retrying("waitpid") { waitpid(pid, &raw, block ? 0 : WNOHANG) }
        guard result == pid else { return nil }
        return (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }

    /// A descriptor that becomes readable when process `pid` ends (Linux 5.3 and later).
    public static func processDescriptor(_ pid: pid_t) throws(SystemError) -> Int32 {
        let descriptor = try retrying("pidfd_open") { pidfd_open(pid, 0) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return descriptor
    }

    /// A non-blocking inotify descriptor.
    public static func inotify() throws(SystemError) -> Int32 {
        try retrying("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) }
    }

    /// What a watch on a folder tells of its files.
    public struct FileEvents: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// A file closed after writing, or put in place by a rename or a create (an editor's save).
        public static let replaced = FileEvents(rawValue: UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE))
        /// Any write to a file, even by a process that keeps it open (an SQLite write-ahead log).
        public static let written = FileEvents(rawValue: UInt32(IN_MODIFY))
        /// A file deleted, or renamed away.
        public static let removed = FileEvents(rawValue: UInt32(IN_DELETE | IN_MOVED_FROM))
    }

    /// Adds `events` to what the watch on `folder` reports; the watch descriptor (the same for
    /// every call on one folder).
    public static func watch(_ inotify: Int32, folder: String, for events: FileEvents) throws(SystemError) -> Int32 {
        try retrying("inotify_add_watch") { inotify_add_watch(inotify, folder, events.rawValue | UInt32(IN_MASK_ADD)) }
    }

    /// One event of an inotify descriptor: its watch descriptor, what happened, and to which file
    /// of the watched folder.
    public struct FileEvent: Sendable, Equatable {
        public var watch: Int32
        public var mask: UInt32
        public var name: String
    }

    /// The events a non-blocking inotify descriptor holds now; empty when it has none.
    public static func readFileEvents(_ inotify: Int32) -> [FileEvent] {
        var events: [FileEvent] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        let header = MemoryLayout<inotify_event>.size
        while let count = try? read(inotify, into: &buffer), count > 0 {
            var offset = 0
            while offset + header <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw in
                    (raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                     raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                     Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let name = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
                events.append(FileEvent(watch: watch, mask: mask, name: String(decoding: name, as: UTF8.self)))
                offset += header + length
            }
        }
        return events
    }

    /// A counter descriptor that wakes a `poll` when written (eventfd), non-blocking.
    public static func eventDescriptor() throws(SystemError) -> Int32 {
        try retrying("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    /// Adds one to an eventfd, waking whoever polls it.
    public static func signalEvent(_ descriptor: Int32) {
        var one: UInt64 = 1
        _ = Glibc.write(descriptor, &one, 8)
    }

    /// Resets an eventfd after a wake-up.
    public static func clearEvent(_ descriptor: Int32) {
        var count: UInt64 = 0
        _ = Glibc.read(descriptor, &count, 8)
    }
}

extension System {
    /// Starts a thread named `name` (at most 15 bytes show in `/proc`) running `body`. A detached
    /// thread cleans up after itself; one that is not must be ended with ``join(_:)``.
    ///
    /// The thread names itself before `body` runs: named from here after `pthread_create`, it
    /// could run for a while unnamed on a busy machine.
    @discardableResult
    public static func startThread(
        named name: String, detached: Bool = true, _ body: @escaping @Sendable () -> Void
    ) throws(SystemError) -> pthread_t {
        let box = Unmanaged.passRetained(ThreadBody(name: name, body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let thread = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            _ = pthread_setname_np(pthread_self(), thread.name)
            thread.body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            throw SystemError(call: "pthread_create", code: result)
        }
        if detached { pthread_detach(thread) }
        return thread
    }

    /// Waits for a thread started with `detached: false` to end, and frees what it held.
    public static func join(_ thread: pthread_t) {
        _ = pthread_join(thread, nil)
    }

    /// Blocks `signals` for the calling thread and the threads it starts afterwards, so that they
    /// wait for a ``signalDescriptor(_:)`` to be read instead of acting at once. Children started
    /// through ``ChildProcess`` get the default mask back.
    public static func blockSignals(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// A non-blocking signalfd that becomes readable when one of `signals` (blocked with
    /// ``blockSignals(_:)``) is pending.
    public static func signalDescriptor(_ signals: [Int32]) throws(SystemError) -> Int32 {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return try retrying("signalfd") { signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
    }

    /// The signals a signalfd holds now, in the order they came; empty when none is pending.
    public static func readSignals(_ descriptor: Int32) -> [Int32] {
        var signals: [Int32] = []
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        while (try? retrying("read") { Glibc.read(descriptor, &info, size) }) == size {
            signals.append(Int32(bitPattern: info.ssi_signo))
        }
        return signals
    }
}

/// A thread's body, carried through `pthread_create`'s one pointer.
private final class ThreadBody {
    /// The thread's name, cut to the 15 bytes the kernel keeps.
    let name: String
    let body: @Sendable () -> Void
    init(name: String, _ body: @escaping @Sendable () -> Void) {
        self.name = String(decoding: Array(name.utf8.prefix(15)), as: UTF8.self)
        self.body = body
    }
}
