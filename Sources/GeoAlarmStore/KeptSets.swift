/// A first-in, first-out queue in the state file, under a name (table `queue`): messages wait
/// there, across restarts, until their owner has delivered them. Numbers only grow, over every
/// queue.
public struct DurableQueue: Sendable {
    let file: StateStore
    /// The queue's name, chosen by its owner.
    public let name: String

    /// Adds messages at the end, in order and in one transaction, then drops the oldest beyond
    /// `limit`: the numbers they were given, and how many were dropped.
    @discardableResult
    public func append(_ messages: [QueuedMessage], limit: Int) throws(StoreError) -> (numbers: [Int64], dropped: Int) {
        try file.writing { db throws(SQLiteError) in try Self.append(messages, to: name, limit: limit, in: db) }
    }

    /// Every message waiting, oldest first.
    public func all() throws(StoreError) -> [QueuedMessage] {
        try file.reading { db throws(SQLiteError) in
            try db.fetchAll("SELECT id, key, payload FROM queue WHERE name = ? ORDER BY id", [name]) {
                (row: borrowing SQLiteRow) throws(SQLiteError) in
                QueuedMessage(number: try row.value("id"), key: try row.value("key"), payload: row.optional("payload") ?? [])
            }
        }
    }

    /// Deletes delivered messages, in one transaction (one already gone is no matter).
    public func remove(_ numbers: [Int64]) throws(StoreError) {
        try file.writing { db throws(SQLiteError) in
            for number in numbers { try db.execute("DELETE FROM queue WHERE name = ? AND id = ?", [name, number]) }
        }
    }

    /// Appends `messages` to the queue `name` within the transaction `db` holds, dropping the oldest beyond `limit`.
    static func append(
        _ messages: [QueuedMessage], to name: String, limit: Int, in db: SQLiteConnection
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

/// A set of strings in the state file, under a name (table `string_set`): what a sink
/// remembers having said (the Home Assistant discovery topics it published).
public struct StringSet: Sendable {
    let file: StateStore
    /// The set's name, chosen by its owner.
    public let name: String

    /// The strings kept (none when nothing was kept).
    public func values() throws(StoreError) -> Set<String> {
        try file.reading { db throws(SQLiteError) in
            Set(try db.fetchAll("SELECT value FROM string_set WHERE name = ?", [name]) { (row: borrowing SQLiteRow) throws(SQLiteError) in
                try row.value("value", as: String.self)
            })
        }
    }

    /// Keeps `strings` in place of what the set held, in one transaction.
    public func replace(with strings: Set<String>) throws(StoreError) {
        try file.writing { db throws(SQLiteError) in
            try db.execute("DELETE FROM string_set WHERE name = ?", [name])
            for value in strings {
                try db.execute("INSERT INTO string_set (name, value) VALUES (?, ?)", [name, value])
            }
        }
    }
}
