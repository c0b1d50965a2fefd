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
        // A window: before --until (here an hour and a half ago: bread two days back only), after --since.
        #expect(try Command.run(["history", "--state", state, "--until", "90m"]).stdoutLines.map { $0.components(separatedBy: "  ")[2] } == ["bread"])
        #expect(try Command.run(["history", "--state", state, "--since", "2h", "--until", "-30m"]).stdoutLines.map { $0.components(separatedBy: "  ")[1] }
            == ["arrive"])
        // As journalctl takes a time past: after a minus sign (the value, not an option), or before "ago".
        for back in ["-30m", "30 minutes ago", "-1d"] {
            let since = try Command.run(["history", "--state", state, "--since", back])
            #expect(since.status == 0 && since.stdoutLines.count == (back == "-1d" ? 2 : 1), "\(back): \(since.stderr)")
        }
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
        let backwards = try Command.run(["history", "--state", "/nonexistent/state.sqlite", "--since", "1h", "--until", "2h"])
        #expect(backwards.status == 64 && backwards.stderr.contains("--until 2h is not after --since 1h: no event could be shown"), "\(backwards.stderr)")
        let badUntil = try Command.run(["history", "--state", "/nonexistent/state.sqlite", "--until", "soon"])
        #expect(badUntil.status == 64 && badUntil.stderr.contains("--until soon: expected a duration"), "\(badUntil.stderr)")
        for bad in ["--2h", "-2h ago", "-h"] {
            let refused = try Command.run(["history", "--state", "/nonexistent/state.sqlite", "--since", bad])
            #expect(refused.status == 64 && refused.stderr.contains("--since \(bad): expected a duration"), "\(bad): \(refused.stderr)")
        }
    }
}

/// `status --device`: the sides a fleet agent (`run --source owntracks`) keeps of each device.
struct StatusDeviceTests {
    @Test func aTrackedDevicesSidesAreShownAndThisMachinesTablePointsToThem() throws {
        // As the config below gives it, with the default hysteresis: a side is shown only for its fence.
        let bread = Reminder(
            id: "bread", title: "Buy bread", geometry: .circle(center: Coordinate(latitude: 38.7105, longitude: -9.1366), radius: 40), hysteresis: 25)
        let config = try Command.temporaryFile("[[reminder]]\nid = \"bread\"\ntitle = \"Buy bread\"\nlocation = \"38.7105,-9.1366\"\nradius = 40\n")
        let state = Command.scratchState()
        let inside = SavedPresence(presence: .inside, time: Date(timeIntervalSince1970: 1_800_000_000), fenceKey: bread.fenceKey)
        try StateStore(path: state).apply([.sides(device: "ana/phone", ["bread": inside])])

        let mine = try Command.run(["status", "-c", config, "--state", state])
        #expect(mine.status == 0, "\(mine.stderr)")
        #expect(mine.stdoutLines.contains { $0.hasPrefix("bread ") && $0.contains(" unknown ") }, "\(mine.stdout)")
        #expect(mine.stdoutLines.last == "no fix of this machine recorded; --device NAME shows the sides of 1 OwnTracks device: ana/phone")

        let phone = try Command.run(["status", "-c", config, "--state", state, "--device", "ana/phone"])
        #expect(phone.stdoutLines.contains { $0.hasPrefix("bread ") && $0.contains(" inside ") }, "\(phone.stdout)")
        #expect(phone.stderr.isEmpty, "\(phone.stderr)")

        let typo = try Command.run(["status", "-c", config, "--state", state, "--device", "ana/phnoe", "--json"])
        #expect(typo.status == 0)
        #expect(typo.stdout.contains("\"state\":\"unknown\""))
        #expect(typo.stderr.contains("no side of ana/phnoe in the state file; it holds those of 1 OwnTracks device: ana/phone"), "\(typo.stderr)")
    }
}
