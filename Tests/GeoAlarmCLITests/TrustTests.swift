import Foundation
import GeoAlarmTestSupport
import Testing

/// Hostile input against the commands: each test is one of the defects a hostile-input pass
/// found (a crash, a lost or misplaced reminder, a hang), held fixed.
struct TrustTests {
    static let reminder = "[[reminder]]\ntitle = \"A\"\nlat = 1\nlon = 2\n"

    /// Runs `arguments` as another user (nobody) when we are root, so that file modes apply.
    static func runUnprivileged(_ arguments: [String]) throws -> Command {
        guard getuid() == 0 else { return try Command.run(arguments) }
        // A copy of the binary where nobody may run it (the clone may sit in a private folder).
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-bin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        chmod(folder.path, 0o755)
        let binary = folder.appendingPathComponent("geoalarm").path
        // Copied by cp, not in this process: a child that other tests start meanwhile would
        // inherit our descriptor open for writing, and exec would then fail with ETXTBSY.
        #expect(try Command.run([Command.binary.path, binary], executable: "/bin/cp").status == 0)
        return try Command.run(
            ["--reuid=nobody", "--regid=nogroup", "--clear-groups", binary] + arguments, executable: "/usr/bin/setpriv")
    }

    // MARK: 1. A config no parser aborts on

    @Test func aHalfTypedConfigIsAnErrorWithItsLine() throws {
        let config = try Command.temporaryFile("[\n")
        let run = try Command.run(["check", "-c", config])
        #expect(run.status == 1)
        #expect(run.stderr == "\(config):1:2: expected a key, found the end of the line\n")
    }

    @Test func deeplyNestedKeysAreAnErrorNotAStackOverflow() throws {
        let config = try Command.temporaryFile("a" + String(repeating: ".a", count: 30_000) + " = 1\n")
        let run = try Command.run(["check", "-c", config])
        #expect(run.status == 1)
        #expect(run.stderr.hasSuffix(": key has more than 64 parts\n"))
    }

    @Test func aNULByteIsAnErrorNotTheEndOfTheFile() throws {
        let config = try Command.temporaryFile(Self.reminder + "\u{0}\n" + Self.reminder)
        let run = try Command.run(["check", "-c", config])
        #expect(run.status == 1)
        #expect(run.stderr == "\(config):5:1: NUL byte in the file\n")
    }

    // MARK: 2. A lone surrogate in JSON

