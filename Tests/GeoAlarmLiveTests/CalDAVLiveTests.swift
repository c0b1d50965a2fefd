import Foundation
import GeoAlarmTestSupport
import Testing

/// Task lists kept in step by geoalarm itself over CalDAV: Radicale on loopback over TLS (an
/// authority the test makes, given as cafile) with a password, the `caldav` library as the other
/// device, the demo walk through gpsd, and the pop-up's Done pressed for real (dunst).
@Suite(.serialized)
struct CalDAVLiveTests {
    static let bakery = TaskListLiveTests.bakery, bakeryLon = TaskListLiveTests.bakeryLon
    static let postOffice = TaskListLiveTests.postOffice
    static let ferry = TaskListLiveTests.ferry

    /// A config with the list "Errands" on `server`, its password in a file of its own (0600).
    static func config(_ server: Radicale, poll: String, password: String = "secret") throws -> (config: String, passwordFile: String) {
        let passwordFile = try Command.temporaryFile(password + "\n", named: "password-\(UUID().uuidString)")
        chmod(passwordFile, 0o600)
        let config = try Command.temporaryFile("""
            [defaults]
            radius = "50m"
            hysteresis = "20m"
            max_error = "60m"

            [[tasklist]]
            name = "Errands"
            url = "\(server.tasksURL)"
            username = "\(server.user)"
            password_file = "\(passwordFile)"
            cafile = "\(server.certificates?.authority ?? "")"
            poll = "\(poll)"

            """)
        return (config, passwordFile)
    }

    static func server(_ tasks: [(String, String, (String, String), String)]) throws -> Radicale {
        let server = try Radicale(password: "secret", tls: true)
        _ = try server.client(["make-list"])
        for (uid, title, place, radius) in tasks { _ = try server.client(["add-rfc", uid, title, place.0, place.1, radius]) }
        return server
    }

    /// A desktop whose dunst presses Done on the pop-up for `title`.
    static func desktopPressingDone(on title: String) throws -> DesktopSession {
        let picker = try Command.temporaryScript("#!/bin/sh\ngrep -F '#Done (' | grep -m1 -F '\(title)'\n", named: "pick-\(UUID().uuidString)")
        return try DesktopSession(
            dunstConfig: DesktopTests.dunstrc.replacingOccurrences(of: "[global]\n", with: "[global]\n    dmenu = \(picker)\n"))
    }

    static func walk(_ epochs: Range<Int>, _ name: String) throws -> String {
        try Command.temporaryFile(try LiveAgentTests.walkEpochs(epochs), named: name)
    }

