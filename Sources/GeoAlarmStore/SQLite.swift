internal import CSQLite
import Glibc
import Synchronization

/// What SQLite said when a call failed: its words, and its result code.
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, ...).
    var code: Int32
    var message: String

    var description: String { message }
}

/// A value a statement is given for a `?` (``SQLiteConnection/execute(_:_:)``): a number, a
/// string, bytes, or nil for SQL's NULL.
protocol SQLiteArgument {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
}

/// SQLite copies what it is given: the Swift value need not outlive the call.
private let transient = unsafeBitCast(-1 as Int, to: sqlite3_destructor_type.self)

extension Double: SQLiteArgument {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_double(statement, index, self) }
}

extension Int: SQLiteArgument {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
}

extension Int64: SQLiteArgument {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self) }
}

extension String: SQLiteArgument {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        var text = self
        return text.withUTF8 { bytes in
            sqlite3_bind_text64(statement, index, bytes.baseAddress, UInt64(bytes.count), transient, UInt8(SQLITE_UTF8))
        }
    }
}

extension [UInt8]: SQLiteArgument {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        // An empty array's buffer may have no address, which SQLite would store as NULL.
        guard !isEmpty else { return sqlite3_bind_zeroblob(statement, index, 0) }
        return withUnsafeBytes { bytes in sqlite3_bind_blob64(statement, index, bytes.baseAddress, UInt64(bytes.count), transient) }
    }
}

extension Optional: SQLiteArgument where Wrapped: SQLiteArgument {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        guard let self else { return sqlite3_bind_null(statement, index) }
        return self.bind(to: statement, at: index)
    }
}

/// A type a column is read as (``SQLiteRow``). SQLite converts between its storage classes as
/// its `sqlite3_column_*` functions do; NULL reads as nil.
protocol SQLiteColumnValue {
    init(column: Int32, of statement: OpaquePointer)
}

extension Double: SQLiteColumnValue {
    init(column: Int32, of statement: OpaquePointer) { self = sqlite3_column_double(statement, column) }
}

extension Int: SQLiteColumnValue {
    init(column: Int32, of statement: OpaquePointer) { self = Int(sqlite3_column_int64(statement, column)) }
}

extension Int64: SQLiteColumnValue {
    init(column: Int32, of statement: OpaquePointer) { self = sqlite3_column_int64(statement, column) }
}

extension String: SQLiteColumnValue {
    init(column: Int32, of statement: OpaquePointer) {
        // Text is read first, then its length, as SQLite's documentation asks.
        guard let text = sqlite3_column_text(statement, column) else {
            self = ""
            return
        }
        let count = Int(sqlite3_column_bytes(statement, column))
        self = String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}

extension [UInt8]: SQLiteColumnValue {
    init(column: Int32, of statement: OpaquePointer) {
        guard let bytes = sqlite3_column_blob(statement, column) else {
            self = []
            return
        }
        let count = Int(sqlite3_column_bytes(statement, column))
        self = Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}

/// The current row of a statement being stepped, read by column name. Valid only inside the
/// closure it is given to.
struct SQLiteRow: ~Copyable {
    fileprivate let statement: OpaquePointer
    fileprivate let columns: [String: Int32]

    /// The column's value, nil when it is NULL (or there is no such column).
    func optional<Value: SQLiteColumnValue>(_ name: String, as _: Value.Type = Value.self) -> Value? {
        guard let index = columns[name], sqlite3_column_type(statement, index) != SQLITE_NULL else { return nil }
        return Value(column: index, of: statement)
    }

    /// The column's value; a NULL (which the schema's NOT NULL rules out, but a file edited by
    /// hand may hold) is an error naming the column, never a crash.
    func value<Value: SQLiteColumnValue>(_ name: String, as _: Value.Type = Value.self) throws(SQLiteError) -> Value {
        guard let value = optional(name, as: Value.self) else {
            throw SQLiteError(code: SQLITE_MISMATCH, message: "column \(name) holds no value")
        }
        return value
    }
}

extension StoreError {
    /// The advice a failed call's result code calls for.
    static func advice(forSQLiteCode code: Int32) -> Advice {
        switch code & 0xFF {
        case SQLITE_CORRUPT, SQLITE_NOTADB: .damaged
        case SQLITE_FULL: .space
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_PERM, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_AUTH: .permissions
        default: .other
        }
    }
}

/// One connection to an SQLite file, with its prepared statements kept for reuse.
///
/// Not safe to use from two threads at once: its owner (``StateStore``) uses it under a lock
/// only, and it checks that itself, as `Confined` checks its thread. Once shared (``share()``,
/// after the schema is brought up to date), every statement runs inside ``transaction(writing:_:)``,
/// which one thread at a time holds: a statement outside one, or a second thread's transaction
/// while one is open, traps rather than corrupting the connection's state.
final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Prepared statements by their SQL: the agent runs the same few again and again.
    private var statements: [String: OpaquePointer] = [:]
    /// The thread inside a transaction of this connection (its `pthread_self`), 0 when none is.
    private let holder = Atomic<UInt>(0)
    /// Set once its owner shares it (``share()``): from then on every statement runs inside a transaction.
    private let isShared = Atomic<Bool>(false)

    /// Ends the set-up: from now on a statement outside a transaction, or on another thread
    /// than the transaction's, traps.
    func share() {
        isShared.store(true, ordering: .releasing)
    }

    /// Traps unless the calling thread holds the connection's transaction (or it is still being set up).
    private func checkHeld() {
        let held = holder.load(ordering: .acquiring)
        precondition(held == UInt(pthread_self()) || (held == 0 && !isShared.load(ordering: .acquiring)),
                     "an SQLite connection used outside its transaction, or by another thread")
    }

