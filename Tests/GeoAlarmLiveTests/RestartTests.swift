import Foundation
import GeoAlarmTestSupport
import Testing

/// The state store across restarts of `geoalarm run`, with a real gpsd and a real SQLite file.
@Suite(.serialized)
struct RestartTests {
    /// Plays `epochs` of the demo walk into a new gpsd, with an agent on `state`; its event lines once done.
    static func run(config: String, state: String, epochs: Range<Int>) throws -> Background {
        let part = try Command.temporaryFile(try LiveAgentTests.walkEpochs(epochs), named: "part.nmea")
        let gpsd = try GPSFake()
        try gpsd.load(part, pace: 0.002)
        let agent = try Background(["run", "-c", config, "--state", state, "--headless", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        return agent
    }

    static func demo(_ edit: (String) -> String = { $0 }) throws -> String {
        try Command.temporaryFile(edit(try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)))
    }

    @Test func restartingWhileInsideFiresNothing() throws {
        // announce_initial would announce the start state of an agent that forgot where it was.
        let config = try Self.demo { $0.replacingOccurrences(of: "[defaults]\n", with: "[defaults]\nannounce_initial = true\n") }
        let state = Command.scratchState()
        let first = try Self.run(config: config, state: state, epochs: 0..<900)
        #expect(first.stdoutLines.contains { $0.contains("arrive  parcel") })
        let second = try Self.run(config: config, state: state, epochs: 850..<1000)
        #expect(second.stdoutLines == [], "still inside the post office: nothing to say")
        #expect(second.stderr.contains("restored the state of 5 reminders from \(state)"))
    }

    @Test func aDepartureWhileStoppedFiresOnTheFirstConfirmedFixesAfterStart() throws {
        let config = try Self.demo()
        let state = Command.scratchState()
        _ = try Self.run(config: config, state: state, epochs: 0..<900)
        let second = try Self.run(config: config, state: state, epochs: 1190..<1308)
        // The walk left the post office (08:19:38) while the agent was stopped: the departure is
        // announced on the first confirmed fixes of the new run (from 08:19:50, the first the
        // agent can see once connected), stamped with that fix's time.
        #expect(second.stdoutLines.count == 2)
        let leave = try #require(second.stdoutLines.first)
        #expect(leave.hasPrefix("2026-11-21T08:19:5") && leave.contains("  leave  parcel  \"Pick up the parcel\"  "), "\(leave)")
        #expect(second.stdoutLines.last == "2026-11-21T08:20:19Z  arrive  ferry  \"Check the ferry times\"  77 m")
        let history = try Command.run(["history", "--state", state])
        #expect(history.stdoutLines.count == 5, "\(history.stdout)\(history.stderr)")
    }

    @Test func editingAPlaceOrRadiusResetsOnlyThatReminder() throws {
        let state = Command.scratchState()
        _ = try Self.run(config: try Self.demo(), state: state, epochs: 0..<900)
        let edited = try Self.demo {
            $0.replacingOccurrences(of: "place = \"post_office\"\nwhen = \"both\"", with: "place = \"post_office\"\nwhen = \"both\"\nradius = \"60m\"")
        }
        let second = try Self.run(config: edited, state: state, epochs: 1190..<1308)
        #expect(second.stdoutLines == ["2026-11-21T08:20:19Z  arrive  ferry  \"Check the ferry times\"  77 m"],
                "the parcel reminder starts over (silently outside); the ferry kept its state")
        #expect(second.stderr.contains("restored the state of 4 reminders"))
    }

