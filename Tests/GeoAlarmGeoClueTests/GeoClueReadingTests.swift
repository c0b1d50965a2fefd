import Foundation
import GeoAlarmCore
import GeoAlarmGeoClue
import Testing

/// GeoClue's locations as fixes (unknown stays unknown), and what geoalarm asks GeoClue for.
struct GeoClueReadingTests {
    @Test func sentinelsAreUnknownNeverValues() throws {
        // As GeoClue 2.6 gives an NMEA fix: accuracy 0, no heading or speed, whole seconds.
        let bare = try GeoClueReading(latitude: 38.7105, longitude: -9.1366, accuracy: 0, seconds: 1_796_112_000).fix().get()
        #expect(bare.horizontalError == nil && bare.speed == nil && bare.course == nil)
        #expect(bare.mode == .twoD, "no altitude")
        #expect(bare.time == Date(timeIntervalSince1970: 1_796_112_000))
        let full = try GeoClueReading(
            latitude: 38.7105, longitude: -9.1366, accuracy: 35, altitude: 45, speed: 1.3, heading: 180, seconds: 1_796_112_000,
            microseconds: 250_000).fix().get()
        #expect(full.horizontalError == 35 && full.speed == 1.3 && full.course == 180 && full.mode == .threeD)
        #expect(full.time == Date(timeIntervalSince1970: 1_796_112_000.25))
        let stopped = try GeoClueReading(latitude: 1, longitude: 2, accuracy: -1, speed: 0, heading: 0, seconds: 0).fix().get()
        #expect(stopped.speed == 0 && stopped.course == 0, "0 is a value: standing still, due north")
        #expect(stopped.time == nil && stopped.horizontalError == nil)
        #expect(try GeoClueReading(latitude: 1, longitude: 2, accuracy: .nan, heading: 360, seconds: 1).fix().get().course == 0)
    }

    @Test(arguments: [(91.0, 0.0), (0, 180.5), (.nan, 0), (0, .infinity)])
    func aLocationOffTheEarthIsRefused(_ latitude: Double, _ longitude: Double) {
        if case .success = GeoClueReading(latitude: latitude, longitude: longitude, accuracy: 10, seconds: 1).fix() {
            Issue.record("(\(latitude), \(longitude)) was taken")
        }
    }

    @Test func theRequestAsksForTheDistanceThatMattersAtTheAccuracyThatTellsSidesApart() {
        #expect(GeoClueRequest(need: LocationNeed(distance: 1000, smallestNearRadius: 1000))
            == GeoClueRequest(distanceThreshold: 1000, accuracy: .neighborhood))
        #expect(GeoClueRequest(need: LocationNeed(distance: 312.7, smallestNearRadius: 400))
            == GeoClueRequest(distanceThreshold: 312, accuracy: .street))
        #expect(GeoClueRequest(need: LocationNeed(distance: 4.9, smallestNearRadius: 50))
            == GeoClueRequest(distanceThreshold: 0, accuracy: .exact))
        #expect(GeoClueRequest(need: LocationNeed(distance: .infinity, smallestNearRadius: 0)).distanceThreshold == 0)
    }
}
