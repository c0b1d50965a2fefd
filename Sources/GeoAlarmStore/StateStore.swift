import Foundation
import GeoAlarmCore
import GeoAlarmSystem
internal import GRDB

/// The agent's memory on disk: each reminder's confirmed side and the history of events, in
/// one SQLite file (WAL mode, so the daemon and any number of commands use it at once; file
/// mode 0600, since a location history is private). Every write is one transaction, so a
/// `kill -9` at any moment leaves the file consistent.
public final class StateStore: Sendable {
    public let path: String
    private let reader: any DatabaseReader
    /// Nil for a store opened read-only.
    private let writer: (any DatabaseWriter)?

    /// One past event.
    public struct HistoryEntry: Sendable, Equatable {
        public var time: Date?
        public var kind: EventKind
        public var reminderID: String
        public var title: String
        public var coordinate: Coordinate
        public var distance: Double
    }

    /// `$XDG_STATE_HOME/geoalarm/state.sqlite`, else `~/.local/state/geoalarm/state.sqlite`.
    public static func defaultPath(environment: [String: String]) -> String {
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return "\(xdg)/geoalarm/state.sqlite" }
        return "\(environment["HOME"] ?? "")/.local/state/geoalarm/state.sqlite"
    }

    /// Opens (creating when needed, with its folder) and migrates the store at `path`, and makes
    /// it private (0600) when it is not.
    ///
    /// Several processes may open a new file at once (the agent and a command): the schema is
    /// brought up to date under an exclusive `flock` on the file, so one of them migrates and the
    /// others find it done.
    public init(path: String) throws(StoreError) {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            throw StoreError(path: path, reason: "cannot create its folder: \(error.localizedDescription)")
        }
        // Made here, before SQLite sees it, so that it (and its -wal and -shm files, which SQLite
        // gives the same mode) is private from the start.
        let descriptor: Int32
        do {
            descriptor = try System.open(path, O_RDWR | O_CREAT, mode: 0o600)
        } catch {
            throw StoreError(path: path, reason: error.reason)
        }
        defer { System.close(descriptor) }
        do {
            let info = try System.fstat(descriptor)
            if info.st_mode & 0o077 != 0, info.st_uid == geteuid() {
                try System.fchmod(descriptor, 0o600)
                for suffix in ["-wal", "-shm"] { try System.chmod(path + suffix, 0o600) }
            }
            try System.lockExclusive(descriptor)
        } catch {
            throw StoreError(path: path, reason: "\(error.call): \(error.reason)")
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
            reader = pool
            writer = pool
        } catch {
            throw StoreError(path: path, reason: Self.describe(error))
        }
    }

    /// Opens an existing store only to read it (`status`, `history`): this works on a file the
    /// user cannot write, and never changes it. Nil when there is no file at `path` yet.
    public init?(readingFrom path: String) throws(StoreError) {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        self.path = path
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.read { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
            reader = queue
        } catch {
            // A WAL file whose folder the user cannot write, closed cleanly (no -shm left): SQLite
            // can read it only as immutable, a snapshot of the file as it is.
            do {
                let escaped = path.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "?", with: "%3f")
                    .replacingOccurrences(of: "#", with: "%23")
                reader = try DatabaseQueue(path: "file:\(escaped)?immutable=1", configuration: configuration)
            } catch {
                throw StoreError(path: path, reason: Self.describe(error))
            }
        }
        writer = nil
    }

    /// Every schema change, in order; a file is brought up to date when opened.
    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1: reminder state and history") { db in
            try db.execute(sql: """
                CREATE TABLE reminder_state (
                    reminder TEXT PRIMARY KEY NOT NULL,
                    presence TEXT NOT NULL,
                    confirmed_at REAL,
                    fence TEXT NOT NULL,
                    last_fired REAL
                );
                CREATE TABLE history (
                    id INTEGER PRIMARY KEY,
                    time REAL,
                    event TEXT NOT NULL,
                    reminder TEXT NOT NULL,
                    title TEXT NOT NULL,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL,
                    distance_m REAL NOT NULL
                );
                CREATE INDEX history_by_time ON history(time);
                """)
        }
        migrator.registerMigration("2: reminder lifecycle and last fix") { db in
            try db.execute(sql: """
                ALTER TABLE reminder_state ADD COLUMN completed_at REAL;
                ALTER TABLE reminder_state ADD COLUMN snoozed_until REAL;
                CREATE TABLE last_fix (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    time REAL,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL
                );
                """)
        }
        migrator.registerMigration("3: history of time alarms, which have no position") { db in
            try db.execute(sql: """
                CREATE TABLE history_new (
                    id INTEGER PRIMARY KEY,
                    time REAL,
                    event TEXT NOT NULL,
                    reminder TEXT NOT NULL,
                    title TEXT NOT NULL,
                    lat REAL,
                    lon REAL,
                    distance_m REAL
                );
                INSERT INTO history_new SELECT id, time, event, reminder, title, lat, lon, distance_m FROM history;
                DROP TABLE history;
                ALTER TABLE history_new RENAME TO history;
                CREATE INDEX history_by_time ON history(time);
                """)
        }
        return migrator
    }

    /// How many schema changes this build knows (the newest schema's number).
    public static var knownSchemaVersion: Int { migrator.migrations.count }

    /// The file's schema: how many of this build's schema changes it has, and the names of any
    /// it has that this build does not know (written by a newer geoalarm).
    public func schemaVersion() throws(StoreError) -> (applied: Int, unknown: [String]) {
        do {
            return try reader.read { db in
                let known = Set(Self.migrator.migrations)
                let applied = try Self.migrator.appliedIdentifiers(db)
                return (applied.intersection(known).count, applied.subtracting(known).sorted())
            }
        } catch {
            throw StoreError(path: path, reason: Self.describe(error))
        }
    }

    /// SQLite's data version as the writing connection sees it: it changes only when another
    /// connection (a command, a pop-up button's) has committed since it was last read.
    public func dataVersion() throws(StoreError) -> Int {
        try writing { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
    }

    /// Every reminder's lifecycle (completed, snoozed, last fired), by id.
    public func lifecycles() throws(StoreError) -> [String: Lifecycle] {
        try reading { db in
            var result: [String: Lifecycle] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT reminder, completed_at, snoozed_until, last_fired FROM reminder_state") {
                let completed: Double? = row["completed_at"]
                let snoozed: Double? = row["snoozed_until"]
                let fired: Double? = row["last_fired"]
                result[row["reminder"]] = Lifecycle(
                    completedAt: completed.map(Date.init(timeIntervalSince1970:)),
                    snoozedUntil: snoozed.map(Date.init(timeIntervalSince1970:)),
                    lastFired: fired.map(Date.init(timeIntervalSince1970:)))
            }
            return result
        }
    }

    /// Sets a reminder's completion (nil: not completed), as `geoalarm complete` and `uncomplete` do.
    public func setCompleted(_ id: String, at time: Date?) throws(StoreError) {
        try setLifecycle(id, column: "completed_at", to: time)
    }

    /// Forgets a removed reminder's state (inside/outside, completed, snoozed, last fired), so
    /// that a reminder added later with its id starts afresh; its history stays. Returns how
    /// many events of it the history keeps.
    @discardableResult
    public func forget(_ id: String) throws(StoreError) -> Int {
        try writing { db in
            try db.execute(sql: "DELETE FROM reminder_state WHERE reminder = ?", arguments: [id])
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM history WHERE reminder = ?", arguments: [id]) ?? 0
        }
    }

    /// Snoozes a reminder until `until` (nil ends the snooze).
    public func snooze(_ id: String, until: Date?) throws(StoreError) {
        try setLifecycle(id, column: "snoozed_until", to: until)
    }

    private func setLifecycle(_ id: String, column: String, to value: Date?) throws(StoreError) {
        try writing { db in
            try db.execute(
                sql: """
                    INSERT INTO reminder_state (reminder, presence, fence, \(column)) VALUES (?, 'unknown', '', ?)
                    ON CONFLICT(reminder) DO UPDATE SET \(column) = excluded.\(column)
                    """,
                arguments: [id, value?.timeIntervalSince1970])
        }
    }

    /// The last fix the agent used, for `geoalarm status`.
    public func lastFix() throws(StoreError) -> Fix? {
        try reading { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT time, lat, lon FROM last_fix WHERE id = 1") else { return nil }
            let time: Double? = row["time"]
            return Fix(time: time.map(Date.init(timeIntervalSince1970:)), coordinate: Coordinate(latitude: row["lat"], longitude: row["lon"]))
        }
    }

    /// Notes the last fix used.
    public func setLastFix(_ fix: Fix) throws(StoreError) {
        try writing { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO last_fix (id, time, lat, lon) VALUES (1, ?, ?, ?)",
                arguments: [fix.time?.timeIntervalSince1970, fix.coordinate.latitude, fix.coordinate.longitude])
        }
    }


    /// The saved side of every reminder, by id.
    public func savedPresence() throws(StoreError) -> [String: SavedPresence] {
        try reading { db in
            var saved: [String: SavedPresence] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT reminder, presence, confirmed_at, fence FROM reminder_state") {
                guard let presence = Presence(rawValue: row["presence"]) else { continue }
                let time: Double? = row["confirmed_at"]
                saved[row["reminder"]] = SavedPresence(
                    presence: presence, time: time.map(Date.init(timeIntervalSince1970:)), fenceKey: row["fence"])
            }
            return saved
        }
    }

    /// Keeps what one fix changed, in one transaction: the new sides, the announced events,
    /// and the completions they caused (a `once` reminder's event).
    public func record(
        _ changes: [PresenceChange], events: [GeofenceEvent], completed: [String: Date] = [:]
    ) throws(StoreError) {
        guard !changes.isEmpty || !events.isEmpty else { return }
        try writing { db in
            for change in changes {
                try db.execute(
                    sql: """
                        INSERT INTO reminder_state (reminder, presence, confirmed_at, fence) VALUES (?, ?, ?, ?)
                        ON CONFLICT(reminder) DO UPDATE SET
                            presence = excluded.presence, confirmed_at = excluded.confirmed_at, fence = excluded.fence
                        """,
                    arguments: [change.reminderID, change.presence.rawValue, change.time?.timeIntervalSince1970,
                                change.fenceKey])
            }
            for event in events {
                try db.execute(
                    sql: """
                        INSERT INTO history (time, event, reminder, title, lat, lon, distance_m) VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [event.fix.time?.timeIntervalSince1970, event.kind.rawValue, event.reminder.id,
                                event.reminder.title, finite(event.fix.coordinate.latitude),
                                finite(event.fix.coordinate.longitude), finite(event.distance)])
                try db.execute(
                    sql: """
                        INSERT INTO reminder_state (reminder, presence, fence, last_fired) VALUES (?, 'unknown', '', ?)
                        ON CONFLICT(reminder) DO UPDATE SET last_fired = excluded.last_fired
                        """,
                    arguments: [event.reminder.id, event.fix.time?.timeIntervalSince1970])
            }
            for (id, time) in completed {
                try db.execute(
                    sql: "UPDATE reminder_state SET completed_at = ? WHERE reminder = ?",
                    arguments: [time.timeIntervalSince1970, id])
            }

        }
    }

    /// Past events, oldest first: those at or after `since`, of `reminder` only when given.
    public func history(since: Date? = nil, reminder: String? = nil) throws(StoreError) -> [HistoryEntry] {
        try reading { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let since {
                conditions.append("time >= ?")
                arguments += [since.timeIntervalSince1970]
            }
            if let reminder {
                conditions.append("reminder = ?")
                arguments += [reminder]
            }
            let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
            return try Row.fetchAll(db, sql: "SELECT * FROM history\(filter) ORDER BY time, id", arguments: arguments)
                .compactMap { row in
                    guard let kind = EventKind(rawValue: row["event"]) else { return nil }
                    let time: Double? = row["time"]
                    let lat: Double? = row["lat"], lon: Double? = row["lon"], distance: Double? = row["distance_m"]
                    return HistoryEntry(
                        time: time.map(Date.init(timeIntervalSince1970:)), kind: kind, reminderID: row["reminder"],
                        title: row["title"], coordinate: Coordinate(latitude: lat ?? .nan, longitude: lon ?? .nan),
                        distance: distance ?? .nan)
                }
        }
    }

    /// Deletes events older than `cutoff`; how many went.
    @discardableResult
    public func prune(before cutoff: Date) throws(StoreError) -> Int {
        try writing { db in
            try db.execute(sql: "DELETE FROM history WHERE time < ?", arguments: [cutoff.timeIntervalSince1970])
            return db.changesCount
        }
    }

    /// A number for SQLite: NaN (a time alarm's position) is stored as NULL.
    private func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }

    private func reading<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try reader.read(body)
        } catch {
            throw StoreError(path: path, reason: Self.describe(error))
        }
    }

    private func writing<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        guard let writer else { throw StoreError(path: path, reason: "opened read-only") }
        do {
            return try writer.write(body)
        } catch {
            throw StoreError(path: path, reason: Self.describe(error))
        }
    }

    private static func describe(_ error: Error) -> String {
        if let database = error as? DatabaseError {
            return database.message ?? "\(database.resultCode)"
        }
        return "\(error)"
    }
}

/// The state file cannot be used, and what to do about it.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public var description: String {
        "state file \(path): \(reason) (move it away, or fix its permissions, or name another with --state)"
    }
}
