import Foundation
import GeoAlarmCore
import GeoAlarmEncoding
import Testing

/// What every sink writes: the times of events and the JSON of their lines and payloads, read
/// back by Foundation's parser where it is JSON.
struct JSONEncodingTests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00Z"), (951_825_600.5, "2000-02-29T12:00:00.500Z"), (-1, "1969-12-31T23:59:59Z"),
        (1_795_248_390.9996, "2026-11-21T08:06:31Z"), (4_102_444_800, "2100-01-01T00:00:00Z"),
        (-62_167_219_200, "0000-01-01T00:00:00Z"), (253_402_300_799, "9999-12-31T23:59:59Z"), (0.007, "1970-01-01T00:00:00.007Z"),
        (-62_167_219_201, "an out-of-range time"), (253_402_300_800, "an out-of-range time"), (-1e11, "an out-of-range time"),
        (253_402_300_799.9996, "an out-of-range time"),
    ])
    func timestamps(seconds: Double, text: String) {
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: seconds)) == text)
    }

    /// A moment on a zone's clock with its offset: east and west of Greenwich, a zone off by
    /// half an hour, and UTC, whose offset is a Z; to the whole second, never rounded up into
    /// the next one (for people: JSON keeps the milliseconds).
    @Test func timestampsInAZone() {
        let moment = Date(timeIntervalSince1970: 1_795_248_390.9)
        #expect(Timestamp.iso8601(moment, in: FixedOffset(seconds: 3600)) == "2026-11-21T09:06:30+01:00")
        #expect(Timestamp.iso8601(moment, in: FixedOffset(seconds: -12_600)) == "2026-11-21T04:36:30-03:30")
        #expect(Timestamp.iso8601(moment, in: FixedOffset(seconds: 45_900)) == "2026-11-21T20:51:30+12:45")
        #expect(Timestamp.iso8601(moment, in: FixedOffset.utc) == "2026-11-21T08:06:30Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 1_795_248_390.9996), in: FixedOffset.utc) == "2026-11-21T08:06:30Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: -0.5), in: FixedOffset.utc) == "1969-12-31T23:59:59Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: .nan), in: FixedOffset(seconds: 3600)) == "an out-of-range time")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 253_402_300_799), in: FixedOffset(seconds: 3600)) == "an out-of-range time")
    }

    @Test func stringsAndNumbers() {
        #expect(JSONText.quote("a\u{1}b\tc\\") == #""a\u0001b\tc\\""#)
        #expect(JSONText.number(.infinity) == "null")
        #expect(JSONText.number(.nan) == "null")
        #expect(JSONText.number(12) == "12")
        #expect(JSONText.number(-0.25) == "-0.25")
        #expect(JSONText.number(1e20) == "1e+20")
    }

    /// Members in the order added, each kind as JSON has it, and any text read back as written.
    @Test(arguments: ["plain", "quote \" and \\ backslash", "line\nbreak\u{0}nul", "Açaí 🥐", "\u{7f}\u{2028}"])
    func anObjectReadsBackAsWritten(text: String) throws {
        var object = JSONObject()
        object.add("text", text)
        object.add("none", nil)
        object.add("number", number: 38.7105)
        object.add("infinite", number: .infinity)
        object.add("flag", true)
        var more = JSONObject()
        more.add("list", raw: "[1,2]")
        object.add(contentsOf: more)
        #expect(object.text.hasPrefix(#"{"text":"#) && object.text.hasSuffix(#","list":[1,2]}"#))
        let read = try #require(try JSONSerialization.jsonObject(with: Data(object.text.utf8)) as? [String: Any])
        #expect(read["text"] as? String == text)
        #expect(read["none"] is NSNull && read["infinite"] is NSNull)
        #expect(read["number"] as? Double == 38.7105)
        #expect(read["flag"] as? Bool == true)
        #expect(read["list"] as? [Int] == [1, 2])
    }
}
