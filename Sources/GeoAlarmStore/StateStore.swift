import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import Glibc
import Synchronization

/// The agent's memory on disk: each reminder's confirmed side and the history of events, in
/// one SQLite file (WAL mode, so the daemon and any number of commands use it at once; file
/// mode 0600, since a location history is private). Every write is one transaction, so a
/// `kill -9` at any moment leaves the file consistent.
public final class StateStore: Sendable {
    public let path: String
    /// The one connection to the file, used under `lock` only (it checks so itself).
    private let connection: SQLiteConnection
    /// Held by one call at a time: its transaction and its statements are the connection's only use then.
    private let lock = Mutex(())
    /// Opened only to read (`init(readingFrom:)`): every write is refused.
    private let readOnly: Bool
    /// The file it opened (device and inode), to notice when the path holds it no more.
    private let identity: FileIdentity?
    /// How many of this build's schema changes the file itself has (a read-only store of an
    /// older file reads a copy brought up to date in memory).
    private let fileSchemaVersion: Int

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
    /// others find it done. A write waits up to `busyWait` milliseconds for another process's
    /// lock (a command writing), then fails as busy.
    public init(path: String, busyWait: Int32 = StateStore.commandBusyWait) throws(StoreError) {
        self.path = path
        do {
            try System.makeDirectories(PathParts.split(path).folder, mode: 0o700)
        } catch {
            throw StoreError(path: path, reason: "cannot create its folder: \(error.call): \(error.reason)", advice: .permissions)
        }
        if let problem = FileSafety.notRegularFileProblem(path) { throw StoreError(path: path, reason: problem, advice: .damaged) }
        // Made here, before SQLite sees it, so that it (and its -wal and -shm files, which SQLite
        // gives the same mode) is private from the start.
        let descriptor: Int32
        do {
            descriptor = try StateFileDescriptors.shared.descriptor(for: path)
        } catch {
            throw StoreError(path: path, reason: error.reason, advice: error.code == ENOSPC ? .space : .permissions)
        }
        do {
            let info = try System.fstat(descriptor)
            // Replaced by something else since it was looked at: not ours to change.
            if let problem = FileSafety.notRegularFileProblem(mode: info.st_mode) { throw StoreError(path: path, reason: problem) }
            if info.st_mode & 0o077 != 0, info.st_uid == geteuid() {
                try System.fchmod(descriptor, 0o600)
                for suffix in ["-wal", "-shm"] { try System.chmod(path + suffix, 0o600) }
            }
            try System.lockExclusive(descriptor)
        } catch let error as StoreError {
            throw error
        } catch let error as SystemError {
            throw StoreError(path: path, reason: "\(error.call): \(error.reason)", advice: .permissions)
        } catch {
            throw StoreError(path: path, reason: "\(error)")
        }
        defer { System.unlock(descriptor) }
        let opened: SQLiteConnection
        let unknown: [String]
        do throws(SQLiteError) {
            opened = try SQLiteConnection(path: path, mode: .readWrite, busyMilliseconds: busyWait)
            // Write-ahead logging: the agent writes while commands read. NORMAL syncs at each
            // checkpoint, not each commit: a power cut may lose the last commits, never the
            // file's consistency.
            try opened.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
            // A file a newer geoalarm wrote is neither migrated nor written: every command refuses it alike.
            unknown = try Schema.unknownIdentifiers(opened)
            if unknown.isEmpty { try Schema.migrate(opened) }
        } catch {
            throw StoreError(path: path, error)
        }
        if !unknown.isEmpty { throw StoreError(newerSchema: unknown, path: path) }
        identity = try? FileIdentity(System.fstat(descriptor))
        opened.share()
        connection = opened
        readOnly = false
        fileSchemaVersion = Schema.changes.count
    }

    /// Opens an existing store only to read it (`status`, `history`): this works on a file the
    /// user cannot write, and never changes it. Nil when there is no file at `path` yet.
    ///
    /// A file of an older schema is read as it is: its content is copied into memory and the
    /// copy brought up to date there, so every question has its answer (an older file simply
    /// has no proximities, say) and the file itself is left alone.
    public init?(readingFrom path: String) throws(StoreError) {
        guard let status = (try? System.fileStatus(path)) ?? nil else { return nil }
        if let problem = FileSafety.notRegularFileProblem(path) { throw StoreError(path: path, reason: problem) }
        self.path = path
        var opened: SQLiteConnection
        let unknown: [String]
        let applied: Int
        do throws(SQLiteError) {
            opened = try Self.openForReading(path)
            unknown = try Schema.unknownIdentifiers(opened)
            applied = try Schema.appliedIdentifiers(opened).intersection(Schema.changes.map(\.identifier)).count
            if unknown.isEmpty, applied < Schema.changes.count {
                opened = try opened.copyIntoMemory()
                try Schema.migrate(opened)
            }
        } catch {
            throw StoreError(path: path, error)
        }
        if !unknown.isEmpty { throw StoreError(newerSchema: unknown, path: path) }
        identity = FileIdentity(status)
        opened.share()
        connection = opened
        readOnly = true
        fileSchemaVersion = applied
    }

