import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

/// What the state file keeps of each reminder's lifecycle: completed, snoozed, last fired
/// (table `lifecycle`), and when it was first seen (`region_first_seen`).
public struct LifecycleRecords: Sendable {
    let file: StateStore

    /// Every reminder's lifecycle (completed, snoozed, last fired), by id.
    public func all() throws(StoreError) -> [String: Lifecycle] {
        try file.reading { db throws(SQLiteError) in
            var result: [String: Lifecycle] = [:]
            try db.execute("SELECT reminder, completed_at, snoozed_until, last_fired FROM lifecycle") {
                (row: borrowing SQLiteRow) throws(SQLiteError) in
                result[try row.value("reminder", as: String.self)] = Lifecycle(
                    completedAt: row.optional("completed_at").map(Date.init(timeIntervalSince1970:)),
                    snoozedUntil: row.optional("snoozed_until").map(Date.init(timeIntervalSince1970:)),
                    lastFired: row.optional("last_fired").map(Date.init(timeIntervalSince1970:)))
            }
            return result
        }
    }

    /// Marks `id` completed at `time` unless it is completed already: the first completion stands,
    /// as `status` and the map show it. Returns that earlier completion; nil when this call made it.
    /// The check and the write are one transaction, so that a completion made meanwhile by
    /// another process (the agent's Done, the map, a second command) is never overwritten.
    @discardableResult
    public func complete(_ id: String, at time: Date) throws(StoreError) -> Date? {
        try file.writing { db throws(SQLiteError) -> Date? in
            if let earlier = try Self.completion(of: id, in: db) { return earlier }
            try Self.setCompletion(of: id, to: time, in: db)
            return nil
        }
    }

    /// Marks `id` not completed; false, writing nothing, when it was not completed (checked in
    /// the same transaction as the write, as ``complete(_:at:)`` does).
    @discardableResult
    public func uncomplete(_ id: String) throws(StoreError) -> Bool {
        try file.writing { db throws(SQLiteError) -> Bool in
            guard try Self.completion(of: id, in: db) != nil else { return false }
            try Self.set(.completedAt, of: id, to: nil, in: db)
            return true
        }
    }

    /// When `id` was completed; nil when it is not.
    static func completion(of id: String, in db: SQLiteConnection) throws(SQLiteError) -> Date? {
        try db.fetchOne("SELECT completed_at FROM lifecycle WHERE reminder = ?", [id], as: Double.self)
            .map(Date.init(timeIntervalSince1970:))
    }

    /// Snoozes a reminder until `until` (nil ends the snooze).
    public func snooze(_ id: String, until: Date?) throws(StoreError) {
        try file.apply([.snoozed(id, until: until)])
    }

    /// Ends what snoozes reminder `id`: its own snooze and, for a place of a collection snoozed
    /// whole, the collection's (every place of it speaks again). The ids whose snooze ended, in
    /// that order; none when nothing snoozed it.
    @discardableResult
    public func endSnooze(of id: String) throws(StoreError) -> [String] {
        let snoozing = [id] + (ReminderCollection.collectionID(ofPlace: id).map { [$0] } ?? [])
        return try file.writing { db throws(SQLiteError) in
            var ended: [String] = []
            for id in snoozing where try db.fetchOne("SELECT snoozed_until FROM lifecycle WHERE reminder = ?", [id], as: Double.self) != nil {
                try Self.set(.snoozedUntil, of: id, to: nil, in: db)
                ended.append(id)
            }
            return ended
        }
    }

    /// Notes when reminders and collections were first seen (the time of the fix that first placed
    /// them), keeping the time noted earlier for one seen before; every first sighting kept.
    /// OwnTracks names a region by this time (its `wtst`).
    @discardableResult
    public func noteFirstSeen(_ times: [String: Date]) throws(StoreError) -> [String: Date] {
        try file.writing { db throws(SQLiteError) in
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

    // The writes, within a transaction a batch holds (``StateStore/apply(_:)``).

    /// A time of a reminder's lifecycle: a column of `lifecycle`.
    enum Column: String {
        case completedAt = "completed_at"
        case snoozedUntil = "snoozed_until"
        case lastFired = "last_fired"
    }

    /// One time of a reminder's lifecycle (its row made when it has none).
    static func set(_ column: Column, of id: String, to value: Date?, in db: SQLiteConnection) throws(SQLiteError) {
        try db.execute(
            """
            INSERT INTO lifecycle (reminder, \(column.rawValue)) VALUES (?, ?)
            ON CONFLICT(reminder) DO UPDATE SET \(column.rawValue) = excluded.\(column.rawValue)
            """,
            [id, value?.timeIntervalSince1970])
    }

    /// Reminder `id` completed at `time`, unless the file holds a completion of it already: the
    /// first completion stands, so the agent's Done, written from what it last read, keeps one
    /// that a command or the map made in the file meanwhile.
    static func setCompletion(of id: String, to time: Date, in db: SQLiteConnection) throws(SQLiteError) {
        try db.execute(
            """
            INSERT INTO lifecycle (reminder, completed_at) VALUES (?, ?)
            ON CONFLICT(reminder) DO UPDATE SET completed_at = coalesce(completed_at, excluded.completed_at)
            """,
            [id, time.timeIntervalSince1970])
    }

    /// Lifecycles for the reminders the file has none of (a column the file has set stays).
    static func setWhereNone(_ lifecycles: [String: Lifecycle], in db: SQLiteConnection) throws(SQLiteError) {
        for (id, lifecycle) in lifecycles {
            try db.execute(
                """
                INSERT INTO lifecycle (reminder, completed_at, snoozed_until, last_fired) VALUES (?, ?, ?, ?)
                ON CONFLICT(reminder) DO UPDATE SET
                    completed_at = coalesce(completed_at, excluded.completed_at),
                    snoozed_until = coalesce(snoozed_until, excluded.snoozed_until),
                    last_fired = coalesce(last_fired, excluded.last_fired)
                """,
                [id, lifecycle.completedAt?.timeIntervalSince1970, lifecycle.snoozedUntil?.timeIntervalSince1970,
                 lifecycle.lastFired?.timeIntervalSince1970])
        }
    }
}
