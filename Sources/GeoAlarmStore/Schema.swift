/// One change of the state file's schema: its name, kept in the file once it is made, and its SQL.
struct SchemaChange {
    let identifier: String
    let sql: String
}

/// The state file's schema: every change, in order, and how a file is brought up to date.
///
/// Which changes a file has is kept in its table `grdb_migrations`, the one GRDB's migrator kept
/// them in when geoalarm used it, under the same names: files written then open as they did.
enum Schema {
    static let changes: [SchemaChange] = [
        SchemaChange(
            identifier: "1: reminder state and history",
            sql: """
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
                """),
        SchemaChange(
            identifier: "2: reminder lifecycle and last fix",
            sql: """
                ALTER TABLE reminder_state ADD COLUMN completed_at REAL;
                ALTER TABLE reminder_state ADD COLUMN snoozed_until REAL;
                CREATE TABLE last_fix (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    time REAL,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL
                );
                """),
        SchemaChange(
            identifier: "3: history of time alarms, which have no position",
            sql: """
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
                """),
        SchemaChange(
            identifier: "4: tracked devices and the MQTT outbox",
            sql: """
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
                """),
        SchemaChange(
            identifier: "5: when each reminder was first seen (OwnTracks regions' wtst)",
            sql: """
                CREATE TABLE region_first_seen (reminder TEXT PRIMARY KEY NOT NULL, first_seen REAL NOT NULL) WITHOUT ROWID;
                """),
        // The store keeps queues and sets for whoever names them, knowing nothing of what they
        // hold; the MQTT tables of schema 4 move into them under the names the MQTT module uses,
        // numbers going on from the highest the outbox ever gave.
        SchemaChange(
            identifier: "6: named queues and string sets, the MQTT outbox and discovery topics moved into them",
            sql: """
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
                """),
        SchemaChange(
            identifier: "7: the last fix's error estimate (the map's circle around you)",
            sql: "ALTER TABLE last_fix ADD COLUMN error REAL"),
        SchemaChange(
            identifier: "8: each reminder's proximity (distance to its edge, direction of travel, time to arrival)",
            sql: """
                CREATE TABLE proximity (
                    reminder TEXT PRIMARY KEY NOT NULL,
                    distance_m REAL NOT NULL,
                    direction TEXT NOT NULL,
                    eta_s REAL,
                    time REAL NOT NULL,
                    fence TEXT NOT NULL
                ) WITHOUT ROWID;
                """),
        SchemaChange(
            identifier: "9: the ids of task lists' reminders by their tasks' UIDs, so that their state follows a renamed list or a moved task",
            sql: """
                CREATE TABLE task_ids (key TEXT PRIMARY KEY NOT NULL, reminder TEXT NOT NULL) WITHOUT ROWID;
                """),
        SchemaChange(
            identifier: "10: the last good copy of task lists on CalDAV servers",
            sql: """
                CREATE TABLE task_lists (
                    list TEXT PRIMARY KEY NOT NULL,
                    url TEXT NOT NULL,
                    ctag TEXT,
                    sync_token TEXT
                ) WITHOUT ROWID;
                CREATE TABLE task_objects (
                    list TEXT NOT NULL,
                    href TEXT NOT NULL,
                    etag TEXT,
                    data BLOB NOT NULL,
                    PRIMARY KEY (list, href)
                ) WITHOUT ROWID;
                """),
        // Schema 1 kept a fence's side and a reminder's lifecycle in one row, a lifecycle without
        // a side (a time alarm's, a snooze before any fix) as a row with an unknown side and no
        // fence. Each goes to a table of its own; the placeholders are no side at all.
        SchemaChange(
            identifier: "11: this machine's sides and the reminders' lifecycles in tables of their own",
            sql: """
                CREATE TABLE side (
                    reminder TEXT PRIMARY KEY NOT NULL,
                    presence TEXT NOT NULL,
                    confirmed_at REAL,
                    fence TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE lifecycle (
                    reminder TEXT PRIMARY KEY NOT NULL,
                    completed_at REAL,
                    snoozed_until REAL,
                    last_fired REAL
                ) WITHOUT ROWID;
                INSERT INTO side SELECT reminder, presence, confirmed_at, fence FROM reminder_state
                    WHERE presence != 'unknown' OR fence != '';
                INSERT INTO lifecycle SELECT reminder, completed_at, snoozed_until, last_fired FROM reminder_state
                    WHERE completed_at IS NOT NULL OR snoozed_until IS NOT NULL OR last_fired IS NOT NULL;
                DROP TABLE reminder_state;
                """),
    ]

    /// The names of the changes `db` has, known to this build or not.
    static func appliedIdentifiers(_ db: SQLiteConnection) throws(SQLiteError) -> Set<String> {
        let kept = try db.fetchOne(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'", as: Int.self)
        guard kept == 1 else { return [] }
        return Set(try db.fetchAll("SELECT identifier FROM grdb_migrations") { (row: borrowing SQLiteRow) throws(SQLiteError) in
            try row.value("identifier", as: String.self)
        })
    }

    /// The changes `db` has that this build does not know: a newer geoalarm made them.
    static func unknownIdentifiers(_ db: SQLiteConnection) throws(SQLiteError) -> [String] {
        try appliedIdentifiers(db).subtracting(changes.map(\.identifier)).sorted()
    }

    /// Makes the changes `db` lacks, in order, each in a transaction of its own with its name.
    /// The caller holds the file's lock, so no other process migrates it at the same time.
    static func migrate(_ db: SQLiteConnection) throws(SQLiteError) {
        try db.executeScript("CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        let applied = try appliedIdentifiers(db)
        for change in changes where !applied.contains(change.identifier) {
            try db.transaction(writing: true) { (db: SQLiteConnection) throws(SQLiteError) in
                try db.executeScript(change.sql)
                try db.execute("INSERT INTO grdb_migrations (identifier) VALUES (?)", [change.identifier])
            }
        }
    }
}
