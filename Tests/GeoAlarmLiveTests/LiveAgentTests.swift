import Foundation
import GeoAlarmTestSupport
import Testing

/// `geoalarm run` against a real gpsd fed by gpsfake. Serialized: each test plays a track in real time.
@Suite(.serialized)
struct LiveAgentTests {
    static let walk = "config/demo/walk.nmea"

    /// What `geoalarm replay` prints for the demo walk: the live agent must print the same.
    static func replayedEvents(config: String = "config/demo.toml") throws -> [String] {
        let replay = try Command.run(["replay", "-c", config, walk])
        #expect(replay.status == 0)
        return replay.stdoutLines
    }

    /// The walk's epochs from `first` on (the file has a comment line, then three sentences per epoch).
    static func walkEpochs(_ range: PartialRangeFrom<Int>) throws -> String {
        let lines = try String(contentsOf: Command.root.appendingPathComponent(walk), encoding: .utf8)
            .components(separatedBy: "\r\n")
        return lines[(1 + 3 * range.lowerBound)...].joined(separator: "\r\n")
    }

    static func walkEpochs(_ range: Range<Int>) throws -> String {
        let lines = try String(contentsOf: Command.root.appendingPathComponent(walk), encoding: .utf8)
            .components(separatedBy: "\r\n")
        return (lines[1 + 3 * range.lowerBound ..< 1 + 3 * range.upperBound]).joined(separator: "\r\n") + "\r\n"
    }

