import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

/// The writes that span what the parts keep: the agent's batches, each one transaction; the
/// ids that follow a task's key; forgetting a removed reminder.
extension StateStore {
    /// Keeps what one fix changed, in one transaction: the new sides (this machine's, or a
    /// tracked `device`'s), the announced events, the completions they caused (a `once`
    /// reminder's event), and this machine's proximities that changed noticeably. A reminder's
    /// lifecycle (completed, snoozed, last fired) is one for every device.
    public func record(
        _ changes: [PresenceChange], events: [GeofenceEvent], completed: [String: Date] = [:], device: String? = nil,
        proximities: ProximityChanges = []
    ) throws(StoreError) {
        guard !changes.isEmpty || !events.isEmpty || !proximities.isEmpty else { return }
        try apply([.fix(FixRecord(changes: changes, events: events, completed: completed, device: device, proximities: proximities))])
    }

    /// Records a time alarm's firing: a history row without a place, and its last firing.
    public func record(_ firing: AlarmFiring) throws(StoreError) {
        try apply([.alarm(firing)])
    }

    /// Makes `writes`, in order, in one transaction: all of them or, when one fails, none.
    public func apply(_ writes: [StateWrite]) throws(StoreError) {
        try writing { db throws(SQLiteError) in
            for write in writes { try Self.make(write, in: db) }
        }
    }

    /// Makes one write within the transaction `db` holds, each part writing what it keeps.
    static func make(_ write: StateWrite, in db: SQLiteConnection) throws(SQLiteError) {
        switch write {
        case .fix(let record):
            for change in record.proximities {
                try SideRecords.setProximity(
                    SavedProximity(proximity: change.proximity, time: change.time, fenceKey: change.fenceKey), of: change.reminderID, in: db)
            }
            for change in record.changes {
                try SideRecords.setSide(
                    SavedPresence(presence: change.presence, time: change.time, fenceKey: change.fenceKey), of: change.reminderID,
                    device: record.device, in: db)
            }
            for event in record.events {
                try fired(
                    event.kind, of: event.reminder.id, titled: event.reminder.title, time: event.fix.time,
                    coordinate: event.fix.coordinate, distance: event.distance, device: record.device, in: db)
            }
            for (id, time) in record.completed { try LifecycleRecords.set(.completedAt, of: id, to: time, in: db) }
            if let fix = record.lastFix { try SideRecords.setLastFix(fix, in: db) }
        case .alarm(let firing):
            try fired(
                .alarm, of: firing.alarm.id, titled: firing.alarm.title, time: firing.time, coordinate: nil, distance: nil, device: nil,
                in: db)
        case .completed(let id, let time?):
            try LifecycleRecords.setCompletion(of: id, to: time, in: db)
        case .completed(let id, nil):
            try LifecycleRecords.set(.completedAt, of: id, to: nil, in: db)
        case .snoozed(let id, let until):
            try LifecycleRecords.set(.snoozedUntil, of: id, to: until, in: db)
        case .lastFix(let fix):
            try SideRecords.setLastFix(fix, in: db)
        case .sides(let device, let sides):
            for (id, side) in sides { try SideRecords.setSide(side, of: id, device: device, in: db) }
        case .proximities(let proximities):
            for (id, saved) in proximities { try SideRecords.setProximity(saved, of: id, in: db) }
        case .lifecyclesWhereNone(let lifecycles):
            try LifecycleRecords.setWhereNone(lifecycles, in: db)
        }
    }

    /// An event in the history, and the time its reminder last fired.
    private static func fired(
        _ kind: EventKind, of id: String, titled title: String, time: Date?, coordinate: Coordinate?, distance: Double?,
        device: String?, in db: SQLiteConnection
    ) throws(SQLiteError) {
        try EventHistory.insert(kind, of: id, titled: title, time: time, coordinate: coordinate, distance: distance, device: device, in: db)
        try LifecycleRecords.set(.lastFired, of: id, to: time, in: db)
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

    /// Follows task lists' reminders to their ids now: `keys` gives, for each (its task's UID,
    /// with the suffix of its place or time alarm), the reminder's id. A reminder whose id
    /// changed since it was last noted (its list renamed, its task moved to another list) takes
    /// its state and history along; an id that has state of its own already keeps it. Returns
    /// the ids renamed, old to new.
    @discardableResult
    public func follow(taskKeys keys: [String: String]) throws(StoreError) -> [String: String] {
        guard !keys.isEmpty else { return [:] }
        return try writing { db throws(SQLiteError) in
            var known: [String: String] = [:]
            try db.execute("SELECT key, reminder FROM task_ids") { (row: borrowing SQLiteRow) throws(SQLiteError) in
                known[try row.value("key", as: String.self)] = try row.value("reminder", as: String.self)
            }
            var renamed: [String: String] = [:]
            for (key, id) in keys {
                if let old = known[key], old != id {
                    try Self.move(old, to: id, in: db)
                    renamed[old] = id
                }
                if known[key] != id { try db.execute("INSERT OR REPLACE INTO task_ids (key, reminder) VALUES (?, ?)", [key, id]) }
            }
            return renamed
        }
    }

    /// Moves the rows of reminder `old` to `new`, and those of its places and time alarms
    /// (`old/1`, `old/time-1`) to the same under `new` (as ``ReminderCollection/renamedID(_:by:)``); where `new` has a row of its own
    /// already, that one is kept.
    static func move(_ old: String, to new: String, in db: SQLiteConnection) throws(SQLiteError) {
        // ?1 the old id, ?2 the new, ?3 the old id's length (in characters, as SQLite counts
        // them). No reminder's own id holds a "/": one after `old` is a place's or time alarm's.
        let matches = "(reminder = ?1 OR substr(reminder, 1, ?3 + 1) = ?1 || '/')"
        let arguments: [any SQLiteArgument] = [old, new, old.unicodeScalars.count]
        for table in ["side", "lifecycle", "proximity", "region_first_seen", "device_state"] {
            try db.execute("UPDATE OR IGNORE \(table) SET reminder = ?2 || substr(reminder, ?3 + 1) WHERE \(matches)", arguments)
            try db.execute("DELETE FROM \(table) WHERE \(matches)", arguments)
        }
        try db.execute("UPDATE history SET reminder = ?2 || substr(reminder, ?3 + 1) WHERE \(matches)", arguments)
    }
}

/// One write to the state file, as a value: what the agent keeps in memory while the file
/// cannot be written, and writes once it can (``StateStore/apply(_:)``).
public enum StateWrite: Sendable {
    /// What one fix changed.
    case fix(FixRecord)
    /// A time alarm's firing.
    case alarm(AlarmFiring)
    /// A reminder completed at a time, or no longer (nil).
    case completed(String, at: Date?)
    /// A reminder snoozed until a time, or no longer (nil).
    case snoozed(String, until: Date?)
    /// The last fix the agent used.
    case lastFix(Fix)
    /// Fences' confirmed sides, by reminder id: this machine's, or a tracked device's.
    case sides(device: String?, [String: SavedPresence])
    /// Reminders' proximities, by id.
    case proximities([String: SavedProximity])
    /// Lifecycles for the reminders the file has none of (a column the file has set stays).
    case lifecyclesWhereNone([String: Lifecycle])
}
