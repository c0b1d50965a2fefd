import Foundation
import GeoAlarmSystem
import GeoAlarmTestSupport
import Testing

/// Pop-ups on a real notification server: dunst under Xvfb in a dbus-run-session, events from gpsfake.
@Suite(.serialized)
struct DesktopTests {
    /// dunst's per-urgency timeouts tell the urgency apart in its history (which has no urgency field).
    static let dunstrc = """
        [global]
            font = Monospace 10
        [urgency_low]
            timeout = 11
        [urgency_normal]
            timeout = 12
        [urgency_critical]
            timeout = 0
        """

    /// The demo config with the bread reminder low and the parcel reminder critical.
    static func config() throws -> String {
        var demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
        demo = demo.replacingOccurrences(of: "radius = \"30m\"\n\n", with: "radius = \"30m\"\nurgency = \"low\"\n\n")
        demo = demo.replacingOccurrences(of: "when = \"both\"\n", with: "when = \"both\"\nurgency = \"critical\"\n")
        return try Command.temporaryFile(demo)
    }

    /// Plays the walk into a new gpsd with the agent on `environment`; once the agent has read
    /// all of it, `after` (waiting for what the test needs), then the agent stops; returns it.
    static func walk(config: String, environment: [String: String], arguments: [String] = [],
                     during: ((Background) -> Void)? = nil, after: (() -> Void)? = nil) throws -> Background {
        let gpsd = try GPSFake()
        try gpsd.load("config/demo/walk.nmea")
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", config, "--gpsd", "localhost:\(gpsd.port)"] + arguments, environment: environment)
        #expect(try gpsd.playWhenWatched(), "\(agent.stderr)")
        during?(agent)
        gpsd.waitForEnd()
        #expect(agent.waitUntil { $0.stderr.contains("unavailable: connection lost") }, "\(agent.stderr)")
        after?()
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        return agent
    }

