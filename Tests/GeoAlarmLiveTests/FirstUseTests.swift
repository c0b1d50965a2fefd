import Foundation
import GeoAlarmTestSupport
import Testing

/// A new user's first steps against the real parts: `add --here` from gpsfake's gpsd (or from
/// the last fix the agent recorded), and `doctor` with gpsd up, down, and with a real
/// notification server. Serialized: gpsfake plays in real time.
@Suite(.serialized)
struct FirstUseTests {
    /// The demo walk starts at home.
    static let home = (latitude: 38.71390, longitude: -9.13340)

    /// A new, empty home folder, and an environment that points every XDG folder into it.
    static func emptyHome() throws -> (path: String, environment: [String: String]) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-home-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = path
        for key in ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "GPSD_HOST", "GPSD_PORT", "DBUS_SESSION_BUS_ADDRESS"] {
            environment[key] = nil
        }
        return (path, environment)
    }

    /// Metres between two points near each other (equirectangular: plenty within a kilometre).
    static func metres(_ a: (latitude: Double, longitude: Double), _ b: (latitude: Double, longitude: Double)) -> Double {
        let radians = Double.pi / 180
        let x = (b.longitude - a.longitude) * radians * cos((a.latitude + b.latitude) / 2 * radians)
        let y = (b.latitude - a.latitude) * radians
        return 6_371_000 * (x * x + y * y).squareRoot()
    }

    /// The `location = "LAT,LON"` of the last reminder in a config file.
    static func lastLocation(in path: String) throws -> (latitude: Double, longitude: Double) {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").last { $0.hasPrefix("location = ") })
        let parts = line.dropFirst("location = \"".count).dropLast().split(separator: ",").compactMap { Double($0) }
        try #require(parts.count == 2)
        return (parts[0], parts[1])
    }

    /// The first `count` epochs of the demo walk, in a file of their own.
    static func walkStart(epochs count: Int) throws -> String {
        try Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<count), named: "start.nmea")
    }

    @Test func addHereTakesTheFixFromGPSD() throws {
        let gpsd = try GPSFake()
        try gpsd.load(LiveAgentTests.walk)
        defer { gpsd.stop() }
        let (home, environment) = try Self.emptyHome()
        let added = try Background(
            ["add", "--title", "Where I stand", "--here", "--gpsd", "localhost:\(gpsd.port)"], environment: environment)
        #expect(try gpsd.playWhenWatched())
        #expect(added.exitStatus() == 0, "\(added.stderr)")
        #expect(added.stdout.contains("from gpsd at localhost:\(gpsd.port)"))
        #expect(added.stdout.contains("created \(home)/.config/geoalarm/config.toml"))
        let location = try Self.lastLocation(in: "\(home)/.config/geoalarm/config.toml")
        #expect(Self.metres(location, Self.home) < 60, "the walk's first fixes are at home, within their error")
        #expect(try Command.run(["check"], environment: environment).status == 0)
    }

    @Test func addHereFallsBackToTheAgentsLastFixAndSaysHowOld() throws {
        // The agent records gpsd's fixes in its state file; then gpsd goes away.
        let gpsd = try GPSFake()
        try gpsd.load(try Self.walkStart(epochs: 30))
        let state = Command.scratchState()
        let agent = try Background(
            ["run", "--headless", "-c", "config/demo.toml", "--state", state, "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let recorded = try Command.run([state, "SELECT lat || ',' || lon FROM last_fix"], executable: "/usr/bin/sqlite3")
        let saved = recorded.stdout.split(whereSeparator: { $0 == "," || $0 == "\n" }).compactMap { Double($0) }
        try #require(saved.count == 2, "the agent recorded a last fix: \(recorded.stdout)\(recorded.stderr)\(agent.stderr)")
        // status names it with its time on this machine's clock and how old it is.
        let status = try Command.run(["status", "-c", "config/demo.toml", "--state", state],
                                     environment: ProcessInfo.processInfo.environment.merging(["TZ": "Europe/Berlin"]) { $1 })
        #expect(status.stdoutLines.last?.wholeMatch(of: /last fix: [-0-9.]+,[-0-9.]+ at 2026-11-21T09:0\d:\d\d\+01:00 \(\d+ d( \d+ h)? old\)/) != nil,
                "\(status.stdout)")

        let (home, environment) = try Self.emptyHome()
        let added = try Command.run(
            ["add", "--title", "Here all the same", "--here", "--gpsd", "localhost:\(gpsd.port)", "--wait", "1", "--state", state],
            environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stderr.contains("gpsd at localhost:\(gpsd.port): "), "says why gpsd gave nothing")
        #expect(added.stderr.contains("using the last fix the agent recorded"))
        // The demo walk is dated 2026-11-21: its last fix is days old, and says so.
        #expect(added.stdout.contains("the last fix recorded in \(state) ("), "\(added.stdout)")
        #expect(added.stdout.contains(" d ") && added.stdout.contains(" old)"))
        let location = try Self.lastLocation(in: "\(home)/.config/geoalarm/config.toml")
        #expect(abs(location.latitude - saved[0]) < 1e-6 && abs(location.longitude - saved[1]) < 1e-6)
    }

    @Test func addHereWithNoPositionAnywhereCreatesNothing() throws {
        let (home, environment) = try Self.emptyHome()
        let nothingListens = try GPSFake()
        let port = nothingListens.port
        let added = try Command.run(
            ["add", "--title", "Nowhere", "--here", "--gpsd", "localhost:\(port)", "--wait", "0"], environment: environment)
        #expect(added.status == 1)
        #expect(added.stderr.contains("gpsd at localhost:\(port): "))
        #expect(added.stderr.contains("holds no fix: give --at LAT,LON"))
        #expect(!FileManager.default.fileExists(atPath: "\(home)/.config/geoalarm"), "nothing is made for a reminder not added")
    }

    /// A state file that cannot be read is named with why, once; nothing else is printed.
    @Test func addHereWithAnUnreadableStateFileSaysWhy() throws {
        let (_, environment) = try Self.emptyHome()
        let nothingListens = try GPSFake()
        let state = try Command.temporaryFile("this is not a database, only text long enough to be one\n", named: "state.sqlite")
        let added = try Command.run(
            ["add", "--title", "Nowhere", "--here", "--gpsd", "localhost:\(nothingListens.port)", "--wait", "0", "--state", state],
            environment: environment)
        #expect(added.status == 1)
        #expect(added.stderr.contains(state), "\(added.stderr)")
        #expect(!added.stderr.contains("ExitCode"), "\(added.stderr)")
        #expect(added.stderr.contains("holds no fix: give --at LAT,LON"))
    }

    @Test func doctorWithGPSDUpThenDown() throws {
        let (home, environment) = try Self.emptyHome()
        #expect(try Command.run(["add", "--title", "Buy bread", "--at", "38.7105,-9.1366"], environment: environment).status == 0)
        let hooks = "\(home)/.config/geoalarm/hooks"
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: true)
        try Command.writeScript("#!/bin/sh\n", to: "\(hooks)/log")
        #expect(FileManager.default.createFile(atPath: "\(hooks)/draft", contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o644]))

        let gpsd = try GPSFake()
        try gpsd.load(LiveAgentTests.walk)
        let up = try Background(["doctor", "--headless", "--gpsd", "localhost:\(gpsd.port)"], environment: environment)
        #expect(try gpsd.playWhenWatched())
        #expect(up.exitStatus() == 0, "\(up.stdout)\(up.stderr)")
        gpsd.stop()
        let lines = up.stdoutLines
        #expect(lines.count == 11, "one line per check: \(lines)")
        // auto: gpsd gives fixes, so it feeds the agent, and GeoClue is not asked.
        #expect(lines.contains("ok    source: auto: gpsd gives fixes, so it feeds the agent (GeoClue only while gpsd gives none)"))
        #expect(lines.contains("skip  geoclue: gpsd feeds the agent"))
        #expect(lines.contains("ok    config: \(home)/.config/geoalarm/config.toml: 1 reminder (1 enabled), 0 places"))
        #expect(lines.contains("ok    gpsd: localhost:\(gpsd.port) answers"))
        #expect(lines.contains { $0.hasPrefix("note  fix: 3D fix at 38.71") && $0.contains(" old: the receiver's time is behind") },
                "the walk is dated days ago: \(lines)")
        #expect(lines.contains("skip  notifications: --headless: no pop-ups"))
        #expect(lines.contains("skip  mqtt: no [mqtt] table: no broker is used"))
        #expect(lines.contains("ok    state: \(home)/.local/state/geoalarm/state.sqlite does not exist yet; the agent creates it (0600) at its first fix"))
        #expect(lines.contains("note  hooks: \(hooks): log run; draft not executable, so skipped. Do: chmod +x the ones meant to run"))
        #expect(lines.contains { $0.contains("systemd: ") })

        let down = try Command.run(["doctor", "--headless", "--gpsd", "localhost:\(gpsd.port)", "--wait", "1"], environment: environment)
        #expect(down.status == 1)
        #expect(down.stdoutLines.contains {
            $0.hasPrefix("FAIL  gpsd: localhost:\(gpsd.port): ") && $0.contains("Do: start gpsd")
        }, "\(down.stdout)")
        #expect(down.stdoutLines.contains("skip  fix: gpsd cannot be asked"))
    }

    /// A first run, before any config: doctor says where it looked and how to make one, in
    /// one sentence each (the loader's message ends with its own full stop).
    @Test func doctorWithoutAConfigSaysWhereItLookedAndHowToMakeOne() throws {
        let (home, environment) = try Self.emptyHome()
        let nothingListens = try GPSFake()
        let result = try Command.run(
            ["doctor", "--headless", "--gpsd", "localhost:\(nothingListens.port)", "--wait", "0"], environment: environment)
        #expect(result.status == 1)
        #expect(result.stdoutLines.contains(
            "FAIL  config: no config file found; tried \(home)/.config/geoalarm/config.toml, /etc/geoalarm/config.toml. "
                + "Create one (see config/example.toml) or pass --config FILE. "
                + "Do: make one with geoalarm add --title TITLE --here (or --at LAT,LON)"), "\(result.stdout)")
        #expect(!result.stdout.contains(".."), "\(result.stdout)")
    }

    @Test func doctorFailsOnABrokenConfigAndAnOpenStateFile() throws {
        let (_, environment) = try Self.emptyHome()
        let config = try Command.temporaryFile("[[reminder]]\ntitle = \"No place\"\n")
        let state = Command.scratchState()
        _ = try Command.run(["replay", "-c", "config/demo.toml", "--state", state, "config/demo/walk.nmea"])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: state)
        let nothingListens = try GPSFake()
        let result = try Command.run(
            ["doctor", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(nothingListens.port)", "--wait", "0"],
            environment: environment)
        #expect(result.status == 1)
        // --wait 0 waits for no report, but still asks gpsd whether it is there.
        #expect(result.stdoutLines.contains { $0.hasPrefix("FAIL  gpsd: localhost:\(nothingListens.port): ") }, "\(result.stdout)")
        #expect(result.stdoutLines.contains { $0.hasPrefix("FAIL  config: 1 problem: \(config)") && $0.hasSuffix("Do: fix it, then geoalarm check --config \(config)") },
                "\(result.stdout)")
        #expect(result.stdoutLines.contains("FAIL  state: \(state) (mode 644, schema 11 of 11) is readable by others: it holds where you have been. Do: chmod 600 \(state)"))
    }

    /// A config that loads with a warning (an id whose word mixes scripts) is a note, with the
    /// warning and what to do.
    @Test func doctorNotesAConfigsWarning() throws {
        let (_, environment) = try Self.emptyHome()
        let config = try Command.temporaryFile("[[reminder]]\nid = \"bre\u{430}d\"\ntitle = \"Bread\"\nlocation = \"38.7,-9.1\"\n")
        let nothingListens = try GPSFake()
        let result = try Command.run(
            ["doctor", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(nothingListens.port)",
             "--wait", "0"], environment: environment)
        #expect(result.stdoutLines.contains {
            $0.hasPrefix("note  config: \(config): 1 reminder (1 enabled), 0 places; a warning: \(config):2: reminder \"bre\u{430}d\" (#1): id: ")
                && $0.hasSuffix("Do: mend it if it is not meant, then geoalarm check --config \(config)")
        }, "\(result.stdout)")
    }

    /// The programs of exec keys are looked for as the agent starts them: a name on PATH, a path
    /// as it is; one not there fails, naming the reminders that would run it.
    @Test func doctorLooksForEveryExecProgram() throws {
        let (_, environment) = try Self.emptyHome()
        func doctor(_ text: String) throws -> [String] {
            let config = try Command.temporaryFile(text)
            chmod(config, 0o600)
            let nothingListens = try GPSFake()
            return try Command.run(
                ["doctor", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(nothingListens.port)",
                 "--wait", "0"], environment: environment).stdoutLines.filter { $0.contains(" exec: ") }
        }
        let place = "location = \"38.7,-9.1\"\n"
        #expect(try doctor("[[reminder]]\ntitle = \"A\"\n\(place)exec = [\"true\"]\n[[reminder]]\ntitle = \"B\"\n\(place)exec = [\"/bin/sh\", \"-c\", \":\"]\n")
                == ["ok    exec: 2 programs found: /bin/sh, true"])
        let notRunnable = try Command.temporaryFile("#!/bin/sh\n")
        chmod(notRunnable, 0o644)
        #expect(try doctor("[[reminder]]\ntitle = \"A\"\n\(place)exec = [\"paplay-nowhere\"]\n[[reminder]]\ntitle = \"B\"\n\(place)exec = [\"\(notRunnable)\"]\n")
                == ["FAIL  exec: not found (a name is looked for on PATH): \(notRunnable) (b); paplay-nowhere (a). Do: install it, or give its "
                    + "full path (command -v NAME); under systemd the agent has the user manager's PATH"])
        #expect(try doctor("[[reminder]]\ntitle = \"A\"\n\(place)") == ["skip  exec: no reminder runs a command"])
    }

    @Test func doctorNamesTheNotificationServerAndItsButtons() throws {
        let desktop = try DesktopSession(dunstConfig: DesktopTests.dunstrc)
        var environment = desktop.environment
        environment["HOME"] = try Self.emptyHome().path
        let nothingListens = try GPSFake()
        let result = try Command.run(
            ["doctor", "-c", "config/demo.toml", "--gpsd", "localhost:\(nothingListens.port)", "--wait", "0"], environment: environment)
        #expect(result.stdoutLines.contains { $0.hasPrefix("ok    notifications: dunst ") && $0.hasSuffix("shows buttons (Done, Snooze 1 h)") },
                "\(result.stdout)")
        // The snooze the buttons give, as the config sets it.
        let demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
        let shorter = try Command.run(
            ["doctor", "-c", try Command.temporaryFile(demo + "\n[output]\nsnooze = \"45m\"\n"), "--gpsd", "localhost:\(nothingListens.port)",
             "--wait", "0"], environment: environment)
        #expect(shorter.stdoutLines.contains { $0.hasPrefix("ok    notifications: dunst ") && $0.hasSuffix("shows buttons (Done, Snooze 45 min)") },
                "\(shorter.stdout)")
        desktop.killDunst()
        let gone = try Command.run(
            ["doctor", "-c", "config/demo.toml", "--gpsd", "localhost:\(nothingListens.port)", "--wait", "0"], environment: environment)
        #expect(gone.stdoutLines.contains { $0.hasPrefix("FAIL  notifications: no notification server answers on ") }, "\(gone.stdout)")
    }
}
