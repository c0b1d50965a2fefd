import GeoAlarmListCache

/// What the state file keeps of the task lists on servers, as a ``TaskListCache``: the copy of
/// each list in its own tables (`task_lists`, `task_objects`), the writes waiting for the
/// servers in the durable queue ``writesQueue``. It reads no task: it keeps the bytes it is given.
public struct TaskListCopies: TaskListCache {
    let file: StateStore

    /// The queue of task-list writes.
    static let writesQueue = "tasklist-writes"
    /// How many writes wait at most (the oldest dropped beyond, and counted by the queue).
    static let mostWrites = 100_000

    public func cachedList(_ name: String) throws -> CachedList? {
        try file.reading { db throws(SQLiteError) -> CachedList? in
            var list: CachedList?
            try db.execute("SELECT url, ctag, sync_token FROM task_lists WHERE list = ?", [name]) { (row: borrowing SQLiteRow) throws(SQLiteError) in
                list = CachedList(url: try row.value("url"), ctag: row.optional("ctag"), syncToken: row.optional("sync_token"))
            }
            guard var found = list else { return nil }
            try db.execute("SELECT href, etag, data FROM task_objects WHERE list = ?", [name]) { (row: borrowing SQLiteRow) throws(SQLiteError) in
                found.objects[try row.value("href", as: String.self)] = CachedList.Object(etag: row.optional("etag"), bytes: row.optional("data") ?? [])
            }
            return found
        }
    }

    public func updateCachedList(_ name: String, _ update: CachedList.Update) throws {
        try file.writing { db throws(SQLiteError) in try Self.apply(update, toList: name, in: db) }
    }

    /// Makes `update` of the copy of list `name` within the transaction `db` holds.
    private static func apply(_ update: CachedList.Update, toList name: String, in db: SQLiteConnection) throws(SQLiteError) {
        try db.execute(
            "INSERT OR REPLACE INTO task_lists (list, url, ctag, sync_token) VALUES (?, ?, ?, ?)",
            [name, update.url, update.ctag, update.syncToken])
        if update.replacing { try db.execute("DELETE FROM task_objects WHERE list = ?", [name]) }
        for href in update.removed { try db.execute("DELETE FROM task_objects WHERE list = ? AND href = ?", [name, href]) }
        for (href, object) in update.put {
            try db.execute(
                "INSERT OR REPLACE INTO task_objects (list, href, etag, data) VALUES (?, ?, ?, ?)", [name, href, object.etag, object.bytes])
        }
    }

    @discardableResult
    public func enqueue(_ write: TaskListWrite, updating copy: CachedList.Update?) throws -> Int64 {
        let message = QueuedMessage(key: write.list, payload: Self.encode(write))
        return try file.writing { db throws(SQLiteError) in
            if let copy { try Self.apply(copy, toList: write.list, in: db) }
            return try DurableQueue.append([message], to: Self.writesQueue, limit: Self.mostWrites, in: db).numbers[0]
        }
    }

    public func waitingWrites() throws -> [TaskListWrite] {
        try file.queue(named: Self.writesQueue).all().compactMap { message in
            Self.decode(message.payload, list: message.key).map { write in
                var write = write
                write.number = message.number
                return write
            }
        }
    }

    public func dropWrite(_ number: Int64) throws {
        try file.queue(named: Self.writesQueue).remove([number])
    }

    /// `kind NUL uid NUL href NUL time NUL bytes`: a UID and an address hold no NUL (the
    /// iCalendar reader refuses one).
    static func encode(_ write: TaskListWrite) -> [UInt8] {
        Array("\(write.kind.rawValue)\u{0}\(write.uid)\u{0}\(write.href)\u{0}\(write.time)\u{0}".utf8) + write.bytes
    }

    static func decode(_ payload: [UInt8], list: String) -> TaskListWrite? {
        let parts = payload.split(separator: 0, maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, let kind = TaskListWrite.Kind(rawValue: String(decoding: parts[0], as: UTF8.self)),
              let time = Double(String(decoding: parts[3], as: UTF8.self))
        else { return nil }
        return TaskListWrite(
            list: list, kind: kind, uid: String(decoding: parts[1], as: UTF8.self), href: String(decoding: parts[2], as: UTF8.self),
            time: time, bytes: Array(parts[4]))
    }
}
