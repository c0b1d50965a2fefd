import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmStore
import GeoAlarmSystem
import GeoAlarmTestSupport
import Testing

/// `geoalarm map` in a real browser: Debian's Chromium, headless, driven by Playwright
/// (Tests/Browser/map_page.py, from the virtual environment `make browser-deps` makes). The
/// page's changes are checked where they land: the config file, `geoalarm list`, the state file.
@Suite(.serialized)
struct MapBrowserTests {
    /// `geoalarm map` on a copy of the demo config and a state file of its own.
    final class MapSession {
        let folder: String
        let configPath: String
        let statePath: String
        let server: Background
        /// The address it printed, with its token.
        let address: String

        /// The demo's config, with `extra` (TOML) after it; `arguments` more for `geoalarm map`,
        /// `files` written beside the config first, `environment` its own (else the tests').
        init(extra: String = "", files: [String: String] = [:], arguments: [String] = [], environment: [String: String]? = nil) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-map-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            configPath = folder + "/config.toml"
            statePath = folder + "/state/state.sqlite"
            for (name, text) in files { try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/" + name)) }
            let demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
            try Data((demo + extra).utf8).write(to: URL(fileURLWithPath: configPath))
            server = try Background(["map", "-c", configPath, "--state", statePath] + arguments, environment: environment)
            let prefix = "geoalarm map: open "
            guard server.waitUntil({ $0.stdoutLines.contains { $0.hasPrefix(prefix) } }),
                  let line = server.stdoutLines.first(where: { $0.hasPrefix(prefix) })
            else { throw Failure(description: "geoalarm map printed no address: \(server.stderr)") }
            address = String(line.dropFirst(prefix.count))
        }

        /// Runs a scenario of map_page.py on the page and waits for it to end (the deadline only
        /// bounds a failure: the scenario's own waits end sooner); its errors come with what the
        /// map's server logged.
        func drive(_ scenario: String, _ argument: String? = nil) throws -> (status: Int32?, output: String, errors: String) {
            let browser = try start(scenario, argument)
            let status = browser.exitStatus(within: 600)
            return (status, browser.stdout, browser.stderr + "\nthe map's server logged:\n" + server.stderr)
        }

        /// Starts a scenario on `url` (else the printed address), its standard input read from `stdin` when given.
        func start(_ scenario: String, _ argument: String? = nil, url: String? = nil, stdin: Int32? = nil) throws -> Background {
            let python = Command.root.appendingPathComponent(".build/browser-venv/bin/python3")
            guard FileManager.default.isExecutableFile(atPath: python.path) else {
                throw Failure(description: "no \(python.path): `make browser-deps` makes it (Playwright from PyPI)")
            }
            let script = Command.root.appendingPathComponent("Tests/Browser/map_page.py").path
            return try Background([script, scenario, url ?? address] + (argument.map { [$0] } ?? []), executable: python, stdin: stdin)
        }

        var configText: String { (try? String(contentsOfFile: configPath, encoding: .utf8)) ?? "" }

        func config() throws -> Config { try ConfigLoader.load(path: configPath) }

