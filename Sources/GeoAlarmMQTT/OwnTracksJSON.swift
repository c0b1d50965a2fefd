import Foundation
import GeoAlarmCore
import GeoAlarmOutput

/// The OwnTracks messages geoalarm publishes, following the OwnTracks JSON booklet: a
/// `transition` per crossing of a region, and `location` for the position.
enum OwnTracksJSON {
    /// An OwnTracks `transition` for a crossing: `enter` or `leave` as the region's side
    /// became inside or outside. `unknownError` stands in for `acc` when the fix has no error
    /// estimate (OwnTracks' consumers take `acc` 0 as "no accuracy").
    static func transition(_ crossing: PresenceChange, tid: String, unknownError: Double) -> String {
        var object = JSONObject()
        object.add("_type", "transition")
        object.add("event", crossing.presence == .inside ? "enter" : "leave")
        object.add("desc", crossing.reminder.title)
        object.add("rid", crossing.reminder.id)
        object.add("lat", number: crossing.fix.coordinate.latitude)
        object.add("lon", number: crossing.fix.coordinate.longitude)
        object.add("acc", number: accuracy(of: crossing.fix, unknown: unknownError))
        if let time = crossing.fix.time { object.add("tst", number: time.timeIntervalSince1970.rounded(.down)) }
        object.add("wtst", number: Double(regionTimestamp(of: crossing.reminder.id)))
        object.add("tid", tid)
        object.add("t", "c")
        return object.text
    }

    /// An OwnTracks `location` of this machine: `trigger` is `c` for one sent with an event, `t`
    /// for one sent on the interval; `inside` lists the reminders the position is inside
    /// (`inregions` their titles, `inrids` their ids).
    static func location(_ fix: Fix, tid: String, trigger: String, inside: [(id: String, title: String)], unknownError: Double) -> String {
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

    /// `acc`: whole metres, rounded up, at least 1 (OwnTracks reads 0 as unknown).
    static func accuracy(of fix: Fix, unknown: Double) -> Double {
        let error = fix.horizontalError.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } ?? unknown
        return max(1, error.rounded(.up))
    }

    /// `wtst` names a region in OwnTracks (the time its waypoint was made); a reminder has no such
    /// time, so it is a number fixed by the reminder's id (its ``StableHash`` folded to 31 bits),
    /// the same on every run and every machine.
    static func regionTimestamp(of id: String) -> Int {
        Int(StableHash.of(id) & 0x7fff_ffff)
    }

    /// OwnTracks' default tracker id: the last two characters of the device's name.
    static func trackerID(of device: String) -> String {
        let letters = device.filter { $0.isLetter || $0.isNumber }
        return letters.isEmpty ? "GA" : String(letters.suffix(2))
    }
}
