import Foundation
import GeoAlarmCore
import GeoAlarmStore
import GeoAlarmTestSupport
import Testing

/// The `geoalarm` command end to end, as a user runs it.
struct CLITests {
    /// With `source = "geoclue"`, `check` names the reminders Wi-Fi positioning cannot tell the
    /// sides of (under 100 m), as a warning: the config is valid.
    @Test func checkNamesRemindersSmallerThanWiFiWithGeoClue() throws {
        let config = try Command.temporaryFile("""
            [location]
            source = "geoclue"

            [[reminder]]
            id = "door"
            title = "The shop's door"
            location = "38.7,-9.1"
            radius = "30m"

            [[reminder]]
            id = "quarter"
            title = "The quarter"
            location = "38.8,-9.2"
            radius = "400m"

            """)
        let check = try Command.run(["check", "-c", config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stderr.contains("1 reminder smaller than Wi-Fi positioning's accuracy (about 100 m)") && check.stderr.hasSuffix(": door\n"),
                "\(check.stderr)")
        #expect(!check.stderr.contains("quarter"))
    }

    @Test func demoReplayPrintsTheWalksEvents() throws {
        let run = try Command.run(["replay", "--config", "config/demo.toml", "config/demo/walk.nmea"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutLines == [
            "2026-11-21T08:01:55Z  leave  water-the-plants-before-you-go  \"Water the plants before you go\"  73 m",
            "2026-11-21T08:06:39Z  arrive  bread  \"Buy bread\"  28 m",
            "2026-11-21T08:13:07Z  arrive  parcel  \"Pick up the parcel\"  42 m",
            "2026-11-21T08:19:38Z  leave  parcel  \"Pick up the parcel\"  73 m",
            "2026-11-21T08:20:19Z  arrive  ferry  \"Check the ferry times\"  77 m",
        ])
        // The summary goes to stderr: the inaccurate spike was ignored, the gap counted. As from
        // gpsd, the first second's GGA (before its RMC gives the date) is a fix without a date.
        #expect(run.stderr.contains("config/demo/walk.nmea: NMEA 0183, 1269 fixes, 1267 used (ignored: 1 inaccurate, 1 no date yet)"))
        #expect(run.stderr.contains("40 epochs without a fix"))
    }

    /// Where standard error is systemd's journal (JOURNAL_STREAM names it, as systemd sets it
    /// for a service), each line begins with its priority; where it names another stream,
    /// nothing changes there. Event lines in the journal are notices.
    @Test func inTheJournalEachLineCarriesItsPriority() throws {
        let mixed = try Command.temporaryFile("[[reminder]]\nid = \"bre\u{430}d\"\ntitle = \"B\"\nlocation = \"1,2\"\n")
        let broken = try Command.temporaryFile("[[reminder]]\ntitle = 1\nlocation = \"1,2\"\n")
        // The shell's own descriptor ($$): inside $(...) its standard output is the substitution's.
        func run(_ arguments: [String], naming descriptor: Int) throws -> Command {
            let script = "export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/$$/fd/\(descriptor)); exec \"$0\" \"$@\""
            return try Command.run(["-c", script, Command.binary.path] + arguments, executable: "/bin/sh")
        }
        let warned = try run(["check", "-c", mixed], naming: 2)
        #expect(warned.status == 0 && warned.stderrLines.first?.hasPrefix("<4>warning: \(mixed):2: reminder") == true, "\(warned.stderr)")
        #expect(warned.stderrLines.allSatisfy { $0.wholeMatch(of: /<[2-7]>.*/) != nil }, "\(warned.stderr)")
        let refused = try run(["check", "-c", broken], naming: 2)
        #expect(refused.status == 1 && refused.stderrLines == ["<3>\(broken):2: reminder (#1): title: must be a string, not an integer"],
                "\(refused.stderr)")
        let elsewhere = try run(["check", "-c", mixed], naming: 1)
        #expect(elsewhere.stderrLines.first?.hasPrefix("geoalarm: warning: \(mixed):2: reminder") == true, "\(elsewhere.stderr)")
        // Events on standard output in the journal: notices, above the log's info lines.
        let events = try run(["replay", "-c", "config/demo.toml", "config/demo/walk.nmea"], naming: 1)
        #expect(events.stdoutLines.count == 5 && events.stdoutLines.allSatisfy { $0.hasPrefix("<5>2026-11-21T08:") }, "\(events.stdout)")
        #expect(events.stderrLines.allSatisfy { $0.hasPrefix("geoalarm: ") }, "\(events.stderr)")
    }

    @Test func jsonLinesHaveTheDocumentedKeys() throws {
        let run = try Command.run(["replay", "-c", "config/demo.toml", "--json", "config/demo/walk.nmea"])
        #expect(run.status == 0)
        #expect(run.stdoutLines.count == 5)
        for line in run.stdoutLines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            for key in ["time", "event", "reminder", "title", "lat", "lon", "distance_m"] {
                #expect(object[key] != nil, "\(key) missing in \(line)")
            }
            let time = try #require(object["time"] as? String)
            #expect(time.hasSuffix("Z") && time.count == 20)
            #expect(["arrive", "leave"].contains(object["event"] as? String))
        }
        let bread = try #require(run.stdoutLines.first { $0.contains("\"bread\"") })
        #expect(bread.contains("\"notes\":\"Two loaves, one with seeds\""))
    }

