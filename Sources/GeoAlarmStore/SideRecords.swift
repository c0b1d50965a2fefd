import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

/// What the state file keeps of where the device is: the last fix, each reminder's confirmed
/// side (this machine's and each tracked device's) and this machine's proximity of each
/// (tables `last_fix`, `side`, `device_state`, `proximity`).
public struct SideRecords: Sendable {
    let file: StateStore

    /// The last fix the agent used (its time, position and error estimate), for `geoalarm status` and the map.
    /// A place on no map (a file edited by hand: a latitude beyond 90°) is none.
    public func lastFix() throws(StoreError) -> Fix? {
        try file.reading { db throws(SQLiteError) in
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
        try file.apply([.lastFix(fix)])
    }

    /// The saved side of every reminder, by id: this machine's own, or a tracked `device`'s.
    public func saved(device: String? = nil) throws(StoreError) -> [String: SavedPresence] {
        try file.reading { db throws(SQLiteError) in
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
    static func side(in row: borrowing SQLiteRow) throws(SQLiteError) -> SavedPresence? {
        guard let presence = Presence(rawValue: try row.value("presence")) else { return nil }
        return SavedPresence(
            presence: presence, time: row.optional("confirmed_at").map(Date.init(timeIntervalSince1970:)), fenceKey: try row.value("fence"))
    }

    /// The tracked devices the file holds sides of, in order.
    public func trackedDevices() throws(StoreError) -> [String] {
        try file.reading { db throws(SQLiteError) in
            var devices: [String] = []
            try db.execute("SELECT DISTINCT device FROM device_state ORDER BY device") { (row: borrowing SQLiteRow) throws(SQLiteError) in
                devices.append(try row.value("device", as: String.self))
            }
            return devices
        }
    }

    /// Every side the file holds: this machine's (under nil) and each tracked device's.
    public func every() throws(StoreError) -> [String?: [String: SavedPresence]] {
        try file.reading { db throws(SQLiteError) in
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
    public func proximities() throws(StoreError) -> [String: SavedProximity] {
        try file.reading { db throws(SQLiteError) in
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

    // The writes, within a transaction a batch holds (``StateStore/apply(_:)``).

    /// Notes the last fix used.
    static func setLastFix(_ fix: Fix, in db: SQLiteConnection) throws(SQLiteError) {
        try db.execute(
            "INSERT OR REPLACE INTO last_fix (id, time, lat, lon, error) VALUES (1, ?, ?, ?, ?)",
            [fix.time?.timeIntervalSince1970, fix.coordinate.latitude, fix.coordinate.longitude, fix.horizontalError])
    }

    /// A fence's confirmed side: this machine's, or a tracked `device`'s.
    static func setSide(_ side: SavedPresence, of id: String, device: String?, in db: SQLiteConnection) throws(SQLiteError) {
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

    /// This machine's proximity of reminder `id` (a time of arrival that is not finite
    /// kept as none).
    static func setProximity(_ saved: SavedProximity, of id: String, in db: SQLiteConnection) throws(SQLiteError) {
        let finite = saved.proximity.eta.flatMap { $0.isFinite ? $0 : nil }
        try db.execute(
            """
            INSERT OR REPLACE INTO proximity (reminder, distance_m, direction, eta_s, time, fence)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            [id, saved.proximity.distance, saved.proximity.direction.rawValue, finite, saved.time.timeIntervalSince1970,
             saved.fenceKey])
    }
}
