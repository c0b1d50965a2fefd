import FoundationEssentials
import GeoAlarmCore
import GeoAlarmEncoding

/// The OwnTracks messages geoalarm publishes, following the OwnTracks JSON booklet: a
/// `transition` per crossing of a region, `location` for the position, `waypoints` for the
/// regions, and the connection's `lwt`.
public enum OwnTracksMessages {
    /// An OwnTracks `transition` for a crossing: `enter` or `leave` as the region's side
    /// became inside or outside; `wtst` names the region (its waypoint's `tst`: when geoalarm
    /// first saw the reminder). `unknownError` stands in for `acc` when the fix has no error
    /// estimate (OwnTracks' consumers take `acc` 0 as "no accuracy"). `t` is `c`, a circular
    /// region's trigger, for an area too: OwnTracks knows no other kind of region geoalarm has.
    public static func transition(_ crossing: PresenceChange, wtst: Date, tid: String, unknownError: Double) -> String {
        var object = JSONObject()
        object.add("_type", "transition")
        object.add("event", crossing.presence == .inside ? "enter" : "leave")
        object.add("desc", crossing.reminder.title)
        object.add("rid", crossing.reminder.id)
        object.add("lat", number: crossing.fix.coordinate.latitude)
        object.add("lon", number: crossing.fix.coordinate.longitude)
        object.add("acc", number: accuracy(of: crossing.fix, unknown: unknownError))
        if let time = crossing.fix.time { object.add("tst", number: time.timeIntervalSince1970.rounded(.down)) }
        object.add("wtst", number: wtst.timeIntervalSince1970.rounded(.down))
        object.add("tid", tid)
        object.add("t", "c")
        return object.text
    }

    /// An OwnTracks `location` of this machine: `trigger` is `c` for one sent with an event, `t`
    /// for one sent on the interval; `inside` lists the reminders the position is inside
    /// (`inregions` their titles, `inrids` their ids).
    public static func location(_ fix: Fix, tid: String, trigger: String, inside: [(id: String, title: String)], unknownError: Double) -> String {
        var object = JSONObject()
        object.add("_type", "location")
        object.add("lat", number: fix.coordinate.latitude)
        object.add("lon", number: fix.coordinate.longitude)
        object.add("acc", number: accuracy(of: fix, unknown: unknownError))
        if let time = fix.time { object.add("tst", number: time.timeIntervalSince1970.rounded(.down)) }
        if let speed = fix.speed, speed.isFinite { object.add("vel", number: (speed * 3.6).rounded()) }
        if let course = fix.course, course.isFinite { object.add("cog", number: course.rounded()) }
        object.add("tid", tid)
        object.add("t", trigger)
        if !inside.isEmpty {
            object.add("inregions", raw: "[" + inside.map { JSONText.quote($0.title) }.joined(separator: ",") + "]")
            object.add("inrids", raw: "[" + inside.map { JSONText.quote($0.id) }.joined(separator: ",") + "]")
        }
        return object.text
    }

    /// The connection's will, an OwnTracks `lwt`: `tst` is when the agent first connected.
    public static func lastWill(connectedAt time: Date) -> String {
        var object = JSONObject()
        object.add("_type", "lwt")
        object.add("tst", number: time.timeIntervalSince1970.rounded(.down))
        return object.text
    }

    /// `acc`: whole metres, rounded up, at least 1 (OwnTracks reads 0 as unknown).
    public static func accuracy(of fix: Fix, unknown: Double) -> Double {
        let error = fix.horizontalError.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } ?? unknown
        return max(1, error.rounded(.up))
    }

    /// The reminders as OwnTracks regions (`_type` `waypoints`, each a `waypoint` with `desc`,
    /// `lat`, `lon`, `rad` in metres, `rid` and `tst` the time of the first fix that placed it,
    /// which is the `wtst` of its transitions); a reminder no fix has placed yet is left out. An
    /// area is given as the circle around its middle that holds it.
    public static func waypoints(_ reminders: [Reminder], firstSeen: [String: Date]) -> String {
        let members = reminders.compactMap { reminder -> String? in
            // A region is named by its tst: one not placed by a fix yet waits for it.
            guard let seen = firstSeen[reminder.id] else { return nil }
            var waypoint = JSONObject()
            waypoint.add("_type", "waypoint")
            waypoint.add("desc", reminder.title)
            waypoint.add("lat", number: reminder.center.latitude)
            waypoint.add("lon", number: reminder.center.longitude)
            // OwnTracks' regions are circles: an area's is the circle around its middle that holds it.
            waypoint.add("rad", number: reminder.geometry.circumradius.rounded(.up))
            waypoint.add("rid", reminder.id)
            waypoint.add("tst", number: seen.timeIntervalSince1970.rounded(.down))
            return waypoint.text
        }
        var object = JSONObject()
        object.add("_type", "waypoints")
        object.add("waypoints", raw: "[" + members.joined(separator: ",") + "]")
        return object.text
    }

    /// OwnTracks' default tracker id: the last two characters of the device's name.
    public static func trackerID(of device: String) -> String {
        let letters = device.filter { $0.isLetter || $0.isNumber }
        return letters.isEmpty ? "GA" : String(letters.suffix(2))
    }
}