    @Test func stdinAndSeveralTracksAreOneJourney() throws {
        let walk = try String(contentsOf: Command.root.appendingPathComponent("config/demo/walk.nmea"), encoding: .utf8)
        let lines = walk.components(separatedBy: "\r\n")
        #expect(lines.count > 3000)
        let firstHalf = lines[..<2000].joined(separator: "\r\n") + "\r\n"
        let secondHalf = try Command.temporaryFile(lines[2000...].joined(separator: "\r\n"), named: "rest.nmea")
        let run = try Command.run(["replay", "-c", "config/demo.toml", "-", secondHalf], stdin: firstHalf)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutLines.count == 5)
        #expect(run.stderr.contains("<stdin>: NMEA 0183"))
    }

    @Test func anUnreadableTrackIsNamedAndTheOthersStillPlay() throws {
        let run = try Command.run(["replay", "-c", "config/demo.toml", "/nonexistent/track.nmea", "config/demo/walk.nmea"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("/nonexistent/track.nmea: cannot read: No such file or directory"))
        #expect(run.stdoutLines.count == 5)
    }

    @Test func garbledLinesAreCountedOnStderrAndNothingElseOnStdout() throws {
        let track = try Command.temporaryFile(
            "$GPGGA,080000.00,3842.8347,N,00908.0023,W,1,08,1.2,45.0,M,50.5,M,,*00\r\nnot nmea at all\r\n", named: "bad.nmea")
        let run = try Command.run(["replay", "-c", "config/demo.toml", track])
        #expect(run.status == 0)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("bad.nmea: skipped 2 bad lines (line 1: checksum mismatch (says 00, computed 49); line 2: not an NMEA sentence)"))
    }

    @Test func checkAcceptsTheBundledConfigs() throws {
        for name in ["config/example.toml", "config/demo.toml"] {
            let run = try Command.run(["check", "--config", name])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.hasPrefix("\(name): OK"))
        }
    }

    @Test func checkExplainsEveryMistake() throws {
        let path = try Command.temporaryFile("""
            [[reminder]]
            title = "Pick up the parcel"
            lat = 38.7
            lon = -9.1
            raduis = "150m"
            when = "whenever"
            """)
        let run = try Command.run(["check", "-c", path])
        #expect(run.status == 1)
        #expect(run.stderrLines == [
            "\(path):5: reminder \"pick-up-the-parcel\" (#1): raduis: unknown key (did you mean \"radius\"?)",
            "\(path):6: reminder \"pick-up-the-parcel\" (#1): when: unknown value \"whenever\" (use \"arrive\", \"leave\" or \"both\")",
        ])
        let syntax = try Command.temporaryFile("[[reminder]]\ntitle = \"A\nlat = 1\n")
        let broken = try Command.run(["check", "-c", syntax])
        #expect(broken.status == 1)
        #expect(broken.stderr.hasPrefix("\(syntax):2:"))
    }

    @Test func aMissingDefaultConfigNamesThePathsTried() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-home-\(UUID().uuidString)").path
        let run = try Command.run(["check"], environment: ["HOME": home, "XDG_CONFIG_HOME": "\(home)/xdg"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("tried \(home)/xdg/geoalarm/config.toml, \(home)/.config/geoalarm/config.toml, /etc/geoalarm/config.toml"))
    }

    @Test func theDefaultConfigIsFoundInXDGConfigHome() throws {
        let config = try Command.temporaryFile("[[reminder]]\ntitle = \"A\"\nlat = 1\nlon = 2\n")
        let xdg = URL(fileURLWithPath: config).deletingLastPathComponent().appendingPathComponent("xdg/geoalarm")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: config, toPath: xdg.appendingPathComponent("config.toml").path)
        let run = try Command.run(["list"], environment: ["XDG_CONFIG_HOME": xdg.deletingLastPathComponent().path, "HOME": "/nonexistent"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutLines.count == 2)
    }

    @Test func listSortsByTitleDistanceAndRadius() throws {
        let byTitle = try Command.run(["list", "-c", "config/demo.toml", "--state", Command.scratchState()])
        #expect(byTitle.status == 0)
        #expect(byTitle.stdoutLines.first?.hasPrefix("ID ") == true)
        #expect(byTitle.stdoutLines.dropFirst().map { $0.split(separator: " ").first.map(String.init) ?? "" } == [
            "bread", "ferry", "prescription", "parcel", "water-the-plants-before-you-go",
        ])
        let byDistance = try Command.run(["list", "-c", "config/demo.toml", "--sort", "distance", "--from", "38.7062,-9.1356"])
        #expect(byDistance.stdoutLines.dropFirst().first?.hasPrefix("ferry ") == true)
        #expect(byDistance.stdoutLines.first?.hasSuffix("DISTANCE") == true)
        let byRadius = try Command.run(["list", "-c", "config/demo.toml", "--sort", "radius"])
        #expect(byRadius.stdoutLines.last?.hasPrefix("ferry ") == true)
        let state = Command.scratchState()
        let noFix = try Command.run(["list", "-c", "config/demo.toml", "--sort", "distance", "--state", state])
        #expect(noFix.status == 64)
        #expect(noFix.stderr == "geoalarm: error: --sort distance: \(state) holds no fix to measure from; give --from LAT,LON\n")
        // The agent's last fix, by the river: the ferry is nearest.
        try StateStore(path: state).sides.setLastFix(Fix(time: Date(), coordinate: Coordinate(latitude: 38.7063, longitude: -9.1357)))
        let fromHere = try Command.run(["list", "-c", "config/demo.toml", "--sort", "distance", "--state", state])
        #expect(fromHere.status == 0, "\(fromHere.stderr)")
        #expect(fromHere.stdoutLines.dropFirst().first?.hasPrefix("ferry ") == true, "\(fromHere.stdout)")
        #expect(fromHere.stdoutLines.first?.hasSuffix("DISTANCE") == true)
        #expect(fromHere.stderr.hasPrefix("geoalarm: info: distances from the last fix recorded in \(state): 38.706300,-9.135700, ")
                    && fromHere.stderr.hasSuffix(" old\n"), "\(fromHere.stderr)")
    }
}

