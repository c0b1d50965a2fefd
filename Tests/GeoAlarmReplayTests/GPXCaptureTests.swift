import Foundation
import GeoAlarmCore
@testable import GeoAlarmReplay
import GeoAlarmTestSupport
import Testing

/// GPX files written by real devices and by gpxpy's edge cases.
@Suite(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"))
struct GPXCaptureTests {
    @Test(arguments: [
        // file, points, points with a time (counted by reading the files themselves)
        ("around-visnjan-with-car.gpx", 104, 104), ("cerknicko-jezero.gpx", 296, 296),
        ("cerknicko-without-times.gpx", 296, 5), ("route.gpx", 55, 0), ("track-with-empty-segment.gpx", 9, 9),
        ("Mojstrovka.gpx", 184, 184), ("gpx1.0_with_all_fields.gpx", 6, 2), ("gpx1.1_with_all_fields.gpx", 6, 2),
        ("unicode_with_bom.gpx", 0, 0),
    ])
    func pointsAndTimes(file: String, points: Int, timed: Int) throws {
        let report = TrackReader.read(try TestData.bytes("gpx/\(file)"))
        #expect(report.format == .gpx)
        #expect(report.problemCount == 0, "\(report.problems)")
        #expect(report.fixes.count == points)
        #expect(report.fixes.filter { $0.time != nil }.count == timed)
    }

    @Test func theVisnjanDriveIsInOrderAndNearVisnjan() throws {
        let report = TrackReader.read(try TestData.bytes("gpx/around-visnjan-with-car.gpx"))
        let times = report.fixes.compactMap(\.time)
        #expect(times == times.sorted())
        #expect(times.first == ISOTime.parse("2020-12-18T06:15:50Z"))
        let visnjan = Coordinate(latitude: 45.274, longitude: 13.717)
        #expect(report.fixes.allSatisfy { Haversine.distance($0.coordinate, visnjan) < 2000 })
    }
}
