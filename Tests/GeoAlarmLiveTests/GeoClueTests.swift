import Foundation
import GeoAlarmTestSupport
import Testing

/// `run --source geoclue` against the real GeoClue daemon of Debian on a private system bus, fed
/// the demo walk and real captures as NMEA (its network-nmea source), with a location agent of
/// the test's.
///
/// GeoClue 2.6 dates an NMEA fix with the day it reads it (the sentence's time of day kept), and
/// passes over a fix less accurate than the one before within a second or two: the events are
/// replay's, reminder by reminder and in order, at the same time of day give or take the fix
/// it passed over.
@Suite(.serialized)
struct GeoClueTests {
    /// "arrive bread 08:06:39" of an event line: the event, the reminder and the time of day.
    static func parts(_ line: String) -> (event: String, time: Double)? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 3, let t = fields[0].firstIndex(of: "T") else { return nil }
        let clock = fields[0][fields[0].index(after: t)...].dropLast().split(separator: ":").compactMap { Double($0) }
        guard clock.count == 3 else { return nil }
        return ("\(fields[1]) \(fields[2])", clock[0] * 3600 + clock[1] * 60 + clock[2])
    }

    /// Whether `live` are `replayed`'s events, in order, each within `slack` seconds of its time
    /// of day moved on by `shift` (the rig's, for a track whose times straddle the clock's).
    static func sameEvents(_ live: [String], _ replayed: [String], shift: Double = 0, slack: Double = 3) -> Bool {
        let (a, b) = (live.compactMap(parts), replayed.compactMap(parts))
        return a.count == b.count && zip(a, b).allSatisfy { live, replayed in
            let apart = (live.time - replayed.time - shift).truncatingRemainder(dividingBy: 86400)
            return live.event == replayed.event && min(abs(apart), 86400 - abs(apart)) <= slack
        }
    }

    /// `geoalarm run --source geoclue` on `config`, headless, finding GeoClue on `rig`'s bus.
    static func agent(_ rig: GeoClueRig, config: String = "config/demo.toml", source: String = "geoclue",
                      extra: [String] = []) throws -> Background {
        try Background(["run", "--source", source, "--headless", "-c", config, "--state", Command.scratchState()] + extra,
                       environment: rig.environment())
    }

    @Test func theWalkThroughGeoClueGivesReplaysEvents() throws {
        let replayed = try LiveAgentTests.replayedEvents()
        let rig = try GeoClueRig(agent: .allow)
        defer { rig.close() }
        let agent = try Self.agent(rig)
        defer { agent.stop() }
        #expect(agent.waitUntil { $0.stderr.contains("connected to GeoClue") }, "\(agent.stderr)\n\(rig.geoclueLog)")
        #expect(rig.play(LiveAgentTests.walk))
        #expect(agent.waitUntil { $0.stdoutLines.count >= replayed.count }, "\(agent.stdout)\(agent.stderr)")
        #expect(Self.sameEvents(agent.stdoutLines, replayed, shift: rig.lastShift), "live:\n\(agent.stdout)\nreplayed:\n\(replayed.joined(separator: "\n"))")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
        #expect(!agent.stderr.contains("no fix since"), "standing still is no silence for GeoClue: \(agent.stderr)")
    }

    /// Real receivers' captures (the moving NMEA ones of ../shared/testdata), through GeoClue and
    /// through replay, with reminders along each path. GeoClue 2.6 reads GGA and RMC only (a
    /// capture's GLL, GNS or binary fixes it passes over): both are given those sentences.
    @Test(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"),
          arguments: LiveEqualsReplayTests.captures.prefix(4))
    func realCapturesThroughGeoClueGiveReplaysEvents(_ log: String) throws {
        let whole = try Data(contentsOf: TestData.root!.appendingPathComponent("gpsd/\(log)"))
        let read = whole.split(separator: UInt8(ascii: "\n")).filter { line in
            line.count > 7 && line.first == UInt8(ascii: "$") && ["GGA,", "RMC,"].contains(String(decoding: line.dropFirst(3).prefix(4), as: UTF8.self))
        }
        let capture = try Command.temporaryFile(read.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n") + "\n", named: log)
        let config = try LiveEqualsReplayTests.config(for: log)
        let replay = try Command.run(["replay", "-c", config, capture])
        let rig = try GeoClueRig(agent: .allow)
        defer { rig.close() }
        let agent = try Self.agent(rig, config: config)
        defer { agent.stop() }
        #expect(agent.waitUntil { $0.stderr.contains("connected to GeoClue") }, "\(agent.stderr)")
        #expect(rig.play(capture))
        #expect(agent.waitUntil { $0.stdoutLines.count >= replay.stdoutLines.count }, "\(agent.stdout)\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
        #expect(Self.sameEvents(agent.stdoutLines, replay.stdoutLines, shift: rig.lastShift), "live:\n\(agent.stdout)\nreplayed:\n\(replay.stdout)")
    }

    /// GeoClue restarted mid-walk (an upgrade): the agent says it left and came back, holds the
    /// last known state meanwhile, and the walk's events are all there, none twice.
    @Test func geoClueRestartedMidWalkLosesNoEvent() throws {
        let replayed = try LiveAgentTests.replayedEvents()
        let rig = try GeoClueRig(agent: .allow)
        defer { rig.close() }
        let agent = try Self.agent(rig)
        defer { agent.stop() }
        #expect(agent.waitUntil { $0.stderr.contains("connected to GeoClue") }, "\(agent.stderr)")
        #expect(rig.play(LiveAgentTests.walk, first: 0, count: 600))
        #expect(agent.waitUntil { $0.stdoutLines.count >= 2 }, "\(agent.stdout)\(agent.stderr)")
        #expect(rig.restartGeoClue())
        #expect(agent.waitUntil { $0.stderr.contains("GeoClue unavailable: GeoClue left the system bus") }, "\(agent.stderr)")
        #expect(agent.waitUntil { $0.stderr.components(separatedBy: "connected to GeoClue").count == 3 }, "\(agent.stderr)")
        #expect(rig.play(LiveAgentTests.walk, first: 600))
        #expect(agent.waitUntil { $0.stdoutLines.count >= replayed.count }, "\(agent.stdout)\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
        #expect(Self.sameEvents(agent.stdoutLines, replayed, shift: rig.lastShift), "live:\n\(agent.stdout)\nreplayed:\n\(replayed.joined(separator: "\n"))")
    }

    /// Runs the agent on GeoClue behind `agent` (its config refusing `denied`), waits until its
    /// log holds each of `said` in turn, and checks that it keeps running and stops cleanly.
    static func agentSays(behind agent: GeoClueRig.Agent, denied: String? = nil, _ said: [String]) throws {
        let rig = try GeoClueRig(agent: agent, denied: denied)
        defer { rig.close() }
        let run = try Self.agent(rig)
        defer { run.stop() }
        for text in said { #expect(run.waitUntil { $0.stderr.contains(text) }, "\(text): \(run.stderr)") }
        #expect(run.isRunning && run.stdout.isEmpty, "\(run.stdout)")
        run.signal(SIGTERM)
        #expect(run.exitStatus() == 0, "\(run.stderr)")
    }

    /// Location services switched off (the agent's MaxAccuracyLevel 0): the agent says GeoClue
    /// refused it, with what to do, and keeps running.
    @Test func anAgentThatRefusesIsSaidWithWhatToDo() throws {
        try Self.agentSays(behind: .refuse, ["GeoClue unavailable: GeoClue refused geoalarm: ", "Location Services", "/etc/geoclue/geoclue.conf"])
    }

    /// The desktop capping geoalarm at street level (Wi-Fi's best) where GeoClue has no Wi-Fi
    /// positioning (here: only its NMEA source, which serves exact and is not even opened): no
    /// location comes, and the agent says why, once, and keeps running.
    @Test func anAgentThatCapsTheAccuracyBelowEverySourceIsSaid() throws {
        try Self.agentSays(behind: .capToStreet, [
            "connected to GeoClue", "GeoClue: GeoClue gave no location in 15.0 seconds since it started", "caps geoalarm's accuracy",
        ])
    }

    /// A system that allows by list, its geoclue.conf refusing geoalarm's desktop id (the
    /// `[io.github.geoalarm.GeoAlarm]` section geoalarm(1) shows, with `allowed=false`): GeoClue
    /// knows geoalarm by that id, and the refusal is said.
    @Test func geoclueConfRefusingTheDesktopIdIsSaid() throws {
        try Self.agentSays(behind: .allow, denied: PackagingTests.desktopID, [
            "GeoClue unavailable: GeoClue refused geoalarm: ", PackagingTests.desktopID,
        ])
    }

    /// No agent at all (a machine without a desktop): GeoClue 2.6 holds the request for a client;
    /// the agent says so within seconds, with what to do, and keeps running.
    @Test func noAgentIsSaidInsteadOfWaitingForever() throws {
        try Self.agentSays(behind: .none, ["GeoClue unavailable: GeoClue gives no client yet", "--source gpsd"])
    }

    /// `auto` (the default) with no gpsd: GeoClue feeds the agent, and the log and systemd's
    /// status line say so and why.
    @Test func autoTakesGeoClueWithoutGPSD() throws {
        let replayed = try LiveAgentTests.replayedEvents()
        let rig = try GeoClueRig(agent: .allow)
        defer { rig.close() }
        let socket = try NotifySocket()
        // A port no gpsd listens on.
        let agent = try Background(
            ["run", "--headless", "-c", "config/demo.toml", "--state", Command.scratchState(), "--gpsd", "127.0.0.1:1"],
            environment: rig.environment().merging(["NOTIFY_SOCKET": socket.address]) { $1 })
        defer { agent.stop() }
        // systemctl status names the source that feeds the agent, and why.
        let status = socket.next { $0.contains { $0.hasPrefix("STATUS=connected to GeoClue (gpsd at 127.0.0.1:1 is unavailable: ") } }
        #expect(status != nil, "\(agent.stderr)")
        #expect(agent.waitUntil { $0.stderr.contains("fixes from GeoClue: gpsd at 127.0.0.1:1 is unavailable") }, "\(agent.stderr)")
        #expect(agent.waitUntil { $0.stderr.contains("connected to GeoClue") }, "\(agent.stderr)")
        #expect(rig.play(LiveAgentTests.walk))
        #expect(agent.waitUntil { $0.stdoutLines.count >= replayed.count }, "\(agent.stdout)\(agent.stderr)")
        #expect(Self.sameEvents(agent.stdoutLines, replayed, shift: rig.lastShift), "live:\n\(agent.stdout)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
    }

    /// Started before the system bus, even before its socket's folder (a machine that starts
    /// them so): the agent says there is none, watches for the folder and then the socket, and
    /// once the bus and GeoClue are there takes its fixes.
    @Test func aSystemBusThatComesLaterIsTaken() throws {
        // The rig makes the folder.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-laterbus-\(UUID().uuidString)").path
        let agent = try Background(
            ["run", "--source", "geoclue", "--headless", "-c", "config/demo.toml", "--state", Command.scratchState()],
            environment: ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(folder)/bus"]) { $1 })
        defer { agent.stop() }
        #expect(agent.waitUntil { $0.stderr.contains("there is no system bus to find GeoClue on") }, "\(agent.stderr)")
        let rig = try GeoClueRig(agent: .allow, folder: folder)
        defer { rig.close() }
        #expect(agent.waitUntil { $0.stderr.contains("connected to GeoClue") }, "\(agent.stderr)")
        #expect(rig.play(LiveAgentTests.walk, first: 0, count: 600))
        #expect(agent.waitUntil { $0.stdoutLines.count >= 2 }, "\(agent.stdout)\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
    }

    /// `auto` with no gpsd where libgeoclue-2 cannot be had (a library of its name that lacks its
    /// functions, first on LD_LIBRARY_PATH: it is loaded only when GeoClue is wanted): the agent
    /// says why and goes on waiting for gpsd, and stops cleanly.
    @Test func autoWithoutLibgeoclueSaysWhyAndWaitsForGPSD() throws {
        let missing = try MissingLibrary("libgeoclue-2.so.0")
        defer { missing.remove() }
        let agent = try Background(
            ["run", "--headless", "-c", "config/demo.toml", "--state", Command.scratchState(), "--gpsd", "127.0.0.1:1"],
            environment: missing.environment)
        defer { agent.stop() }
        #expect(agent.waitUntil { $0.stderr.contains("libgeoclue-2.so.0 lacks gclue_manager_proxy_new_for_bus") }, "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
    }

    /// `--source geoclue` where libgeoclue-2 cannot be had: the agent says why, and that it stops
    /// for want of fixes, in words (not the service group's), and fails.
    @Test func geoclueWithoutLibgeoclueSaysWhyAndStops() throws {
        let missing = try MissingLibrary("libgeoclue-2.so.0")
        defer { missing.remove() }
        let run = try Command.run(
            ["run", "--headless", "--source", "geoclue", "-c", "config/demo.toml", "--state", Command.scratchState()],
            environment: missing.environment)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("GeoClue: libgeoclue-2.so.0 lacks gclue_manager_proxy_new_for_bus"), "\(run.stderr)")
        #expect(run.stderr.contains("Error: GeoClue can give no fixes any more (said above): the agent stops"), "\(run.stderr)")
        #expect(!run.stderr.contains("ServiceGroup"), "\(run.stderr)")
    }

    /// `doctor` asks GeoClue as `run` would: with --source geoclue, its line; with auto and no
    /// gpsd, gpsd's trouble as a note and the source line naming GeoClue as what feeds the agent.
    @Test(arguments: ["geoclue", "auto"])
    func doctorSaysWhatGeoClueGives(_ source: String) throws {
        let rig = try GeoClueRig(agent: .allow)
        defer { rig.close() }
        let doctor = try Background(
            ["doctor", "--headless", "--source", source, "-c", "config/demo.toml", "--gpsd", "127.0.0.1:1", "--wait", "60",
             "--state", Command.scratchState()], environment: rig.environment())
        defer { doctor.stop() }
        #expect(rig.play(LiveAgentTests.walk, first: 0, count: 5))
        _ = doctor.exitStatus()
        #expect(doctor.stdout.contains("ok    geoclue: gives a location at 38.71"), "\(doctor.stdout)\(doctor.stderr)")
        if source == "auto" {
            #expect(doctor.stdout.contains("note  gpsd: 127.0.0.1:1: "), "\(doctor.stdout)")
            #expect(doctor.stdout.contains("ok    source: auto: gpsd gives no fix, so GeoClue feeds the agent"), "\(doctor.stdout)")
        }
    }

    /// No GeoClue on the bus (a system without it): `doctor --source geoclue` fails its line with why.
    @Test func doctorWithoutGeoClueSaysSo() throws {
        let rig = try GeoClueRig(agent: .allow)
        let address = rig.busAddress
        rig.close()
        let doctor = try Command.run(
            ["doctor", "--headless", "--source", "geoclue", "-c", "config/demo.toml", "--wait", "0", "--state", Command.scratchState()],
            environment: ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": address]) { $1 })
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("FAIL  geoclue: there is no system bus"), "\(doctor.stdout)\(doctor.stderr)")
    }

    /// The walk's first epochs with an HDOP of 6 (a receiver in a street canyon), which GeoClue
    /// 2.6 gives as an accuracy of 50 m.
    static func coarseWalk() throws -> String {
        let lines = try LiveAgentTests.walkEpochs(0..<5).components(separatedBy: "\r\n").map { line -> String in
            guard line.hasPrefix("$GPGGA") else { return line }
            var fields = line.dropFirst().split(separator: "*")[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            fields[8] = "6.0"
            let body = fields.joined(separator: ",")
            let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
            return "$\(body)*" + String(format: "%02X", sum)
        }
        return try Command.temporaryFile("# coarse\r\n" + lines.joined(separator: "\r\n"), named: "coarse.nmea")
    }

    /// A location coarser than a fence near: `doctor` names the reminders smaller than GeoClue's
    /// accuracy, and the agent says once that their sides may be misjudged.
    @Test func fixesCoarserThanAFenceAreSaid() throws {
        let rig = try GeoClueRig(agent: .allow)
        defer { rig.close() }
        let walk = try Self.coarseWalk()
        let doctor = try Background(
            ["doctor", "--headless", "--source", "geoclue", "-c", "config/demo.toml", "--wait", "60", "--state", Command.scratchState()],
            environment: rig.environment())
        defer { doctor.stop() }
        #expect(rig.play(walk))
        _ = doctor.exitStatus()
        #expect(doctor.stdout.contains("ok    geoclue: gives a location at 38.71") && doctor.stdout.contains("±50 m"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("note  accuracy: 2 reminders smaller than GeoClue's ±50 m: bread, prescription"), "\(doctor.stdout)")
        let agent = try Self.agent(rig)
        defer { agent.stop() }
        #expect(agent.waitUntil { $0.stderr.contains("connected to GeoClue") }, "\(agent.stderr)")
        #expect(rig.play(walk))
        #expect(agent.waitUntil { $0.stderr.contains("fixes from GeoClue are accurate to 50 m, coarser than a fence of 30 m near here") }, "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
    }
}
