import Foundation
import GeoAlarmCore
import GeoAlarmOwnTracks
import GeoAlarmSecretBox
import Testing

/// The OwnTracks model, reader and writer, without a broker: locations read as the apps and the
/// Recorder write them, sealed payloads opened with their device's secret, device topics.
struct OwnTracksMessageTests {
    @Test func anOwnTracksLocationBecomesAFixOfItsDevice() throws {
        let payload = #"{"_type":"location","lat":47.5,"lon":8.25,"tst":1795248399,"acc":8,"vel":36,"cog":180,"tid":"ph","batt":80}"#
        let fix = try Self.fix(payload, of: "alice/phone")
        #expect(fix.coordinate == Coordinate(latitude: 47.5, longitude: 8.25))
        #expect(fix.time == Date(timeIntervalSince1970: 1_795_248_399))
        #expect(fix.horizontalError == 8)
        #expect(fix.speed == 10, "36 km/h")
        #expect(fix.tracker == "alice/phone")
        #expect(fix.trackerLabel == "ph")
        let written = #"{"_type":"location","lat":"47.5","lon":" 8.25 ","tst":1795248399}"#
        #expect(try Self.fix(written, of: "a/b").coordinate == Coordinate(latitude: 47.5, longitude: 8.25),
                "coordinates as strings, as the Recorder takes them")
        // A point of interest's photo rides along in `image`: read up to 1 MiB in all.
        let thumbnail = String(repeating: "/9j/4AAQSkZJRgABAQ", count: 40_000)
        let poi = #"{"_type":"location","lat":47.5,"lon":8.25,"tst":1795248399,"poi":"Bakery","image":"\#(thumbnail)"}"#
        #expect(poi.utf8.count > 700_000)
        #expect(try Self.fix(poi, of: "a/b").coordinate == Coordinate(latitude: 47.5, longitude: 8.25))
        let refused: [(String, String, OwnTracksLocation.Kind)] = [
            ("", "malformed JSON", .malformed), ("{", "malformed JSON", .malformed), (#"{"lat":1}"#, "without _type", .malformed),
            (#"{"_type":"location","lon":8,"tst":1795248399}"#, "without lat and lon", .invalid),
            (#"{"_type":"location","lat":"47 N","lon":8,"tst":1795248399}"#, "without lat and lon", .invalid),
            (#"{"_type":"location","lat":91,"lon":8,"tst":1795248399}"#, "out of range", .invalid),
            (#"{"_type":"location","lat":47,"lon":8,"tst":-5}"#, "valid tst", .invalid),
            (#"{"_type":"location","lat":47,"lon":8,"tst":1795248399} x"#, "malformed JSON", .malformed),
            (#"{"_type":"teleport","lat":47,"lon":8,"tst":1795248399}"#, "_type \"teleport\"", .unknownType),
            (#"{"_type":"encrypted"}"#, "without data", .malformed),
            (#"{"_type":"location","image":"\#(String(repeating: "A", count: 1 << 20))"}"#, "bytes", .oversized),
            (#"{"_type":"lwt","tst":1}"#, "not a location", .otherType),
            (#"{"_type":"transition","event":"enter"}"#, "not a location", .otherType),
        ]
        for (text, reason, kind) in refused {
            guard case .failure(let problem) = OwnTracksLocation.parse(Array(text.utf8), tracker: "a/b") else {
                Issue.record("\(text.prefix(80)) was taken")
                continue
            }
            #expect(problem.description.contains(reason), "\(text.prefix(80)): \(problem)")
            #expect(problem.kind == kind, "\(text.prefix(80))")
        }
    }

    static func fix(_ payload: String, of tracker: String) throws -> Fix {
        let message = try OwnTracksLocation.parse(Array(payload.utf8), tracker: tracker).get()
        guard case .location(let fix) = message else { throw OwnTracksLocation.Problem(.otherType, "\(message)") }
        return fix
    }

    /// Sealed as the apps seal it (the secret's bytes, zero-padded to 32, as the key; base64 of
    /// nonce and ciphertext in `data`), a location is read with the device's secret, and refused
    /// with the kind of why without one or with another.
    @Test func encryptedLocationsOpenWithTheirDevicesSecret() throws {
        let location = #"{"_type":"location","lat":47.5,"lon":8.25,"tst":1795248399,"tid":"al"}"#
        let sealed = try #require(SecretBox(secret: "alice's secret").seal(Array(location.utf8)))
        let message = #"{"_type":"encrypted","data":"\#(sealed)"}"#
        let shared = OwnTracksSecrets(secret: "alice's secret", deviceSecrets: [:])
        #expect(try shared.fix(in: Array(message.utf8), tracker: "alice/phone").get().trackerLabel == "al")
        let perDevice = OwnTracksSecrets(secret: "other", deviceSecrets: ["alice/phone": "alice's secret"])
        #expect(try perDevice.fix(in: Array(message.utf8), tracker: "alice/phone").get().coordinate.latitude == 47.5)
        let cases: [(OwnTracksSecrets, String, String, OwnTracksLocation.Kind)] = [
            (OwnTracksSecrets(secret: nil, deviceSecrets: [:]), message, "alice/phone", .encryptedWithoutKey),
            // Bob has no secret of his own: the shared one is tried, and does not open Alice's message.
            (perDevice, message, "bob/phone", .undecryptable),
            (shared, #"{"_type":"encrypted","data":"not base64!"}"#, "alice/phone", .undecryptable),
            (shared, #"{"_type":"encrypted","data":"AAAA"}"#, "alice/phone", .undecryptable),
        ]
        for (secrets, text, tracker, kind) in cases {
            guard case .failure(let problem) = secrets.fix(in: Array(text.utf8), tracker: tracker) else {
                Issue.record("\(text) was opened")
                continue
            }
            #expect(problem.kind == kind, "\(problem)")
        }
        // What the agent publishes for a device with a secret opens with it, and only with it.
        let published = try #require(OwnTracksSecrets(secret: "mine", deviceSecrets: [:]).payload(location, for: nil))
        #expect(String(decoding: published, as: UTF8.self).hasPrefix(#"{"_type":"encrypted","data":""#))
        #expect(try OwnTracksSecrets(secret: "mine", deviceSecrets: [:]).fix(in: published, tracker: "me/pi").get().trackerLabel == "al")
        guard case .failure(let wrong) = OwnTracksSecrets(secret: "yours", deviceSecrets: [:]).fix(in: published, tracker: "me/pi") else {
            Issue.record("another secret opened it")
            return
        }
        #expect(wrong.kind == .undecryptable)
        #expect(OwnTracksSecrets(secret: nil, deviceSecrets: [:]).payload(location, for: nil) == Array(location.utf8))
    }

    @Test func topicsNameDevicesBelowTheSubscriptionsPrefix() {
        let standard = OwnTracksTopics(subscription: "owntracks/+/+")
        #expect(standard.tracker(of: "owntracks/alice/phone") == "alice/phone")
        #expect(standard.tracker(of: "owntracks/alice/phone/event") == nil)
        #expect(standard.tracker(of: "other/alice/phone") == nil)
        #expect(standard.eventTopic(of: "alice/phone") == "owntracks/alice/phone/event")
        let fleet = OwnTracksTopics(subscription: "fleet/#")
        #expect(fleet.tracker(of: "fleet/truck7") == "truck7")
        #expect(fleet.eventTopic(of: "truck7") == "fleet/truck7/event")
        let one = OwnTracksTopics(subscription: "owntracks/alice/phone")
        #expect(one.tracker(of: "owntracks/alice/phone") == "phone")
    }
}
