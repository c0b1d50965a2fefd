import Foundation
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmReplay
import GeoAlarmTestSupport
import Testing

/// libgps's own decode (`gps_unpack`) of TPV lines, converted to fixes.
struct TPVConversionTests {
    let decoder = TPVDecoder()

    @Test func aFullTPV() throws {
        let fix = try #require(decoder.decode(
            #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-21T08:06:30.250Z","lat":38.7226,"lon":-9.1094,"alt":45.0,"eph":12.5,"epx":4.0,"epy":6.0,"speed":1.5,"track":271.0}"#))
        #expect(fix.mode == .threeD)
        #expect(fix.time == Date(timeIntervalSince1970: 1_795_248_390.25))
        #expect(fix.coordinate == Coordinate(latitude: 38.7226, longitude: -9.1094))
        #expect(fix.horizontalError == 12.5)
        #expect(fix.speed == 1.5 && fix.course == 271)
        #expect(fix.device == "/dev/ttyACM0")
    }

    @Test func missingValuesBecomeNil() throws {
        let fix = try #require(decoder.decode(#"{"class":"TPV","mode":2,"lat":-27.21,"lon":153.05,"epx":9.0,"epy":7.0}"#))
        #expect(fix.mode == .twoD)
        #expect(fix.time == nil)
        #expect(fix.horizontalError == 9, "without eph, the larger of epx and epy")
        #expect(fix.speed == nil && fix.course == nil && fix.device == nil)
        let noFix = try #require(decoder.decode(#"{"class":"TPV","mode":1}"#))
        #expect(noFix.mode == .noFix)
        #expect(!noFix.coordinate.isValid)
        #expect(decoder.decode(#"{"class":"SKY","satellites":[]}"#) == nil)
        #expect(decoder.decode("not json") == nil)
    }

    /// Every TPV line of real captures' gpsd output: libgps and our own JSON reader agree.
    @Test(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"),
          arguments: ["bundg_zeus_9.log.chk", "quectel-eg25-g.log.chk", "haicom-305N.log.chk", "ublox-neo-m8t.log.chk"])
    func libgpsAndOurReaderAgreeOnRealOutput(chk: String) throws {
        let text = String(decoding: try TestData.bytes("gpsd/\(chk)"), as: UTF8.self)
        var compared = 0
        for line in text.split(whereSeparator: \.isNewline) where line.contains("\"class\":\"TPV\"") {
            let ours = GPSDJSONReader.read(Array(line.utf8)[...]).fixes.first
            let theirs = try #require(decoder.decode(String(line)))
            guard let ours else {
                #expect(theirs.mode < .twoD, "\(line)")
                continue
            }
            #expect(theirs.mode == ours.mode)
            #expect(theirs.time == ours.time || abs(theirs.time!.timeIntervalSince(ours.time!)) < 1e-6, "\(line)")
            #expect(abs(theirs.coordinate.latitude - ours.coordinate.latitude) < 1e-9)
            #expect(abs(theirs.coordinate.longitude - ours.coordinate.longitude) < 1e-9)
            #expect(theirs.horizontalError == ours.horizontalError, "\(line)")
            compared += 1
        }
        #expect(compared >= 10)
    }
}
