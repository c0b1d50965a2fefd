import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

/// The last fix and each reminder's confirmed side (this machine's and each tracked device's), and its proximity.
extension StateStore {
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
    static func side(in row: borrowing SQLiteRow) throws(SQLiteError) -> SavedPresence? {
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
}