        deinit {
            server.signal(SIGTERM)
            _ = server.exitStatus()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func json(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
    }

    @Test func thePageShowsTheDemosRemindersWhereTheyAre() throws {
        let session = try MapSession()
        let reminders = try session.config().reminders.map { reminder -> [String: Any] in
            guard case .circle(let center, let radius) = reminder.geometry else { return [:] }
            return ["id": reminder.id, "title": reminder.title, "lat": center.latitude, "lon": center.longitude, "radius": radius]
        }
        #expect(reminders.count == 5)
        let shown = try session.drive("shows", Self.json(reminders))
        #expect(shown.status == 0, "\(shown.errors)")
        #expect(shown.output.components(separatedBy: "shown ").count - 1 == 5, "\(shown.output)")
    }

    @Test func aClickAddsAReminderThatTheConfigAndListHave() throws {
        let session = try MapSession()
        let before = session.configText
        let added = try session.drive("add", Self.json(["title": "Post the letters", "radius": "40m"]))
        #expect(added.status == 0, "\(added.errors)")
        let answer = try #require(
            try JSONSerialization.jsonObject(with: Data((added.output.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
        let id = try #require(answer["id"] as? String)
        #expect(id == "post-the-letters")
        let reminder = try #require(try session.config().reminders.first { $0.id == id })
        #expect(reminder.title == "Post the letters")
        guard case .circle(let center, let radius) = reminder.geometry else { throw Failure(description: "not a circle") }
        #expect(radius == 40)
        let clicked = Coordinate(latitude: try #require(answer["lat"] as? Double), longitude: try #require(answer["lon"] as? Double))
        #expect(Haversine.distance(center, clicked) < 1, "added where the click was")
        #expect(session.configText.hasPrefix(before), "the file was appended to, every byte before kept")
        #expect(answer["message"] as? String == "", "nothing to warn of")
        let list = try Command.run(["list", "-c", session.configPath])
        #expect(list.status == 0 && list.stdout.contains(id) && list.stdout.contains("Post the letters"), "\(list.stdout)")
    }

    /// A title typed with the keyboard's layout switched in a word is added, and the page says
    /// what `add` says of it.
    @Test func aTitleTypedWithTheLayoutSwitchedIsWarnedOf() throws {
        let session = try MapSession()
        let added = try session.drive("add", Self.json(["title": "Хлеб и м\u{6F}локо", "radius": "40m"]))
        #expect(added.status == 0, "\(added.errors)")
        let answer = try #require(
            try JSONSerialization.jsonObject(with: Data((added.output.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
        #expect(answer["id"] as? String == "хлеб-и-м\u{6F}локо")
        #expect((answer["message"] as? String)?.contains("has Latin o (U+006F) among Cyrillic letters in one word") == true, "\(answer)")
    }

    @Test func aDragMovesAReminderAndKeepsTheRestOfTheFile() throws {
        let session = try MapSession()
        let before = session.configText
        let dragged = try session.drive("drag", Self.json(["id": "bread", "dx": 80, "dy": 50]))
        #expect(dragged.status == 0, "\(dragged.errors)")
        let dropped = try #require(
            try JSONSerialization.jsonObject(with: Data((dragged.output.split(separator: "\n").last ?? "").utf8)) as? [String: [Double]])
        let sent = try #require(dropped["sent"]), pointer = try #require(dropped["pointer"])
        let bread = try #require(try session.config().reminders.first { $0.id == "bread" })
        #expect(Haversine.distance(bread.center, Coordinate(latitude: sent[0], longitude: sent[1])) < 0.05, "saved where the page dropped it")
        #expect(Haversine.distance(bread.center, Coordinate(latitude: pointer[0], longitude: pointer[1])) < 10, "under the pointer")
        #expect(Haversine.distance(bread.center, Coordinate(latitude: 38.7105, longitude: -9.1366)) > 50, "moved at all")
        // Its `place = "bakery"` line became a `location` line; the place and every other line stay.
        let lines = session.configText.components(separatedBy: "\n")
        let old = before.components(separatedBy: "\n")
        #expect(lines.count == old.count)
        let changed = zip(old, lines).filter { $0 != $1 }
        #expect(changed.count == 1 && changed.first?.0 == "place = \"bakery\"" && changed.first?.1.hasPrefix("location = \"") == true,
                "\(changed)")
    }

    @Test func removalRemovesAReminderFromTheConfigAndTheList() throws {
        let session = try MapSession()
        let removed = try session.drive("remove", Self.json(["id": "parcel"]))
        #expect(removed.status == 0, "\(removed.errors)")
        #expect(try !session.config().reminders.contains { $0.id == "parcel" })
        #expect(!session.configText.contains("Pick up the parcel"))
        let list = try Command.run(["list", "-c", session.configPath])
        #expect(list.status == 0 && !list.stdout.contains("parcel") && list.stdout.contains("bread"), "\(list.stdout)")
    }

    /// The Snooze button lasts as long as `[output] snooze` says, and says so; a change of the
    /// setting relabels the buttons on the open page.
    @Test func theSnoozeButtonLastsAsTheConfigSays() throws {
        let session = try MapSession(extra: "\n[output]\nsnooze = \"20m\"\n")
        System.ignoreBrokenPipes()
        let (read, write) = try System.pipe()
        var writing = true
        defer { if writing { System.close(write) } }
        let pressed = Date()
        let browser = try session.start("snooze", Self.json(["id": "bread", "label": "Snooze 20 min", "other": "parcel"]), stdin: read)
        System.close(read)
        #expect(browser.waitUntil { $0.stdoutLines.contains("snoozed bread") }, "\(browser.stderr)\n\(session.server.stderr)")
        let until = try #require(try StateStore(readingFrom: session.statePath)?.lifecycles.all()["bread"]?.snoozedUntil)
        #expect(until >= pressed.addingTimeInterval(1199) && until <= Date().addingTimeInterval(1201), "\(until)")
        try Data(session.configText.replacingOccurrences(of: "snooze = \"20m\"", with: "snooze = \"45m\"").utf8)
            .write(to: URL(fileURLWithPath: session.configPath), options: .atomic)
        try System.writeAll(write, Array("Snooze 45 min\n".utf8))
        #expect(browser.waitUntil { $0.stdoutLines.contains("parcel: Snooze 45 min") }, "\(browser.stdout) \(browser.stderr)")
        System.close(write)
        writing = false
        #expect(browser.exitStatus(within: 600) == 0, "\(browser.stderr)")
    }

    /// The page says what `geoalarm check` says of the file the change would make, and nothing is written.
    @Test func anInvalidRadiusIsRefusedWithCheckSMessage() throws {
        let session = try MapSession()
        let before = session.configText
        let refused = try session.drive("refuse-radius", Self.json(["id": "ferry", "radius": "-5m"]))
        #expect(refused.status == 0, "\(refused.errors)")
        #expect(session.configText == before, "nothing written")
        let invalid = try Command.temporaryFile(before.replacingOccurrences(of: "radius = 80", with: "radius = \"-5m\""))
        let check = try Command.run(["check", "-c", invalid])
        #expect(check.status != 0)
        let said = try #require(check.stderrLines.first { $0.contains("radius") })
        #expect(refused.output.contains(said.replacingOccurrences(of: invalid, with: session.configPath)), "\(refused.output) / \(said)")
    }

    /// The position on the page is the agent's, and moves with it: after each half of the demo
    /// walk, the page shows the last fix the agent saved, and lists the events it recorded
    /// (this machine's, at a place), the newest first.
    @Test func theLivePositionFollowsTheAgent() throws {
        let session = try MapSession()
        // To the bakery, then the rest: each half has changes of side, which the agent saves with their fix.
        let halves = [try LiveAgentTests.walkEpochs(0..<500), try LiveAgentTests.walkEpochs(500...)]
        let gpsd = try GPSFake()
        try gpsd.load(Command.temporaryFile(halves[0], named: "first.nmea"))
        let agent = try Background([
            "run", "--headless", "-c", session.configPath, "--state", session.statePath, "--gpsd", "localhost:\(gpsd.port)",
        ])
        // The browser's driver reads positions from this pipe: if it ends early, the write fails
        // (EPIPE) instead of killing the tests.
        System.ignoreBrokenPipes()
        let (read, write) = try System.pipe()
        var writing = true
        defer { if writing { System.close(write) } }
        let browser = try session.start("live", stdin: read)
        System.close(read)
        #expect(browser.waitUntil { $0.stdoutLines.contains("watching") }, "\(browser.stderr)")
        var shown: [Coordinate] = []
        for (number, half) in halves.enumerated() {
            if number > 0 { try gpsd.load(Command.temporaryFile(half, named: "second.nmea")) }
            #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
            let store = try #require(try StateStore(readingFrom: session.statePath))
            let fix = try #require(try store.sides.lastFix())
            let events = try store.history.entries().filter { $0.coordinate != nil && $0.device == nil }
            let last = try #require(events.last, "the walk's half crosses a fence")
            try System.writeAll(write, Array(
                "\(fix.coordinate.latitude) \(fix.coordinate.longitude) \(events.count) \(last.kind.rawValue)\n".utf8))
            #expect(browser.waitUntil { $0.stdoutLines.count == number + 2 }, "\(browser.stdout) \(browser.stderr)")
            shown.append(fix.coordinate)
        }
        #expect(shown.count == 2 && shown[0] != shown[1], "the position moved: \(shown)")
        System.close(write)
        writing = false
        #expect(browser.exitStatus(within: 600) == 0, "\(browser.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }

    /// Titles come from files (a collection from a city's open data): the page shows them as
    /// text, never as markup, on the map and in the list.
    @Test func titlesAreShownAsTextNotMarkup() throws {
        let title = #"<b>Bold</b><img src="x" onerror="document.title='owned'">"#
        let session = try MapSession(
            extra: "\n[[reminder]]\nid = \"hostile\"\ntitle = \(ConfigEditor.quote(title))\nlocation = \"38.7120,-9.1350\"\n")
        let shown = try session.drive("text-only", Self.json(["id": "hostile", "title": title]))
        #expect(shown.status == 0, "\(shown.errors)")
    }

    /// A title's bidirectional controls (a shared list's "Invoice \u{202E}exe.fdp", shown raw as
    /// "Invoice pdf.exe") are shown escaped, as the event lines show them.
    @Test func bidirectionalControlsAreShownEscaped() throws {
        let title = "Invoice \u{202E}exe.fdp\u{2066}"
        let session = try MapSession(
            extra: "\n[[reminder]]\nid = \"invoice\"\ntitle = \(ConfigEditor.quote(title))\nlocation = \"38.7120,-9.1350\"\n")
        let shown = try session.drive("text-only", Self.json(["id": "invoice", "title": title, "shown": DisplayText.escaped(title)]))
        #expect(DisplayText.escaped(title) == #"Invoice \u{202E}exe.fdp\u{2066}"#)
        #expect(shown.status == 0, "\(shown.errors)")
    }

    /// A reminder that starts later (a repeating task moved on to its next time) says when, in
    /// its badge and its shape's colour.
    @Test func aReminderThatStartsLaterSaysWhen() throws {
        let session = try MapSession(extra: "\n[[reminder]]\nid = \"later\"\ntitle = \"Later\"\nlocation = \"38.7120,-9.1350\"\nstarts = \"2099-12-24\"\n")
        let shown = try session.drive("badge", Self.json(["id": "later", "text": "starts 2099-12-24"]))
        #expect(shown.status == 0, "\(shown.errors)")
    }

    /// A tile server on the same host (a local one is a common setup) sees the tiles' requests
    /// and nothing of the map's credential: no cookie, no referrer, no token anywhere; the page
    /// stays live across a reload without the token in its address.
    @Test func theTokenReachesNoOtherServerOnTheHost() throws {
        let python = Command.root.appendingPathComponent(".build/browser-venv/bin/python3")
        let tiles = try Background([Command.root.appendingPathComponent("Tests/Browser/tile_server.py").path], executable: python)
        defer {
            tiles.signal(SIGTERM)
            _ = tiles.exitStatus()
        }
        #expect(tiles.waitUntil { $0.stdoutLines.first?.hasPrefix("listening ") == true }, "\(tiles.stderr)")
        let port = try #require(tiles.stdoutLines.first.flatMap { Int($0.dropFirst("listening ".count)) })
        let session = try MapSession(extra: "\n[map]\ntiles = \"http://127.0.0.1:\(port)/{z}/{x}/{y}.png\"\n")
        let drawn = try session.drive("tiles")
        #expect(drawn.status == 0, "\(drawn.errors)")
        let token = try #require(session.address.components(separatedBy: "#token=").last)
        let requests = tiles.stdoutLines.dropFirst()
        #expect(requests.count >= 2, "the tiles were asked for: \(tiles.stdout)")
        for request in requests {
            #expect(!request.contains(token), "a tile request carried the token: \(request)")
            #expect(!request.lowercased().contains("\"cookie\""), "a tile request carried a cookie: \(request)")
            #expect(!request.lowercased().contains("\"referer\""), "a tile request said where it came from: \(request)")
        }
    }

    /// `map --open` hands xdg-open, whose command line every local user can read, a link that
    /// holds no lasting secret: its code opens the map once, for this user only.
    @Test func theLinkGivenToXdgOpenWorksOnceForThisUserOnly() throws {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-xdg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: bin) }
        // A stand-in xdg-open that notes the address it was given.
        try Command.writeScript(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" > \"\(bin)/opened.tmp\" && mv \"\(bin)/opened.tmp\" \"\(bin)/opened\"\n", to: bin + "/xdg-open")
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let session = try MapSession(arguments: ["--open"], environment: environment)
        #expect(session.server.waitUntil(watching: [bin]) { _ in FileManager.default.fileExists(atPath: bin + "/opened") },
                "\(session.server.stderr)")
        let opened = try String(contentsOfFile: bin + "/opened", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let token = try #require(session.address.components(separatedBy: "#token=").last)
        #expect(!opened.contains(token) && opened.contains("#code="), "xdg-open got \(opened)")
        let code = try #require(opened.components(separatedBy: "#code=").last)
        if getuid() == 0 {
            // Another local user who read the command line can neither use the code nor spend it.
            let url = try #require(URL(string: session.address))
            let script = """
                import http.client, sys
                c = http.client.HTTPConnection("127.0.0.1", \(url.port ?? 0), timeout=60)
                c.request("POST", "/api/session", body='{"code":"\(code)"}', headers={"Content-Type": "application/json"})
                r = c.getresponse(); print(r.status, r.read().decode())
                """
            let other = try Command.run(
                ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", script], executable: "/usr/bin/setpriv")
            #expect(other.stdout.hasPrefix("403 ") && other.stdout.contains("user who started"), "\(other.stdout) \(other.stderr)")
        }
        let browser = try session.start("opened-once", nil, url: opened)
        #expect(browser.exitStatus(within: 600) == 0, "\(browser.stdout) \(browser.stderr) \(session.server.stderr)")
    }

    /// A reminder whose area has 50,000 points: the page draws it and goes live (its feed once
    /// carried the whole area with every change, past its 1 MiB bound, and never started).
    @Test func aLargeAreaIsDrawnAndThePageGoesLive() throws {
        let ring = (0...50_000).map { step -> String in
            let angle = Double(step % 50_000) / 50_000 * 2 * .pi
            return "[\(-9.14 + 0.01 * cos(angle)),\(38.72 + 0.008 * sin(angle))]"
        }
        let geojson = #"{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[["# + ring.joined(separator: ",") + "]]}}"
        let session = try MapSession(
            extra: "\n[[reminder]]\nid = \"big\"\ntitle = \"Around the hill\"\narea = \"hill.geojson\"\n", files: ["hill.geojson": geojson])
        let shown = try session.drive("shows-area", Self.json(["id": "big"]))
        #expect(shown.status == 0, "\(shown.errors)")
    }

    @Test func requestsWithoutTheTokenOrForAnotherHostAreRefused() throws {
        let session = try MapSession()
        let refused = try session.drive("refused")
        #expect(refused.status == 0, "\(refused.errors)")
        #expect(refused.output.contains("foreign Host: 421"), "\(refused.output)")
    }
}
