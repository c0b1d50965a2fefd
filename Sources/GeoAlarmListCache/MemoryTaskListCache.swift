import Synchronization

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