    @Test func loneSurrogatesInJSONAreReadNotTrapped() throws {
        let track = try Command.temporaryFile(#"""
            {"class":"TPV","device":"\ud800\u0041","mode":3,"time":"2026-11-21T08:00:00Z","lat":38.7,"lon":-9.1}
            {"class":"TPV","device":"\ud800","mode":3,"time":"2026-11-21T08:00:01Z","lat":38.7,"lon":-9.1}
            """#, named: "track.json")
        let replay = try Command.run(["replay", "-c", "config/demo.toml", track])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("gpsd JSON, 2 fixes"))
        let folder = URL(fileURLWithPath: track).deletingLastPathComponent().path
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"\udbff\u0041"},"geometry":{"type":"Point","coordinates":[1,2]}}]}"#.utf8)
            .write(to: URL(fileURLWithPath: "\(folder)/places.geojson"))
        try Data("[[collection]]\nfile = \"places.geojson\"\n".utf8).write(to: URL(fileURLWithPath: "\(folder)/config.toml"))
        let check = try Command.run(["check", "-c", "\(folder)/config.toml"])
        #expect(check.status == 0, "\(check.stderr)")
    }

    // MARK: 3. Durations and times out of range

    @Test func durationsAreBoundedWhenRead() throws {
        let long = try Command.temporaryFile(Self.reminder + "timeout = \"25d\"\n")
        #expect(try Command.run(["check", "-c", long]).status == 0, "a pop-up may stay 25 days")
        let tooLong = try Command.temporaryFile(Self.reminder + "timeout = \"400d\"\ndwell = 99999999999\n")
        let run = try Command.run(["check", "-c", tooLong])
        #expect(run.status == 1)
        #expect(run.stderrLines == [
            "\(tooLong):6: reminder \"a\" (#1): dwell: 99999999999 s is more than a year (365d)",
            "\(tooLong):5: reminder \"a\" (#1): timeout: \"400d\" is more than a year (365d)",
        ])
    }

    @Test func anEndlessSnoozeIsRefusedAndAStoredOneIsSurvived() throws {
        let config = try Command.temporaryFile(Self.reminder)
        let state = Command.scratchState()
        let refused = try Command.run(["snooze", "a", "99999999999999999999h", "-c", config, "--state", state])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("is more than a year"))
        // A value out of range already in the file (an older version wrote them; a hand edit can).
        #expect(try Command.run(["snooze", "a", "1h", "-c", config, "--state", state]).status == 0)
        let sqlite = try Command.run(
            [state, "UPDATE lifecycle SET snoozed_until = 3.6e23, last_fired = -1e300"], executable: "/usr/bin/sqlite3")
        #expect(sqlite.status == 0, "\(sqlite.stderr)")
        let status = try Command.run(["status", "-c", config, "--state", state])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdoutLines.contains { $0.hasPrefix("a ") && $0.contains("snoozed until an out-of-range time") })
    }

    // MARK: 4 and 5. Edits by the parser's spans, under a lock, through links

    @Test func removeFindsTablesByTheirSpansNotByLines() throws {
        let text = """
            [[ reminder ]]
            id = "first"
            title = "First"
            notes = \"""
            Bring the list:
            [[reminder]]
            id = "not-a-table"
            \"""
            lat = 1
            lon = 2

            [[reminder]]
            id = "second"
            title = "Second"
            lat = 3
            lon = 4

            [[reminder]]	# third
            id = "third"
            title = "Third"
            lat = 5
            lon = 6

            """
        let config = try Command.temporaryFile(text)
        let removed = try Command.run(["remove", "second", "-c", config])
        #expect(removed.status == 0, "\(removed.stderr)")
        let after = try String(contentsOfFile: config, encoding: .utf8)
        #expect(after == text.replacingOccurrences(of: "\n[[reminder]]\nid = \"second\"\ntitle = \"Second\"\nlat = 3\nlon = 4\n", with: ""))
        #expect(try Command.run(["remove", "first", "-c", config]).status == 0)
        #expect(try String(contentsOfFile: config, encoding: .utf8) == "[[reminder]]\t# third\nid = \"third\"\ntitle = \"Third\"\nlat = 5\nlon = 6\n")
    }

    @Test func concurrentAddsAreAllKept() throws {
        let config = try Command.temporaryFile("# mine\n" + Self.reminder)
        let processes = try (0..<40).map { index in
            try Background(["add", "-c", config, "--title", "Errand \(index)", "--at", "1,2"])
        }
        #expect(processes.allSatisfy { $0.exitStatus() == 0 })
        let list = try Command.run(["list", "-c", config, "--state", Command.scratchState()])
        #expect(list.stdoutLines.count == 42, "a header, the first reminder and the 40 added")
        #expect(try String(contentsOfFile: config, encoding: .utf8).hasPrefix("# mine\n" + Self.reminder))
    }

    @Test func editsGoThroughASymlinkAndKeepTheMode() throws {
        let target = try Command.temporaryFile(Self.reminder, named: "real.toml")
        chmod(target, 0o640)
        let link = URL(fileURLWithPath: target).deletingLastPathComponent().appendingPathComponent("config.toml").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try Command.run(["add", "-c", link, "--title", "Via the link", "--at", "1,2"]).status == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try String(contentsOfFile: target, encoding: .utf8).contains("title = \"Via the link\""))
        #expect((try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int) == 0o640)
    }

    // MARK: 7. Bounded input

    @Test func anEndlessStreamIsStoppedAtItsFirstLongLine() throws {
        let zeros = open("/dev/zero", O_RDONLY | O_CLOEXEC)
        defer { close(zeros) }
        let process = try Background(["replay", "-c", "config/demo.toml", "-"], stdin: zeros)
        #expect(process.exitStatus() == 1)
        #expect(process.stderr.contains("<stdin>: line 1 is longer than 1 MB: not a track"))
    }

    @Test func aCollectionMustBeARegularFile() throws {
        let config = try Command.temporaryFile("[[collection]]\nfile = \"/dev/zero\"\nformat = \"csv\"\n")
        let run = try Command.run(["check", "-c", config])
        #expect(run.status == 1)
        #expect(run.stderr.contains("/dev/zero: cannot read: is a character device, not a regular file"))
    }

    // MARK: 8. A new state file opened by many at once

    @Test func manyProcessesOpeningANewStateFileAllSucceed() throws {
        let config = try Command.temporaryFile(Self.reminder)
        var said = ""
        for _ in 0..<6 {
            let state = Command.scratchState()
            let processes = try (0..<16).map { index in
                try Background([index % 2 == 0 ? "complete" : "snooze", "a"] + (index % 2 == 0 ? [] : ["1h"])
                    + ["-c", config, "--state", state])
            }
            #expect(processes.allSatisfy { $0.exitStatus() == 0 })
            said += processes.map(\.stderr).joined()
        }
        #expect(said.isEmpty, "\(said)")
    }

    // MARK: 11. Output hygiene

    @Test func titlesAndFileTextAreShownEscaped() throws {
        let config = try Command.temporaryFile(
            "[[reminder]]\nid = \"x\"\ntitle = \"a\\u001b[2Jb\\u2028c\\u0085d\"\nlat = 1\nlon = 2\n")
        let list = try Command.run(["list", "-c", config, "--state", Command.scratchState()])
        #expect(list.stdoutLines.last?.hasPrefix(#"x   a\u{1B}[2Jb\u{2028}c\u{85}d  "#) == true, "\(list.stdout)")
        let folder = URL(fileURLWithPath: config).deletingLastPathComponent().path
        try Data("name,x\u{1B}[31m,y\n".utf8).write(to: URL(fileURLWithPath: "\(folder)/bad.csv"))
        let collection = try Command.temporaryFile("[[collection]]\nfile = \"\(folder)/bad.csv\"\n")
        let check = try Command.run(["check", "-c", collection])
        #expect(check.stderr.contains(#"the header "name,x\u{1B}[31m,y" needs lat and lon columns"#))
        #expect(!check.stderr.contains("\u{1B}"))
    }

