import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

/// Each reminder's lifecycle: completed, snoozed, last fired.
extension StateStore {
    /// Every reminder's lifecycle (completed, snoozed, last fired), by id.
    public func lifecycles() throws(StoreError) -> [String: Lifecycle] {
        try reading { db throws(SQLiteError) in
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
        try writing { db throws(SQLiteError) -> Date? in
            if let earlier = try Self.completion(of: id, in: db) { return earlier }
            try Self.make(.completed(id, at: time), in: db)
            return nil
        }
    }

    /// Marks `id` not completed; false, writing nothing, when it was not completed (checked in
    /// the same transaction as the write, as ``complete(_:at:)`` does).
    @discardableResult
    public func uncomplete(_ id: String) throws(StoreError) -> Bool {
        try writing { db throws(SQLiteError) -> Bool in
            guard try Self.completion(of: id, in: db) != nil else { return false }
            try Self.make(.completed(id, at: nil), in: db)
            return true
        }
    }

    /// When `id` was completed; nil when it is not.
    static func completion(of id: String, in db: SQLiteConnection) throws(SQLiteError) -> Date? {
        try db.fetchOne("SELECT completed_at FROM lifecycle WHERE reminder = ?", [id], as: Double.self)
            .map(Date.init(timeIntervalSince1970:))
    }

    /// Forgets a removed reminder's state (inside/outside, completed, snoozed, last fired), so
    /// that a reminder added later with its id starts afresh; its history stays. Returns how
    /// many events of it the history keeps.
    @discardableResult
    public func forget(_ id: String) throws(StoreError) -> Int {
        try writing { db throws(SQLiteError) in
            try db.execute("DELETE FROM side WHERE reminder = ?", [id])
            try db.execute("DELETE FROM lifecycle WHERE reminder = ?", [id])
            try db.execute("DELETE FROM device_state WHERE reminder = ?", [id])
            try db.execute("DELETE FROM region_first_seen WHERE reminder = ?", [id])
            return try db.fetchOne("SELECT count(*) FROM history WHERE reminder = ?", [id], as: Int.self) ?? 0
        }
    }

    /// Snoozes a reminder until `until` (nil ends the snooze).
    public func snooze(_ id: String, until: Date?) throws(StoreError) {
        try apply([.snoozed(id, until: until)])
    }

    /// Ends what snoozes reminder `id`: its own snooze and, for a place of a collection snoozed
    /// whole, the collection's (every place of it speaks again). The ids whose snooze ended, in
    /// that order; none when nothing snoozed it.
    @discardableResult
    public func endSnooze(of id: String) throws(StoreError) -> [String] {
        let snoozing = [id] + (ReminderCollection.collectionID(ofPlace: id).map { [$0] } ?? [])
        return try writing { db throws(SQLiteError) in
            var ended: [String] = []
            for id in snoozing where try db.fetchOne("SELECT snoozed_until FROM lifecycle WHERE reminder = ?", [id], as: Double.self) != nil {
                try Self.setLifecycle(db, id, column: "snoozed_until", to: nil)
                ended.append(id)
            }
            return ended
        }
    }
}
