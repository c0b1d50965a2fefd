import Foundation
import GeoAlarmSecretBox
import GeoAlarmTestSupport
import Testing

/// OwnTracks as phones speak it, against a real mosquitto: encrypted payloads both ways, the
/// phone's own `tid`, and a session that keeps what a phone sends while the agent is stopped.
@Suite(.serialized)
struct OwnTracksPhoneTests {
    /// A file holding `secret` that only its owner can read.
    static func secretFile(_ secret: String) throws -> String {
        let path = try Command.temporaryFile(secret + "\n", named: "owntracks.key")
        #expect(chmod(path, 0o600) == 0)
        return path
    }

    /// `text` sealed as the apps seal it with `secret`.
    static func sealed(_ text: String, with secret: String) throws -> String {
        let data = try #require(SecretBox(secret: secret).seal(Array(text.utf8)))
        return #"{"_type":"encrypted","data":"\#(data)"}"#
    }

    /// The JSON object sealed in an `encrypted` message, opened with `secret`.
    static func opened(_ message: [String: Any], with secret: String) throws -> [String: Any] {
        #expect(message["_type"] as? String == "encrypted")
        let plain = try SecretBox(secret: secret).open(try #require(message["data"] as? String))
        return try #require(JSONSerialization.jsonObject(with: Data(plain)) as? [String: Any])
    }

    @Test func encryptedPhonesAreReadWithTheirSecretAndTheirTransitionsSealedWithIt() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe(["owntracks/+/+/event"])
        let alice = "correct horse battery staple"
        let config = try String(contentsOfFile: try MQTTTests.bakeryConfig(broker), encoding: .utf8) + """

            [mqtt.device_secrets]
            "alice/phone" = "\(try Self.secretFile(alice))"
            """
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", try Command.temporaryFile(config),
                                    "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") }, "\(agent.stderr)")
        // Alice walks into the bakery with her phone's tid "al"; Bob's phone seals with a secret the agent lacks.
        for (step, metres) in [900.0, 500, 150, 20, 10].enumerated() {
            let location = MQTTTests.location(north: metres, at: MQTTTests.start + step * 10).replacingOccurrences(of: "\"xx\"", with: "\"al\"")
            try broker.publish("owntracks/alice/phone", try Self.sealed(location, with: alice))
            try broker.publish("owntracks/bob/phone", try Self.sealed(location, with: "bob's own"))
        }
        #expect(try MQTTTests.settled(agent, broker: broker), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.count == 1 && agent.stdoutLines[0].contains("arrive  bakery"), "\(agent.stdout)")
        #expect(agent.stdoutLines.first?.hasSuffix("device alice/phone") == true)
        #expect(agent.stderr.contains("5 messages ignored (5 encrypted without a secret)"), "\(agent.stderr)")
        #expect(agent.stderr.contains("an encrypted message, and no secret for bob/phone"))
        // Alice's transition is sealed with her secret, and carries her phone's tid.
        #expect(subscriber.waitUntil { !MQTTLines($0.stdout).objects(on: "owntracks/alice/phone/event").isEmpty })
        let transition = try Self.opened(try #require(MQTTLines(subscriber.stdout).objects(on: "owntracks/alice/phone/event").first), with: alice)
        #expect(transition["_type"] as? String == "transition")
        #expect(transition["event"] as? String == "enter")
        #expect(transition["tid"] as? String == "al")
        #expect(MQTTLines(subscriber.stdout).payloads(on: "owntracks/bob/phone/event").isEmpty)
    }

    /// A device with a secret is believed only in messages sealed with it: anyone who may
    /// publish on Alice's topic cannot move her phone with a location in the clear. Refused,
    /// counted, said once for the device. With `secret_file` and `--source owntracks`, every
    /// device has the shared secret, and the same holds for all.
    @Test(arguments: [false, true])
    func aDeviceWithASecretTakesOnlySealedLocations(shared: Bool) throws {
        let broker = try Mosquitto()
        let alice = "correct horse battery staple"
        let secrets = shared
            ? "secret_file = \"\(try Self.secretFile(alice))\"\n"
            : "\n[mqtt.device_secrets]\n\"alice/phone\" = \"\(try Self.secretFile(alice))\"\n"
        let config = try String(contentsOfFile: try MQTTTests.bakeryConfig(broker, extra: shared ? secrets : ""), encoding: .utf8)
            + (shared ? "" : secrets)
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", try Command.temporaryFile(config),
                                    "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") }, "\(agent.stderr)")
        // A spoofer walks Alice's phone into the bakery in the clear; then Alice's own sealed walk
        // stays outside.
        for (step, metres) in [900.0, 300, 20, 10].enumerated() {
            try broker.publish("owntracks/alice/phone", MQTTTests.location(north: metres, at: MQTTTests.start + step * 10))
        }
        for (step, metres) in [900.0, 800].enumerated() {
            try broker.publish("owntracks/alice/phone", try Self.sealed(MQTTTests.location(north: metres, at: MQTTTests.start + 100 + step * 10), with: alice))
        }
        #expect(agent.waitUntil { $0.stderr.contains("tracking alice/phone") }, "\(agent.stderr)")
        // The sentinel device publishes in the clear: with a shared secret, it is refused as well.
        if shared {
            try broker.publish(MQTTTests.sentinel, MQTTTests.location(north: -9000, at: MQTTTests.start + 100_000))
            #expect(agent.waitUntil { $0.stderr.contains("in the clear from zz/sentinel") }, "\(agent.stderr)")
        } else {
            #expect(try MQTTTests.settled(agent, broker: broker), "\(agent.stderr)")
        }
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.isEmpty, "the spoofed arrival was not believed: \(agent.stdout)")
        let refused = shared ? 5 : 4
        #expect(agent.stderr.contains("\(refused) messages ignored (\(refused) in the clear from a device with a secret)"), "\(agent.stderr)")
        #expect(agent.stderr.components(separatedBy: "ignored a location in the clear from alice/phone, which has a secret").count == 2,
                "said once for the device: \(agent.stderr)")
    }

    @Test func thisMachinesMessagesAreSealedWithItsSecret() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe([MQTTTests.ownTopic, MQTTTests.ownTopic + "/#"])
        let secret = "the pi's secret"
        let gpsd = try GPSFake()
        try gpsd.load(LiveAgentTests.walk)
        let config = try MQTTTests.demoConfig(broker, homeAssistant: false, extra: "secret_file = \"\(try Self.secretFile(secret))\"")
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        let events = MQTTTests.ownTopic + "/event"
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).objects(on: events).count >= MQTTTests.demoCrossings.count })
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let lines = MQTTLines(subscriber.stdout)
        #expect(!lines.messages.contains { $0.payload.contains(#""_type":"lwt""#) }, "a clean stop leaves no will: \(agent.stderr)")
        let transitions = try lines.objects(on: events).map { try Self.opened($0, with: secret) }
        #expect(transitions.map { "\($0["event"] ?? "") \($0["rid"] ?? "")" } == MQTTTests.demoCrossings)
        let locations = try lines.objects(on: MQTTTests.ownTopic).map { try Self.opened($0, with: secret) }
        #expect(!locations.isEmpty && locations.allSatisfy { $0["_type"] as? String == "location" })
        let waypoints = try Self.opened(try #require(lines.objects(on: MQTTTests.ownTopic + "/waypoints").last), with: secret)
        #expect(waypoints["_type"] as? String == "waypoints")
        // Nothing goes out in the clear on the OwnTracks topics: not even the will (a plain
        // `lwt`), which a clean stop, having said goodbye, does not leave.
        #expect(lines.messages.filter { $0.topic.hasPrefix(MQTTTests.ownTopic) }.allSatisfy { $0.payload.hasPrefix(#"{"_type":"encrypted""#) })
    }

    /// Where libsodium cannot be had (here a library of its name that lacks its functions, found
    /// first through LD_LIBRARY_PATH, as libsodium is loaded when first used), a machine with a
    /// secret sends nothing on its OwnTracks topics, never a message in the clear, says why once,
    /// and goes on with its events.
    @Test func withoutLibsodiumNothingGoesOutInTheClear() throws {
        let missing = try MissingLibrary("libsodium.so.23")
        defer { missing.remove() }
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe([MQTTTests.ownTopic, MQTTTests.ownTopic + "/#"])
        let gpsd = try GPSFake()
        try gpsd.load(LiveAgentTests.walk)
        let config = try MQTTTests.demoConfig(broker, homeAssistant: false, extra: "secret_file = \"\(try Self.secretFile("the pi's secret"))\"")
        let agent = try Background(
            ["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"],
            environment: missing.environment)
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        let events = try LiveAgentTests.replayedEvents()
        #expect(agent.waitUntil { $0.stdoutLines.count >= events.count }, "\(agent.stdout)\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let said = "owntracks: cannot seal messages with the secret (libsodium.so.23 lacks sodium_init"
        #expect(agent.stderr.components(separatedBy: said).count == 2, "said once: \(agent.stderr)")
        #expect(agent.stderr.contains("none is sent, and none in the clear"), "\(agent.stderr)")
        // The broker got nothing on this machine's topics (a clean stop leaves no will).
        let sent = MQTTLines(subscriber.stdout).messages.filter { $0.topic.hasPrefix(MQTTTests.ownTopic) }
        #expect(sent.isEmpty, "\(sent)")
    }

    /// The source's session outlives the agent: what a phone publishes while the agent is
    /// stopped waits at the broker, and is read, in order, when the agent returns.
    @Test func aPhoneMovingWhileTheAgentIsStoppedIsReadWhenItReturns() throws {
        let broker = try Mosquitto()
        let config = try MQTTTests.bakeryConfig(broker)
        let state = Command.scratchState()
        func agentRun() throws -> Background {
            let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", config, "--state", state])
            #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") }, "\(agent.stderr)")
            return agent
        }
        var agent = try agentRun()
        for step in 0..<3 { try broker.publish("owntracks/alice/phone", MQTTTests.location(north: 1000, at: MQTTTests.start + step * 10)) }
        #expect(try MQTTTests.settled(agent, broker: broker), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.isEmpty)

        // Alice walks into the bakery while no agent runs.
        for (step, metres) in [600.0, 300, 40, 10, 5].enumerated() {
            try broker.publish("owntracks/alice/phone", MQTTTests.location(north: metres, at: MQTTTests.start + 100 + step * 10))
        }
        agent = try agentRun()
        #expect(try MQTTTests.settled(agent, broker: broker), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.count == 1, "\(agent.stdout)\(agent.stderr)")
        #expect(agent.stdoutLines.first?.contains("arrive  bakery") == true)
        #expect(agent.stdoutLines.first?.hasSuffix("device alice/phone") == true)
    }

    /// A phone whose clock runs two hours ahead sends a location: it is set aside, said once,
    /// and the phone's true locations after it still count.
    @Test func aPhoneWhoseClockRunsAheadDoesNotSilenceItsTrueLocations() throws {
        let broker = try Mosquitto()
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", try MQTTTests.bakeryConfig(broker),
                                    "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") }, "\(agent.stderr)")
        let now = Int(Date().timeIntervalSince1970)
        try broker.publish("owntracks/alice/phone", MQTTTests.location(north: 900, at: now + 7200))
        try broker.publish("owntracks/alice/phone", MQTTTests.location(north: 800, at: now + 7210))
        for (step, metres) in [900.0, 500, 150, 20, 10].enumerated() {
            try broker.publish("owntracks/alice/phone", MQTTTests.location(north: metres, at: now - 120 + step * 10))
        }
        #expect(try MQTTTests.settled(agent, broker: broker), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.count == 1 && agent.stdoutLines.first?.contains("arrive  bakery") == true, "\(agent.stdout)\(agent.stderr)")
        #expect(agent.stderr.components(separatedBy: "alice/phone: a location stamped").count == 2, "said once: \(agent.stderr)")
        #expect(agent.stderr.contains("ahead of this system's clock, is set aside"))
        #expect(agent.stderr.contains("2 in the future"), "counted in the summary: \(agent.stderr)")
    }
}
