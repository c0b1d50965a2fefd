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