    // MARK: 12. Permissions

    @Test func execHooksInAConfigOthersCanWriteAreRefused() throws {
        let config = try Command.temporaryFile(Self.reminder + "exec = [\"/bin/true\"]\n")
        chmod(config, 0o664)
        let run = try Command.run(["check", "-c", config])
        #expect(run.status == 1)
        #expect(run.stderr == "\(config): refused: it holds exec hooks, and the file \(config) is writable by group or others: run chmod go-w \(config)\n")
        chmod(config, 0o644)
        #expect(try Command.run(["check", "-c", config]).status == 0)
        let folder = URL(fileURLWithPath: config).deletingLastPathComponent().path
        chmod(folder, 0o777)
        #expect(try Command.run(["check", "-c", config]).stderr.contains("its folder \(folder) is writable by group or others"))
    }

    @Test func theStateFileIsMadePrivateAndIsReadableReadOnly() throws {
        let config = try Command.temporaryFile(Self.reminder)
        chmod(URL(fileURLWithPath: config).deletingLastPathComponent().path, 0o755)
        chmod(config, 0o644)
        let state = Command.scratchState()
        #expect(try Command.run(["complete", "a", "-c", config, "--state", state]).status == 0)
        chmod(state, 0o644)
        #expect(try Command.run(["uncomplete", "a", "-c", config, "--state", state]).status == 0)
        #expect((try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? Int) == 0o600)
        #expect(try Command.run(["complete", "a", "-c", config, "--state", state]).status == 0)
        // Readable by others but in a folder they cannot write: status and history read it as it is.
        let folder = URL(fileURLWithPath: state).deletingLastPathComponent().path
        chmod(state, 0o644)
        chmod(folder, 0o755)
        let status = try Self.runUnprivileged(["status", "-c", config, "--state", state])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdoutLines.contains { $0.hasPrefix("a ") && $0.contains("completed 20") })
        let history = try Self.runUnprivileged(["history", "--state", state])
        #expect(history.status == 0, "\(history.stderr)")
    }

    // MARK: Trust, third pass

    /// A state file of an older schema (here 7: no proximities yet) is read by `status` and
    /// `history` as it is; no message tells its owner to move away a file geoalarm can read.
    @Test func anOlderStateFileIsReadAsItIs() throws {
        let state = Command.scratchState()
        #expect(try Command.run(["replay", "-c", "config/demo.toml", "--state", state, "config/demo/walk.nmea"]).status == 0)
        let older = try Command.run(
            [state, """
                CREATE TABLE reminder_state (
                    reminder TEXT PRIMARY KEY NOT NULL, presence TEXT NOT NULL, confirmed_at REAL, fence TEXT NOT NULL,
                    last_fired REAL, completed_at REAL, snoozed_until REAL);
                INSERT INTO reminder_state SELECT reminder, presence, confirmed_at, fence, last_fired, completed_at, snoozed_until
                    FROM side LEFT JOIN lifecycle USING (reminder);
                INSERT OR IGNORE INTO reminder_state SELECT reminder, 'unknown', NULL, '', last_fired, completed_at, snoozed_until
                    FROM lifecycle;
                DROP TABLE side; DROP TABLE lifecycle;
                DROP TABLE proximity; DROP TABLE task_ids; DROP TABLE task_lists; DROP TABLE task_objects;
                DELETE FROM grdb_migrations
                    WHERE identifier LIKE '8:%' OR identifier LIKE '9:%' OR identifier LIKE '10:%' OR identifier LIKE '11:%';
                """],
            executable: "/usr/bin/sqlite3")
        #expect(older.status == 0, "\(older.stderr)")
        let status = try Command.run(["status", "-c", "config/demo.toml", "--state", state])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdoutLines.contains { $0.hasPrefix("ferry ") && $0.contains("inside") }, "\(status.stdout)")
        let history = try Command.run(["history", "--state", state])
        #expect(history.status == 0 && history.stdoutLines.count == 5, "\(history.stdout) \(history.stderr)")
        let check = try Command.run(["check", "-c", "config/demo.toml", "--state", state])
        #expect(check.stdout.contains("schema 7 of 11 (brought up to date when next opened)"), "\(check.stdout)")
        for output in [status.stderr, history.stderr, check.stdout, check.stderr] { #expect(!output.contains("move it")) }
        let schema = try Command.run([state, "SELECT count(*) FROM grdb_migrations;"], executable: "/usr/bin/sqlite3")
        #expect(schema.stdout == "7\n", "the read-only commands left it as it was")
    }
}