    @Test func liveEventsMatchReplay() throws {
        let expected = try Self.replayedEvents()
        #expect(expected.count == 5)
        let gpsd = try GPSFake()
        try gpsd.load(Self.walk)
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", "config/demo.toml", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        // Its tasks ran on its own loop: no libdispatch worker of the cooperative kind, whose
        // pool monitor would wake the agent every second, was started (overcommit threads,
        // which serial queues use, are not monitored).
        let tasks = "/proc/\(agent.pid)/task"
        let threads = try FileManager.default.contentsOfDirectory(atPath: tasks).map {
            try String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8)
        }
        #expect(!threads.contains { $0.contains("qos") && !$0.contains("overcommit") }, "\(threads)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines == expected)
        #expect(agent.stderr.contains("connected to gpsd at localhost:\(gpsd.port)"))
        #expect(agent.stderr.contains("no fix since 08:14:13 UTC"), "the walk's 40 s gap is noticed")
        #expect(agent.stderr.contains("fixes are back at 08:14:54 UTC"))
    }

    @Test func jsonLinesLive() throws {
        let gpsd = try GPSFake()
        try gpsd.load(Self.walk, pace: 0.002)
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", "config/demo.toml", "--json", "--gpsd", "127.0.0.1:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGINT)
        #expect(agent.exitStatus() == 0)
        // gpsd prints positions to 9 decimals, the NMEA decoder keeps every bit: compare as values.
        let replay = try Command.run(["replay", "-c", "config/demo.toml", "--json", Self.walk])
        let live = try agent.stdoutLines.map(Self.decoded), replayed = try replay.stdoutLines.map(Self.decoded)
        #expect(live.count == 5 && live.count == replayed.count)
        for (got, want) in zip(live, replayed) {
            #expect(got.keys.sorted() == want.keys.sorted())
            for (key, value) in want {
                if let number = value as? Double {
                    #expect(abs((got[key] as? Double ?? .nan) - number) < 1e-6, "\(key)")
                } else {
                    #expect(got[key] as? String == value as? String, "\(key)")
                }
            }
        }
    }

    static func decoded(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func startedBeforeGpsdItConnectsWhenGpsdComes() throws {
        let gpsd = try GPSFake()
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", "config/demo.toml", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(agent.waitUntil { $0.stderr.contains("unavailable") })
        try gpsd.load(Self.walk, pace: 0.002)
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stderr.contains("connected to gpsd"))
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines == (try Self.replayedEvents()))
        let refused = agent.stderrLines.filter { $0.contains("unavailable: can't connect") }
        #expect(refused.count == 1, "logged once per change of state, not per retry: \(refused)")
    }

    @Test func gpsdKilledMidTrackAndRestartedTheAgentCarriesOn() throws {
        let firstPart = try Command.temporaryFile(try Self.walkEpochs(0..<600), named: "first.nmea")
        // The second gpsd replays from epoch 450: those already seen are refused as old.
        let secondPart = try Command.temporaryFile(try Self.walkEpochs(450...), named: "second.nmea")
        let gpsd = try GPSFake()
        try gpsd.load(firstPart)
        // gpsd only: under auto, the agent would also say which source feeds it at each hand-over.
        let agent = try Background(
            ["run", "--source", "gpsd", "--state", Command.scratchState(), "-c", "config/demo.toml", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        // gpsd again on the same port; the agent finds it on its next retry.
        try gpsd.load(secondPart, pace: 0.002)
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines == (try Self.replayedEvents()))
        #expect(agent.stderr.components(separatedBy: "connected to gpsd").count - 1 == 2)
    }

    /// Started by systemd as a `Type=notify` service, the agent says it is ready once it watches,
    /// keeps the unit's status line true (the receiver's state, a refused reload), and says
    /// when it stops.
    @Test func systemdHearsReadyStatusAndStopping() throws {
        let demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
        let config = try Command.temporaryFile(demo)
        let socket = try NotifySocket()
        let nothingThere = try PortReservation()
        let environment = ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": socket.address]) { $1 }
        let agent = try Background(
            ["run", "--headless", "--source", "gpsd", "--state", Command.scratchState(), "-c", config, "--gpsd", "localhost:\(nothingThere.port)"],
            environment: environment)
        #expect(socket.next() == ["READY=1", "STATUS=connecting to gpsd at localhost:\(nothingThere.port); watching 5 reminders"])
        let unavailable = try #require(socket.next())
        #expect(unavailable.count == 1 && unavailable[0].hasPrefix("STATUS=gpsd at localhost:\(nothingThere.port) unavailable: ")
            && unavailable[0].hasSuffix("; retrying; watching 5 reminders"), "\(unavailable)")

        // The agent reloads on the file's change (and SIGHUP): whatever it passes through on the
        // way, its status comes to say the reload was refused, and then that it is not any more.
        try Data((demo + "\n[[reminder]]\ntitle = \"Broken\"\nlat = 200\nlon = 0\n").utf8).write(to: URL(fileURLWithPath: config), options: .atomic)
        agent.signal(SIGHUP)
        // Each reload begins with RELOADING=1 and its moment on the monotonic clock (as
        // Type=notify-reload wants them), and ends with READY=1.
        let reloading = try #require(socket.next { $0.first == "RELOADING=1" })
        #expect(reloading.count == 2 && reloading[1].wholeMatch(of: /MONOTONIC_USEC=[1-9][0-9]*/) != nil, "\(reloading)")
        #expect(socket.next { $0.contains { $0.hasSuffix("; watching 5 reminders; the last reload failed, the previous config stays in force") } }?
            .first == "READY=1")
        try Data(demo.utf8).write(to: URL(fileURLWithPath: config), options: .atomic)
        #expect(socket.next { $0.last?.hasSuffix("; retrying; watching 5 reminders") == true }?.first == "READY=1")

        agent.signal(SIGTERM)
        #expect(socket.next { $0.contains("STOPPING=1") } == ["STOPPING=1"])
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
    }

    @Test func sighupReloadsAValidConfigAndKeepsTheOldOneWhenBroken() throws {
        let demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
        let config = try Command.temporaryFile(demo)
        let gpsd = try GPSFake()
        try gpsd.load(Self.walk, pace: 0.002)
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", config, "--gpsd", "localhost:\(gpsd.port)"])
        #expect(agent.waitUntil { $0.stderr.contains("connected to gpsd") })

        try Data((demo + "\n[[reminder]]\ntitle = \"Broken\"\nlat = 200\nlon = 0\n").utf8).write(to: URL(fileURLWithPath: config))
        agent.signal(SIGHUP)
        // The reason comes on the line after the refusal: wait for it, not only for the refusal.
        #expect(agent.waitUntil { $0.stderr.contains("failed; the previous config stays in force") })
        #expect(agent.waitUntil { $0.stderr.contains("\(config):49: reminder \"broken\" (#6): lat: 200 is out of range (-90 to 90)") })

        // Without the ferry reminder: it must not fire; the others keep their state and still fire.
        let withoutFerry = demo.components(separatedBy: "[[reminder]]\nid = \"ferry\"")[0]
        try Data(withoutFerry.utf8).write(to: URL(fileURLWithPath: config))
        agent.signal(SIGHUP)
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 4 reminders") })

        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines == (try Self.replayedEvents()).filter { !$0.contains("ferry") })
    }

    @Test func hooksFromTheHooksDirectoryAndTheReminderRunForEveryEvent() throws {
        let xdg = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-xdg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: "\(xdg)/geoalarm/hooks", withIntermediateDirectories: true)
        let record = "\(xdg)/events.txt"
        let hook = "\(xdg)/geoalarm/hooks/record"
        try Command.writeScript("#!/bin/sh\necho \"$GEOALARM_EVENT $GEOALARM_REMINDER $GEOALARM_TIME\" >> \(record)\n", to: hook)
        let demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
        let config = try Command.temporaryFile(demo.replacingOccurrences(
            of: "id = \"bread\"\n", with: "id = \"bread\"\nexec = [\"/bin/sh\", \"-c\", \"echo bread-own-hook >> \(record)\"]\n"))
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = xdg
        let gpsd = try GPSFake()
        try gpsd.load(Self.walk, pace: 0.002)
        let agent = try Background(
            ["run", "--state", Command.scratchState(), "-c", config, "--headless", "--gpsd", "localhost:\(gpsd.port)"], environment: environment)
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        // Five events, one with two hooks: each appends a whole line.
        let recorded = EventWait.forFile(record) { $0.split(separator: "\n").count >= 6 && $0.hasSuffix("\n") }
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let lines = (recorded ?? "").split(separator: "\n").map(String.init)
        #expect(lines.sorted() == [
            "arrive bread 2026-11-21T08:06:39Z", "arrive ferry 2026-11-21T08:20:19Z", "arrive parcel 2026-11-21T08:13:07Z",
            "bread-own-hook", "leave parcel 2026-11-21T08:19:38Z", "leave water-the-plants-before-you-go 2026-11-21T08:01:55Z",
        ])
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalStopsTheAgentCleanlyEvenWhileItWaitsForGpsd(signal: Int32) throws {
        let nothingListens = try GPSFake()
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", "config/demo.toml", "--gpsd", "localhost:\(nothingListens.port)"])
        #expect(agent.waitUntil { $0.stderr.contains("unavailable") })
        agent.signal(signal)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stderr.contains("stopped"))
    }

    /// Binary receiver protocols decoded by gpsd reach the engine: the first position becomes an
    /// announced start state (`announce_initial`).
    @Test(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"),
          arguments: ["ublox-neo-m8t.log"])
    func binaryReceiverLogsGoThroughGpsd(log: String) throws {
        let root = try #require(TestData.root)
        let check = try String(contentsOf: root.appendingPathComponent("gpsd/\(log).chk"), encoding: .utf8)
        let firstFix = try #require(check.split(whereSeparator: \.isNewline).lazy.compactMap { line -> (Double, Double)? in
            guard line.contains("\"class\":\"TPV\""),
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  (object["mode"] as? Int ?? 0) >= 2, let lat = object["lat"] as? Double, let lon = object["lon"] as? Double
            else { return nil }
            return (lat, lon)
        }.first)
        let config = try Command.temporaryFile("""
            [defaults]
            announce_initial = true
            max_error = "10km"
            confirmations = 1
            [[reminder]]
            id = "here"
            title = "Where the receiver was"
            lat = \(firstFix.0)
            lon = \(firstFix.1)
            radius = "2km"
            """)
        let gpsd = try GPSFake()
        try gpsd.load(root.appendingPathComponent("gpsd/\(log)").path, pace: 0.002)
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", config, "--json", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playWhenWatched(), "\(agent.stderr)")
        #expect(agent.waitUntil { !$0.stdoutLines.isEmpty })
        gpsd.stop()
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let line = try #require(agent.stdoutLines.first)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(event["event"] as? String == "arrive")
        #expect(event["reminder"] as? String == "here")
        #expect(event["initial"] as? Bool == true)
        #expect((event["distance_m"] as? Double ?? .infinity) <= 2000)
    }

    /// gpsd 3.22 dates this SiRF II capture of 2021 in 2041 (its guess at a GPS week rollover):
    /// those fixes are more than a day ahead of the clock, so they are ignored, and the log says why.
    @Test(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"))
    func fixesFromTheFutureAreIgnoredAndSaidSo() throws {
        let root = try #require(TestData.root)
        let config = try Command.temporaryFile("""
            [defaults]
            announce_initial = true
            confirmations = 1
            [[reminder]]
            title = "Everywhere"
            lat = 37.2938
            lon = -121.9187
            radius = "20000km"
            """)
        let gpsd = try GPSFake()
        try gpsd.load(root.appendingPathComponent("gpsd/sirf2.log").path, pace: 0.002)
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", config, "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stderr.contains("more than a day ahead of this system's clock"))
        #expect(agent.stderr.contains("fixes stamped 2041-"))
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.isEmpty)
    }
}