    /// The task fires on the walk; meanwhile another device edited it (after the agent's copy was
    /// taken: the next look is an hour away). Done goes to the server over the copy's ETag, is
    /// refused (412), is made again on the task as the server has it, and both changes stay.
    @Test func doneReachesTheServerAndAnotherDevicesEditSurvives() throws {
        let server = try Self.server([("rfc-bread", "Buy bread", (Self.bakery, Self.bakeryLon), "30")])
        let (config, _) = try Self.config(server, poll: "1h")
        let desktop = try Self.desktopPressingDone(on: "Buy bread")
        let gpsd = try GPSFake()
        defer { gpsd.stop() }
        try gpsd.load(try Self.walk(0..<500, "to-the-bakery.nmea"))
        let agent = try Background(["run", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"],
                                   environment: desktop.environment)
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 1 reminder") }, "the first look: \(agent.stderr)")
        _ = try server.client(["describe", "rfc-bread", "The rye one"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdout.contains("arrive  errands/rfcbread  \"Buy bread\""), "\(agent.stdout)")
        #expect(desktop.waitUntilShown(1), "\(desktop.shown) \(agent.stderr)")
        #expect(try desktop.dunstctl(["context"]).status == 0)
        #expect(agent.waitUntil { $0.stderr.contains("Errands (\(server.tasksURL)): 1 change sent to the server") }, "\(agent.stderr)")
        let object = try server.client(["get", "rfc-bread"]).stdout
        #expect(object.contains("STATUS:COMPLETED") && object.contains("DESCRIPTION:The rye one"), "\(object)")
        #expect(server.requests("PUT", for: "/ana/tasks/rfc-bread.ics") == 2, "refused over the old ETag, then made: \(server.log)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }

    /// Done pressed while the server is away waits in the state file; the agent is killed (-9);
    /// started again with the server still away, it fires from its copy of the list and says once
    /// that the server could not be read; once the server is back the completion arrives, once.
    @Test func doneWhileTheServerIsAwayArrivesOnceAcrossAKill() throws {
        let server = try Self.server([
            ("rfc-bread", "Buy bread", (Self.bakery, Self.bakeryLon), "30"), ("rfc-post", "Post the letters", Self.postOffice, "40"),
        ])
        let (config, _) = try Self.config(server, poll: "10s")
        let state = Command.scratchState()
        let desktop = try Self.desktopPressingDone(on: "Buy bread")
        let gpsd = try GPSFake()
        defer { gpsd.stop() }
        try gpsd.load(try Self.walk(0..<500, "to-the-bakery.nmea"))
        let agent = try Background(["run", "-c", config, "--state", state, "--gpsd", "localhost:\(gpsd.port)"], environment: desktop.environment)
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 2 reminders") }, "\(agent.stderr)")
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(desktop.waitUntilShown(1), "\(desktop.shown) \(agent.stderr)")
        server.stop()
        #expect(try desktop.dunstctl(["context"]).status == 0)
        #expect(agent.waitUntil { $0.stderr.contains("completed errands/rfcbread in task list Errands: goes to the server") }, "\(agent.stderr)")
        #expect(agent.waitUntil { $0.stderr.contains("could not be read") }, "\(agent.stderr)")
        agent.signal(SIGKILL)
        _ = agent.exitStatus()
        // Started again, the server still away: the post office fires from the copy.
        let gpsdAgain = try GPSFake()
        defer { gpsdAgain.stop() }
        try gpsdAgain.load(try Self.walk(500..<900, "to-the-post-office.nmea"))
        let again = try Background(["run", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(gpsdAgain.port)"])
        #expect(again.waitUntil { $0.stderr.contains("could not be read") }, "\(again.stderr)")
        #expect(try gpsdAgain.playThrough(to: again), "\(again.stderr)")
        #expect(again.stdout.contains("arrive  errands/rfcpost  \"Post the letters\""), "\(again.stdout)")
        #expect(!again.stdout.contains("rfcbread"), "completed, even before the server heard: \(again.stdout)")
        try server.start()
        #expect(again.waitUntil { $0.stderr.contains("the server answers again") }, "\(again.stderr)")
        #expect(again.stderr.components(separatedBy: "could not be read").count == 2, "said once: \(again.stderr)")
        #expect(again.stderr.contains("1 change sent to the server"), "\(again.stderr)")
        again.signal(SIGTERM)
        #expect(again.exitStatus() == 0)
        #expect(try server.client(["get", "rfc-bread"]).stdout.contains("STATUS:COMPLETED"))
        // Nothing waits any more: another look sends nothing.
        let list = try Command.run(["list", "-c", config, "--state", state])
        #expect(list.status == 0 && !list.stderr.contains("sent"), "\(list.stderr)")
        #expect(server.requests("PUT", for: "/ana/tasks/rfc-bread.ics") == 1, "the completion arrived once: \(server.log)")
    }

    /// A wrong password is said once; the file fixed while the agent runs takes at its next look:
    /// the list is fetched and its task fires.
    @Test func aPasswordFileFixedWhileRunningTakes() throws {
        let server = try Self.server([("rfc-bread", "Buy bread", (Self.bakery, Self.bakeryLon), "30")])
        let (config, passwordFile) = try Self.config(server, poll: "10s", password: "wrong")
        let gpsd = try GPSFake()
        defer { gpsd.stop() }
        try gpsd.load(try Self.walk(0..<500, "to-the-bakery.nmea"))
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"])
        #expect(agent.waitUntil { $0.stderr.contains("refuses the credentials (401)") }, "\(agent.stderr)")
        #expect(agent.stderr.contains("not fetched from its server yet"), "\(agent.stderr)")
        try "secret\n".write(toFile: passwordFile, atomically: false, encoding: .utf8)
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 1 reminder") }, "\(agent.stderr)")
        #expect(agent.stderr.contains("the server answers again"))
        #expect(agent.stderr.components(separatedBy: "refuses the credentials").count == 2, "said once: \(agent.stderr)")
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdout.contains("arrive  errands/rfcbread  \"Buy bread\""), "\(agent.stdout)")
    }

    /// A `password_command` (a keyring) is run once, its password kept; refused, it is run again
    /// at the next look, so that a password changed in the keyring takes while the agent runs. A
    /// command that fails is said with its exit status and what it printed.
    @Test func aPasswordCommandIsAskedAgainAfterARefusal() throws {
        let server = try Self.server([("rfc-bread", "Buy bread", (Self.bakery, Self.bakeryLon), "30")])
        let (config, passwordFile) = try Self.config(server, poll: "10s", password: "wrong")
        let asked = passwordFile + ".asked"
        let text = try String(contentsOfFile: config, encoding: .utf8)
        try text.replacingOccurrences(
            of: "password_file = \"\(passwordFile)\"", with: "password_command = [\"/bin/sh\", \"-c\", \"echo >> \(asked); cat \(passwordFile)\"]"
        ).write(toFile: config, atomically: true, encoding: .utf8)
        func timesAsked() -> Int { ((try? String(contentsOfFile: asked, encoding: .utf8)) ?? "").count { $0 == "\n" } }
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:1"])
        #expect(agent.waitUntil { $0.stderr.contains("refuses the credentials (401)") }, "\(agent.stderr)")
        let beforeFix = timesAsked()
        try "secret\n".write(toFile: passwordFile, atomically: false, encoding: .utf8)
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 1 reminder") }, "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(beforeFix >= 1 && timesAsked() == beforeFix + 1, "asked \(beforeFix), then \(timesAsked())")
        try text.replacingOccurrences(
            of: "password_file = \"\(passwordFile)\"", with: "password_command = [\"/bin/sh\", \"-c\", \"echo the keyring is locked >&2; exit 1\"]"
        ).write(toFile: config, atomically: true, encoding: .utf8)
        let list = try Command.run(["list", "-c", config, "--state", Command.scratchState()])
        #expect(list.stderr.contains("failed with exit status 1: the keyring is locked"), "\(list.stderr)")
    }

    /// A password command that prints, closes its output and lives on (a keyring helper that
    /// forks a daemon) is stopped at its bound and said so; meanwhile the agent's other list is
    /// read and fires as if nothing were amiss: each list is looked at on its own.
    @Test func aLingeringPasswordCommandHoldsNoOtherListUp() throws {
        let server = try Self.server([("rfc-bread", "Buy bread", (Self.bakery, Self.bakeryLon), "30")])
        let (config, passwordFile) = try Self.config(server, poll: "1h")
        let text = try String(contentsOfFile: config, encoding: .utf8)
        // The same list again, first, under another name and with the lingering command.
        let start = try #require(text.range(of: "[[tasklist]]"))
        let list = String(text[start.lowerBound...])
        let lingering = list.replacingOccurrences(of: "name = \"Errands\"", with: "name = \"Keyring\"").replacingOccurrences(
            of: "password_file = \"\(passwordFile)\"",
            with: "password_command = [\"/bin/sh\", \"-c\", \"cat \(passwordFile); exec >&- 2>&-; sleep 1000\"]")
        try text.replacingOccurrences(of: "[[tasklist]]", with: lingering + "\n[[tasklist]]").write(toFile: config, atomically: true, encoding: .utf8)
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:1"])
        defer {
            agent.signal(SIGKILL)
            _ = agent.exitStatus()
        }
        #expect(agent.waitUntil { $0.stderr.contains("did not end within 30 s and was stopped") }, "\(agent.stderr)")
        let log = agent.stderr
        let read = try #require(log.range(of: "task list Errands (\(server.tasksURL)): 1 reminder"), "\(log)")
        let stopped = try #require(log.range(of: "did not end within 30 s"))
        #expect(read.lowerBound < stopped.lowerBound, "the other list waited for the password command: \(log)")
        // A list never fetched has no copy to serve its reminders, and says so.
        #expect(log.contains("it was never fetched, so none of its tasks fires until the server answers"), "\(log)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }

    /// Another device completes a task and adds one: after the next look the first is silent and
    /// the new one fires.
    @Test func theAgentFollowsTheServerAtEachLook() throws {
        let server = try Self.server([
            ("rfc-bread", "Buy bread", (Self.bakery, Self.bakeryLon), "30"), ("rfc-post", "Post the letters", Self.postOffice, "40"),
        ])
        let (config, _) = try Self.config(server, poll: "10s")
        let gpsd = try GPSFake()
        try gpsd.load(try Self.walk(0..<300, "start.nmea"))
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"])
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 2 reminders") }, "\(agent.stderr)")
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        _ = try server.client(["complete", "rfc-post"])
        _ = try server.client(["add-rfc", "rfc-ferry", "Ferry times", Self.ferry.0, Self.ferry.1, "80"])
        #expect(agent.waitUntil { $0.stderr.components(separatedBy: "reloaded \(config): 2 reminders").count == 3 }, "\(agent.stderr)")
        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(300...), named: "rest.nmea"))
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let events = agent.stdoutLines.map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().prefix(2).joined(separator: " ") }
        #expect(events == ["arrive errands/rfcbread", "arrive errands/rfcferry"], "\(agent.stdout)")
    }

    /// SIGTERM while a server trickles its answer: the agent ends the request and stops, rather
    /// than wait for the request's own bound (a minute).
    @Test func theAgentStopsAtOnceWhileAServerTrickles() throws {
        let server = try Background(
            [Command.root.appendingPathComponent("Tests/Tasks/hostile_dav.py").path, "trickle"], executable: URL(fileURLWithPath: "/usr/bin/python3"))
        defer { server.stop() }
        #expect(server.waitUntil { $0.stdout.hasPrefix("listening ") })
        let port = try #require(Int(server.stdoutLines.first?.dropFirst(10) ?? ""))
        let config = try Command.temporaryFile("[[tasklist]]\nname = \"Errands\"\nurl = \"http://127.0.0.1:\(port)/tasks/\"\n")
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:1"])
        #expect(server.waitUntil { $0.stderr.contains("trickled 2") }, "\(server.stderr) \(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
        #expect(server.waitUntil { $0.stderr.contains("gone after") }, "\(server.stderr)")
        let trickled = server.stderrLines.filter { $0.hasPrefix("trickled ") }.count
        #expect(trickled < 10, "the request ended with the agent, not at its bound: \(trickled) bytes")
        #expect(!agent.stderr.contains("could not be read"), "a look the stop ended says nothing: \(agent.stderr)")
    }

    /// `doctor` names what is wrong with a server's list: the credentials, the authority, an
    /// address that is the server rather than the collection (with the collection found there),
    /// a list moved to another server.
    @Test func doctorSaysWhatIsWrongWithTheServer() throws {
        let server = try Self.server([("rfc-bread", "Buy bread", (Self.bakery, Self.bakeryLon), "30")])
        let (config, passwordFile) = try Self.config(server, poll: "1m")
        let state = Command.scratchState()
        func doctor() throws -> String {
            let run = try Command.run(["doctor", "-c", config, "--state", state, "--headless", "--wait", "0", "--gpsd", "localhost:1"])
            return run.stdoutLines.first { $0.contains("tasklist Errands") } ?? run.stdout
        }
        let good = try doctor()
        #expect(good.hasPrefix("ok") && good.contains("the credentials are accepted") && good.contains("1 reminder "), "\(good)")
        try "wrong\n".write(toFile: passwordFile, atomically: false, encoding: .utf8)
        let refused = try doctor()
        #expect(refused.hasPrefix("FAIL") && refused.contains("401") && refused.contains("its last copy serves 1 reminder"), "\(refused)")
        try "secret\n".write(toFile: passwordFile, atomically: false, encoding: .utf8)
        let text = try String(contentsOfFile: config, encoding: .utf8)
        try text.replacingOccurrences(of: "url = \"\(server.tasksURL)\"", with: "url = \"\(server.url)\"").write(toFile: config, atomically: true, encoding: .utf8)
        let root = try doctor()
        #expect(root.hasPrefix("FAIL") && root.contains("found there: \(server.tasksURL)"), "the collection found there: \(root)")
        #expect(root.contains("there is no copy of it yet"), "a copy of another address is not its: \(root)")
        try text.replacingOccurrences(of: "cafile = ", with: "# cafile = ").write(toFile: config, atomically: true, encoding: .utf8)
        let authority = try doctor()
        #expect(authority.hasPrefix("FAIL") && authority.contains("certificate") && authority.contains("cafile"), "\(authority)")
        // A list moved to another server (over TLS from the same authority), which the
        // credentials do not follow to.
        let (mover, movedURL) = try HostileDAV.start("moved-to:\(server.tasksURL)", certificates: server.certificates)
        defer { mover.stop() }
        try text.replacingOccurrences(of: "url = \"\(server.tasksURL)\"", with: "url = \"\(movedURL)\"")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let moved = try doctor()
        #expect(moved.hasPrefix("FAIL") && moved.contains("redirected to \(server.tasksURL), another server"), "\(moved)")
        #expect(moved.contains("Do: give url the address it is redirected to"), "\(moved)")
    }
}
