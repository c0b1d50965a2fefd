import Synchronization

/// Where a task list that lives on a server is kept between its syncs: its last good copy (each
/// object with its ETag, and how the server said the collection stood), and the writes that wait
/// for the server (Done, uncomplete, add, remove), in order, across restarts. The state file is
/// one (GeoAlarmStore), so that the agent starts and fires with the server away.
public protocol TaskListCache: Sendable {
    /// The copy of the list `name`; nil when it was never fetched.
    func cachedList(_ name: String) throws -> CachedList?
    /// Changes the copy of the list `name` as `update` says, in one transaction.
    func updateCachedList(_ name: String, _ update: CachedList.Update) throws
    /// Adds a write at the end of the queue, and makes `copy` of its list's copy (the change
    /// made there at once), both in one transaction: the copy never holds a change that is not
    /// queued, nor the queue one the copy lacks. Its number.
    @discardableResult
    func enqueue(_ write: TaskListWrite, updating copy: CachedList.Update?) throws -> Int64
    /// Every write waiting, oldest first.
    func waitingWrites() throws -> [TaskListWrite]
    /// Drops a write that was made (or can never be).
    func dropWrite(_ number: Int64) throws
}

extension TaskListCache {
    /// Adds a write at the end of the queue, the copy left as it is; its number.
    @discardableResult
    public func enqueue(_ write: TaskListWrite) throws -> Int64 {
        try enqueue(write, updating: nil)
    }
}

/// A server's task list as last fetched.
public struct CachedList: Sendable, Equatable {
    /// The collection's address.
    public var url: String
    /// The collection's `getctag` and `sync-token` when fetched: unchanged, nothing to fetch.
    public var ctag: String?
    public var syncToken: String?
    /// Each object by its address on the server: its ETag and its bytes.
    public var objects: [String: Object]

    public struct Object: Sendable, Equatable {
        public var etag: String?
        public var bytes: [UInt8]

        public init(etag: String?, bytes: [UInt8]) {
            self.etag = etag
            self.bytes = bytes
        }
    }

    public init(url: String, ctag: String? = nil, syncToken: String? = nil, objects: [String: Object] = [:]) {
        self.url = url
        self.ctag = ctag
        self.syncToken = syncToken
        self.objects = objects
    }

    /// A change of the copy: the collection's new state, objects put or removed; with `replacing`,
    /// every object not put goes.
    public struct Update: Sendable, Equatable {
        public var url: String
        public var ctag: String?
        public var syncToken: String?
        public var put: [String: Object]
        public var removed: [String]
        public var replacing: Bool

        public init(url: String, ctag: String?, syncToken: String?, put: [String: Object] = [:], removed: [String] = [], replacing: Bool = false) {
            self.url = url
            self.ctag = ctag
            self.syncToken = syncToken
            self.put = put
            self.removed = removed
            self.replacing = replacing
        }
    }
}

/// A change to a task on a server, waiting to be made: made again on the object as the server
/// has it when it goes out (so that another device's edit meanwhile survives).
public struct TaskListWrite: Sendable, Equatable {
    /// Its place in the queue (0 for one not queued yet).
    public var number: Int64
    /// The list's name.
    public var list: String
    public var kind: Kind
    public var uid: String
    /// The object's address on the server.
    public var href: String
    /// When it was asked for (a completion's time).
    public var time: Double
    /// A new task's object.
    public var bytes: [UInt8]

    public enum Kind: String, Sendable {
        case complete, uncomplete, create, delete
    }

    public init(number: Int64 = 0, list: String, kind: Kind, uid: String, href: String, time: Double, bytes: [UInt8] = []) {
        self.number = number
        self.list = list
        self.kind = kind
        self.uid = uid
        self.href = href
        self.time = time
        self.bytes = bytes
    }
}

/// A ``TaskListCache`` in memory: for an agent that runs without a state file, and for a command
/// that may not write the state file (it reads a copy of it): what it fetches lasts as long as
/// the process.
public final class MemoryTaskListCache: TaskListCache {
    private let held: Mutex<Held>

    private struct Held {
        var lists: [String: CachedList] = [:]
        var writes: [TaskListWrite] = []
        var lastNumber: Int64 = 0

        mutating func apply(_ update: CachedList.Update, toList name: String) {
            var list = lists[name] ?? CachedList(url: update.url)
            list.url = update.url
            list.ctag = update.ctag
            list.syncToken = update.syncToken
            if update.replacing { list.objects = [:] }
            for href in update.removed { list.objects[href] = nil }
            list.objects.merge(update.put) { _, new in new }
            lists[name] = list
        }
    }

    /// Starts with `lists` (copied from a state file), and no writes.
    public init(lists: [String: CachedList] = [:]) {
        held = Mutex(Held(lists: lists))
    }

    public func cachedList(_ name: String) -> CachedList? {
        held.withLock { $0.lists[name] }
    }

    public func updateCachedList(_ name: String, _ update: CachedList.Update) {
        held.withLock { $0.apply(update, toList: name) }
    }

    @discardableResult
    public func enqueue(_ write: TaskListWrite, updating copy: CachedList.Update?) -> Int64 {
        held.withLock { held in
            if let copy { held.apply(copy, toList: write.list) }
            held.lastNumber += 1
            var write = write
            write.number = held.lastNumber
            held.writes.append(write)
            return held.lastNumber
        }
    }

    /// Adds a write at the end of the queue, the copy left as it is; its number.
    @discardableResult
    public func enqueue(_ write: TaskListWrite) -> Int64 {
        enqueue(write, updating: nil)
    }

    public func waitingWrites() -> [TaskListWrite] {
        held.withLock { $0.writes }
    }

    public func dropWrite(_ number: Int64) {
        held.withLock { $0.writes.removeAll { $0.number == number } }
    }
}
