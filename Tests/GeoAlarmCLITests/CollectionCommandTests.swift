import Foundation
import GeoAlarmTestSupport
import Testing

/// A `[[collection]]` through the commands: replay, list, status and complete.
struct CollectionCommandTests {
    /// A config with a collection of three shops (two on the demo walk), one bad row and no reminders.
    func shopsConfig() throws -> String {
        let config = try Command.temporaryFile("""
            [defaults]
            max_error = "60m"
            [[collection]]
            id = "shops"
            file = "shops.csv"
            title = "Shop: {name}"
            radius = "30m"
            hysteresis = "20m"
            """)
        let csv = "name;lat;lon\nBakery;38.71050;-9.13660\nPost office;38.70790;-9.13650\nbroken;;\nFar away;40;-8\n"
        try Data(csv.utf8).write(to: URL(fileURLWithPath: (config as NSString).deletingLastPathComponent + "/shops.csv"))
        return config
    }

    @Test func replayAnnouncesCollectionPlacesAndReportsBadRows() throws {
        let config = try shopsConfig()
        let run = try Command.run(["replay", "--config", config, "config/demo/walk.nmea"])
        #expect(run.status == 0, "\(run.stderr)")
        let events = run.stdoutLines.map { $0.split(separator: " ").dropFirst().joined(separator: " ") }
        #expect(events.count == 2, "\(run.stdout)")
        #expect(events.first?.hasPrefix("arrive shops/1 \"Shop: Bakery\"") == true, "\(run.stdout)")
        #expect(events.last?.hasPrefix("arrive shops/2 \"Shop: Post office\"") == true, "\(run.stdout)")
        let file = (config as NSString).deletingLastPathComponent + "/shops.csv"
        #expect(run.stderr.contains("geoalarm: warning: \(file):4: lat is missing or not a number; row skipped"))
        #expect(run.stderr.contains("geoalarm: info: collection \"shops\": 3 places from \(file) (1 bad row skipped)"))

        let list = try Command.run(["list", "--config", config, "--from", "38.7105,-9.1366", "--state", Command.scratchState()])
        #expect(list.status == 0)
        #expect(list.stdoutLines.last?.hasPrefix("shops/*") == true)
        #expect(list.stdoutLines.last?.contains("3 places from \(file)") == true)
        #expect(list.stdoutLines.last?.contains("0 m (nearest)") == true)

        let state = Command.scratchState()
        let complete = try Command.run(["complete", "--config", config, "--state", state, "shops/2"])
        #expect(complete.status == 0, "\(complete.stderr)")
        let status = try Command.run(["status", "--config", config, "--state", state])
        #expect(status.stdoutLines.contains { $0.hasPrefix("shops/*") && $0.contains("0 of 3 inside") })
        #expect(status.stdoutLines.contains { $0.hasPrefix("shops/2") && $0.contains("Shop: Post office") && $0.contains("completed") })
        let unknown = try Command.run(["complete", "--config", config, "--state", state, "shops/9"])
        #expect(unknown.status == 1)
        // Another spelling of a place's number names nothing: refused with the ids there are,
        // and the place is listed once.
        for alias in ["shops/02", "shops/+2", "shops/2.0"] {
            let refused = try Command.run(["complete", "--config", config, "--state", state, alias])
            #expect(refused.status == 1 && refused.stderr.contains("its places are shops/1 to shops/3"), "\(alias): \(refused.stderr)")
        }
        let again = try Command.run(["status", "--config", config, "--state", state])
        #expect(again.stdoutLines.filter { $0.hasPrefix("shops/") && !$0.hasPrefix("shops/*") }.count == 1, "\(again.stdout)")
    }

    /// `add --list Errands --place Shops`: a task at the collection's places, written as its
    /// LOCATION alone (what todoman and Thunderbird show), for a list that reads it so.
    @Test func aTaskIsAddedAtACollectionsPlaces() throws {
        let config = try shopsConfig()
        let folder = (config as NSString).deletingLastPathComponent + "/errands-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let list = "\n[[tasklist]]\nname = \"Errands\"\nvdir = \"\(folder)\"\n"
        try (String(contentsOfFile: config, encoding: .utf8) + list).write(toFile: config, atomically: true, encoding: .utf8)
        let unread = try Command.run(["add", "-c", config, "--list", "Errands", "--place", "Shops", "--title", "Buy milk"])
        #expect(unread.status == 1 && unread.stderr.contains("give it location_tasks = \"arrive\""), "\(unread.stderr)")
        try (String(contentsOfFile: config, encoding: .utf8) + "location_tasks = \"arrive\"\n").write(toFile: config, atomically: true, encoding: .utf8)
        let nowhere = try Command.run(["add", "-c", config, "--list", "Errands", "--place", "Shop", "--title", "Buy milk"])
        #expect(nowhere.status == 1 && nowhere.stderr.contains("no place \"Shop\" in \(config); collections: shops"), "\(nowhere.stderr)")
        let sized = try Command.run(["add", "-c", config, "--list", "Errands", "--place", "Shops", "--title", "Buy milk", "--radius", "20m"])
        #expect(sized.status == 1 && sized.stderr.contains("--radius does not apply at a collection's places"), "\(sized.stderr)")
        let added = try Command.run(["add", "-c", config, "--list", "Errands", "--place", "Shops", "--title", "Buy milk"])
        #expect(added.status == 0, "\(added.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder)
        let text = try String(contentsOfFile: folder + "/" + (files.first ?? ""), encoding: .utf8)
        #expect(files.count == 1 && text.contains("LOCATION:Shops\r\n") && !text.contains("VALARM"), "\(text)")
        let listed = try Command.run(["list", "-c", config])
        #expect(listed.stdoutLines.contains { $0.hasPrefix("errands/") && $0.contains("Buy milk") && $0.contains("3 places from") }, "\(listed.stdout)")
        let replay = try Command.run(["replay", "-c", config, "config/demo/walk.nmea"])
        #expect(replay.stdoutLines.filter { $0.contains("\"Buy milk\"") }.count == 2, "at both shops of the walk: \(replay.stdout)")
        // The task is its list's, not one more collection of the file.
        #expect(try Command.run(["check", "-c", config]).stdout.contains("OK, 0 reminders (0 enabled), 1 collection (3 places), 1 task list"))
    }
}
