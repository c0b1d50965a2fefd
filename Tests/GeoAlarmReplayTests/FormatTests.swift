import Foundation
import GeoAlarmCore
@testable import GeoAlarmReplay
import Testing

/// Decoders on small hand-written inputs: each rule of the formats, one at a time.
struct FormatTests {
    /// A sentence with its checksum, as a receiver writes it.
    static func sentence(_ body: String) -> String {
        let sum = body.utf8.reduce(UInt8(0), ^)
        return "$\(body)*\(String(sum, radix: 16, uppercase: true).count == 1 ? "0" : "")\(String(sum, radix: 16, uppercase: true))\r\n"
    }

    static func read(_ text: String) -> TrackReport { TrackReader.read(Array(text.utf8)) }

    /// RMC, GGA and GSA of one second of a walk in Lisbon.
    static func epoch(_ clock: String = "080000.00") -> String {
        sentence("GPRMC,\(clock),A,3842.8347,N,00908.0023,W,002.5,180.0,211126,,,A")
            + sentence("GPGGA,\(clock),3842.8347,N,00908.0023,W,1,08,1.2,45.0,M,50.5,M,,")
            + sentence("GPGSA,A,3,02,05,12,15,18,24,25,29,,,,,2.0,1.2,1.6")
    }

    static let epoch1 = epoch()

    @Test func anEpochBecomesOneFix() throws {
        let report = Self.read(Self.epoch1 + Self.epoch("080001.00")
            + Self.sentence("GNGGA,080002.00,3842.8350,N,00908.0020,W,2,08,1.0,45.0,M,50.5,M,,"))
        #expect(report.format == .nmea)
        #expect(report.problemCount == 0)
        #expect(report.fixes.count == 3)
        // While gpsd learns where a cycle ends, it reports at the first sentence that moves the
        // fix: the first epoch is its RMC alone, with no altitude or HDOP yet.
        let first = report.fixes[0]
        #expect(first.time == ISOTime.parse("2026-11-21T08:00:00Z"))
        #expect(abs(first.coordinate.latitude - (38 + 42.8347 / 60)) < 1e-9)
        #expect(abs(first.coordinate.longitude + (9 + 8.0023 / 60)) < 1e-9)
        #expect(first.mode == .twoD)
        #expect(first.horizontalError == nil)
        #expect(abs(first.speed! - 2.5 * 1852 / 3600) < 1e-9)
        // From the second epoch on, GGA (the last timed sentence of the first) ends each cycle.
        #expect(report.fixes[1].mode == .threeD)
        #expect(abs(report.fixes[1].horizontalError! - 1.2 * 19) < 1e-9)
        // DGPS quality 2 takes gpsd's smaller range error; the date carries over from RMC.
        #expect(abs(report.fixes[2].horizontalError! - 1.0 * 4.75) < 1e-9)
        #expect(report.fixes[2].time == ISOTime.parse("2026-11-21T08:00:02Z"))
    }

