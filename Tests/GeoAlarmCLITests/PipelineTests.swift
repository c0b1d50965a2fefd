import Foundation
import GeoAlarmTestSupport
import Testing

/// `replay` through the one fix pipeline: undated positions, `--date`, state in a file.
struct PipelineTests {
    static let walk = Command.root.appendingPathComponent("config/demo/walk.nmea").path

    /// The demo walk with only its GGA sentences: positions and times of day, never a date.
    static func ggaOnly() throws -> String {
        let lines = try String(contentsOfFile: walk, encoding: .utf8).split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$GPGGA") }
        return try Command.temporaryFile(lines.joined(separator: "\n") + "\n", named: "gga.nmea")
    }

    @Test func aLogWithoutADateFiresNothingAndSaysWhy() throws {
        let run = try Command.run(["replay", "-c", "config/demo.toml", try Self.ggaOnly()])
        #expect(run.status == 0)
        #expect(run.stdout.isEmpty, "no date, no time: these positions are not used")
        #expect(run.stderr.contains("NMEA 0183, 1268 fixes, 0 used (ignored: 1268 no date yet), 0 events"))
    }

    @Test func dateGivesTheLogItsDay() throws {
        let full = try Command.run(["replay", "-c", "config/demo.toml", Self.walk])
        let dated = try Command.run(["replay", "-c", "config/demo.toml", "--date", "2026-11-21", try Self.ggaOnly()])
        #expect(dated.status == 0, "\(dated.stderr)")
        #expect(dated.stdoutLines.count == 5)
        #expect(dated.stdoutLines == full.stdoutLines)
        let json = try Command.run(["replay", "-c", "config/demo.toml", "--json", "--date", "2026-11-21", try Self.ggaOnly()])
        #expect(!json.stdout.contains("\"time\":null"))
    }

    /// The next day begins when the time of day goes back past midnight.
    @Test func theDateRollsOverAtMidnight() throws {
        let sentences = ["235959.00", "000001.00", "000003.00"].map { time in
            let body = "GPGGA,\(time),3842.8347,N,00908.0023,W,1,08,1.4,45.0,M,50.5,M,,"
            let sum = body.utf8.reduce(UInt8(0), ^)
            return "$\(body)*\(String(format: "%02X", sum))"
        }
        let track = try Command.temporaryFile(sentences.joined(separator: "\n") + "\n", named: "midnight.nmea")
        let config = try Command.temporaryFile("""
            [defaults]
            announce_initial = true
            confirmations = 1
            [[reminder]]
            title = "Here"
            location = "38.71391,-9.13337"
            """)
        let run = try Command.run(["replay", "-c", config, "--date", "2025-12-31", track])
        #expect(run.stdoutLines == ["2025-12-31T23:59:59Z  arrive  here  \"Here\"  0 m"])
        #expect(run.stderr.contains("3 fixes, 3 used"))
    }

    @Test func aBadDateIsRefused() throws {
        for bad in ["2026-02-30", "21-11-2026", "2026-11-21T10:00", "yesterday"] {
            let run = try Command.run(["replay", "-c", "config/demo.toml", "--date", bad, Self.walk])
            #expect(run.status == 64, "\(bad)")
        }
    }

    @Test func replayKeepsStateInAFileOnlyWhenAsked() throws {
        let state = Command.scratchState()
        let first = try Command.run(["replay", "-c", "config/demo.toml", "--state", state, Self.walk])
        #expect(first.stdoutLines.count == 5)
        let history = try Command.run(["history", "--state", state])
        #expect(history.stdoutLines == first.stdoutLines, "replay with --state records as the agent does")
        let second = try Command.run(["replay", "-c", "config/demo.toml", "--state", state, Self.walk])
        #expect(second.stderr.contains("restored the state of 5 reminders from \(state)"))
        #expect(try Command.run(["history", "--state", state]).stdoutLines.count == 10)
        let inMemory = try Command.run(["replay", "-c", "config/demo.toml", Self.walk])
        #expect(inMemory.stdoutLines == first.stdoutLines)
    }
}

/// The first thing a new user does works: `add` on an account with no config makes one.
struct FirstUseTests {
    @Test func theFirstAddCreatesTheUsersConfig() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("home-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let environment = ["HOME": home, "PATH": "/usr/bin:/bin"]
        let added = try Command.run(["add", "--title", "Buy milk", "--at", "38.71,-9.13"], environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        let path = "\(home)/.config/geoalarm/config.toml"
        #expect(added.stdoutLines == ["created \(path)", "added buy-milk to \(path)"])
        let folder = try FileManager.default.attributesOfItem(atPath: "\(home)/.config/geoalarm")
        #expect((folder[.posixPermissions] as? Int) == 0o700)
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("# geoalarm reminders, in TOML."))
        #expect(text.contains("example.toml"))
        let list = try Command.run(["list"], environment: environment)
        #expect(list.stdoutLines.last?.hasPrefix("buy-milk  Buy milk") == true, "\(list.stdout)\(list.stderr)")
        // The second add finds the file and adds to it.
        let second = try Command.run(["add", "--title", "Post a letter", "--at", "38.72,-9.14"], environment: environment)
        #expect(second.stdoutLines == ["added post-a-letter to \(path)"])
    }

