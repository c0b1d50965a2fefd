import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

/// What the agent writes, each batch one transaction, and the ids that follow a task's key.
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

    static func saveLastFix(_ db: SQLiteConnection, _ fix: Fix) throws(SQLiteError) {
        try db.execute(
            "INSERT OR REPLACE INTO last_fix (id, time, lat, lon, error) VALUES (1, ?, ?, ?, ?)",
            [fix.time?.timeIntervalSince1970, fix.coordinate.latitude, fix.coordinate.longitude, fix.horizontalError])
    }

    static func make(_ write: StateWrite, in db: SQLiteConnection) throws(SQLiteError) {
        switch write {
        case .fix(let record):
            for change in record.proximities {
                let finite = change.proximity.eta.flatMap { $0.isFinite ? $0 : nil }
                try db.execute(
                    """
                    INSERT OR REPLACE INTO proximity (reminder, distance_m, direction, eta_s, time, fence)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                    [change.reminderID, change.proximity.distance, change.proximity.direction.rawValue, finite,
                     change.time.timeIntervalSince1970, change.fenceKey])
            }
            for change in record.changes {
                try setSide(db, device: record.device, id: change.reminderID,
                            SavedPresence(presence: change.presence, time: change.time, fenceKey: change.fenceKey))
            }
            for event in record.events {
                try insertHistory(
                    db, time: event.fix.time, kind: event.kind, id: event.reminder.id, title: event.reminder.title,
                    coordinate: event.fix.coordinate, distance: event.distance, device: record.device)
            }
            for (id, time) in record.completed { try setLifecycle(db, id, column: "completed_at", to: time) }
            if let fix = record.lastFix { try saveLastFix(db, fix) }
        case .alarm(let firing):
            try insertHistory(
                db, time: firing.time, kind: .alarm, id: firing.alarm.id, title: firing.alarm.title, coordinate: nil,
                distance: nil, device: nil)
        case .completed(let id, let time?):
            // The first completion stands: the agent's Done, written from what it last read,
            // keeps one that a command or the map made in the file meanwhile.
            try db.execute(
                """
                INSERT INTO lifecycle (reminder, completed_at) VALUES (?, ?)
                ON CONFLICT(reminder) DO UPDATE SET completed_at = coalesce(completed_at, excluded.completed_at)
                """,
                [id, time.timeIntervalSince1970])
        case .completed(let id, nil):
            try setLifecycle(db, id, column: "completed_at", to: nil)
        case .snoozed(let id, let until):
            try setLifecycle(db, id, column: "snoozed_until", to: until)
        case .lastFix(let fix):
            try saveLastFix(db, fix)
        case .sides(let device, let sides):
            for (id, side) in sides { try setSide(db, device: device, id: id, side) }
        case .proximities(let proximities):
            for (id, saved) in proximities {
                let finite = saved.proximity.eta.flatMap { $0.isFinite ? $0 : nil }
                try db.execute(
                    """
                    INSERT OR REPLACE INTO proximity (reminder, distance_m, direction, eta_s, time, fence)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                    [id, saved.proximity.distance, saved.proximity.direction.rawValue, finite, saved.time.timeIntervalSince1970,
                     saved.fenceKey])
            }
        case .lifecyclesWhereNone(let lifecycles):
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

    /// A fence's confirmed side: this machine's, or a tracked `device`'s.
    static func setSide(_ db: SQLiteConnection, device: String?, id: String, _ side: SavedPresence) throws(SQLiteError) {
        if let device {
            try db.execute(
                """
                INSERT OR REPLACE INTO device_state (device, reminder, presence, confirmed_at, fence)
                VALUES (?, ?, ?, ?, ?)
                """,
                [device, id, side.presence.rawValue, side.time?.timeIntervalSince1970, side.fenceKey])
        } else {
            try db.execute(
                """
                INSERT OR REPLACE INTO side (reminder, presence, confirmed_at, fence) VALUES (?, ?, ?, ?)
                """,
                [id, side.presence.rawValue, side.time?.timeIntervalSince1970, side.fenceKey])
        }
    }

    /// One lifecycle column of a reminder (made with its row when it has none).
    static func setLifecycle(_ db: SQLiteConnection, _ id: String, column: String, to value: Date?) throws(SQLiteError) {
        try db.execute(
            """
            INSERT INTO lifecycle (reminder, \(column)) VALUES (?, ?)
            ON CONFLICT(reminder) DO UPDATE SET \(column) = excluded.\(column)
            """,
            [id, value?.timeIntervalSince1970])
    }

    /// A row of the history, and the time its reminder last fired.
    static func insertHistory(
        _ db: SQLiteConnection, time: Date?, kind: EventKind, id: String, title: String, coordinate: Coordinate?,
        distance: Double?, device: String?
    ) throws(SQLiteError) {
        // Only a corrupt value would not be finite: stored as unknown.
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        try db.execute(
            """
            INSERT INTO history (time, event, reminder, title, lat, lon, distance_m, device)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [time?.timeIntervalSince1970, kind.rawValue, id, title, finite(coordinate?.latitude), finite(coordinate?.longitude),
             finite(distance), device])
        try db.execute(
            """
            INSERT INTO lifecycle (reminder, last_fired) VALUES (?, ?)
            ON CONFLICT(reminder) DO UPDATE SET last_fired = excluded.last_fired
            """,
            [id, time?.timeIntervalSince1970])
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
