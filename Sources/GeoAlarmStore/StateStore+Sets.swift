import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

/// Queues and sets other modules keep in the state file.
extension StateStore {
    /// The durable queue called `name` (made on first use): what a sink must not lose before it
    /// is delivered (the MQTT publisher's outbox).
    public func queue(named name: String) -> DurableQueue { DurableQueue(store: self, name: name) }

    /// The set of strings kept under `name` (empty when none was kept).
    public func strings(named name: String) throws(StoreError) -> Set<String> {
        try reading { db throws(SQLiteError) in
            Set(try db.fetchAll("SELECT value FROM string_set WHERE name = ?", [name]) { (row: borrowing SQLiteRow) throws(SQLiteError) in
                try row.value("value", as: String.self)
            })
        }
    }

    /// Keeps `strings` as the set called `name`, in place of what it held.
    public func setStrings(_ strings: Set<String>, named name: String) throws(StoreError) {
        try writing { db throws(SQLiteError) in
            try db.execute("DELETE FROM string_set WHERE name = ?", [name])
            for value in strings {
                try db.execute("INSERT INTO string_set (name, value) VALUES (?, ?)", [name, value])
            }
        }
    }

    fileprivate func appendToQueue(_ name: String, _ messages: [QueuedMessage], limit: Int) throws(StoreError) -> (numbers: [Int64], dropped: Int) {
        try writing { db throws(SQLiteError) in try Self.append(messages, toQueue: name, limit: limit, in: db) }
    }

    /// Appends `messages` to the queue `name` within the transaction `db` holds, dropping the oldest beyond `limit`.
    static func append(
        _ messages: [QueuedMessage], toQueue name: String, limit: Int, in db: SQLiteConnection
    ) throws(SQLiteError) -> (numbers: [Int64], dropped: Int) {
        var numbers: [Int64] = []
        numbers.reserveCapacity(messages.count)
        for message in messages {
            try db.execute("INSERT INTO queue (name, key, payload) VALUES (?, ?, ?)", [name, message.key, message.payload])
            numbers.append(db.lastInsertedRowID)
        }
        try db.execute(
            """
            DELETE FROM queue WHERE name = ?1
            AND id <= (SELECT id FROM queue WHERE name = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)
            """,
            [name, limit])
        return (numbers, db.changesCount)
    }

    fileprivate func queued(_ name: String) throws(StoreError) -> [QueuedMessage] {
        try reading { db throws(SQLiteError) in
            try db.fetchAll("SELECT id, key, payload FROM queue WHERE name = ? ORDER BY id", [name]) {
                (row: borrowing SQLiteRow) throws(SQLiteError) in
                QueuedMessage(number: try row.value("id"), key: try row.value("key"), payload: row.optional("payload") ?? [])
            }
        }
    }

    fileprivate func removeFromQueue(_ name: String, _ numbers: [Int64]) throws(StoreError) {
        try writing { db throws(SQLiteError) in
            for number in numbers { try db.execute("DELETE FROM queue WHERE name = ? AND id = ?", [name, number]) }
        }
    }

    /// Notes when reminders and collections were first seen (the time of the fix that first placed
    /// them), keeping the time noted earlier for one seen before; every first sighting kept.
    /// OwnTracks names a region by this time (its `wtst`).
    @discardableResult
    public func noteFirstSeen(_ times: [String: Date]) throws(StoreError) -> [String: Date] {
        try writing { db throws(SQLiteError) in
            for (id, time) in times {
                try db.execute(
                    "INSERT OR IGNORE INTO region_first_seen (reminder, first_seen) VALUES (?, ?)",
                    [id, time.timeIntervalSince1970.rounded(.down)])
            }
            var seen: [String: Date] = [:]
            try db.execute("SELECT reminder, first_seen FROM region_first_seen") { (row: borrowing SQLiteRow) throws(SQLiteError) in
                seen[try row.value("reminder", as: String.self)] = Date(timeIntervalSince1970: try row.value("first_seen"))
            }
            return seen
        }
    }
}

/// A first-in, first-out queue in the state file, under a name: messages wait there, across
/// restarts, until their owner has delivered them. Numbers only grow, over every queue.
public struct DurableQueue: Sendable {
    let store: StateStore
    /// The queue's name, chosen by its owner.
    public let name: String

    /// Adds messages at the end, in order and in one transaction, then drops the oldest beyond
    /// `limit`: the numbers they were given, and how many were dropped.
    @discardableResult
    public func append(_ messages: [QueuedMessage], limit: Int) throws(StoreError) -> (numbers: [Int64], dropped: Int) {
        try store.appendToQueue(name, messages, limit: limit)
    }

    /// Every message waiting, oldest first.
    public func all() throws(StoreError) -> [QueuedMessage] {
        try store.queued(name)
    }

    /// Deletes delivered messages, in one transaction (one already gone is no matter).
    public func remove(_ numbers: [Int64]) throws(StoreError) {
        try store.removeFromQueue(name, numbers)
    }
}

/// A message of a ``DurableQueue``: a key its owner reads (an MQTT topic) and the bytes.
public struct QueuedMessage: Sendable, Equatable {
    /// Its place in the queue (0 for one not stored yet).
    public var number: Int64
    public var key: String
    public var payload: [UInt8]

    public init(number: Int64 = 0, key: String, payload: [UInt8]) {
        self.number = number
        self.key = key
        self.payload = payload
    }
}