    @Test func addWithAConfigThatIsNotThereYetCreatesIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("new-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let run = try Command.run(["add", "-c", "\(folder)/mine.toml", "--title", "Bread", "--at", "1,2"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Command.run(["check", "-c", "\(folder)/mine.toml"]).status == 0)
    }
}

/// `list --json` and `status --json`: one object per line with the documented keys.
struct JSONOutputTests {
    static func objects(_ run: Command) throws -> [[String: Any]] {
        try run.stdoutLines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test func listAndStatusSpeakJSON() throws {
        let state = Command.scratchState()
        _ = try Command.run(["replay", "-c", "config/demo.toml", "--state", state, "config/demo/walk.nmea"])
        #expect(try Command.run(["complete", "bread", "-c", "config/demo.toml", "--state", state]).status == 0)
        #expect(try Command.run(["snooze", "parcel", "2h", "-c", "config/demo.toml", "--state", state]).status == 0)

        let list = try Self.objects(try Command.run(["list", "-c", "config/demo.toml", "--state", state, "--json", "--all"]))
        #expect(list.count == 5)
        let bread = try #require(list.first { $0["id"] as? String == "bread" })
        #expect(bread["title"] as? String == "Buy bread" && bread["kind"] as? String == "place")
        #expect(bread["place"] as? String == "bakery" && bread["radius_m"] as? Double == 30 && bread["completed"] as? Bool == true)
        #expect(bread["lat"] as? Double == 38.7105 && bread["lon"] as? Double == -9.1366)

        let status = try Self.objects(try Command.run(["status", "-c", "config/demo.toml", "--state", state, "--json"]))
        #expect(status.count == 5)
        for object in status {
            for key in ["id", "title", "state", "distance_m", "completed", "snoozed_until", "last_fired"] {
                #expect(object.keys.contains(key), "\(key) in \(object)")
            }
        }
        let ferry = try #require(status.first { $0["id"] as? String == "ferry" })
        #expect(ferry["state"] as? String == "inside" && ferry["last_fired"] as? String == "2026-11-21T08:20:19Z")
        let parcel = try #require(status.first { $0["id"] as? String == "parcel" })
        #expect(parcel["state"] as? String == "outside" && (parcel["snoozed_until"] as? String)?.hasPrefix("20") == true)
        #expect(status.first { $0["id"] as? String == "bread" }?["completed"] as? Bool == true)
    }
}

/// `history` takes `--config` as the other commands do: it names an unknown reminder.
struct HistoryConfigTests {
    @Test func historyTakesConfigAndNamesAnUnknownReminder() throws {
        let state = Command.scratchState()
        _ = try Command.run(["replay", "-c", "config/demo.toml", "--state", state, "config/demo/walk.nmea"])
        let known = try Command.run(["history", "-c", "config/demo.toml", "--state", state, "--reminder", "bread"])
        #expect(known.stdoutLines == ["2026-11-21T08:06:39Z  arrive  bread  \"Buy bread\"  28 m"])
        let unknown = try Command.run(["history", "-c", "config/demo.toml", "--state", state, "--reminder", "bred"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no reminder \"bred\" in config/demo.toml (did you mean \"bread\"?); there are: "), "\(unknown.stderr)")
    }
}

/// `add --place NAME --at LAT,LON` defines the place and uses it.
struct AddPlaceTests {
    @Test func addDefinesANewPlaceUnderItsHeaderOrInANewTable() throws {
        let config = try Command.temporaryFile("""
            # mine
            [places]   # where I go
            home = { lat = 38.7139, lon = -9.1334 }

            [places.office]
            lat = 38.7226
            lon = -9.1094

            [[reminder]]
            title = "Water the plants"
            place = "home"
            when = "leave"

            """)
        let run = try Command.run(["add", "-c", config, "--title", "Buy bread", "--place", "bakery", "--at", "38.7105,-9.1366"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutLines.contains("defined place bakery in \(config)"))
        let text = try String(contentsOfFile: config, encoding: .utf8)
        #expect(text.hasPrefix("# mine\n[places]   # where I go\nbakery = \"38.7105,-9.1366\"\nhome = {"))
        #expect(text.hasSuffix("[[reminder]]\ntitle = \"Buy bread\"\nplace = \"bakery\"\n"))
        let again = try Command.run(["add", "-c", config, "--title", "More bread", "--place", "bakery", "--at", "1,2"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("there is a place \"bakery\" already"))
        // A place is named as a person writes it, as a task's LOCATION names one: "Office" is office.
        let byWords = try Command.run(["add", "-c", config, "--title", "Ring the boss", "--place", "Office"])
        #expect(byWords.status == 0, "\(byWords.stderr)")
        #expect(try Command.run(["list", "-c", config]).stdoutLines.contains { $0.hasPrefix("ring-the-boss") && $0.contains("office (38.722600,-9.109400)") })

        let bare = try Command.temporaryFile("[[reminder]]\ntitle = \"A\"\nlat = 1\nlon = 2\n")
        #expect(try Command.run(["add", "-c", bare, "--title", "Post", "--place", "post office", "--at", "3,4"]).status == 0)
        let added = try String(contentsOfFile: bare, encoding: .utf8)
        #expect(added.contains("\n[places]\n\"post office\" = \"3,4\"\n"))
        #expect(try Command.run(["check", "-c", bare]).status == 0)
    }
}
