import Foundation
import GeoAlarmCore
import GeoAlarmScanners

/// An OwnTracks `location` message (the JSON its apps publish on `owntracks/USER/DEVICE`) as a fix.
///
/// Read: `lat`, `lon` (numbers, or strings holding one, as the Recorder takes them) and `tst`
/// (required), `acc` (metres, the fix's error estimate), `vel`
/// (km/h), `cog` (degrees) and `tid`. Any other `_type` (`lwt`, `transition`, `waypoint`,
/// `encrypted`...) is not a location and is refused with its type named.
public enum OwnTracksLocation {
    /// Why a message is not a usable location.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        /// A well-formed message of another `_type` (`lwt`, `transition`, `card`...): no fault.
        public var isOtherType = false
    }

    /// The longest payload read: an OwnTracks location is a few hundred bytes.
    public static let longestPayload = 64 * 1024

    /// The fix in `payload`, of `tracker` (see ``OwnTracksTopics``), and its tracker id when it has one.
    public static func parse(_ payload: [UInt8], tracker: String) -> Result<(fix: Fix, tid: String?), Problem> {
        guard payload.count <= longestPayload else { return .failure(Problem(description: "a payload of \(payload.count) bytes")) }
        var fields = Fields()
        do {
            var scanner = JSONScanner(payload[...])
            try scanner.expect(UInt8(ascii: "{"))
            try scanner.members { scanner, key throws(JSONScanner.Failure) in
                switch key {
                case "_type": fields.type = try scanner.stringValue()
                // The Recorder takes coordinates written as strings too.
                case "lat": fields.latitude = try scanner.numberOrNumericString()
                case "lon": fields.longitude = try scanner.numberOrNumericString()
                case "tst": fields.time = try scanner.numberValue()
                case "acc": fields.accuracy = try scanner.numberValue()
                case "vel": fields.velocity = try scanner.numberValue()
                case "cog": fields.course = try scanner.numberValue()
                case "tid": fields.tid = try scanner.stringValue()
                default: try scanner.skipValue()
                }
            }
            try scanner.expectEnd()
        } catch {
            return .failure(Problem(description: "malformed JSON (line \(error.line): \(error.message))"))
        }
        return fields.fix(tracker: tracker)
    }

    /// The members a location needs, as read.
    private struct Fields {
        var type: String?
        var latitude, longitude, time, accuracy, velocity, course: Double?
        var tid: String?

        func fix(tracker: String) -> Result<(fix: Fix, tid: String?), Problem> {
            guard let type else { return .failure(Problem(description: "a message without _type")) }
            guard type == "location" else {
                return .failure(Problem(
                    description: "a message of _type \"\(DisplayText.excerpt(type.utf8))\", not a location", isOtherType: true))
            }
            guard let latitude, let longitude else { return .failure(Problem(description: "a location without lat and lon")) }
            let coordinate = Coordinate(latitude: latitude, longitude: longitude)
            guard coordinate.isValid else { return .failure(Problem(description: "a location out of range (\(latitude), \(longitude))")) }
            // OwnTracks times are whole seconds since 1970; a time before 2000 or past 9999 is no real fix.
            guard let time, time.isFinite, (946_684_800...253_402_300_799).contains(time) else {
                return .failure(Problem(description: "a location without a valid tst"))
            }
            let error = accuracy.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            let speed = velocity.flatMap { $0.isFinite && $0 >= 0 ? $0 / 3.6 : nil }
            let heading = course.flatMap { $0.isFinite ? $0 : nil }
            let fix = Fix(
                time: Date(timeIntervalSince1970: time), coordinate: coordinate, mode: .twoD, horizontalError: error,
                speed: speed, course: heading, tracker: tracker)
            return .success((fix, tid.map { String($0.prefix(8)) }))
        }
    }
}

/// Which tracked device an OwnTracks topic is of, and where that device's events go.
///
/// The subscription's literal levels before its first wildcard are the prefix (`owntracks` in
/// `owntracks/+/+`); what follows in a message's topic names the device (`alice/phone`), and the
/// device's transitions go to `PREFIX/DEVICE/event`, as OwnTracks' apps publish them.
public struct OwnTracksTopics: Sendable {
    /// The prefix's levels.
    private let prefix: [Substring]

    public init(subscription: String) {
        let levels = subscription.split(separator: "/", omittingEmptySubsequences: false)
        let literal = levels.prefix { $0 != "+" && $0 != "#" }
        prefix = Array(literal.prefix(max(0, levels.count - 1)))
    }

    /// The device a message's topic is of (`alice/phone`); nil for a topic outside the prefix or
    /// one of the apps' sub-topics (`.../event`, `.../cmd`, `.../info`...), which are not locations.
    public func tracker(of topic: String) -> String? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count > prefix.count, levels.starts(with: prefix) else { return nil }
        let rest = levels[prefix.count...]
        if rest.count > 2, let last = rest.last, Self.subTopics.contains(String(last)) { return nil }
        return rest.joined(separator: "/")
    }

    /// Where a tracked device's transitions are published.
    public func eventTopic(of tracker: String) -> String {
        (prefix.map(String.init) + [tracker, "event"]).joined(separator: "/")
    }

    /// The sub-topics OwnTracks' apps publish beside their locations.
    static let subTopics: Set<String> = ["event", "cmd", "info", "step", "beacon", "dump", "status", "waypoint", "waypoints", "request"]
}
