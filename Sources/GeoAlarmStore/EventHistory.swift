import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

/// What the state file keeps of the past: the history of events (table `history`).
public struct EventHistory: Sendable {
    let file: StateStore

    /// One past event.
    public struct Entry: Sendable, Equatable {
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

    /// Past events, oldest first: those at or after `since` and before `until`, of `reminder`
    /// only when given, the `last` latest of them only when given.
    public func entries(since: Date? = nil, until: Date? = nil, reminder: String? = nil, last: Int? = nil) throws(StoreError) -> [Entry] {
        try file.reading { db throws(SQLiteError) in
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
            return try db.fetchAll(query, arguments) { (row: borrowing SQLiteRow) throws(SQLiteError) -> Entry? in
                guard let kind = EventKind(rawValue: try row.value("event")) else { return nil }
                let lat: Double? = row.optional("lat"), lon: Double? = row.optional("lon")
                return Entry(
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
        try file.writing { db throws(SQLiteError) in
            try db.execute("DELETE FROM history WHERE time < ?", [cutoff.timeIntervalSince1970])
            return db.changesCount
        }
    }

    /// A row of the history, within a transaction a batch holds (``StateStore/apply(_:)``).
    static func insert(
        _ kind: EventKind, of id: String, titled title: String, time: Date?, coordinate: Coordinate?, distance: Double?,
        device: String?, in db: SQLiteConnection
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
    }
}