    @Test func aCompletedReminderStaysCompletedAcrossRestarts() throws {
        let config = try Self.demo()
        let state = Command.scratchState()
        _ = try Self.run(config: config, state: state, epochs: 0..<700)
        #expect(try Command.run(["complete", "parcel", "-c", config, "--state", state]).status == 0)
        let second = try Self.run(config: config, state: state, epochs: 700..<1308)
        #expect(second.stdoutLines == ["2026-11-21T08:20:19Z  arrive  ferry  \"Check the ferry times\"  77 m"])
        #expect(second.stderr.contains("arrive parcel not announced: the reminder is completed"))
        #expect(try Command.run(["status", "-c", config, "--state", state]).stdoutLines.contains {
            $0.hasPrefix("parcel ") && $0.contains("outside") && $0.contains("completed")
        })
    }

    /// Plays the demo walk into a new gpsd with an agent on `state`, and kills the agent with
    /// SIGKILL once gpsfake has played `sentences` of it (the walk has 3,807).
    static func killedDuringTheWalk(state: String, after sentences: Int) throws -> Background {
        let gpsd = try GPSFake()
        try gpsd.load("config/demo/walk.nmea", pace: 0.001)
        let agent = try Background(["run", "-c", "config/demo.toml", "--state", state, "--headless", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playWhenWatched(), "\(agent.stderr)")
        #expect(gpsd.waitUntilPlayed(sentences))
        agent.signal(SIGKILL)
        _ = agent.exitStatus()
        gpsd.stop()
        return agent
    }

    @Test func killDashNineAtAnyMomentLeavesAConsistentFile() throws {
        let state = Command.scratchState()
        var lastCount = 0
        for round in 0..<5 {
            _ = try Self.killedDuringTheWalk(state: state, after: 300 + round * 700)
            let check = try Command.run([state, "PRAGMA integrity_check;"], executable: "/usr/bin/sqlite3")
            #expect(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", "round \(round): \(check.stdout)\(check.stderr)")
            let count = try Command.run([state, "SELECT count(*) FROM history;"], executable: "/usr/bin/sqlite3")
            let events = Int(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            #expect(events >= lastCount, "round \(round): history lost rows")
            lastCount = max(lastCount, events)
        }
        // The file still opens and serves the commands.
        let history = try Command.run(["history", "--state", state])
        #expect(history.status == 0, "\(history.stderr)")
    }

    /// An event is committed to the history before it is printed: whenever the agent is killed,
    /// every event line it printed is in the state file.
    @Test func everyPrintedEventIsInTheHistoryAfterKillDashNine() throws {
        var printed = 0
        for round in 0..<8 {
            let state = Command.scratchState()
            let lines = try Self.killedDuringTheWalk(state: state, after: 300 + round * 450).stdoutLines
            let history = try Command.run(["history", "--state", state])
            let recorded = history.status == 0 ? history.stdoutLines : []
            for line in lines {
                #expect(recorded.contains(line), "round \(round): printed but not in the history: \(line)")
            }
            printed += lines.count
        }
        #expect(printed > 0, "some rounds printed events before the kill")
    }

    @Test func anUnwritableStateFileIsNamedAndTheAgentRunsInMemory() throws {
        let gpsd = try GPSFake()
        try gpsd.load("config/demo/walk.nmea", pace: 0.002)
        let agent = try Background(["run", "-c", "config/demo.toml", "--state", "/proc/geoalarm/state.sqlite", "--headless", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.count == 5)
        #expect(agent.stderr.contains("state file /proc/geoalarm/state.sqlite: cannot create its folder"))
        #expect(agent.stderr.contains("running in memory until it can be written"))
        #expect(agent.stderr.components(separatedBy: "cannot create its folder").count == 2, "said once: \(agent.stderr)")
    }
}

/// The Reminders verbs while the agent runs: their changes reach it as they are made.
@Suite(.serialized)
struct CommandsWhileRunningTests {
    @Test func completeRemoveAddStatusAndHistoryWithTheAgentRunning() throws {
        let config = try RestartTests.demo()
        let state = Command.scratchState()
        let gpsd = try GPSFake()
        // The walk up to the first event (leaving home), then the commands, then the rest.
        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<200), named: "start.nmea"), pace: 0.002)
        let agent = try Background(["run", "-c", config, "--state", state, "--headless", "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdoutLines.count == 1, "the first event (leaving home)")

        #expect(try Command.run(["complete", "parcel", "-c", config, "--state", state]).status == 0)
        #expect(try Command.run(["remove", "ferry", "-c", config]).status == 0)
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 4 reminders") })
        let added = try Command.run(["add", "-c", config, "--id", "pier", "--title", "Ferry pier", "--at", "38.70620,-9.13560", "--radius", "80"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 5 reminders") })
        // Readers alongside the writing agent.
        for _ in 0..<5 {
            let status = try Command.run(["status", "-c", config, "--state", state])
            #expect(status.status == 0, "\(status.stderr)")
            #expect(status.stdoutLines.contains { $0.hasPrefix("parcel ") && $0.contains("completed") })
            #expect(try Command.run(["history", "--state", state]).status == 0)
        }

        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(200...), named: "rest.nmea"), pace: 0.002)
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines == [
            "2026-11-21T08:01:55Z  leave  water-the-plants-before-you-go  \"Water the plants before you go\"  73 m",
            "2026-11-21T08:06:39Z  arrive  bread  \"Buy bread\"  28 m",
            "2026-11-21T08:20:19Z  arrive  pier  \"Ferry pier\"  77 m",
        ])
        #expect(agent.stderr.contains("arrive parcel not announced: the reminder is completed"))
        #expect(agent.stderr.contains("leave parcel not announced: the reminder is completed"))
        let history = try Command.run(["history", "--state", state])
        #expect(history.stdoutLines.count == 3, "only announced events are history")
    }
}

