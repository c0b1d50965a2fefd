import Foundation
import GeoAlarmCore
import GeoAlarmSystem
internal import GRDB
import Synchronization

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
        /// Where the fix was; nil for a time alarm.
        public var coordinate: Coordinate?
        /// Metres from the reminder; nil for a time alarm.
        public var distance: Double?
        /// The tracked device (OwnTracks `user/device`) the event was of; nil for this machine's own.
        public var device: String?
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
        if let problem = FileSafety.notRegularFileProblem(path) { throw StoreError(path: path, reason: problem) }
        // Made here, before SQLite sees it, so that it (and its -wal and -shm files, which SQLite
        // gives the same mode) is private from the start.
        let descriptor: Int32
        do {
            descriptor = try StateFileDescriptors.shared.descriptor(for: path)
        } catch {
            throw StoreError(path: path, reason: error.reason)
        }
        do {
            let info = try System.fstat(descriptor)
            // Replaced by something else since it was looked at: not ours to change.
            guard info.st_mode & S_IFMT == S_IFREG else { throw StoreError(path: path, reason: "is not a regular file") }
            if info.st_mode & 0o077 != 0, info.st_uid == geteuid() {
                try System.fchmod(descriptor, 0o600)
                for suffix in ["-wal", "-shm"] { try System.chmod(path + suffix, 0o600) }
            }
            try System.lockExclusive(descriptor)
        } catch let error as StoreError {
            throw error
        } catch let error as SystemError {
            throw StoreError(path: path, reason: "\(error.call): \(error.reason)")
        } catch {
            throw StoreError(path: path, reason: "\(error)")
        }
        defer { System.unlock(descriptor) }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            // A file a newer geoalarm wrote is neither migrated nor written: every command refuses it alike.
            if let newer = try Self.newerMigrations(pool) { throw StoreError(path: path, reason: newer) }
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
        if let problem = FileSafety.notRegularFileProblem(path) { throw StoreError(path: path, reason: problem) }
        self.path = path
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.read { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
            reader = queue
        } catch let error as StoreError {
            throw error
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
        do {
            if let newer = try Self.newerMigrations(reader) { throw StoreError(path: path, reason: newer) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(path: path, reason: Self.describe(error))
        }
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
        migrator.registerMigration("4: tracked devices and the MQTT outbox") { db in
            try db.execute(sql: """
                CREATE TABLE device_state (
                    device TEXT NOT NULL,
                    reminder TEXT NOT NULL,
                    presence TEXT NOT NULL,
                    confirmed_at REAL,
                    fence TEXT NOT NULL,
                    PRIMARY KEY (device, reminder)
                ) WITHOUT ROWID;
                ALTER TABLE history ADD COLUMN device TEXT;
                CREATE TABLE mqtt_outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    topic TEXT NOT NULL,
                    payload BLOB NOT NULL
                );
                CREATE TABLE mqtt_discovery (topic TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("5: when each reminder was first seen (OwnTracks regions' wtst)") { db in
            try db.execute(sql: """
                CREATE TABLE region_first_seen (reminder TEXT PRIMARY KEY NOT NULL, first_seen REAL NOT NULL) WITHOUT ROWID;
                """)
        }
        // The store keeps queues and sets for whoever names them, knowing nothing of what they
        // hold; the MQTT tables of schema 4 move into them under the names the MQTT module uses,
        // numbers going on from the highest the outbox ever gave.
        migrator.registerMigration("6: named queues and string sets, the MQTT outbox and discovery topics moved into them") { db in
            try db.execute(sql: """
                CREATE TABLE queue (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL,
                    key TEXT NOT NULL,
                    payload BLOB NOT NULL
                );
                CREATE INDEX queue_by_name ON queue(name, id);
                INSERT INTO queue (id, name, key, payload) SELECT id, 'mqtt-outbox', topic, payload FROM mqtt_outbox ORDER BY id;
                INSERT INTO sqlite_sequence (name, seq) SELECT 'queue', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'queue');
                UPDATE sqlite_sequence SET seq = (SELECT max(seq) FROM sqlite_sequence WHERE name IN ('queue', 'mqtt_outbox'))
                    WHERE name = 'queue';
                DROP TABLE mqtt_outbox;
                CREATE TABLE string_set (name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (name, value)) WITHOUT ROWID;
                INSERT INTO string_set (name, value) SELECT 'mqtt-discovery', topic FROM mqtt_discovery;
                DROP TABLE mqtt_discovery;
                """)
        }
        migrator.registerMigration("7: the last fix's error estimate (the map's circle around you)") { db in
            try db.execute(sql: "ALTER TABLE last_fix ADD COLUMN error REAL")
        }
        migrator.registerMigration("8: each reminder's proximity (distance to its edge, direction of travel, time to arrival)") { db in
            try db.execute(sql: """
                CREATE TABLE proximity (
                    reminder TEXT PRIMARY KEY NOT NULL,
                    distance_m REAL NOT NULL,
                    direction TEXT NOT NULL,
                    eta_s REAL,
                    time REAL NOT NULL,
                    fence TEXT NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        return migrator
    }

    /// How many schema changes this build knows (the newest schema's number).
    public static var knownSchemaVersion: Int { migrator.migrations.count }

    /// The file's schema: how many of this build's schema changes it has (a file with changes
    /// this build does not know is refused when opened).
    public func schemaVersion() throws(StoreError) -> Int {
        do {
            return try reader.read { db in
                try Self.migrator.appliedIdentifiers(db).intersection(Set(Self.migrator.migrations)).count
            }
        } catch {
            throw StoreError(path: path, reason: Self.describe(error))
        }
    }

    /// Why the file cannot be used by this build: it has schema changes a newer geoalarm made; nil when it has none.
    private static func newerMigrations(_ reader: some DatabaseReader) throws -> String? {
        let unknown = try reader.read { db in
            try migrator.appliedIdentifiers(db).subtracting(Set(migrator.migrations)).sorted()
        }
        guard !unknown.isEmpty else { return nil }
        return "was written by a newer geoalarm (\(unknown.joined(separator: ", "))); upgrade geoalarm to use it"
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
            try db.execute(sql: "DELETE FROM device_state WHERE reminder = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM region_first_seen WHERE reminder = ?", arguments: [id])
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

    /// The last fix the agent used (its time, position and error estimate), for `geoalarm status` and the map.
    public func lastFix() throws(StoreError) -> Fix? {
        try reading { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT time, lat, lon, error FROM last_fix WHERE id = 1") else { return nil }
            let time: Double? = row["time"]
            return Fix(
                time: time.map(Date.init(timeIntervalSince1970:)), coordinate: Coordinate(latitude: row["lat"], longitude: row["lon"]),
                horizontalError: row["error"])
        }
    }

    /// Notes the last fix used.
    public func setLastFix(_ fix: Fix) throws(StoreError) {
        try writing { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO last_fix (id, time, lat, lon, error) VALUES (1, ?, ?, ?, ?)",
                arguments: [fix.time?.timeIntervalSince1970, fix.coordinate.latitude, fix.coordinate.longitude, fix.horizontalError])
        }
    }


    /// The saved side of every reminder, by id: this machine's own, or a tracked `device`'s.
    public func savedPresence(device: String? = nil) throws(StoreError) -> [String: SavedPresence] {
        try reading { db in
            var saved: [String: SavedPresence] = [:]
            let rows = if let device {
                try Row.fetchAll(
                    db, sql: "SELECT reminder, presence, confirmed_at, fence FROM device_state WHERE device = ?", arguments: [device])
            } else {
                try Row.fetchAll(db, sql: "SELECT reminder, presence, confirmed_at, fence FROM reminder_state")
            }
            for row in rows {
                guard let presence = Presence(rawValue: row["presence"]) else { continue }
                let time: Double? = row["confirmed_at"]
                saved[row["reminder"]] = SavedPresence(
                    presence: presence, time: time.map(Date.init(timeIntervalSince1970:)), fenceKey: row["fence"])
            }
            return saved
        }
    }

    /// This machine's proximity of every reminder, by id, as the agent last noted it.
    public func savedProximities() throws(StoreError) -> [String: SavedProximity] {
        try reading { db in
            var saved: [String: SavedProximity] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT reminder, distance_m, direction, eta_s, time, fence FROM proximity") {
                guard let direction = Proximity.Direction(rawValue: row["direction"]) else { continue }
                saved[row["reminder"]] = SavedProximity(
                    proximity: Proximity(distance: row["distance_m"], direction: direction, eta: row["eta_s"]),
                    time: Date(timeIntervalSince1970: row["time"]), fenceKey: row["fence"])
            }
            return saved
        }
    }

    /// Keeps what one fix changed, in one transaction: the new sides (this machine's, or a
    /// tracked `device`'s), the announced events, the completions they caused (a `once`
    /// reminder's event), and this machine's proximities that changed noticeably. A reminder's
    /// lifecycle (completed, snoozed, last fired) is one for every device.
    public func record(
        _ changes: [PresenceChange], events: [GeofenceEvent], completed: [String: Date] = [:], device: String? = nil,
        proximities: [ProximityChange] = []
    ) throws(StoreError) {
        guard !changes.isEmpty || !events.isEmpty || !proximities.isEmpty else { return }
        try writing { db in
            for change in proximities {
                let finite = change.proximity.eta.flatMap { $0.isFinite ? $0 : nil }
                try db.cachedStatement(
                    sql: """
                        INSERT OR REPLACE INTO proximity (reminder, distance_m, direction, eta_s, time, fence)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """
                ).execute(
                    arguments: [change.reminderID, change.proximity.distance, change.proximity.direction.rawValue, finite,
                                change.time.timeIntervalSince1970, change.fenceKey])
            }
            for change in changes {
                if let device {
                    try db.cachedStatement(
                        sql: """
                            INSERT OR REPLACE INTO device_state (device, reminder, presence, confirmed_at, fence)
                            VALUES (?, ?, ?, ?, ?)
                            """
                    ).execute(
                        arguments: [device, change.reminderID, change.presence.rawValue, change.time?.timeIntervalSince1970,
                                    change.fenceKey])
                    continue
                }
                try db.cachedStatement(
                    sql: """
                        INSERT INTO reminder_state (reminder, presence, confirmed_at, fence) VALUES (?, ?, ?, ?)
                        ON CONFLICT(reminder) DO UPDATE SET
                            presence = excluded.presence, confirmed_at = excluded.confirmed_at, fence = excluded.fence
                        """
                ).execute(
                    arguments: [change.reminderID, change.presence.rawValue, change.time?.timeIntervalSince1970,
                                change.fenceKey])
            }
            for event in events {
                try Self.insertHistory(
                    db, time: event.fix.time, kind: event.kind, id: event.reminder.id, title: event.reminder.title,
                    coordinate: event.fix.coordinate, distance: event.distance, device: device)
            }
            for (id, time) in completed {
                try db.cachedStatement(sql: "UPDATE reminder_state SET completed_at = ? WHERE reminder = ?")
                    .execute(arguments: [time.timeIntervalSince1970, id])
            }
        }
    }

    /// Records a time alarm's firing: a history row without a place, and its last firing.
    public func record(_ firing: AlarmFiring) throws(StoreError) {
        try writing { db in
            try Self.insertHistory(
                db, time: firing.time, kind: .alarm, id: firing.alarm.id, title: firing.alarm.title, coordinate: nil,
                distance: nil, device: nil)
        }
    }

    /// A row of the history, and the time its reminder last fired.
    private static func insertHistory(
        _ db: Database, time: Date?, kind: EventKind, id: String, title: String, coordinate: Coordinate?, distance: Double?,
        device: String?
    ) throws {
        // Only a corrupt value would not be finite: stored as unknown.
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        try db.cachedStatement(
            sql: """
                INSERT INTO history (time, event, reminder, title, lat, lon, distance_m, device)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [time?.timeIntervalSince1970, kind.rawValue, id, title, finite(coordinate?.latitude),
                        finite(coordinate?.longitude), finite(distance), device])
        try db.cachedStatement(
            sql: """
                INSERT INTO reminder_state (reminder, presence, fence, last_fired) VALUES (?, 'unknown', '', ?)
                ON CONFLICT(reminder) DO UPDATE SET last_fired = excluded.last_fired
                """
        ).execute(arguments: [id, time?.timeIntervalSince1970])
    }

    /// Past events, oldest first: those at or after `since`, of `reminder` only when given, the
    /// `last` latest of them only when given.
    public func history(since: Date? = nil, reminder: String? = nil, last: Int? = nil) throws(StoreError) -> [HistoryEntry] {
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
            var query = "SELECT * FROM history\(filter) ORDER BY time, id"
            if let last {
                query = "SELECT * FROM (SELECT * FROM history\(filter) ORDER BY time DESC, id DESC LIMIT ?) ORDER BY time, id"
                arguments += [last]
            }
            return try Row.fetchAll(db, sql: query, arguments: arguments)
                .compactMap { row in
                    guard let kind = EventKind(rawValue: row["event"]) else { return nil }
                    let time: Double? = row["time"]
                    let lat: Double? = row["lat"], lon: Double? = row["lon"], distance: Double? = row["distance_m"]
                    return HistoryEntry(
                        time: time.map(Date.init(timeIntervalSince1970:)), kind: kind, reminderID: row["reminder"],
                        title: row["title"], coordinate: lat.flatMap { lat in lon.map { Coordinate(latitude: lat, longitude: $0) } },
                        distance: distance, device: row["device"])
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

    // MARK: Queues and sets for other modules

    /// The durable queue called `name` (made on first use): what a sink must not lose before it
    /// is delivered (the MQTT publisher's outbox).
    public func queue(named name: String) -> DurableQueue { DurableQueue(store: self, name: name) }

    /// The set of strings kept under `name` (empty when none was kept).
    public func strings(named name: String) throws(StoreError) -> Set<String> {
        try reading { db in
            Set(try String.fetchAll(db, sql: "SELECT value FROM string_set WHERE name = ?", arguments: [name]))
        }
    }

    /// Keeps `strings` as the set called `name`, in place of what it held.
    public func setStrings(_ strings: Set<String>, named name: String) throws(StoreError) {
        try writing { db in
            try db.execute(sql: "DELETE FROM string_set WHERE name = ?", arguments: [name])
            for value in strings {
                try db.execute(sql: "INSERT INTO string_set (name, value) VALUES (?, ?)", arguments: [name, value])
            }
        }
    }

    fileprivate func appendToQueue(_ name: String, _ message: QueuedMessage, limit: Int) throws(StoreError) -> (number: Int64, dropped: Int) {
        try writing { db in
            try db.cachedStatement(sql: "INSERT INTO queue (name, key, payload) VALUES (?, ?, ?)")
                .execute(arguments: [name, message.key, Data(message.payload)])
            let number = db.lastInsertedRowID
            try db.cachedStatement(sql: """
                DELETE FROM queue WHERE name = ?1
                AND id <= (SELECT id FROM queue WHERE name = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)
                """).execute(arguments: [name, limit])
            return (number, db.changesCount)
        }
    }

    fileprivate func queued(_ name: String) throws(StoreError) -> [QueuedMessage] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT id, key, payload FROM queue WHERE name = ? ORDER BY id", arguments: [name]).map { row in
                let payload: Data = row["payload"]
                return QueuedMessage(number: row["id"], key: row["key"], payload: Array(payload))
            }
        }
    }

    fileprivate func removeFromQueue(_ name: String, _ number: Int64) throws(StoreError) {
        try writing { db in
            try db.cachedStatement(sql: "DELETE FROM queue WHERE name = ? AND id = ?").execute(arguments: [name, number])
        }
    }

    /// Notes when reminders and collections were first seen (the time of the fix that first placed
    /// them), keeping the time noted earlier for one seen before; every first sighting kept.
    /// OwnTracks names a region by this time (its `wtst`).
    @discardableResult
    public func noteFirstSeen(_ times: [String: Date]) throws(StoreError) -> [String: Date] {
        try writing { db in
            for (id, time) in times {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO region_first_seen (reminder, first_seen) VALUES (?, ?)",
                    arguments: [id, time.timeIntervalSince1970.rounded(.down)])
            }
            let rows = try Row.fetchAll(db, sql: "SELECT reminder, first_seen FROM region_first_seen")
            return Dictionary(rows.map { row in (row["reminder"] as String, Date(timeIntervalSince1970: row["first_seen"] as Double)) },
                              uniquingKeysWith: { first, _ in first })
        }
    }

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

/// One descriptor per state file for the whole process, never closed: closing any descriptor of
/// a file drops every POSIX lock the process holds on it, SQLite's among them; another process
/// (a command) would then think the agent gone, and on closing delete the write-ahead log the
/// agent still writes to, so that the agent's later writes reach nobody.
final class StateFileDescriptors: Sendable {
    static let shared = StateFileDescriptors()
    private let descriptors = Mutex<[String: Int32]>([:])

    /// The descriptor of `path`, opened (and created, mode 0600) the first time.
    func descriptor(for path: String) throws(SystemError) -> Int32 {
        try descriptors.withLock { (open: inout [String: Int32]) throws(SystemError) -> Int32 in
            if let known = open[path] { return known }
            let descriptor = try System.open(path, O_RDWR | O_CREAT, mode: 0o600)
            open[path] = descriptor
            return descriptor
        }
    }
}

/// A first-in, first-out queue in the state file, under a name: messages wait there, across
/// restarts, until their owner has delivered them. Numbers only grow, over every queue.
public struct DurableQueue: Sendable {
    let store: StateStore
    /// The queue's name, chosen by its owner.
    public let name: String

    /// Adds a message at the end, then drops the oldest beyond `limit`: the number it was given,
    /// and how many were dropped.
    @discardableResult
    public func append(_ message: QueuedMessage, limit: Int) throws(StoreError) -> (number: Int64, dropped: Int) {
        try store.appendToQueue(name, message, limit: limit)
    }

    /// Every message waiting, oldest first.
    public func all() throws(StoreError) -> [QueuedMessage] {
        try store.queued(name)
    }

    /// Deletes a delivered message (one already gone is no matter).
    public func remove(_ number: Int64) throws(StoreError) {
        try store.removeFromQueue(name, number)
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

/// The state file cannot be used, and what to do about it.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public var description: String {
        "state file \(path): \(reason) (move it away, or fix its permissions, or name another with --state)"
    }
}