    /// How long a command's connection waits for another process's lock before it fails: 10 s.
    public static let commandBusyWait: Int32 = 10_000
    /// How long the agent's connection waits, on its event loop: 250 ms. A write that finds the
    /// file locked longer stays in memory and is tried again with the next (see ``StateKeeper``).
    public static let agentBusyWait: Int32 = 250

    /// A read-only connection that can read the file now. A WAL file whose folder the user
    /// cannot write, closed cleanly (no -shm left), SQLite can read only as immutable: a
    /// snapshot of the file as it is.
    private static func openForReading(_ path: String) throws(SQLiteError) -> SQLiteConnection {
        do {
            let plain = try SQLiteConnection(path: path, mode: .readOnly(uri: false), busyMilliseconds: commandBusyWait)
            _ = try plain.transaction(writing: false) { (db: SQLiteConnection) throws(SQLiteError) in
                try db.fetchOne("SELECT count(*) FROM sqlite_master", as: Int.self)
            }
            return plain
        } catch {
            return try SQLiteConnection(
                path: "file:\(uriEscaped(path))?immutable=1", mode: .readOnly(uri: true), busyMilliseconds: commandBusyWait)
        }
    }

    /// `path` as the path of a `file:` URI: the characters a URI gives a meaning escaped.
    private static func uriEscaped(_ path: String) -> String {
        path.replacingCharacters { character in
            switch character {
            case "%": "%25"
            case "?": "%3f"
            case "#": "%23"
            default: nil
            }
        }
    }

    /// How many schema changes this build knows (the newest schema's number).
    public static var knownSchemaVersion: Int { Schema.changes.count }

    /// The file's schema: how many of this build's schema changes it has (a file with changes
    /// this build does not know is refused when opened).
    public func schemaVersion() -> Int { fileSchemaVersion }

    /// Whether the file this store opened is still the one at its path: false once it was
    /// deleted, or another file was put in its place (a backup restored, a command that made a
    /// new one after the deletion).
    public var isStillAtItsPath: Bool {
        guard let identity else { return true }
        guard let status = (try? System.fileStatus(path)) ?? nil else { return false }
        return FileIdentity(status) == identity
    }

