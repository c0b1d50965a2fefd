import Foundation
import GeoAlarmCore
import GeoAlarmReplay
import Testing

/// A track read by a `TrackSource`, several chunks decoded ahead of the consumer, gives the fixes
/// reading it whole gives, in order.
struct TrackSourceTests {
    /// An NMEA log of `epochs` seconds of a walk north, a GGA and an RMC each, checksummed.
    static func walk(epochs: Int) -> [UInt8] {
        let sentence = FormatTests.sentence
        var text = ""
        for second in 0..<epochs {
            let time = String(format: "%02d%02d%02d.00", 8 + second / 3600, second / 60 % 60, second % 60)
            let latitude = String(format: "3842.%06d", second * 25)
            text += sentence("GPGGA,\(time),\(latitude),N,00908.159910,W,1,08,1.2,45.0,M,50.5,M,,")
            text += sentence("GPRMC,\(time),A,\(latitude),N,00908.159910,W,002.5,000.0,121026,,,A")
        }
        return Array(text.utf8)
    }

    @Test func aTrackOfManyChunksGivesEveryFixInOrder() async throws {
        let bytes = Self.walk(epochs: 8_000)
        #expect(bytes.count > 10 * 65_536)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-source-\(UUID().uuidString).nmea").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        var fixes: [Fix] = []
        var batches = 0
        for await report in TrackSource(path: path).reports() {
            guard case .fixes(let batch, _) = report else {
                Issue.record("unexpected report \(report)")
                continue
            }
            fixes += batch
            batches += 1
        }
        let whole = TrackReader.read(bytes)
        // The first GGA comes before the RMC that dates the log: its fix has no date, as gpsd gives it.
        #expect(whole.fixes.count == 8_001)
        #expect(batches > 10)
        #expect(fixes == whole.fixes)
    }

    @Test func aMissingTrackFailsOnceAndEnds() async {
        var reports: [String] = []
        for await report in TrackSource(path: "/nonexistent/geoalarm-track.nmea").reports() {
            reports.append("\(report)")
        }
        #expect(reports.count == 1)
        #expect(reports.first?.contains("cannot read") == true)
    }
}
