import Foundation
import GeoAlarmTestSupport
import Testing

/// The live agent (a real gpsd fed by gpsfake) and `replay` of the same real capture print the
/// same events at the same times of day: both take every fix through one pipeline, with one rule
/// for positions that have no date yet.
///
/// gpsd 3.22 dates some old captures (2012, 2014, 2015) two decades ahead, its guess at a GPS
/// week rollover; the agent then ignores those fixes as more than a day ahead of the clock, and
/// says so. For those the test checks that instead.
@Suite(.serialized, .enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"))
struct LiveEqualsReplayTests {
    /// Captures left out, and why.
    static let leftOut: [String: String] = [
        "tcp-torture.log": "a deliberately broken stream",
    ]

    /// gpsd's own decode of a capture: the timed positions of its TPVs.
    static func positions(_ log: String) -> [(lat: Double, lon: Double)] {
        guard let root = TestData.root,
              let check = try? String(contentsOf: root.appendingPathComponent("gpsd/\(log).chk"), encoding: .utf8)
        else { return [] }
        return check.split(whereSeparator: \.isNewline).compactMap { line in
            guard line.contains("\"class\":\"TPV\""),
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  (object["mode"] as? Int ?? 0) >= 2, object["time"] != nil,
                  let lat = object["lat"] as? Double, let lon = object["lon"] as? Double
            else { return nil }
            return (lat, lon)
        }
    }

    /// Metres between two positions (an equirectangular approximation, plenty for choosing radii).
    static func metres(_ a: (lat: Double, lon: Double), _ b: (lat: Double, lon: Double)) -> Double {
        let x = (b.lon - a.lon) * cos((a.lat + b.lat) / 2 * .pi / 180)
        return 6_371_000 * (x * x + (b.lat - a.lat) * (b.lat - a.lat)).squareRoot() * .pi / 180
    }

    /// Every NMEA capture of the shared folder whose receiver moved (or wandered) more than 10 m.
    static let captures: [String] = {
        guard let root = TestData.root?.appendingPathComponent("gpsd"),
              let names = try? FileManager.default.contentsOfDirectory(atPath: root.path)
        else { return [] }
        return names.filter { name in
            guard name.hasSuffix(".log"), leftOut[name] == nil,
                  let log = FileManager.default.contents(atPath: root.appendingPathComponent(name).path),
                  TestData.isNMEA(log)
            else { return false }
            let fixes = positions(name)
            guard let first = fixes.first else { return false }
            return fixes.contains { metres(first, $0) > 10 }
        }.sorted()
    }()

    /// Reminders along the capture's path (at a third and two thirds of its fixes, each as wide as
    /// a sixth of the distance covered), announcing both ways, with no accuracy filter.
    static func config(for log: String) throws -> String {
        let fixes = positions(log)
        let span = fixes.map { metres(fixes[0], $0) }.max() ?? 0
        let radius = max(10, span / 6)
        var text = "[defaults]\nmax_error = \"10000km\"\nhysteresis = 3\n"
        for (index, fraction) in [1.0 / 3, 2.0 / 3].enumerated() {
            let centre = fixes[Int(Double(fixes.count - 1) * fraction)]
            text += "\n[[reminder]]\nid = \"r\(index)\"\ntitle = \"R\(index)\"\nlat = \(centre.lat)\nlon = \(centre.lon)\n"
                + "radius = \(radius)\nwhen = \"both\"\n"
        }
        return try Command.temporaryFile(text)
    }

    /// "08:06:30.500 arrive r0" for an event line: the time of day, the event and the reminder.
    static func essence(_ line: String) -> String {
        let parts = line.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count >= 3, let t = parts[0].firstIndex(of: "T") else { return line }
        return "\(parts[0][parts[0].index(after: t)...]) \(parts[1]) \(parts[2])"
    }

    @Test func theSharedFolderHoldsManyMovingNMEACaptures() {
        #expect(Self.captures.count >= 20)
    }

    @Test(arguments: captures)
    func liveAndReplayPrintTheSameEvents(log: String) throws {
        let root = try #require(TestData.root)
        let path = root.appendingPathComponent("gpsd/\(log)").path
        let lines = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self).split(whereSeparator: \.isNewline).count
        let pace = max(0.002, 5.0 / Double(lines))
        let config = try Self.config(for: log)
        let replay = try Command.run(["replay", "-c", config, path])
        #expect(replay.status == 0, "\(replay.stderr)")

        // gpsfake holds the capture until the agent watches, then plays all of it.
        let gpsd = try GPSFake()
        try gpsd.load(path, pace: pace)
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", config, "--headless", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(log): \(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        if agent.stderr.contains("more than a day ahead of this system's clock") {
            #expect(agent.stdoutLines.isEmpty, "\(log): gpsd dated it in the future")
        } else {
            #expect(agent.stdoutLines.map(Self.essence) == replay.stdoutLines.map(Self.essence), "\(log): \(agent.stderr)")
        }
    }
}

/// Approaches live and replayed: a drive home (written by the test, as no capture drives at a
/// place with speed and course) through a real gpsd gives the agent the same approaches, at the
/// same fixes, as `replay` of the log.
struct ApproachLiveEqualsReplayTests {
    @Test func aDriveHomeApproachesTheSameLiveAndReplayed() throws {
        let log = try DriveHome.log(seconds: 960)
        let config = try DriveHome.config()
        let replay = try Command.run(["replay", "-c", config, log])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stdoutLines.map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] } == ["approach", "approach", "arrive"])

        let gpsd = try GPSFake()
        try gpsd.load(log, pace: 0.002)
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", config, "--headless", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.map(LiveEqualsReplayTests.essence) == replay.stdoutLines.map(LiveEqualsReplayTests.essence), "\(agent.stderr)")
    }
}