    @Test func theFixIsWhatTheCycleHeldWhenGpsdReportedIt() throws {
        // Garmin 48's GLL runs a second ahead of its RMC and GGA. gpsd learns GGA and GLL as cycle
        // ends, so the GLL second is an epoch of its own and each reports its own position.
        let report = Self.read(
            Self.sentence("GPRMC,225308,A,4527.458,S,16709.165,E,000.0,094.5,060601,024.1,E")
            + Self.sentence("GPGGA,225308,4527.458,S,16709.165,E,1,05,2.1,14.7,M,1.1,M,,")
            + Self.sentence("GPGLL,4527.459,S,16709.165,E,225309,A")
            + Self.sentence("GPRMC,225310,A,4527.460,S,16709.165,E,000.0,094.5,060601,024.1,E")
            + Self.sentence("GPGGA,225310,4527.461,S,16709.165,E,1,05,2.1,14.6,M,1.1,M,,")
            + Self.sentence("GPGLL,4527.462,S,16709.165,E,225311,A"))
        let seconds = report.fixes.map { Int($0.time!.timeIntervalSince1970) % 60 }
        let thousandths = report.fixes.map { Int(((-$0.coordinate.latitude - 45) * 60 - 27.45).rounded() * 1000) / 1000 }
        // 09 is not reported: its GLL started a cycle that no sentence known to end one closed.
        #expect(seconds == [8, 10, 11])
        // 08 at its RMC (nothing learnt yet); 10 at GGA, its ender; 11 at GLL, its ender.
        #expect(report.fixes.map { (-$0.coordinate.latitude - 45) * 60 }.map { ($0 * 1000).rounded() }
            == [27458, 27461, 27462])
        _ = thousandths
    }

    @Test func badChecksumsAndGarbageAreCountedAndSkipped() {
        let corrupted = Self.epoch1.replacingOccurrences(of: "3842.8347,N,00908.0023,W,1", with: "3842.8347,N,00908.0023,W,7")
        let report = Self.read("# a comment\r\n" + corrupted + "hello\r\n$GPGGA,080001.00,3842.83*ZZ\r\n!AIVDM,1,1,,A,15M67,0*1D\r\n")
        #expect(report.problemCount == 3)
        #expect(report.problems.map(\.line) == [3, 5, 6])
        #expect(report.problems[0].reason.hasPrefix("checksum mismatch"))
        #expect(report.problems[1].reason == "not an NMEA sentence")
        #expect(report.problems[2].reason == "malformed checksum")
        #expect(report.fixes.count == 1, "RMC still gives the epoch its position")
    }

    /// Long runs of digits go to strtod rather than overflowing the fast decimal reader.
    @Test func overlongNumbersAreReadNotOverflowed() {
        let digits = String(repeating: "0", count: 30) + "1"
        let report = Self.read("$GPGGA,120000,4807.\(digits),N,01131.000,E,1,08,0.9\(digits),545.4,M,46.9,M,,\n")
        #expect(report.fixes.count == 1)
        #expect(abs((report.fixes.first?.coordinate.latitude ?? 0) - (48 + 7.0 / 60)) < 1e-9)
        #expect(abs((report.fixes.first?.horizontalError ?? 0) - 0.9 * 19) < 1e-9)
        // Whole numbers that long are not numbers the sentence can mean: the sentence is refused.
        let ones = String(repeating: "1", count: 31)
        let refused = Self.read("$GPGGA,120000,\(ones)07.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,\n"
            + "$GPGGA,120001,4807.038,N,01131.000,E,\(ones),08,0.9,545.4,M,46.9,M,,\n")
        #expect(refused.fixes.isEmpty)
        #expect(refused.problems.map(\.reason) == ["GGA: bad position"])
    }

    @Test func sentencesOfManyFieldsAndFewAreSplitAlike() {
        // Field storage is kept from sentence to sentence and grown past 16 and 32: a long
        // sentence, then shorter ones, each read from its own fields.
        func gga(_ time: String, _ minutes: String) -> String {
            "GPGGA,\(time),48\(minutes),N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"
        }
        let log = Self.sentence(gga("120000", "07.038") + String(repeating: ",", count: 40)) + Self.sentence("GPGGA,120001,4807.0")
            + Self.sentence(gga("120002", "08.038")) + Self.sentence(gga("120003", "09.038") + ",,")
        let report = Self.read(log)
        let latitudes: [Double] = report.fixes.map(\.coordinate.latitude)
        let expected: [Double] = [48 + 7.038 / 60, 48 + 8.038 / 60, 48 + 9.038 / 60]
        #expect(latitudes == expected)
        #expect(report.problems.map(\.reason) == ["GGA: truncated (3 fields)"])
    }

    @Test func sentencesWithoutChecksumAreAcceptedWhenComplete() {
        let report = Self.read("$GPGGA,120000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,\n$GPGGA,120001,4807.0\n")
        #expect(report.fixes.count == 1)
        #expect(report.problemCount == 1)
        #expect(report.problems.first?.reason == "GGA: truncated (3 fields)")
        #expect(report.fixes.first?.time == nil, "no RMC or ZDA: no date, so no time")
    }

    @Test func noFixEpochsAreCountedNotReturned() {
        let report = Self.read(
            Self.sentence("GPGGA,080000.00,,,,,0,00,99.9,,M,,M,,") + Self.sentence("GPRMC,080000.00,V,,,,,,,211126,,,N")
            + Self.sentence("GPGGA,,,,,,0,,,,M,,M,,") + Self.epoch("080001.00"))
        #expect(report.fixes.count == 1)
        #expect(report.epochsWithoutFix == 1)
        #expect(report.problemCount == 0)
    }

    @Test func talkersAndZDAAndMidnight() {
        let report = Self.read(
            Self.sentence("GNZDA,235959.00,31,12,2025,00,00")
            + Self.sentence("BDGGA,235959.00,0100.0000,S,17959.9999,E,1,05,2.0,1.0,M,0,M,,")
            + Self.sentence("GAGGA,000000.00,0100.0000,S,17959.9999,W,1,05,2.0,1.0,M,0,M,,")
            + Self.sentence("GLGLL,0100.0000,S,17959.9999,W,000001.00,A,A")
            + Self.sentence("GLGLL,0100.0000,S,17959.9999,W,000002.00,A,A"))
        // gpsd learnt GGA as the end of a cycle, so the first GLL second is not reported; the
        // next GLL ends the cycle the first one started, and from then on GLL reports.
        #expect(report.fixes.map(\.time) == [
            ISOTime.parse("2025-12-31T23:59:59Z"), ISOTime.parse("2026-01-01T00:00:00Z"), ISOTime.parse("2026-01-01T00:00:02Z"),
        ])
        #expect(report.fixes[0].coordinate.longitude > 179.99 && report.fixes[1].coordinate.longitude < -179.99)
        #expect(report.fixes[2].mode == .twoD, "GLL alone says nothing of altitude")
    }

    @Test func gstGivesTheErrorOnlyWithoutHDOP() {
        // The second epoch is reported at its GGA (learnt as the cycle's end), after its GST.
        let epoch = { (clock: String) in
            Self.sentence("GPRMC,\(clock),A,3842.8347,N,00908.0023,W,002.5,180.0,211126,,,A")
                + Self.sentence("GPGST,\(clock),1.0,3.0,2.0,45.0,3.0,4.0,5.0")
                + Self.sentence("GPGGA,\(clock),3842.8347,N,00908.0023,W,1,08,,45.0,M,50.5,M,,")
        }
        let report = Self.read(epoch("080000.00") + epoch("080001.00"))
        #expect(report.fixes.count == 2)
        let error = report.fixes.last?.horizontalError ?? 0
        #expect(abs(error - 2.45 * (12.5).squareRoot()) < 1e-9)
    }

    /// Nesting deep enough to exhaust the stack is refused as malformed, not recursed into.
    @Test func deeplyNestedJSONIsMalformedNotACrash() {
        let nested = "{\"class\":\"TPV\",\"x\":" + String(repeating: "[", count: 100_000) + "\n"
        let report = Self.read(nested + "{\"class\":\"TPV\",\"mode\":2,\"lat\":1,\"lon\":2}\n")
        #expect(report.problems.map(\.reason) == ["malformed JSON"])
        #expect(report.fixes.count == 1)
    }

    @Test func gpsdJSONTakesTPVsAndSkipsTheRest() throws {
        let text = """
            {"class":"VERSION","release":"3.22"}
            {"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"2026-11-21T08:06:30.250Z","lat":38.7226,"lon":-9.1094,"epx":4.5,"epy":6.5,"speed":1.2,"track":90}
            {"class":"TPV","mode":1,"time":"2026-11-21T08:06:31.000Z"}
            {"class":"SKY","satellites":[]}
            $GPGGA,080000.00,,,,,0,00,99.9,,M,,M,,*4B
            {"class":"TPV","mode":2,"time":"2026-11-21T08:06:32Z","lat":38.7227,"lon":-9.1095,"eph":12.0}
            {"class":"TPV","mode":3,"time":"yesterday","lat":1,"lon":2}
            {"class":"TPV","mode":3}
            {not json
            {"class":"TPV","mode":1e300,"lat":1,"lon":2}
            """
        let report = Self.read(text)
        #expect(report.format == .gpsdJSON)
        #expect(report.fixes.count == 2, "a mode that is no whole number means no fix")
        let first = try #require(report.fixes.first)
        #expect(first.device == "/dev/ttyUSB0")
        #expect(first.time == Date(timeIntervalSince1970: 1_795_248_390.25))
        #expect(first.horizontalError == 6.5, "without eph, the larger of epx and epy")
        #expect(first.course == 90 && first.speed == 1.2)
        #expect(report.fixes[1].horizontalError == 12 && report.fixes[1].mode == .twoD)
        #expect(report.problems.map(\.line) == [7, 8, 9])
        #expect(report.problems[0].reason == "TPV time \"yesterday\" is not ISO 8601")
        #expect(report.problems[1].reason == "TPV with mode 3 but no lat/lon")
        #expect(report.problems[2].reason == "malformed JSON")
    }

    @Test func gpxPointsInOrderWithOrWithoutTime() {
        let text = """
            \u{FEFF}<?xml version="1.0"?>
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><metadata><time>2020-01-01T00:00:00Z</time></metadata>
            <wpt lat="1" lon="1"><time>2020-01-01T00:00:00Z</time></wpt>
            <trk><trkseg>
            <trkpt lat="45.5" lon="13.7"><ele>1</ele><time>2020-12-18T06:15:50Z</time><hdop>2</hdop></trkpt>
            <trkpt lat="45.6" lon="13.8"><fix>none</fix></trkpt>
            <trkpt lat="95" lon="13.8"/>
            </trkseg></trk>
            <rte><rtept lat="45.7" lon="13.9"><time>2020-12-18T07:15:50+01:00</time></rtept></rte>
            </gpx>
            """
        let report = Self.read(text)
        #expect(report.format == .gpx)
        #expect(report.fixes.count == 3)
        #expect(report.fixes[0].time == ISOTime.parse("2020-12-18T06:15:50Z"))
        #expect(report.fixes[0].horizontalError == 38)
        #expect(report.fixes[1].time == nil && report.fixes[1].mode == .noFix)
        #expect(report.fixes[2].time == ISOTime.parse("2020-12-18T06:15:50Z"))
        #expect(report.problems.map(\.reason) == ["trkpt position out of range"])
    }

    @Test func brokenXMLIsReportedWithItsLine() {
        let report = Self.read("<gpx>\n<trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"></trkpt>\n<trkpt lat=\"3\" lon=\"4\"></wrong>\n</gpx>\n")
        // Read up to the fault: the point before it is kept, the fault named with its line.
        #expect(report.fixes.count == 1)
        #expect(report.problems == [TrackProblem(line: 4, reason: "XML error: </wrong> closes <trkpt> (line 4)")])
    }

    @Test func isoTimes() {
        #expect(ISOTime.parse("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(ISOTime.parse("2000-02-29T12:00:00.5Z") == Date(timeIntervalSince1970: 951_825_600.5))
        #expect(ISOTime.parse("2000-02-29T13:30:00+01:30") == Date(timeIntervalSince1970: 951_825_600))
        #expect(ISOTime.parse("2000-02-29T12:00:00") == Date(timeIntervalSince1970: 951_825_600))
        #expect(ISOTime.parse("2000-13-01T00:00:00Z") == nil)
        #expect(ISOTime.parse("2000-01-01T00:00:00Q") == nil)
        #expect(ISOTime.parse("20000101") == nil)
        // A byte just below "0" or just above "9" in any field, or in the zone's, is no digit.
        let good = Array("2000-02-29T13:30:00+01:30")
        for index in good.indices where good[index].isNumber {
            for byte in ["/", ":"] {
                var bad = good
                bad[index] = Character(byte)
                #expect(ISOTime.parse(Substring(String(bad))) == nil, "\(String(bad))")
            }
        }
    }
}