/// One loop owns every descriptor: an agent is one thread, however many parts it has; pop-ups
/// add GLib's threads, and GeoClue its own once it is wanted (`auto` on gpsd's fixes starts none).
@Suite(.serialized)
struct ThreadTests {
    /// The main thread's name: the program's, cut to the 15 bytes Linux keeps.
    static let mainThread = String(decoding: Command.binary.lastPathComponent.utf8.prefix(15), as: UTF8.self)

    /// The names of `pid`'s threads, the main thread's (its id is the pid) first.
    static func threads(of pid: pid_t) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        // Not by id: ids sorted as text put 100002 before 99998, and after the pids wrap a thread's
        // id can be smaller than its process's.
        let others = tasks.compactMap { pid_t($0) }.filter { $0 != pid }.sorted()
        return ([pid] + others).compactMap { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// Connected to gpsd, watching its config and state file, with a hook run for every event.
    @Test func aHeadlessAgentIsOneThread() throws {
        let hooks = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-xdg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: hooks.appendingPathComponent("geoalarm/hooks"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let hook = hooks.appendingPathComponent("geoalarm/hooks/note").path
        try Command.writeScript("#!/bin/sh\necho \"$GEOALARM_EVENT\" >> \(hook).out\n", to: hook)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = hooks.path
        let gpsd = try GPSFake()
        defer { gpsd.stop() }
        try gpsd.load(LiveAgentTests.walk, pace: 0.02)
        let agent = try Background(
            ["run", "--headless", "--state", Command.scratchState(), "-c", "config/demo.toml", "--gpsd", "localhost:\(gpsd.port)"],
            environment: environment)
        #expect(try gpsd.playWhenWatched(), "\(agent.stderr)")
        // Connected (the connecting thread is joined before the agent hears of it) and mid-walk.
        #expect(agent.waitUntil { !$0.stdoutLines.isEmpty }, "\(agent.stderr)")
        #expect(Self.threads(of: agent.pid) == [Self.mainThread], "\(agent.stderr)")
        // With no task list on a server, libcurl is never loaded (nor what it brings: TLS,
        // Kerberos, LDAP, SSH): it is loaded at a server list's first request (CalDAVLiveTests);
        // with no [mqtt], neither libmosquitto nor OpenSSL (MQTTTests load them); with no
        // OwnTracks secret, no libsodium.
        // Read to its end (a /proc file says it is empty, which a reader by size believes).
        let maps = String(decoding: try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(agent.pid)/maps")).readToEnd() ?? Data(), as: UTF8.self)
        #expect(maps.contains("libc.so") && !maps.contains("libcurl"), "\(maps)")
        #expect(!maps.contains("libmosquitto") && !maps.contains("libssl") && !maps.contains("libcrypto"), "\(maps)")
        #expect(!maps.contains("libsodium"), "\(maps)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }
}

/// A stop request (SIGTERM) ends the agent cleanly whatever it is waiting on. How fast it
/// ends is a figure of `make bench` (LiveLatency), not an assertion here.
@Suite(.serialized)
struct StopTests {
    @Test func whileGpsdIsAwayAndTheAgentBacksOff() throws {
        let nothingListens = try GPSFake()
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", "config/demo.toml", "--headless", "--gpsd", "localhost:\(nothingListens.port)"])
        #expect(agent.waitUntil { $0.stderr.contains("unavailable") })
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stderr.hasSuffix("stopped\n"), "\(agent.stderr)")
    }

    @Test func whileConnectedBetweenReportsWithATimerSet() throws {
        let config = try Command.temporaryFile(
            try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
                + "\n[[reminder]]\nid = \"later\"\ntitle = \"Later\"\nat = \"2099-01-01T09:00\"\n")
        let gpsd = try GPSFake()
        try gpsd.load("config/demo/walk.nmea", pace: 0.2)
        let agent = try Background(["run", "--state", Command.scratchState(), "-c", config, "--headless", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playWhenWatched())
        #expect(agent.waitUntil { $0.stderr.contains("connected to gpsd") })
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stderr.hasSuffix("stopped\n"), "\(agent.stderr)")
        gpsd.stop()
    }
}
