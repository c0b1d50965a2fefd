import Foundation
import GeoAlarmTestSupport
import Testing

/// Options that mean the same on every command.
struct OptionTests {
    static let commands = [
        "run", "check", "doctor", "replay", "list", "status", "history", "add", "remove", "complete", "uncomplete", "snooze", "map",
    ]

    @Test(arguments: commands)
    func everyCommandTakesConfigAndState(_ command: String) throws {
        let help = try Command.run([command, "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("-c, --config <file>"), "\(command) --help")
        #expect(help.stdout.contains("--state <path>"), "\(command) --help")
    }

    /// An empty --config or --state (a shell variable that was never set) is refused as such,
    /// rather than as a file named "" that does not exist.
    @Test(arguments: commands)
    func anEmptyPathIsRefusedByItsOption(_ command: String) throws {
        let required = ["replay": ["walk.nmea"], "add": ["--title", "Bread"]][command] ?? []
        for option in ["--config", "--state"] {
            let run = try Command.run([command, option, ""] + required)
            #expect(run.status == 64, "\(command) \(option) \"\"")
            #expect(run.stderr.hasPrefix("Error: \(option): an empty path names no file."), "\(command): \(run.stderr)")
        }
    }

    @Test func everyCommandIsListedHere() throws {
        let help = try Command.run(["--help"])
        // A command's line is indented by two spaces; its wrapped description by many more.
        let listed = help.stdout.components(separatedBy: "SUBCOMMANDS:")[1].split(separator: "\n")
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
            .filter { $0 != "See" }
        #expect(Set(listed) == Set(Self.commands), "a new command must take --config and --state too")
    }

    @Test func checkWithStateChecksTheStateFileToo() throws {
        let state = Command.scratchState()
        #expect(try Command.run(["replay", "-c", "config/demo.toml", "--state", state, "config/demo/walk.nmea"]).status == 0)
        let good = try Command.run(["check", "-c", "config/demo.toml", "--state", state])
        #expect(good.status == 0)
        #expect(good.stdoutLines.last == "ok    state: \(state): mode 600, writable, schema 11 of 11")
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: state)
        let open = try Command.run(["check", "-c", "config/demo.toml", "--state", state])
        #expect(open.status == 1)
        #expect(open.stdoutLines.last?.hasPrefix("FAIL  state: \(state) (mode 640") == true)
    }

    @Test(arguments: ["localhost:0", "host:70000", "host:port", "[::1]x", ""])
    func aBadGPSDEndpointIsRefusedBeforeAnythingRuns(_ endpoint: String) throws {
        for command in [["run"], ["doctor"], ["add", "--title", "x", "--here"]] {
            let result = try Command.run(command + ["-c", "config/demo.toml", "--gpsd", endpoint])
            #expect(result.status == 64, "\(command) --gpsd \(endpoint)")
            #expect(result.stderr.contains("--gpsd"))
        }
    }

    /// South of the equator and west of Greenwich a point begins with a minus sign, and a title
    /// or note may too: each is its option's value, written as a user types it (no `=`).
    @Test func valuesThatBeginWithAMinusSignAreTheirOptionsValues() throws {
        let config = try Command.temporaryFile("", named: "south.toml")
        let added = try Command.run(["add", "-c", config, "--title", "-20% at the bakery", "--at", "-33.9249,18.4241",
                                     "--notes", "-- bring the card", "--radius", "80m"])
        #expect(added.status == 0, "\(added.stderr)")
        let written = try String(contentsOfFile: config, encoding: .utf8)
        #expect(written.contains("title = \"-20% at the bakery\"\nnotes = \"-- bring the card\"\nlocation = \"-33.9249,18.4241\""),
                "\(written)")
        let listed = try Command.run(["list", "-c", config, "--state", Command.scratchState(), "--from", "-33.9249,-18.4241"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdoutLines.last?.hasSuffix(" 3381.1 km") == true, "\(listed.stdout)")
    }

    /// The argument parser reads "-1h" as -1 -h and prints the help with status 0: a script
    /// would take the snooze for done. A dash and a digit where a value was meant is refused,
    /// naming it; the same word as an option's value is that value, and -h in its own words is
    /// still the help.
    @Test func aNegativeDurationIsRefusedNotReadAsTheHelp() throws {
        let config = try Command.temporaryFile(LifecycleCommandTests.commented)
        let state = Command.scratchState()
        for word in ["-1h", "-1h30m"] {
            let snoozed = try Command.run(["snooze", "bread", word, "-c", config, "--state", state])
            #expect(snoozed.status == 64 && snoozed.stdout.isEmpty, "\(word): \(snoozed.status) \(snoozed.stdout)")
            #expect(snoozed.stderr.hasPrefix("geoalarm: error: \(word) would be read as the options -1 -h"), "\(snoozed.stderr)")
        }
        // Without -h among them, the parser would say the duration is missing: the word is named instead.
        let missing = try Command.run(["snooze", "bread", "-30m", "-c", config, "--state", state])
        #expect(missing.status == 64 && missing.stderr.hasPrefix(
            "geoalarm: error: -30m would be read as the options -3 -0 -m: a duration is never negative"), "\(missing.stderr)")
        // A line wrong for another reason keeps the parser's own message.
        let other = try Command.run(["snooze", "-30m", "-c", config])
        #expect(other.status == 64 && other.stderr.hasPrefix("Error: Missing expected argument"), "\(other.stderr)")
        let asked = try Command.run(["snooze", "bread", "-1h", "-c", config, "--help"])
        #expect(asked.status == 0 && asked.stdout.hasPrefix("OVERVIEW: Silence a reminder"), "\(asked.stderr)")
        let titled = try Command.run(["add", "-c", config, "--title", "-20h sale", "--at", "38.7,-9.1"])
        #expect(titled.status == 0 && titled.stdout == "added 20h-sale to \(config)\n", "\(titled.stdout) \(titled.stderr)")
    }

    @Test func gpsdAndDeviceBelongToHere() throws {
        let result = try Command.run(["add", "-c", "config/demo.toml", "--title", "x", "--at", "1,2", "--gpsd", "localhost:2000"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("give them with --here"))
    }

    /// `map --listen`: an IPv4 loopback address written as IPv6 is loopback (no warning); every
    /// address is warned about, and the address to open is the machine's own loopback one.
    @Test func theMapWarnsOnlyAboutAddressesBeyondLoopback() throws {
        for (listen, warned, opens) in [("[::ffff:127.0.0.1]:0", false, "http://[::ffff:127.0.0.1]:"), ("0.0.0.0:0", true, "http://127.0.0.1:")] {
            let map = try Background(["map", "-c", "config/demo.toml", "--state", Command.scratchState(), "--listen", listen])
            #expect(map.waitUntil { $0.stdoutLines.contains { $0.hasPrefix("geoalarm map: open ") } }, "\(listen): \(map.stderr)")
            map.signal(SIGTERM)
            #expect(map.exitStatus() == 0)
            #expect(map.stderr.contains("warning: listening on") == warned, "\(listen): \(map.stderr)")
            #expect(map.stdout.contains("geoalarm map: open \(opens)"), "\(listen): \(map.stdout)")
        }
    }
}