    /// SQLite's data version as this store's connection sees it: it changes only when another
    /// connection (a command, a pop-up button's) has committed since it was last read.
    public func dataVersion() throws(StoreError) -> Int {
        try writing { db throws(SQLiteError) in try db.fetchOne("PRAGMA data_version", as: Int.self) ?? 0 }
    }

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
    private static func completion(of id: String, in db: SQLiteConnection) throws(SQLiteError) -> Date? {
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

    /// The last fix the agent used (its time, position and error estimate), for `geoalarm status` and the map.
    /// A place on no map (a file edited by hand: a latitude beyond 90°) is none.
    public func lastFix() throws(StoreError) -> Fix? {
        try reading { db throws(SQLiteError) in
            try db.fetchAll("SELECT time, lat, lon, error FROM last_fix WHERE id = 1") { (row: borrowing SQLiteRow) throws(SQLiteError) in
                Fix(
                    time: row.optional("time").map(Date.init(timeIntervalSince1970:)),
                    coordinate: Coordinate(latitude: try row.value("lat"), longitude: try row.value("lon")),
                    horizontalError: row.optional("error"))
            }.first { $0.coordinate.isValid }
        }
    }

    /// Notes the last fix used.
    public func setLastFix(_ fix: Fix) throws(StoreError) {
        try apply([.lastFix(fix)])
    }

    /// The saved side of every reminder, by id: this machine's own, or a tracked `device`'s.
    public func savedPresence(device: String? = nil) throws(StoreError) -> [String: SavedPresence] {
        try reading { db throws(SQLiteError) in
            var saved: [String: SavedPresence] = [:]
            let keep = { (row: borrowing SQLiteRow) throws(SQLiteError) in
                saved[try row.value("reminder", as: String.self)] = try Self.side(in: row)
            }
            if let device {
                try db.execute("SELECT reminder, presence, confirmed_at, fence FROM device_state WHERE device = ?", [device], row: keep)
            } else {
                try db.execute("SELECT reminder, presence, confirmed_at, fence FROM side", row: keep)
            }
            return saved
        }
    }

    /// The side a row of `side` or `device_state` holds; nil for a presence word not known.
    private static func side(in row: borrowing SQLiteRow) throws(SQLiteError) -> SavedPresence? {
        guard let presence = Presence(rawValue: try row.value("presence")) else { return nil }
        return SavedPresence(
            presence: presence, time: row.optional("confirmed_at").map(Date.init(timeIntervalSince1970:)), fenceKey: try row.value("fence"))
    }

    /// The tracked devices the file holds sides of, in order.
    public func trackedDevices() throws(StoreError) -> [String] {
        try reading { db throws(SQLiteError) in
            var devices: [String] = []
            try db.execute("SELECT DISTINCT device FROM device_state ORDER BY device") { (row: borrowing SQLiteRow) throws(SQLiteError) in
                devices.append(try row.value("device", as: String.self))
            }
            return devices
        }
    }

    /// Every side the file holds: this machine's (under nil) and each tracked device's.
    public func everySide() throws(StoreError) -> [String?: [String: SavedPresence]] {
        try reading { db throws(SQLiteError) in
            var sides: [String?: [String: SavedPresence]] = [:]
            let keep = { (row: borrowing SQLiteRow, device: String?) throws(SQLiteError) in
                sides[device, default: [:]][try row.value("reminder", as: String.self)] = try Self.side(in: row)
            }
            try db.execute("SELECT reminder, presence, confirmed_at, fence FROM side") { (row: borrowing SQLiteRow) throws(SQLiteError) in
                try keep(row, nil)
            }
            try db.execute("SELECT device, reminder, presence, confirmed_at, fence FROM device_state") {
                (row: borrowing SQLiteRow) throws(SQLiteError) in try keep(row, try row.value("device", as: String.self))
            }
            return sides
        }
    }

    /// A direction as the file holds it: the core's word, or `away_from`, which files written
    /// before the core had words of its own hold for ``Proximity/Direction/away``.
    static func direction(stored word: String) -> Proximity.Direction? {
        word == "away_from" ? .away : Proximity.Direction(rawValue: word)
    }

    /// This machine's proximity of every reminder, by id, as the agent last noted it.
    public func savedProximities() throws(StoreError) -> [String: SavedProximity] {
        try reading { db throws(SQLiteError) in
            var saved: [String: SavedProximity] = [:]
            try db.execute("SELECT reminder, distance_m, direction, eta_s, time, fence FROM proximity") {
                (row: borrowing SQLiteRow) throws(SQLiteError) in
                guard let direction = Self.direction(stored: try row.value("direction")) else { return }
                saved[try row.value("reminder", as: String.self)] = SavedProximity(
                    proximity: Proximity(distance: try row.value("distance_m"), direction: direction, eta: row.optional("eta_s")),
                    time: Date(timeIntervalSince1970: try row.value("time")), fenceKey: try row.value("fence"))
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

    private static func saveLastFix(_ db: SQLiteConnection, _ fix: Fix) throws(SQLiteError) {
        try db.execute(
            "INSERT OR REPLACE INTO last_fix (id, time, lat, lon, error) VALUES (1, ?, ?, ?, ?)",
            [fix.time?.timeIntervalSince1970, fix.coordinate.latitude, fix.coordinate.longitude, fix.horizontalError])
    }

    private static func make(_ write: StateWrite, in db: SQLiteConnection) throws(SQLiteError) {
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
    private static func setSide(_ db: SQLiteConnection, device: String?, id: String, _ side: SavedPresence) throws(SQLiteError) {
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
    private static func setLifecycle(_ db: SQLiteConnection, _ id: String, column: String, to value: Date?) throws(SQLiteError) {
        try db.execute(
            """
            INSERT INTO lifecycle (reminder, \(column)) VALUES (?, ?)
            ON CONFLICT(reminder) DO UPDATE SET \(column) = excluded.\(column)
            """,
            [id, value?.timeIntervalSince1970])
    }

    /// A row of the history, and the time its reminder last fired.
    private static func insertHistory(
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
    private static func move(_ old: String, to new: String, in db: SQLiteConnection) throws(SQLiteError) {
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

    /// Past events, oldest first: those at or after `since` and before `until`, of `reminder`
    /// only when given, the `last` latest of them only when given.
    public func history(since: Date? = nil, until: Date? = nil, reminder: String? = nil, last: Int? = nil) throws(StoreError) -> [HistoryEntry] {
        try reading { db throws(SQLiteError) in
            var conditions: [String] = []
            var arguments: [any SQLiteArgument] = []
            if let since {
                conditions.append("time >= ?")
                arguments.append(since.timeIntervalSince1970)
            }
            if let until {
                conditions.append("time < ?")
                arguments.append(until.timeIntervalSince1970)
            }
            if let reminder {
                conditions.append("reminder = ?")
                arguments.append(reminder)
            }
            let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
            var query = "SELECT * FROM history\(filter) ORDER BY time, id"
            if let last {
                query = "SELECT * FROM (SELECT * FROM history\(filter) ORDER BY time DESC, id DESC LIMIT ?) ORDER BY time, id"
                arguments.append(last)
            }
            return try db.fetchAll(query, arguments) { (row: borrowing SQLiteRow) throws(SQLiteError) -> HistoryEntry? in
                guard let kind = EventKind(rawValue: try row.value("event")) else { return nil }
                let lat: Double? = row.optional("lat"), lon: Double? = row.optional("lon")
                return HistoryEntry(
                    time: row.optional("time").map(Date.init(timeIntervalSince1970:)), kind: kind,
                    reminderID: try row.value("reminder"), title: try row.value("title"),
                    coordinate: lat.flatMap { lat in lon.map { Coordinate(latitude: lat, longitude: $0) } },
                    distance: row.optional("distance_m"), device: row.optional("device"))
            }.compactMap { $0 }
        }
    }

    /// Deletes events older than `cutoff`; how many went.
    @discardableResult
    public func prune(before cutoff: Date) throws(StoreError) -> Int {
        try writing { db throws(SQLiteError) in
            try db.execute("DELETE FROM history WHERE time < ?", [cutoff.timeIntervalSince1970])
            return db.changesCount
        }
    }

    // MARK: Queues and sets for other modules

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

    /// Runs `body` on the connection in a read transaction: one snapshot of the file.
    func reading<T: Sendable>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(StoreError) -> T {
        do throws(SQLiteError) {
            return try lock.withLock { _ throws(SQLiteError) -> T in try connection.transaction(writing: false, body) }
        } catch {
            throw StoreError(path: path, error)
        }
    }

    /// Runs `body` on the connection in one write transaction; refused on a store opened to read.
    func writing<T: Sendable>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(StoreError) -> T {
        guard !readOnly else { throw StoreError(path: path, reason: "opened read-only") }
        do throws(SQLiteError) {
            return try lock.withLock { _ throws(SQLiteError) -> T in try connection.transaction(writing: true, body) }
        } catch {
            throw StoreError(path: path, error)
        }
    }
}

/// One descriptor per state file for the whole process, never closed: closing any descriptor of
/// a file drops every POSIX lock the process holds on it, SQLite's among them; another process
/// (a command) would then think the agent gone, and on closing delete the write-ahead log the
/// agent still writes to, so that the agent's later writes reach nobody.
final class StateFileDescriptors: Sendable {
    static let shared = StateFileDescriptors()
    private let descriptors = Mutex<[String: Int32]>([:])

    /// The descriptor of the file at `path`, opened (and created, mode 0600) the first time, and
    /// again when the path holds another file (the one opened before was deleted or replaced:
    /// its descriptor stays open, as the rule above asks, but is no longer this path's).
    func descriptor(for path: String) throws(SystemError) -> Int32 {
        try descriptors.withLock { (open: inout [String: Int32]) throws(SystemError) -> Int32 in
            if let known = open[path], let held = try? System.fstat(known), let now = try System.fileStatus(path),
               FileIdentity(held) == FileIdentity(now) {
                return known
            }
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

/// The device and inode of a file: which file a path held when it was opened.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}

/// The state file cannot be used, why, and what to do about it: advice that fits the cause, so
/// that nobody is told to move away a file that holds their history and that a newer geoalarm,
/// a freed disk or a fixed permission would make usable again.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var advice: Advice

    /// What would make the file usable.
    public enum Advice: Sendable, Equatable {
        /// A newer geoalarm wrote it: upgrade (keeping the file).
        case upgrade
        /// The user may not open or write it.
        case permissions
        /// Its disk is full.
        case space
        /// Another program holds it locked.
        case busy
        /// It is not an SQLite file, or a damaged one: only then may it be moved away.
        case damaged
        /// Anything else.
        case other

        /// What to do, in words.
        public var text: String {
            switch self {
            case .upgrade: "upgrade geoalarm to use it, and keep the file: it holds your history"
            case .permissions: "fix its permissions, or name another with --state"
            case .space: "free some space on its disk; geoalarm writes it again by itself"
            case .busy: "another program holds it locked; try again when it is done"
            case .damaged: "move it away and keep it for its history: geoalarm starts a new one; or name another with --state"
            case .other: "name another with --state"
            }
        }
    }

    public init(path: String, reason: String, advice: Advice = .other) {
        self.path = path
        self.reason = reason
        self.advice = advice
    }

    /// What SQLite said, with the advice its result code calls for.
    init(path: String, _ error: SQLiteError) {
        self.init(path: path, reason: error.message, advice: Self.advice(forSQLiteCode: error.code))
    }

    /// A file with schema changes this build does not know: a newer geoalarm made them.
    init(newerSchema unknown: [String], path: String) {
        self.init(path: path, reason: "was written by a newer geoalarm (\(unknown.joined(separator: ", ")))", advice: .upgrade)
    }

    public var description: String { "state file \(path): \(reason) (\(advice.text))" }
}
