import Foundation
import GeoAlarmAgent
import GeoAlarmCore
import GeoAlarmSystem
import Synchronization
import Testing

/// `auto`'s choice between gpsd and GeoClue, on a loop of its own, with sources the test feeds.
struct PreferringSourceTests {
    /// A source whose reports the test gives; it counts its pauses.
    final class FedSource: PausableFixSource, Sendable {
        let name: String
        let stream: AsyncStream<SourceReport>
        let feed: AsyncStream<SourceReport>.Continuation
        private let pauses = Mutex((paused: 0, resumed: 0))

        init(_ name: String) {
            self.name = name
            (stream, feed) = AsyncStream.makeStream(of: SourceReport.self)
        }

        var usesUndatedFixes: Bool { false }
        func reports() -> AsyncStream<SourceReport> { stream }
        func stop() { feed.finish() }
        func pause() { pauses.withLock { $0.paused += 1 } }
        func resume() { pauses.withLock { $0.resumed += 1 } }
        var paused: (paused: Int, resumed: Int) { pauses.withLock { $0 } }
    }

    /// What came out, as text: "switched GeoClue", "fix 38.7", "connected".
    final class Heard: Sendable {
        private let lines = Mutex<[String]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func add(_ report: SourceReport) {
            let line = switch report {
            case .switched(let name, let why, _): "switched \(name): \(why)"
            case .fixes(let fixes, _): "fix \(fixes[0].coordinate.latitude)"
            case .connected: "connected"
            case .unavailable(let reason): "unavailable \(reason)"
            default: "other"
            }
            lines.withLock { $0.append(line) }
            arrived.signal()
        }

        /// Waits (for a failure bound) until `count` lines came; all that came.
        func wait(for count: Int) -> [String] {
            let end = DispatchTime.now() + 30
            while lines.withLock({ $0.count }) < count, arrived.wait(timeout: end) == .success {}
            return lines.withLock { $0 }
        }
    }

    static func fix(_ latitude: Double, mode: FixMode = .threeD) -> SourceReport {
        .fixes([Fix(time: Date(), coordinate: Coordinate(latitude: latitude, longitude: 0), mode: mode)], readAt: .now)
    }

    static func start(patience: Duration = .seconds(600)) throws -> (EventLoop, FedSource, FedSource, Heard) {
        let loop = try EventLoop.startOnNewThread()
        let (gpsd, geoclue, heard) = (FedSource("gpsd"), FedSource("GeoClue"), Heard())
        let source = PreferringSource(preferred: gpsd, fallback: geoclue, loop: loop, patience: patience)
        Task(executorPreference: loop) {
            for await report in source.reports() { heard.add(report) }
        }
        return (loop, gpsd, geoclue, heard)
    }

    @Test func gpsdUnavailableHandsOverToGeoClueAndItsFirstFixTakesBack() throws {
        let (loop, gpsd, geoclue, heard) = try Self.start()
        defer { loop.stop() }
        gpsd.feed.yield(.unavailable("connection refused"))
        #expect(heard.wait(for: 1) == ["switched GeoClue: gpsd is unavailable: connection refused"])
        #expect(geoclue.paused.resumed == 1)
        geoclue.feed.yield(.connected)
        geoclue.feed.yield(Self.fix(1))
        // Of gpsd not in use, a fix without a position changes nothing.
        gpsd.feed.yield(Self.fix(9, mode: .noFix))
        geoclue.feed.yield(Self.fix(2))
        #expect(heard.wait(for: 4).suffix(3) == ["connected", "fix 1.0", "fix 2.0"])
        gpsd.feed.yield(Self.fix(3))
        geoclue.feed.yield(Self.fix(4))
        gpsd.feed.yield(Self.fix(5))
        #expect(heard.wait(for: 8).suffix(4) == ["switched gpsd: it gives fixes", "connected", "fix 3.0", "fix 5.0"])
        #expect(geoclue.paused.paused == 2, "paused at the start, and again when gpsd took back")
    }

    @Test func aGPSDThatGivesNoFixHandsOverOnceItsPatienceIsOut() throws {
        let (loop, gpsd, geoclue, heard) = try Self.start(patience: .milliseconds(200))
        defer { loop.stop() }
        gpsd.feed.yield(.connected)
        gpsd.feed.yield(Self.fix(1, mode: .noFix))
        #expect(heard.wait(for: 2) == ["connected", "switched GeoClue: gpsd has given no fix"])
        #expect(geoclue.paused.resumed == 1)
    }
}