    @Test func everyEventPopsUpWithItsSummaryBodyUrgencyAndAppName() throws {
        let desktop = try DesktopSession(dunstConfig: Self.dunstrc)
        let agent = try Self.walk(config: try Self.config(), environment: desktop.environment, after: {
            #expect(desktop.waitUntilShown(5), "\(desktop.shown)")
        })
        #expect(agent.stdoutLines.count == 5, "every event is still logged")
        #expect(agent.stderr.contains("showing pop-ups through dunst"))
        let shown = try desktop.closedNotifications()
        let bySummary = Dictionary(shown.map { ($0["summary"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        #expect(Set(bySummary.keys) == [
            "Left: Water the plants before you go", "Arrived: Buy bread", "Arrived: Pick up the parcel",
            "Left: Pick up the parcel", "Arrived: Check the ferry times",
        ])
        #expect(shown.allSatisfy { $0["appname"] as? String == "geoalarm" })
        // Each names geoalarm's desktop entry, which GNOME lists under Settings, Notifications.
        let hints = desktop.busLog.components(separatedBy: "string \"desktop-entry\"")
        #expect(hints.count == 6 && hints.dropFirst().allSatisfy { $0.contains("string \"\(DesktopEntry.id)\"") }, "\(desktop.busLog)")
        let bread = try #require(bySummary["Arrived: Buy bread"])
        #expect(bread["body"] as? String == "Two loaves, one with seeds\nAt bakery, 28 m from its centre")
        #expect(bread["category"] as? String == "x-geoalarm.arrive")
        #expect(bread["timeout"] as? Int == 11_000_000, "low urgency")
        let left = try #require(bySummary["Left: Pick up the parcel"])
        #expect(left["body"] as? String == "Ask at the counter; the slip is in the green folder\nLeft post_office, now 73 m from its centre")
        #expect(left["category"] as? String == "x-geoalarm.leave")
        #expect(left["timeout"] as? Int == 0, "critical: never expires")
        let ferry = try #require(bySummary["Arrived: Check the ferry times"])
        #expect(ferry["body"] as? String == "At 38.706200,-9.135600, 77 m from its centre")
        #expect(ferry["timeout"] as? Int == 12_000_000, "normal urgency")
    }

    @Test func completingAReminderTakesItsPopUpOffTheScreen() throws {
        let desktop = try DesktopSession(dunstConfig: Self.dunstrc)
        let demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
        let config = try Command.temporaryFile(demo.replacingOccurrences(of: "radius = \"30m\"\n\n", with: "radius = \"30m\"\nurgency = \"critical\"\n\n"))
        let state = Command.scratchState()
        let gpsd = try GPSFake()
        // The walk up to the bakery and a little beyond.
        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<500), named: "to-the-bakery.nmea"))
        // gpsd only: under auto, GeoClue would take over (its own thread) once the walk's gpsd is gone.
        let agent = try Background(["run", "--source", "gpsd", "-c", config, "--state", state, "--gpsd", "localhost:\(gpsd.port)"],
                                   environment: desktop.environment)
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdout.contains("arrive  bread"))
        #expect(desktop.waitUntilShown(2), "\(desktop.shown)")
        #expect(desktop.shown.last == "Arrived: Buy bread")
        // Pop-ups add GLib's threads (its loop, GDBus's worker) to the agent's one loop, nothing else.
        let threads = ThreadTests.threads(of: agent.pid)
        #expect(threads.first == ThreadTests.mainThread && threads.contains("notifications"), "\(threads)")
        #expect(Set(threads).isSubset(of: [ThreadTests.mainThread, "notifications", "gdbus", "gmain"]), "\(threads)")
        func breadInHistory() -> Bool {
            let history = (try? desktop.dunstctl(["history"]).stdout) ?? ""
            return history.contains("Arrived: Buy bread")
        }
        #expect(!breadInHistory(), "a critical pop-up stays on screen")
        #expect(try Command.run(["complete", "bread", "-c", config, "--state", state]).status == 0)
        #expect(desktop.waitForSignals(until: breadInHistory), "closed once completed")
        gpsd.stop()
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }

    /// The pop-up's buttons, pressed for real: dunst's context menu (`dunstctl context`) runs its
    /// `dmenu` setting, here a script that picks the button. The press goes straight to the agent
    /// (not through the state file): it writes the state file (what `geoalarm status` reads),
    /// closes a completed reminder's pop-up, and Home Assistant's sensor shows the new lifecycle.
    /// The snooze lasts an hour, or as long as `[output] snooze` says (and its button says so).
    @Test(arguments: ["Done", "Snooze 1 h", "Snooze 20 min"])
    func pressingAPopUpButtonActsOnTheReminder(button: String) throws {
        // dunst lists each action of the pop-ups on screen as "#LABEL (SUMMARY) [ID,KEY]" and runs
        // the one picked: here the bakery pop-up's.
        let picker = try Command.temporaryScript(
            "#!/bin/sh\ngrep -F '#\(button) (' | grep -m1 -F 'Buy bread'\n", named: "pick-\(UUID().uuidString)")
        let desktop = try DesktopSession(
            dunstConfig: Self.dunstrc.replacingOccurrences(of: "[global]\n", with: "[global]\n    dmenu = \(picker)\n"))
        let broker = try Mosquitto()
        let demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
        // Critical: the pop-up stays on screen until it is acted on.
        let config = try Command.temporaryFile(
            demo.replacingOccurrences(of: "radius = \"30m\"\n\n", with: "radius = \"30m\"\nurgency = \"critical\"\n\n")
                + "\n[mqtt]\nurl = \"\(broker.url)\"\nclient_id = \"desktop-test\"\nhomeassistant = true\n"
                + (button == "Snooze 20 min" ? "\n[output]\nsnooze = \"20m\"\n" : ""))
        let state = Command.scratchState()
        let sensor = "geoalarm/desktop-test/reminder/bread/attributes"
        let homeAssistant = try broker.subscribe([sensor])
        let gpsd = try GPSFake()
        defer { gpsd.stop() }
        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<500), named: "to-the-bakery.nmea"))
        let agent = try Background(["run", "-c", config, "--state", state, "--gpsd", "localhost:\(gpsd.port)"], environment: desktop.environment)
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(desktop.waitUntilShown(2), "\(desktop.shown)")
        #expect(desktop.shown.last == "Arrived: Buy bread")

        let pressed = Date()
        #expect(try desktop.dunstctl(["context"]).status == 0)
        func lifecycle() -> [String: Any]? { MQTTLines(homeAssistant.stdout).objects(on: sensor).last }
        let done = button == "Done"
        #expect(homeAssistant.waitUntil { _ in
            done ? lifecycle()?["completed"] as? Bool == true : lifecycle()?["snoozed_until"] is String
        }, "\(homeAssistant.stdout)\n\(agent.stderr)")
        #expect(agent.stderr.contains("\"\(button)\" pressed for reminder bread"))
        let status = try Command.run(["status", "--json", "-c", config, "--state", state])
        let bread = try #require(status.stdoutLines.compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }.first { $0["id"] as? String == "bread" })
        if done {
            #expect(bread["completed"] as? Bool == true)
            #expect(desktop.waitForSignals { (try? desktop.dunstctl(["history"]).stdout.contains("Arrived: Buy bread")) == true },
                    "its pop-up closed once completed")
        } else {
            #expect(bread["completed"] as? Bool == false)
            let until = try #require((bread["snoozed_until"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
            let length: Double = button == "Snooze 1 h" ? 3600 : 1200
            #expect(until >= pressed.addingTimeInterval(length - 1) && until <= Date().addingTimeInterval(length + 1),
                    "\(until) is \(length) s after the press")
        }
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }

    @Test func theServerDyingMidRunLosesNoEvent() throws {
        let desktop = try DesktopSession(dunstConfig: Self.dunstrc)
        let agent = try Self.walk(config: "config/demo.toml", environment: desktop.environment) { agent in
            #expect(agent.waitUntil { $0.stdoutLines.count >= 1 })
            desktop.killDunst()
        }
        #expect(agent.stdoutLines == (try Command.run(["replay", "-c", "config/demo.toml", "config/demo/walk.nmea"])).stdoutLines)
        #expect(!agent.stderr.contains("Fatal"))
    }

    @Test func withoutASessionBusItWarnsOnceAndKeepsLogging() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
        environment.removeValue(forKey: "DISPLAY")
        let agent = try Self.walk(config: "config/demo.toml", environment: environment)
        #expect(agent.stdoutLines.count == 5)
        let warnings = agent.stderrLines.filter { $0.contains("no notification server on the session bus") }
        #expect(warnings.count == 1, "\(agent.stderr)")
        #expect(warnings.first?.hasSuffix("continuing headless") == true)
    }

    /// Headless on gpsd, the agent neither opens the session bus nor loads libnotify or
    /// libgeoclue-2, nor so GLib: none of them is in its memory while it runs.
    @Test func headlessNeverTouchesTheBus() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
        var mapped: Set<String> = []
        let agent = try Self.walk(config: "config/demo.toml", environment: environment, arguments: ["--headless"]) { agent in
            #expect(agent.waitUntil { $0.stdoutLines.count >= 1 }, "\(agent.stderr)")
            mapped = (try? Self.librariesMapped(by: agent.pid)) ?? []
        }
        #expect(agent.stdoutLines.count == 5)
        #expect(agent.stderr.contains("headless: events are logged, no pop-ups"))
        #expect(!agent.stderr.contains("notification server"))
        #expect(mapped.contains { $0.hasPrefix("libgps.so") }, "read while it ran: \(mapped)")
        let unwanted = ["libnotify.so", "libgeoclue-2.so", "libglib-2.0.so", "libgobject-2.0.so", "libgio-2.0.so"]
        #expect(mapped.filter { library in unwanted.contains { library.hasPrefix($0) } }.isEmpty, "\(mapped)")
    }

    /// Where libnotify cannot be had (here a library of its name that lacks its functions, found
    /// first through LD_LIBRARY_PATH, as libnotify is loaded when pop-ups start), the agent says
    /// why once and goes on headless, every event logged.
    @Test func withoutLibnotifyItSaysWhyOnceAndKeepsLogging() throws {
        let missing = try MissingLibrary("libnotify.so.4")
        defer { missing.remove() }
        let desktop = try DesktopSession(dunstConfig: Self.dunstrc)
        let agent = try Self.walk(
            config: "config/demo.toml", environment: desktop.environment.merging(["LD_LIBRARY_PATH": missing.folder]) { $1 })
        #expect(agent.stdoutLines.count == 5, "\(agent.stderr)")
        let said = agent.stderrLines.filter { $0.contains("no pop-ups: libnotify.so.4 lacks notify_is_initted; continuing headless") }
        #expect(said.count == 1, "\(agent.stderr)")
        #expect(desktop.shown.isEmpty, "\(desktop.shown)")
    }

    /// The file names of the shared libraries process `pid` has mapped (`/proc/PID/maps`, read to
    /// its end: a file of /proc says no size).
    static func librariesMapped(by pid: pid_t) throws -> Set<String> {
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? file.close() }
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        return Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).last.flatMap { path in
                path.hasPrefix("/") && path.contains(".so") ? String(path.split(separator: "/").last ?? "") : nil
            }
        })
    }
}