/// Time alarms (`at` with no place) by the wall clock, with snooze and completion.
@Suite(.serialized)
struct TimeAlarmLiveTests {
    @Test func aMissedAlarmFiresAtStartASnoozeFiresItAgainAndCompletionStopsIt() throws {
        // "tick" is a second alarm whose snoozes show how far the agent's clock has gone.
        let config = try Command.temporaryFile("""
            [[reminder]]
            id = "call"
            title = "Call mum"
            at = "2026-11-01T09:00"

            [[reminder]]
            id = "tick"
            title = "Tick"
            at = "2026-11-01T09:00"
            """)
        let state = Command.scratchState()
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "UTC"
        let nothingListens = try GPSFake()
        let arguments = ["run", "-c", config, "--state", state, "--headless", "--gpsd", "localhost:\(nothingListens.port)"]
        let agent = try Background(arguments, environment: environment)
        #expect(agent.waitUntil { $0.stdoutLines.count >= 2 })
        #expect(agent.stdoutLines == ["2026-11-01T09:00:00Z  alarm  call  \"Call mum\"  -", "2026-11-01T09:00:00Z  alarm  tick  \"Tick\"  -"])

        #expect(try Command.run(["snooze", "call", "2s", "-c", config, "--state", state]).status == 0)
        #expect(agent.waitUntil { $0.stdoutLines.count >= 3 }, "fires again when the snooze ends")
        #expect(agent.stdoutLines.last?.contains("  alarm  call  \"Call mum\"  -") == true)

        // Completed, then snoozed for less than "tick": had "call" fired, it would come before "tick".
        #expect(try Command.run(["complete", "call", "-c", config, "--state", state]).status == 0)
        #expect(try Command.run(["snooze", "call", "1s", "-c", config, "--state", state]).status == 0)
        #expect(try Command.run(["snooze", "tick", "2s", "-c", config, "--state", state]).status == 0)
        #expect(agent.waitUntil { $0.stdoutLines.count >= 4 })
        #expect(agent.stdoutLines.last?.contains("  alarm  tick  \"Tick\"  -") == true, "completed: silent even after another snooze")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)

        // gpsd's absence is reported from the agent's loop, after the alarms due at start.
        let again = try Background(arguments, environment: environment)
        #expect(again.waitUntil { $0.stderr.contains("unavailable") })
        again.signal(SIGTERM)
        #expect(again.exitStatus() == 0)
        #expect(again.stdoutLines.isEmpty, "fired and completed: a restart says nothing")
        let history = try Command.run(["history", "--state", state, "--json", "--reminder", "call"])
        #expect(history.stdoutLines.count == 2, "\(history.stdout)\(history.stderr)")
        #expect(history.stdoutLines.first?.contains("\"event\":\"alarm\",\"reminder\":\"call\"") == true)
        #expect(history.stdoutLines.first?.contains("\"lat\":null") == true)
    }
}
