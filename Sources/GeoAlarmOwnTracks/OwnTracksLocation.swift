import FoundationEssentials
import GeoAlarmCore
import GeoAlarmScanners

/// An OwnTracks `location` message (the JSON its apps publish on `owntracks/USER/DEVICE`) as a fix.
///
/// Read: `lat`, `lon` (numbers, or strings holding one, as the Recorder takes them) and `tst`
/// (required), `acc` (metres, the fix's error estimate), `vel` (km/h), `cog` (degrees) and
/// `tid`; other members (a POI's `image`, say) are skipped, up to ``longestPayload`` in all. An
/// `encrypted` message gives its sealed `data` for the caller to open. Any other `_type`
/// (`lwt`, `transition`, `waypoint`...) is not a location and is refused with its type named.
public enum OwnTracksLocation {
    /// What a message is, when it is usable.
    public enum Message: Sendable, Equatable {
        /// A position: the fix (its ``Fix/trackerLabel`` the message's `tid`).
        case location(Fix)
        /// An `encrypted` message: its `data` (base64 of a secretbox's nonce and ciphertext).
        case encrypted(String)
    }

    /// Why a message is not a usable location.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        public var kind: Kind

        public init(_ kind: Kind, _ description: String) {
            self.kind = kind
            self.description = description
        }
    }

    /// The kinds of unusable message, counted apart in the agent's summary.
    public enum Kind: String, Sendable, CaseIterable {
        /// Not JSON, or not an object with a `_type`.
        case malformed = "malformed"
        /// Longer than ``longestPayload``.
        case oversized = "oversized"
        /// A location without what a fix needs, or with values out of range.
        case invalid = "invalid location"
        /// A `_type` the OwnTracks apps do not send.
        case unknownType = "unknown _type"
        /// An `encrypted` message and no key for its device.
        case encryptedWithoutKey = "encrypted without a secret"
        /// An `encrypted` message its device's key does not open.
        case undecryptable = "not decryptable"
        /// A location in the clear from a device that has a secret: anyone who may publish on
        /// its topic could have sent it.
        case unsealed = "in the clear from a device with a secret"
        /// A well-formed message of another type the apps send (`lwt`, `transition`, `card`...):
        /// no fault, and not counted.
        case otherType = "another _type"
    }

    /// The longest payload read, 1 MiB: a location is a few hundred bytes, but one for a point of
    /// interest may carry its photo's thumbnail (base64 JPEG in `image`), and encryption adds a
    /// third to that.
    public static let longestPayload = 1 << 20

    /// The `_type`s the OwnTracks apps publish besides `location` and `encrypted` (the booklet's
    /// list, and the Recorder's `status` and `request`).
    static let otherTypes: Set<String> = [
        "beacon", "card", "cmd", "configuration", "lwt", "steps", "transition", "waypoint", "waypoints", "status", "request",
    ]

    /// The message in `payload`, a fix of `tracker` (see ``OwnTracksTopics``) when it is a location.
    public static func parse(_ payload: [UInt8], tracker: String) -> Result<Message, Problem> {
        guard payload.count <= longestPayload else { return .failure(Problem(.oversized, "a payload of \(payload.count) bytes")) }
        var fields = Fields()
        do {
            try JSONScanner.scan(payload[...]) { scanner throws(JSONScanner.Failure) in
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
                    case "data": fields.data = try scanner.stringValue()
                    default: try scanner.skipValue()
                    }
                }
                try scanner.expectEnd()
            }
        } catch {
            return .failure(Problem(.malformed, "malformed JSON (line \(error.line): \(error.message))"))
        }
        return fields.message(tracker: tracker)
    }

    /// The members a message needs, as read.
    private struct Fields {
        var type: String?
        var latitude, longitude, time, accuracy, velocity, course: Double?
        var tid, data: String?

        func message(tracker: String) -> Result<Message, Problem> {
            guard let type else { return .failure(Problem(.malformed, "a message without _type")) }
            switch type {
            case "location": break
            case "encrypted":
                guard let data else { return .failure(Problem(.malformed, "an encrypted message without data")) }
                return .success(.encrypted(data))
            case _ where OwnTracksLocation.otherTypes.contains(type):
                return .failure(Problem(.otherType, "a message of _type \"\(type)\", not a location"))
            default:
                return .failure(Problem(.unknownType, "a message of _type \"\(DisplayText.excerpt(type.utf8))\""))
            }
            guard let latitude, let longitude else { return .failure(Problem(.invalid, "a location without lat and lon")) }
            let coordinate = Coordinate(latitude: latitude, longitude: longitude)
            guard coordinate.isValid else { return .failure(Problem(.invalid, "a location out of range (\(latitude), \(longitude))")) }
            // OwnTracks times are whole seconds since 1970; a time before 2000 or past 9999 is no real fix.
            guard let time, time.isFinite, (946_684_800...253_402_300_799).contains(time) else {
                return .failure(Problem(.invalid, "a location without a valid tst"))
            }
            let error = accuracy.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            let speed = velocity.flatMap { $0.isFinite && $0 >= 0 ? $0 / 3.6 : nil }
            let heading = course.flatMap { $0.isFinite ? $0 : nil }
            var fix = Fix(
                time: Date(timeIntervalSince1970: time), coordinate: coordinate, mode: .twoD, horizontalError: error,
                speed: speed, course: heading, tracker: tracker)
            fix.trackerLabel = tid.flatMap(OwnTracksLocation.label)
            return .success(.location(fix))
        }
    }

    /// A `tid` fit to show and to publish again: up to 8 letters and digits, nil when none.
    static func label(_ tid: String) -> String? {
        let kept = String(tid.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) }.prefix(8).map(Character.init))
        return kept.isEmpty ? nil : kept
    }
}
