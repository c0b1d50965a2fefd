import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import Glibc
import Synchronization

/// The agent's memory on disk: each reminder's confirmed side and the history of events, in
/// one SQLite file (WAL mode, so the daemon and any number of commands use it at once; file
/// mode 0600, since a location history is private). Every write is one transaction, so a
/// `kill -9` at any moment leaves the file consistent.
///
/// This type opens, migrates and guards the file, and makes the writes that span its parts
/// (``apply(_:)``, ``follow(taskKeys:)``, ``forget(_:)``); what it keeps is read and written
/// through a part each, on the same connection: ``sides``, ``lifecycles``, ``history``,
/// ``taskLists``, and the queues and sets other modules name (``queue(named:)``,
/// ``stringSet(named:)``).
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

    /// The last fix, the sides of the fences and the proximities.
    public var sides: SideRecords { SideRecords(file: self) }
    /// Each reminder's completion, snooze, last firing and first sighting.
    public var lifecycles: LifecycleRecords { LifecycleRecords(file: self) }
    /// The history of events.
    public var history: EventHistory { EventHistory(file: self) }
    /// The copies of the task lists on servers, and the writes waiting for them.
    public var taskLists: TaskListCopies { TaskListCopies(file: self) }

    /// The durable queue called `name` (made on first use): what a sink must not lose before it
    /// is delivered (the MQTT publisher's outbox).
    public func queue(named name: String) -> DurableQueue { DurableQueue(file: self, name: name) }

    /// The set of strings called `name` (empty until one is kept).
    public func stringSet(named name: String) -> StringSet { StringSet(file: self, name: name) }

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

/// The device and inode of a file: which file a path held when it was opened.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}
