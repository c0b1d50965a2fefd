import Foundation
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmSystem
import GeoAlarmTestSupport
import Testing

/// The gpsd source against a real gpsd (gpsfake), on an event loop of the test's own (the agent
/// runs it on the main thread's loop in `geoalarm run`, which the live tests cover).
struct GPSDSourceTests {
    static let walk = Command.root.appendingPathComponent("config/demo/walk.nmea").path

    @Test func readsFixesFromGpsdAndEndsWhenStopped() async throws {
        let gpsd = try GPSFake()
        defer { gpsd.stop() }
        try gpsd.load(Self.walk)
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let source = GPSDSource(endpoint: GPSDEndpoint(host: "127.0.0.1", port: gpsd.port), loop: loop)
        // Plays the walk once the source watches; stops the source when the walk has ended, so
        // that a source that misses its fixes fails the test instead of hanging it.
        Thread {
            _ = try? gpsd.playWhenWatched()
            gpsd.waitForEnd()
            source.stop()
        }.start()
        var connected = false
        var positions: [Fix] = []
        for await report in source.reports() {
            switch report {
            case .connected: connected = true
            case .fixes(let fixes, _): positions += fixes.filter { $0.time != nil && $0.coordinate.isValid }
            default: break
            }
            if positions.count == 5 { source.stop() }
        }
        #expect(connected)
        #expect(positions.count >= 5)
        // The demo walk is in Lisbon, and no fix is earlier than the one before (gpsd may send two TPVs in a second).
        let first = try #require(positions.first)
        #expect(abs(first.coordinate.latitude - 38.7) < 0.1 && abs(first.coordinate.longitude + 9.1) < 0.1)
        #expect(zip(positions, positions.dropFirst()).allSatisfy { $1.time! >= $0.time! })
    }

    @Test func reportsGpsdAwayAndEndsWhenStoppedWhileWaiting() async throws {
        let nothingListens = try GPSFake()
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let source = GPSDSource(endpoint: GPSDEndpoint(host: "127.0.0.1", port: nothingListens.port), loop: loop)
        var reasons: [String] = []
        for await report in source.reports() {
            if case .unavailable(let reason) = report {
                reasons.append(reason)
                source.stop()
            }
        }
        #expect(reasons.count == 1)
    }
}