    /// How a connection opens its file.
    enum Mode {
        /// Reads and writes, creating the file when it is missing.
        case readWrite
        /// Reads only; `uri` treats the path as an SQLite URI (`file:...?immutable=1`).
        case readOnly(uri: Bool)
    }

    /// Opens `path`; a writer waits up to `busyMilliseconds` for another process's lock.
    init(path: String, mode: Mode, busyMilliseconds: Int32) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly(let uri): flags |= SQLITE_OPEN_READONLY | (uri ? SQLITE_OPEN_URI : 0)
        }
        var opened: OpaquePointer?
        let result = sqlite3_open_v2(path, &opened, flags, nil)
        guard let opened else { throw SQLiteError(code: result, message: "out of memory") }
        guard result == SQLITE_OK else {
            let error = SQLiteError(code: result, message: String(cString: sqlite3_errmsg(opened)))
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
        sqlite3_busy_timeout(handle, busyMilliseconds)
    }

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// A connection to a copy of this one's database in memory: to read a file as another
    /// schema would have it, without changing the file.
    func copyIntoMemory() throws(SQLiteError) -> SQLiteConnection {
        var opened: OpaquePointer?
        let result = sqlite3_open_v2(":memory:", &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
        guard let opened else { throw SQLiteError(code: result, message: "out of memory") }
        let copy = SQLiteConnection(handle: opened)
        guard result == SQLITE_OK else { throw copy.error(result) }
        guard let backup = sqlite3_backup_init(opened, "main", handle, "main") else { throw copy.error(sqlite3_errcode(opened)) }
        let stepped = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE else { throw SQLiteError(code: stepped, message: String(cString: sqlite3_errstr(stepped))) }
        guard finished == SQLITE_OK else { throw copy.error(finished) }
        return copy
    }

    /// The rowid the last INSERT gave.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// How many rows the last INSERT, UPDATE or DELETE changed.
    var changesCount: Int { Int(sqlite3_changes(handle)) }

    /// Runs one statement with `arguments` for its `?`s, handing each row it yields to `row`.
    func execute(_ sql: String, _ arguments: [any SQLiteArgument] = [], row: (borrowing SQLiteRow) throws(SQLiteError) -> Void = { _ in })
        throws(SQLiteError)
    {
        checkHeld()
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, argument) in arguments.enumerated() {
            try check(argument.bind(to: statement, at: Int32(offset + 1)))
        }
        var columns: [String: Int32]?
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return }
            guard result == SQLITE_ROW else { throw error(result) }
            if columns == nil { columns = Self.columns(of: statement) }
            try row(SQLiteRow(statement: statement, columns: columns ?? [:]))
        }
    }

    /// Every row of a query, each made into a value by `make`.
    func fetchAll<Value>(_ sql: String, _ arguments: [any SQLiteArgument] = [], _ make: (borrowing SQLiteRow) throws(SQLiteError) -> Value)
        throws(SQLiteError) -> [Value]
    {
        var values: [Value] = []
        try execute(sql, arguments) { (row: borrowing SQLiteRow) throws(SQLiteError) in values.append(try make(row)) }
        return values
    }

    /// The first column of the first row of a query, nil when it yields none (or a NULL).
    func fetchOne<Value: SQLiteColumnValue>(_ sql: String, _ arguments: [any SQLiteArgument] = [], as _: Value.Type = Value.self)
        throws(SQLiteError) -> Value?
    {
        var value: Value?
        try execute(sql, arguments) { (row: borrowing SQLiteRow) in
            if value == nil, sqlite3_column_count(row.statement) > 0, sqlite3_column_type(row.statement, 0) != SQLITE_NULL {
                value = Value(column: 0, of: row.statement)
            }
        }
        return value
    }

    /// Runs several statements (a schema change) with no arguments and no rows; none is kept
    /// prepared. Outside a transaction only while the connection is set up, before it is shared.
    func executeScript(_ sql: String) throws(SQLiteError) {
        checkHeld()
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        guard result == SQLITE_OK else {
            let words = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_free(message)
            throw SQLiteError(code: result, message: words)
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    /// A writer takes the write lock at once (`IMMEDIATE`), so that it never fails half-way
    /// waiting for another; a reader sees one snapshot of the file throughout.
    func transaction<T>(writing: Bool, _ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        precondition(holder.compareExchange(expected: 0, desired: UInt(pthread_self()), ordering: .acquiringAndReleasing).exchanged,
                     "an SQLite connection's transaction begun while another is open")
        defer { holder.store(0, ordering: .releasing) }
        try executeScript(writing ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body(self)
            try executeScript("COMMIT")
            return result
        } catch {
            // A failed COMMIT may have ended the transaction already; nothing more to undo then.
            if sqlite3_get_autocommit(handle) == 0 { _ = try? executeScript("ROLLBACK") }
            throw error
        }
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
        guard let statement else { throw SQLiteError(code: SQLITE_MISUSE, message: "no statement in: \(sql)") }
        statements[sql] = statement
        return statement
    }

    private static func columns(of statement: OpaquePointer) -> [String: Int32] {
        var columns: [String: Int32] = [:]
        for index in 0..<sqlite3_column_count(statement) {
            guard let name = sqlite3_column_name(statement, index) else { continue }
            // The first of two columns of one name (`SELECT *` over a join) is the one read.
            let key = String(cString: name)
            if columns[key] == nil { columns[key] = index }
        }
        return columns
    }

    private func check(_ result: Int32) throws(SQLiteError) {
        guard result == SQLITE_OK else { throw error(result) }
    }

    private func error(_ result: Int32) -> SQLiteError {
        SQLiteError(code: result, message: String(cString: sqlite3_errmsg(handle)))
    }
}
