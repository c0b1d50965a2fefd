import Foundation
import GeoAlarmReplay
import Testing

/// A track over 10 MB, which libxml2 (behind the first, XMLParser-based reader) refused when
/// given at once, is read whole.
struct LargeGPXTests {
    @Test func aTrackOverTenMegabytesIsReadWhole() {
        var text = "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        let count = 150_000
        for index in 0..<count {
            text += "<trkpt lat=\"\(38 + Double(index) * 1e-6)\" lon=\"-9.1\"><time>2026-11-21T08:00:00Z</time></trkpt>\n"
        }
        text += "</trkseg></trk></gpx>\n"
        #expect(text.utf8.count > 10_000_000)
        let report = TrackReader.read(Array(text.utf8))
        #expect(report.problemCount == 0)
        #expect(report.fixes.count == count)
        #expect(report.fixes.last?.coordinate.latitude == 38 + Double(count - 1) * 1e-6)
    }
}
