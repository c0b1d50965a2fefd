import Foundation
import GeoAlarmCore
import GeoAlarmStore
import GeoAlarmTestSupport
import Testing

struct HistoryCommandTests {
    /// A state file holding three events: bread 2 days ago, parcel in and out today (fix times).
    static func store(now: Date) throws -> String {
        let path = Command.scratchState()
        let store = try StateStore(path: path)
        let bread = Reminder(id: "bread", title: "Buy bread", geometry: .circle(center: Coordinate(latitude: 38.7105, longitude: -9.1366), radius: 40))
        let parcel = Reminder(id: "parcel", title: "Pick up the parcel", geometry: .circle(center: Coordinate(latitude: 38.7079, longitude: -9.1365), radius: 50))
        for (kind, reminder, ago) in [(EventKind.arrive, bread, 2 * 86400.0), (.arrive, parcel, 3600), (.leave, parcel, 600)] {
            let fix = Fix(time: now.addingTimeInterval(-ago), coordinate: Coordinate(latitude: 38.708, longitude: -9.1365))
            try store.record([], events: [GeofenceEvent(kind: kind, reminder: reminder, fix: fix, distance: 12.3)])
        }
        return path
    }

    @Test func filtersAndFormats() throws {
        let now = Date()
        let state = try Self.store(now: now)
        let all = try Command.run(["history", "--state", state])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdoutLines.map { $0.components(separatedBy: "  ")[1...2].joined(separator: " ") } == [
            "arrive bread", "arrive parcel", "leave parcel",
        ])
        #expect(try Command.run(["history", "--state", state, "--since", "1d"]).stdoutLines.count == 2)
        #expect(try Command.run(["history", "--state", state, "--since", "30m"]).stdoutLines.count == 1)
        #expect(try Command.run(["history", "--state", state, "--reminder", "bread"]).stdoutLines.count == 1)
        let json = try Command.run(["history", "--state", state, "--json", "--reminder", "parcel"])
        #expect(json.stdoutLines.count == 2)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutLines[0].utf8)) as? [String: Any])
        #expect(first["event"] as? String == "arrive" && first["title"] as? String == "Pick up the parcel")
        #expect(first["distance_m"] as? Double == 12.3)
        #expect(try Command.run(["history", "--state", state, "--since", "2000-01-01"]).stdoutLines.count == 3)
    }

    @Test func mistakesAreExplained() throws {
        let missing = try Command.run(["history", "--state", "/nonexistent/state.sqlite"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("state file /nonexistent/state.sqlite does not exist yet"))
        let badSince = try Command.run(["history", "--state", "/nonexistent/state.sqlite", "--since", "last tuesday"])
        #expect(badSince.status != 0)
        #expect(badSince.stderr.contains("--since last tuesday: expected a duration"))
    }
}
