import Foundation
import GeoAlarmTestSupport
import Testing

/// An approach as a user meets it: `replay` of a drive home announces it, `status` shows where
/// you head.
struct ApproachCommandTests {
    static let speed = DriveHome.speed
    static let start = DriveHome.start

    static func drive(seconds: Int) throws -> String { try DriveHome.log(seconds: seconds) }

    static func config() throws -> String { try DriveHome.config() }

    static func objects(_ run: Command) throws -> [[String: Any]] {
        try run.stdoutLines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    /// Seconds after the start that `object`'s time is.
    static func second(_ object: [String: Any]) throws -> Double {
        let text = try #require(object["time"] as? String)
        return try #require(ISO8601DateFormatter().date(from: text)).timeIntervalSince(start)
    }

    @Test func aDriveHomeAnnouncesTheTimeThenTheDistanceThenTheArrival() throws {
        let run = try Command.run(["replay", "-c", try Self.config(), "--json", try Self.drive(seconds: 960)])
        #expect(run.status == 0, "\(run.stderr)")
        let events = try Self.objects(run)
        #expect(events.map { $0["event"] as? String } == ["approach", "approach", "arrive"], "\(run.stdout)")
        guard events.count == 3 else { return }
        // Ten minutes out: 11,900 m to the edge at the start, driven from second 30.
        let byTime = 30 + (11_900 - 600 * Self.speed) / Self.speed
        #expect(abs(try Self.second(events[0]) - byTime) <= 30, "\(events[0])")
        #expect(abs((events[0]["eta_s"] as? Double ?? 0) - 600) <= 30)
        let byDistance = 30 + (11_900 - 2000) / Self.speed
        #expect(abs(try Self.second(events[1]) - byDistance) <= 1.5, "\(events[1])")
        #expect(abs((events[1]["distance_m"] as? Double ?? 0) - 2000) <= Self.speed + 5)

        let text = try Command.run(["replay", "-c", try Self.config(), try Self.drive(seconds: 960)])
        #expect(text.stdoutLines.first?.contains(#"  approach  heating  "Turn the heating on"  "#) == true)
        #expect(text.stdoutLines.first?.hasSuffix("  in 10 min") == true, "\(text.stdout)")
    }

    /// Half way home: `status` says towards, and about how long.
    @Test func statusShowsTheDirectionAndTheTimeToArrival() throws {
        let state = Command.scratchState()
        let config = try Self.config()
        #expect(try Command.run(["replay", "-c", config, "--state", state, try Self.drive(seconds: 462)]).status == 0)
        let status = try Self.objects(try Command.run(["status", "-c", config, "--state", state, "--json"]))
        let heating = try #require(status.first)
        #expect(heating["direction"] as? String == "towards")
        // The last fix, 431 s driven: 5,914 m to the edge, 426 s at 50 km/h. The agent notes a
        // change of 5 % (or 50 m) and of 10 % (or 30 s): what it noted is no further off.
        let edge = 12_000 - 431 * Self.speed - 100
        let noted = try #require(heating["edge_m"] as? Double)
        #expect(abs(noted - edge) <= max(50, noted / 20) + 5, "\(heating)")
        let eta = try #require(heating["eta_s"] as? Double)
        #expect(abs(eta - edge / Self.speed) <= max(30, eta / 10) + 5, "\(heating)")

        let table = try Command.run(["status", "-c", config, "--state", state])
        #expect(table.stdoutLines.first?.contains("DIRECTION  ETA") == true, "\(table.stdout)")
        #expect(table.stdoutLines.dropFirst().first?.contains("  towards  ") == true, "\(table.stdout)")
        #expect(table.stdoutLines.dropFirst().first?.contains(" 7 min ") == true, "\(table.stdout)")
        // A replay keeps no fix; the table is still the replay's, and says so.
        #expect(table.stdoutLines.last == "no fix recorded (a replay keeps none): the sides and directions are as last recorded")
        let empty = try Command.run(["status", "-c", config, "--state", Command.scratchState()])
        #expect(empty.stdoutLines.last == "no fix recorded yet (is geoalarm run running?)", "\(empty.stdout)")
    }
}