/// Areas from the command line: a walk replayed past a GeoJSON area and an inline polygon.
struct AreaCommandTests {
    @Test func replayListAndStatusSpeakOfEdges() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-area-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // The demo walk starts at home (38.71390,-9.13340) and passes the bakery (38.71050,-9.13660).
        let area = """
            {"type": "Feature", "properties": {"name": "Baixa block"}, "geometry": {"type": "Polygon", "coordinates": [[
              [-9.1375, 38.7100], [-9.1355, 38.7100], [-9.1355, 38.7112], [-9.1375, 38.7112], [-9.1375, 38.7100]]]}}
            """
        try area.write(toFile: "\(folder)/block.geojson", atomically: true, encoding: .utf8)
        let config = """
            [[reminder]]
            id = "block"
            title = "In the block"
            area = "block.geojson"
            when = "both"

            [[reminder]]
            id = "home"
            title = "Home square"
            polygon = [[38.7135, -9.1340], [38.7135, -9.1328], [38.7143, -9.1328], [38.7143, -9.1340]]
            when = "leave"
            """
        try config.write(toFile: "\(folder)/config.toml", atomically: true, encoding: .utf8)
        let state = Command.scratchState()
        let replay = try Command.run(["replay", "-c", "\(folder)/config.toml", "--state", state, "--json", "config/demo/walk.nmea"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let events = replay.stdoutLines
        #expect(events.count >= 3, "\(replay.stdout)")
        #expect(events.first?.contains(#""event":"leave","reminder":"home""#) == true, "leaving the home square first: \(events)")
        let arrive = try #require(events.first { $0.contains(#""event":"arrive","reminder":"block""#) })
        #expect(arrive.contains(#""distance_m":0"#), "inside an area is 0 m from it")
        #expect(events.contains { $0.contains(#""event":"leave","reminder":"block""#) })

        let list = try Command.run(["list", "-c", "\(folder)/config.toml"])
        #expect(list.stdoutLines.contains { $0.hasPrefix("block ") && $0.contains("area around 38.710600,-9.136500") && $0.contains("4 edges") },
                "\(list.stdout)")
        let status = try Command.run(["status", "-c", "\(folder)/config.toml", "--state", state, "--json"])
        #expect(status.stdoutLines.count == 2)
    }

    /// An edit refused for the config it would make says so in lines of their own, each with the
    /// log's prefix: no literal "\\n" in the middle of a line.
    @Test func aRefusedEditSaysWhyInLinesNotEscapes() throws {
        let config = try Command.temporaryFile("")
        let add = try Command.run(["add", "-c", config, "--title", "Bread", "--at", "38.7,-9.1", "--radius=-5m"])
        #expect(add.status == 1)
        #expect(!add.stderr.contains("\\n"), "\(add.stderr)")
        let lines = add.stderrLines
        #expect(lines.count >= 2 && lines.allSatisfy { $0.hasPrefix("geoalarm: error: ") }, "\(add.stderr)")
        #expect(lines.contains { $0.contains("radius") && $0.contains(config) }, "\(add.stderr)")
    }
}
