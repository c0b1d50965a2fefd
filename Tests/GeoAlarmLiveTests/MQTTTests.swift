import Foundation
import GeoAlarmTestSupport
import Testing

/// `geoalarm run` with `[mqtt]`, against a real mosquitto broker on a free loopback port, read
/// back with `mosquitto_sub` and written to with `mosquitto_pub`.
@Suite(.serialized)
struct MQTTTests {
    static let ownTopic = "owntracks/test/pi"
    static let clientID = "ga-test"

    /// The demo's reminders with `[mqtt]` pointing at `broker`.
    static func demoConfig(_ broker: Mosquitto, homeAssistant: Bool = true, extra: String = "") throws -> String {
        let demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
        return try Command.temporaryFile(demo + """

            [mqtt]
            url = "\(broker.url)"
            client_id = "\(clientID)"
            owntracks_topic = "\(ownTopic)"
            homeassistant = \(homeAssistant)
            \(extra)
            """)
    }

    /// The second reminder of ``bakeryConfig(_:)``, which a test removes.
    static let station = """
        [[reminder]]
        id = "station"
        title = "Check the timetable"
        lat = 47.02
        lon = 8.0
        radius = 100


        """

    /// A reminders file with a bakery and a station, for the OwnTracks source; `extra` lines go
    /// at the end of its `[mqtt]` table.
    static func bakeryConfig(_ broker: Mosquitto, extra: String = "") throws -> String {
        try Command.temporaryFile("""
            [[reminder]]
            id = "bakery"
            title = "Buy bread"
            lat = 47.0
            lon = 8.0
            radius = 100
            when = "both"

            \(station)[mqtt]
            url = "\(broker.url)"
            client_id = "\(clientID)"
            owntracks_topic = "\(ownTopic)"
            \(extra)
            """)
    }

    /// An OwnTracks location `metres` north of the bakery.
    static func location(north metres: Double, at time: Int, accuracy: Int = 10) -> String {
        let latitude = 47.0 + metres / 111_195
        return #"{"_type":"location","lat":\#(latitude),"lon":8.0,"tst":\#(time),"acc":\#(accuracy),"tid":"xx"}"#
    }

    static let start = 1_763_900_000

    /// The demo walk's crossings, in order: what OwnTracks transitions follow, whatever is announced
    /// (the bakery's reminder announces arrivals only; its departure is a crossing all the same).
    static let demoCrossings = [
        "leave water-the-plants-before-you-go", "enter bread", "leave bread", "enter parcel", "leave parcel", "enter ferry",
    ]

    /// An agent on `config` that walked the demo through gpsfake, once `subscriber` saw its six transitions.
    static func walkDemo(config: String, seenBy subscriber: Background) throws -> Background {
        let gpsd = try GPSFake()
        try gpsd.load(LiveAgentTests.walk)
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: ownTopic + "/event").count == demoCrossings.count })
        return agent
    }

    /// The known states a retained presence went through, in order: `None` (unknown) left out,
    /// and a state published again unchanged (on every reconnect) counted once.
    static func changes(_ payloads: [String]) -> [String] {
        payloads.filter { $0 != "None" }.reduce(into: []) { states, state in
            if states.last != state { states.append(state) }
        }
    }

    /// Great-circle metres between two positions (the mean Earth radius).
    static func metres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let (p1, p2) = (lat1 * .pi / 180, lat2 * .pi / 180)
        let (dp, dl) = (p2 - p1, (lon2 - lon1) * .pi / 180)
        let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * 6_371_008.8 * asin(min(1, sqrt(h)))
    }

    /// A device no test uses, whose first location the agent says it tracks.
    static let sentinel = "owntracks/zz/sentinel"

    /// Publishes a location of ``sentinel`` after everything a test published, and waits until
    /// the agent has taken it: the broker hands messages on in the order they came, so the
    /// agent has handled all before. False when it did not within `seconds`.
    static func settled(_ agent: Background, broker: Mosquitto, seconds: Double = 60) throws -> Bool {
        let before = agent.stderr.components(separatedBy: "tracking zz/sentinel").count
        try broker.publish(sentinel, location(north: -9000, at: start + 100_000))
        return agent.waitUntil(seconds: seconds) { $0.stderr.components(separatedBy: "tracking zz/sentinel").count > before }
    }

    @Test func transitionsPresenceAndDiscoveryReachTheBroker() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe()
        let gpsd = try GPSFake()
        try gpsd.load(LiveAgentTests.walk)
        let agent = try Background(["run", "--headless", "-c", try Self.demoConfig(broker), "--state", Command.scratchState(),
                                    "--gpsd", "localhost:\(gpsd.port)"])
        // Connected first, so that the broker sees every state from the first fix on.
        #expect(agent.waitUntil { $0.stderr.contains("connected to \(broker.url)") }, "\(agent.stderr)")
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdoutLines.count == 5)
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: Self.ownTopic + "/event").count >= Self.demoCrossings.count })
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: "geoalarm/\(Self.clientID)/availability").last == "offline" })
        let lines = MQTTLines(subscriber.stdout)

        // One OwnTracks transition per crossing, in order, with the booklet's members.
        let transitions = lines.objects(on: Self.ownTopic + "/event")
        #expect(transitions.map { "\($0["event"] ?? "") \($0["rid"] ?? "")" } == Self.demoCrossings)
        // The reminders as regions, retained, published once (every reminder, never an empty list):
        // each transition's wtst is its region's tst, when the agent first knew the reminder.
        let published = lines.objects(on: Self.ownTopic + "/waypoints")
        #expect(published.count == 1, "\(published)")
        let waypoints = try #require(published.first?["waypoints"] as? [[String: Any]])
        let regionTimes = Dictionary(waypoints.map { ($0["rid"] as? String ?? "", $0["tst"] as? Int ?? -1) }, uniquingKeysWith: { $1 })
        #expect(regionTimes.count == 5)
        for transition in transitions {
            #expect(transition["wtst"] as? Int == regionTimes[transition["rid"] as? String ?? ""], "\(transition)")
            #expect(transition["_type"] as? String == "transition")
            #expect(Set(transition.keys) == ["_type", "event", "desc", "rid", "lat", "lon", "acc", "tst", "wtst", "tid", "t"])
            #expect((transition["acc"] as? Double ?? 0) >= 1, "acc is never 0")
            #expect(transition["t"] as? String == "c")
        }
        #expect(transitions.first?["desc"] as? String == "Water the plants before you go")
        // 2026-11-21T08:06:39Z, the bakery's arrival in the log.
        #expect(transitions.first { $0["rid"] as? String == "bread" }?["tst"] as? Int == 1_795_248_399)

        // Every location names the regions Home Assistant's presence says the device is inside, as
        // the broker hands them over in order, from the first fix on.
        var present: Set<String> = []
        for message in lines.messages {
            let prefix = "geoalarm/\(Self.clientID)/reminder/", suffix = "/state"
            if message.topic.hasPrefix(prefix), message.topic.hasSuffix(suffix) {
                let id = String(message.topic.dropFirst(prefix.count).dropLast(suffix.count))
                if message.payload == "ON" { present.insert(id) } else { present.remove(id) }
            } else if message.topic == Self.ownTopic, let object = try? Self.object(message.payload) {
                #expect(Set(object["inrids"] as? [String] ?? []) == present, "\(object) while Home Assistant says \(present)")
            }
        }

        // The position with each event, naming the reminders it is inside.
        let locations = lines.objects(on: Self.ownTopic)
        #expect(locations.filter { $0["t"] as? String == "c" }.count == Self.demoCrossings.count)
        #expect(locations.allSatisfy { $0["_type"] as? String == "location" && $0["tst"] != nil && $0["acc"] != nil })
        #expect(locations.contains { ($0["inrids"] as? [String])?.contains("bread") == true })
        // Every region a location names is one the position is inside (within its radius and
        // the 20 m hysteresis band): never a stale one.
        let circles: [String: (Double, Double, Double)] = [
            "water-the-plants-before-you-go": (38.71390, -9.13340, 50), "bread": (38.71050, -9.13660, 30),
            "prescription": (38.70930, -9.13660, 30), "parcel": (38.70790, -9.13650, 50), "ferry": (38.70620, -9.13560, 80),
        ]
        for location in locations {
            let (lat, lon) = (location["lat"] as? Double ?? .nan, location["lon"] as? Double ?? .nan)
            for rid in location["inrids"] as? [String] ?? [] {
                let circle = try #require(circles[rid])
                #expect(Self.metres(lat, lon, circle.0, circle.1) <= circle.2 + 20, "\(rid) named at \(lat),\(lon)")
            }
        }

        // Home Assistant: a presence sensor per reminder, kept current, and the tracker.
        let bread = try #require(lines.objects(on: "homeassistant/binary_sensor/\(Self.clientID)/bread/config").first)
        #expect(bread["device_class"] as? String == "presence")
        #expect(bread["unique_id"] as? String == "geoalarm_\(Self.clientID)_reminder_bread")
        #expect(bread["availability_topic"] as? String == "geoalarm/\(Self.clientID)/availability")
        #expect((bread["device"] as? [String: Any])?["identifiers"] as? [String] == ["geoalarm_\(Self.clientID)"])
        let breadState = try #require(bread["state_topic"] as? String)
        #expect(Self.changes(lines.payloads(on: breadState)) == ["OFF", "ON", "OFF"],
                "outside from the first fix, inside at the bakery, outside again: its arrival alone is announced")
        #expect(lines.payloads(on: "geoalarm/\(Self.clientID)/reminder/parcel/state").last == "OFF")
        let tracker = try #require(lines.objects(on: "homeassistant/device_tracker/\(Self.clientID)/location/config").first)
        let attributesTopic = try #require(tracker["json_attributes_topic"] as? String)
        let position = try #require(lines.objects(on: attributesTopic).last)
        #expect(Set(position.keys) == ["latitude", "longitude", "gps_accuracy"])
        #expect(lines.payloads(on: "geoalarm/\(Self.clientID)/availability").first == "online")
        // Proximity as Home Assistant's own: where the walk ends, by the river, the ferry
        // reminder has arrived, 0 m; the home it left is away from. Each is published on a
        // noticeable change only: the walk's 1,267 fixes make a few dozen messages, not one each.
        let ferryDirection = try #require(
            lines.objects(on: "homeassistant/sensor/\(Self.clientID)/direction_ferry/config").first?["state_topic"] as? String)
        #expect(lines.payloads(on: ferryDirection).last == "arrived")
        #expect(lines.payloads(on: "geoalarm/\(Self.clientID)/reminder/ferry/distance").last == "0")
        #expect(lines.payloads(on: "geoalarm/\(Self.clientID)/reminder/water-the-plants-before-you-go/direction").contains("away_from"))
        for topic in Set(lines.messages.map(\.topic)) where topic.hasSuffix("/distance") || topic.hasSuffix("/direction") {
            #expect(lines.payloads(on: topic).count < 60, "\(topic): \(lines.payloads(on: topic))")
        }

        // What Home Assistant finds when it starts later: retained configs and states.
        let late = try broker.subscribe(["homeassistant/#", "geoalarm/#"])
        #expect(late.waitUntil { MQTTLines($0.stdout).payloads(on: breadState) == ["OFF"] })
        #expect(MQTTLines(late.stdout).payloads(on: "geoalarm/\(Self.clientID)/availability") == ["offline"])
        #expect(MQTTLines(late.stdout).messages.contains { $0.topic.hasSuffix("/bread/config") })
    }

    /// A killed agent leaves an OwnTracks `lwt` on its own topic, as the apps leave one, and its
    /// status topic says `offline`, retained: a Home Assistant (or anyone) reading it later is not
    /// told the agent is up.
    @Test func aKilledAgentLeavesAnOwnTracksLastWillAndItsStatusSaysOffline() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe(["geoalarm/#", Self.ownTopic])
        let started = Int(Date().timeIntervalSince1970)
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", try Self.bakeryConfig(broker),
                                    "--state", Command.scratchState()])
        let availability = "geoalarm/\(Self.clientID)/availability"
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: availability) == ["online"] })
        // The `lwt` rides a second connection, made beside the one that said `online`: killed
        // before the broker has it, the agent leaves none (in one loaded run the test killed it
        // that soon, and waited out its deadline for the `lwt`).
        #expect(broker.waitUntilLogged(" as \(Self.clientID)-lwt "), "\(broker.log)")
        agent.signal(SIGKILL)
        // Reaped at once: a zombie left meanwhile would be counted by the hook tests running beside this one.
        #expect(agent.exitStatus() == 128 + SIGKILL)
        #expect(subscriber.waitUntil { !MQTTLines($0.stdout).objects(on: Self.ownTopic).isEmpty })
        let will = try #require(MQTTLines(subscriber.stdout).objects(on: Self.ownTopic).last)
        #expect(will["_type"] as? String == "lwt")
        let connected = try #require(will["tst"] as? Int, "tst: when the agent first connected")
        #expect(connected >= started && connected <= Int(Date().timeIntervalSince1970))
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: availability) == ["online", "offline"] }, "\(subscriber.stdout)")
        let later = try broker.subscribe([availability])
        #expect(later.waitUntil { MQTTLines($0.stdout).payloads(on: availability) == ["offline"] }, "retained: \(later.stdout)")
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Started again where the state file says it is inside the bakery: its first location names
    /// the bakery, as Home Assistant's presence (restored, ON) says.
    @Test func theFirstLocationAfterARestartNamesTheRegionsItIsIn() throws {
        let broker = try Mosquitto()
        let config = try Self.demoConfig(broker)
        let state = Command.scratchState()
        let gpsd = try GPSFake()
        try gpsd.load(Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<420), named: "to-the-bakery.nmea"))
        let first = try Background(["run", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: first), "\(first.stderr)")
        #expect(first.stdout.contains("arrive  bread"), "\(first.stdout)")
        first.signal(SIGTERM)
        #expect(first.exitStatus() == 0)
        let subscriber = try broker.subscribe(["geoalarm/#", Self.ownTopic])
        try gpsd.load(Command.temporaryFile(try LiveAgentTests.walkEpochs(420..<440), named: "still-there.nmea"))
        let again = try Background(["run", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(gpsd.port)"])
        #expect(again.waitUntil { $0.stderr.contains("connected to \(broker.url)") }, "\(again.stderr)")
        #expect(try gpsd.playThrough(to: again), "\(again.stderr)")
        #expect(subscriber.waitUntil { !MQTTLines($0.stdout).objects(on: Self.ownTopic).isEmpty })
        again.signal(SIGTERM)
        #expect(again.exitStatus() == 0)
        let lines = MQTTLines(subscriber.stdout)
        #expect(lines.payloads(on: "geoalarm/\(Self.clientID)/reminder/bread/state").first == "ON", "restored")
        let location = try #require(lines.objects(on: Self.ownTopic).first)
        #expect(location["inrids"] as? [String] == ["bread"], "\(location)")
        #expect(again.stdoutLines.isEmpty, "still inside: nothing announced again")
    }

    /// Three phones flush 2,430 locations each at once (a broker restart, a tunnel's end), at
    /// mosquitto's default queue of 1,000 a client: the agent takes them as fast as the broker
    /// hands them over, none is lost, and each phone's arrival is announced.
    @Test func aBurstOfThreePhonesLosesNoLocation() throws {
        let broker = try Mosquitto()
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", try Self.bakeryConfig(broker),
                                    "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") }, "\(agent.stderr)")
        let phones = ["alice/phone", "bob/phone", "carol/phone"]
        // From 2.4 km north, a metre a second, to the bakery and a little past its middle.
        let walk = (0..<2430).map { step in Self.location(north: 2400 - Double(step), at: Self.start + step) }
        let publishers = try phones.map { try broker.publisher("owntracks/\($0)", lines: walk) }
        for publisher in publishers { #expect(publisher.exitStatus() == 0, "\(publisher.stderr)") }
        #expect(try Self.settled(agent, broker: broker, seconds: 300), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stderr.contains("4 devices tracked: \(3 * walk.count + 1) fixes"), "every location taken: \(agent.stderr)")
        #expect(!broker.log.contains("dropped"), "\(broker.log)")
        let arrivals = agent.stdoutLines.filter { $0.contains("arrive  bakery") }
        #expect(Set(arrivals.compactMap { $0.components(separatedBy: "device ").last }) == Set(phones), "\(agent.stdout)")
    }

    /// Transitions made faster than the broker takes them, with the broker there: the outbox
    /// holds the agent back at half full rather than dropping its oldest (its limit is for a
    /// broker that is away). Ten phones walk in and out of the bakery 25 times each at once:
    /// 500 transitions through an outbox of 16.
    @Test func aBurstOfTransitionsWaitsForTheBrokerRatherThanDropping() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe(["owntracks/+/+/event"])
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", try Self.bakeryConfig(broker, extra: "outbox_limit = 16"),
                                    "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") }, "\(agent.stderr)")
        let phones = (0..<10).map { "walker\($0)/phone" }
        // Two fixes 500 m north, two in the bakery (two confirm a side), 25 times.
        let walk = (0..<100).map { step in Self.location(north: step % 4 < 2 ? 500 : 0, at: Self.start + 10 * step) }
        let publishers = try phones.map { try broker.publisher("owntracks/\($0)", lines: walk) }
        for publisher in publishers { #expect(publisher.exitStatus() == 0, "\(publisher.stderr)") }
        // Each phone: the first side (outside) is no transition, then 25 arrivals and 24 departures.
        let expected = phones.count * 49
        func transitions(_ output: String) -> Int { MQTTLines(output).messages.filter { $0.topic.hasSuffix("/event") }.count }
        #expect(subscriber.waitUntil(seconds: 120) { transitions($0.stdout) >= expected },
                "\(transitions(subscriber.stdout)) of \(expected): \(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(!agent.stderr.contains("mqtt outbox full"), "\(agent.stderr)")
        // Each transition once (QoS 1 may repeat one whose acknowledgement was lost).
        let distinct = Set(MQTTLines(subscriber.stdout).messages.filter { $0.topic.hasSuffix("/event") }.map { "\($0.topic) \($0.payload)" })
        #expect(distinct.count == expected, "\(distinct.count) of \(expected)")
    }

    @Test func aBrokerOutageMidTrackLosesNoEvent() throws {
        let broker = try Mosquitto()
        // A persistent session: what is published while it reconnects waits for it at the broker.
        let subscriber = try broker.subscribe([Self.ownTopic + "/event"], session: "geoalarm-test-outage")
        // The walk in three parts: to the first event, on past the post office with the broker
        // away, then the rest with the broker back.
        func part(_ epochs: Range<Int>) throws -> String {
            try Command.temporaryFile(try LiveAgentTests.walkEpochs(epochs), named: "part.nmea")
        }
        let gpsd = try GPSFake()
        try gpsd.load(try part(0..<200))
        let state = Command.scratchState()
        let agent = try Background(["run", "--headless", "-c", try Self.demoConfig(broker, homeAssistant: false), "--state", state,
                                    "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdoutLines.count == 1)
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).objects(on: Self.ownTopic + "/event").count >= 1 })
        broker.stop()
        #expect(agent.waitUntil { $0.stderr.contains("mqtt broker") && $0.stderr.contains("unavailable") }, "\(agent.stderr)")
        try gpsd.load(try part(200..<850))
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdoutLines.count == 3, "events go on while the broker is away")
        let waiting = try Command.run([state, "SELECT count(*) FROM queue WHERE name = 'mqtt-outbox'"], executable: "/usr/bin/sqlite3")
        #expect((Int(waiting.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 2, "kept in the outbox")
        try broker.start()
        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(850...), named: "rest.nmea"))
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdoutLines.count == 5)
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).objects(on: Self.ownTopic + "/event").count >= Self.demoCrossings.count })
        // The broker's acknowledgements may come after the subscriber has the messages: each
        // empties a row of the outbox, a write to the state file's folder.
        func outboxCount() -> String {
            // Read-only: a connection that could write would wake this wait itself as it closes.
            ((try? Command.run(["-readonly", state, "SELECT count(*) FROM queue WHERE name = 'mqtt-outbox'"], executable: "/usr/bin/sqlite3"))?.stdout ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(EventWait(folders: [URL(fileURLWithPath: state).deletingLastPathComponent().path]).until { outboxCount() == "0" },
                "acknowledged messages leave the outbox")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let published = MQTTLines(subscriber.stdout).objects(on: Self.ownTopic + "/event").map { "\($0["rid"] ?? "")@\($0["tst"] ?? "")" }
        // QoS 1 may repeat a message whose acknowledgement was lost; none may be missing or out of order.
        let distinct = published.enumerated().filter { $0.offset == 0 || published[$0.offset - 1] != $0.element }.map(\.element)
        #expect(distinct.map { $0.components(separatedBy: "@")[0] } == Self.demoCrossings.map { $0.components(separatedBy: " ")[1] })
        #expect(outboxCount() == "0")
    }

    @Test func threeDevicesAreTrackedApartAndKeepTheirStateAcrossARestart() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe(["owntracks/+/+/event"])
        let config = try Self.bakeryConfig(broker)
        let state = Command.scratchState()
        func agentRun() throws -> Background {
            let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", config, "--state", state])
            #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") })
            return agent
        }
        var agent = try agentRun()
        // Alice walks to the bakery and stays; Bob stays far away; Carol rides past the bakery.
        for step in 0..<12 {
            let time = Self.start + step * 10
            try broker.publish("owntracks/alice/phone", Self.location(north: max(0, 1000 - Double(step) * 150), at: time))
            try broker.publish("owntracks/bob/car", Self.location(north: -5000, at: time))
            try broker.publish("owntracks/carol/bike", Self.location(north: Double(step) * 120 - 300, at: time))
        }
        #expect(try Self.settled(agent, broker: broker), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let events = Set(agent.stdoutLines.map { line in
            let fields = line.components(separatedBy: "  ")
            return "\(fields.last ?? "") \(fields[1]) \(fields[2])"
        })
        #expect(events == [
            "device alice/phone arrive bakery", "device carol/bike arrive bakery", "device carol/bike leave bakery",
        ])
        #expect(agent.stderr.contains("4 devices tracked"), "the three and the sentinel")
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).messages.count >= 3 })
        let lines = MQTTLines(subscriber.stdout)
        #expect(lines.objects(on: "owntracks/alice/phone/event").map { $0["event"] as? String } == ["enter"])
        #expect(lines.objects(on: "owntracks/carol/bike/event").map { $0["event"] as? String } == ["enter", "leave"])
        #expect(lines.payloads(on: "owntracks/bob/car/event").isEmpty)

        // After a restart Alice is still inside: her next fixes there announce nothing, her leaving does.
        agent = try agentRun()
        for step in 12..<16 {
            try broker.publish("owntracks/alice/phone", Self.location(north: step < 14 ? 0 : 2000, at: Self.start + step * 10))
        }
        #expect(try Self.settled(agent, broker: broker), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.count == 1)
        #expect(agent.stdoutLines.first?.contains("leave  bakery") == true)
        #expect(agent.stdoutLines.first?.hasSuffix("device alice/phone") == true)
        #expect(agent.stderr.contains("tracking alice/phone (2 sides restored)"))
    }

    /// A message that can never be sent (left in the outbox by an older geoalarm, say) is dropped
    /// with a log line; the messages behind it go out.
    @Test func aMessageThatCanNeverBeSentLeavesTheOutboxAndTheRestFollow() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe(["owntracks/#"])
        let config = try Self.bakeryConfig(broker)
        let state = Command.scratchState()
        #expect(try Command.run(["snooze", "bakery", "1m", "-c", config, "--state", state]).status == 0, "makes the state file")
        let rows = try Command.run([state, """
            INSERT INTO queue (name, key, payload) VALUES ('mqtt-outbox', 'owntracks/bad/+/event', CAST('{}' AS BLOB));
            INSERT INTO queue (name, key, payload) VALUES ('mqtt-outbox', 'owntracks/good/phone/event', CAST('{"_type":"transition"}' AS BLOB));
            """], executable: "/usr/bin/sqlite3")
        #expect(rows.status == 0, "\(rows.stderr)")
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", config, "--state", state])
        #expect(subscriber.waitUntil { !MQTTLines($0.stdout).payloads(on: "owntracks/good/phone/event").isEmpty }, "\(agent.stderr)")
        func outboxCount() -> String {
            ((try? Command.run(["-readonly", state, "SELECT count(*) FROM queue WHERE name = 'mqtt-outbox'"], executable: "/usr/bin/sqlite3"))?.stdout ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(EventWait(folders: [URL(fileURLWithPath: state).deletingLastPathComponent().path]).until { outboxCount() == "0" },
                "the acknowledged message leaves the outbox too")
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") })
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stderr.contains("mqtt: dropped a message for owntracks/bad/+/event that cannot be sent"), "\(agent.stderr)")
    }

    /// A device whose transitions could not be published (its topic leaves no room for
    /// `/event`) is refused and counted; the others are tracked as before.
    @Test func aDeviceThatCannotBeAnsweredIsRefusedAndCounted() throws {
        let broker = try Mosquitto()
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", try Self.bakeryConfig(broker),
                                    "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") })
        let long = "owntracks/" + String(repeating: "x", count: 65_519) + "/phone"
        #expect(long.utf8.count == 65_535, "the longest topic MQTT carries")
        try broker.publish(long, Self.location(north: 10, at: Self.start))
        try broker.publish("owntracks/alice/phone", Self.location(north: 10, at: Self.start))
        #expect(try Self.settled(agent, broker: broker), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stderr.contains("ignored a device whose event topic is 65541 bytes"), "\(agent.stderr)")
        #expect(agent.stderr.contains("1 unanswerable device"), "\(agent.stderr)")
        #expect(agent.stderr.contains("tracking alice/phone"))
    }

    /// Beyond `max_devices`, new device names are refused (said once, counted); the devices
    /// tracked already go on.
    @Test func newDevicesBeyondMaxDevicesAreRefusedAndCounted() throws {
        let broker = try Mosquitto()
        let config = try Self.bakeryConfig(broker, extra: "max_devices = 2")
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", config, "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") })
        for (step, device) in ["alice", "bob", "carol", "dave"].enumerated() {
            try broker.publish("owntracks/\(device)/phone", Self.location(north: 900, at: Self.start + step))
        }
        for (step, metres) in [300.0, 20, 10].enumerated() {
            try broker.publish("owntracks/alice/phone", Self.location(north: metres, at: Self.start + 10 + step * 10))
        }
        #expect(agent.waitUntil { $0.stdout.contains("arrive  bakery") }, "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stderr.contains("2 devices are tracked, max_devices: carol/phone and any other new device are refused"), "\(agent.stderr)")
        #expect(agent.stderr.contains("2 new device beyond max_devices"), "\(agent.stderr)")
        #expect(agent.stdoutLines.count == 1 && agent.stdoutLines[0].hasSuffix("device alice/phone"))
    }

    /// Retained junk under made-up names (delivered at every start) cannot lock out the real
    /// phone: a name that never sent a usable location holds no place, and a device named in
    /// `[mqtt.device_secrets]` always has one; the names refused are said.
    @Test func madeUpDevicesCannotLockOutTheRealPhone() throws {
        let broker = try Mosquitto()
        let alice = "correct horse battery staple"
        let config = try String(contentsOfFile: try Self.bakeryConfig(broker, extra: "max_devices = 2"), encoding: .utf8) + """

            [mqtt.device_secrets]
            "alice/phone" = "\(try OwnTracksPhoneTests.secretFile(alice))"
            """
        // Retained before the agent starts: junk that is no usable location, and usable locations
        // under made-up names, more than max_devices.
        for number in 0..<5 {
            try broker.publish("owntracks/junk\(number)/x", #"{"_type":"location","lat":47,"lon":8,"tst":1,"acc":5}"#, retain: true)
        }
        for number in 0..<3 {
            try broker.publish("owntracks/made\(number)/up", Self.location(north: 5000, at: Self.start), retain: true)
        }
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", try Command.temporaryFile(config),
                                    "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") }, "\(agent.stderr)")
        #expect(agent.waitUntil { $0.stderr.contains("max_devices: made2/up") }, "\(agent.stderr)")
        for (step, metres) in [900.0, 300, 20, 10].enumerated() {
            try broker.publish("owntracks/alice/phone", try OwnTracksPhoneTests.sealed(Self.location(north: metres, at: Self.start + step * 10), with: alice))
        }
        #expect(agent.waitUntil { $0.stdout.contains("arrive  bakery") }, "Alice's phone has its place: \(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.count == 1 && agent.stdoutLines[0].hasSuffix("device alice/phone"), "\(agent.stdout)")
        #expect(agent.stderr.contains("3 devices tracked"), "made0, made1 and alice: \(agent.stderr)")
        #expect(agent.stderr.contains("refused beyond max_devices: made2/up"), "\(agent.stderr)")
        #expect(!agent.stderr.contains("tracking junk"), "junk holds no place: \(agent.stderr)")
    }

    /// A device silent for `device_idle` leaves memory; its next message brings back its state
    /// from the state file (still inside: nothing to announce).
    @Test func anIdleDeviceLeavesMemoryAndComesBackFromTheStateFile() throws {
        let broker = try Mosquitto()
        let config = try Self.bakeryConfig(broker, extra: "device_idle = \"1s\"")
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", config, "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") })
        for (step, metres) in [900.0, 900, 10, 10].enumerated() {
            try broker.publish("owntracks/alice/phone", Self.location(north: metres, at: Self.start + step * 10))
        }
        #expect(agent.waitUntil { $0.stderr.contains("let go of 1 device silent for") }, "\(agent.stderr)")
        try broker.publish("owntracks/alice/phone", Self.location(north: 5, at: Self.start + 100))
        // Both reminders' sides (inside the bakery, outside the station) come back.
        #expect(agent.waitUntil { $0.stderr.contains("tracking alice/phone (2 sides restored)") }, "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.count == 1, "arrived once, not again after coming back: \(agent.stdout)")
    }

    @Test func badPayloadsAreCountedAndTheAgentGoesOn() throws {
        let broker = try Mosquitto()
        let agent = try Background(["run", "--headless", "--source", "owntracks", "-c", try Self.bakeryConfig(broker),
                                    "--state", Command.scratchState()])
        #expect(agent.waitUntil { $0.stderr.contains("connected to owntracks") })
        let topic = "owntracks/dave/phone"
        let hostile = [
            "", "garbage", "{", "[]", "null", #"{"_type":"location"}"#, #"{"_type":"location","lat":"north","lon":8,"tst":1}"#,
            #"{"_type":"location","lat":95,"lon":8,"tst":1763900000}"#, #"{"_type":"location","lat":47,"lon":8}"#,
            #"{"_type":"location","lat":47,"lon":8,"tst":1e300}"#, #"{"_type":"location","lat":1e999,"lon":8,"tst":1763900000}"#,
            String(repeating: "[", count: 100_000),
            #"{"_type":"location","lat":47,"lon":8,"tst":1763900000,"image":"\#(String(repeating: "a", count: 1 << 20))"}"#,
            #"{"_type":"teleport","lat":47,"lon":8,"tst":1763900000}"#, #"{"_type":"encrypted","data":"AAAA"}"#,
            #"{"_type":"lwt","tst":1763900000}"#, #"{"_type":"transition","event":"enter","tst":1763900000}"#,
        ]
        for payload in hostile { try broker.publish(topic, payload) }
        // Then a real walk in, with a repeat and one from the past among it.
        for (step, metres) in [900.0, 600, 300, 50, 20, 10].enumerated() {
            try broker.publish(topic, Self.location(north: metres, at: Self.start + step * 10))
        }
        try broker.publish(topic, Self.location(north: 10, at: Self.start + 50))
        try broker.publish(topic, Self.location(north: 10, at: Self.start + 5))
        #expect(try Self.settled(agent, broker: broker), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines.count == 1)
        #expect(agent.stdoutLines.first?.contains("arrive  bakery") == true)
        // 15 hostile payloads are ignored and counted by kind; the lwt and the transition are
        // messages the apps send, simply not locations.
        #expect(agent.stderr.contains("15 messages ignored (1 encrypted without a secret, 6 invalid location, 6 malformed, 1 oversized, 1 unknown _type)"),
                "\(agent.stderr)")
        // The first of each kind is logged, with why.
        #expect(agent.stderr.components(separatedBy: "(malformed: the first is logged").count == 2)
        #expect(agent.stderr.components(separatedBy: "(invalid location: the first is logged").count == 2)
        #expect(agent.stderr.contains("ignored malformed JSON (line 1: expected '{') on owntracks/dave/phone"))
        #expect(agent.stderr.contains("ignored a location without lat and lon on owntracks/dave/phone"))
        #expect(!agent.stderr.contains("a location out of range"))
        #expect(agent.stderr.contains("1 repeated time"))
        #expect(agent.stderr.contains("1 out of order"))
        #expect(!agent.stderr.contains("Fatal"))
    }

    @Test func aRemovedReminderIsClearedFromHomeAssistantAndDiscoveryFollowsItsRestart() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe(["homeassistant/#", "geoalarm/#"])
        let config = try Self.bakeryConfig(broker, extra: "homeassistant = true")
        let nothingListens = try GPSFake()
        let state = Command.scratchState()
        let agent = try Background(["run", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(nothingListens.port)"])
        let station = "homeassistant/binary_sensor/\(Self.clientID)/station/config"
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: station).count == 1 })
        let text = try String(contentsOfFile: config, encoding: .utf8)
        let removed = text.replacingOccurrences(of: Self.station, with: "")
        #expect(removed != text)
        try removed.write(toFile: config, atomically: true, encoding: .utf8)
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: station) == [MQTTLines($0.stdout).payloads(on: station)[0], ""] },
                "an empty retained config removes the entity")
        // Its state and attributes are cleared after the config, once Home Assistant dropped the
        // entity: cleared first, they would reach an entity still there ("Erroneous JSON").
        let attributes = "geoalarm/\(Self.clientID)/reminder/station/attributes"
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: attributes).last == "" }, "\(subscriber.stdout)")
        let order = MQTTLines(subscriber.stdout).messages.enumerated().filter { $0.element.payload.isEmpty }.map(\.element.topic)
        #expect(order.firstIndex(of: station).map { $0 < (order.firstIndex(of: attributes) ?? -1) } == true, "\(order)")
        let bakery = "homeassistant/binary_sensor/\(Self.clientID)/bakery/config"
        let before = MQTTLines(subscriber.stdout).payloads(on: bakery).count
        try broker.publish("homeassistant/status", "online")
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: bakery).count == before + 1 })
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)

        // An agent tracking OwnTracks devices has no position of its own: Home Assistant gets no
        // entity from it that could never change, and the ones it had are removed.
        let tracking = try Background(["run", "--headless", "--source", "owntracks", "-c", config, "--state", state])
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: bakery).last == "" }, "\(subscriber.stdout)")
        #expect(tracking.stderr.contains("homeassistant: this agent has no position of its own (--source owntracks)"))
        // Stopped once its loop runs (the publisher connects before the agent handles signals).
        #expect(tracking.waitUntil { $0.stderr.contains("connected to owntracks") }, "\(tracking.stderr)")
        tracking.signal(SIGTERM)
        #expect(tracking.exitStatus() == 0)
    }

    /// Home Assistant's Done and Snooze buttons (`homeassistant_buttons`): a press completes or
    /// snoozes its reminder as a pop-up's button does, in the state file and in the presence
    /// sensor's attributes. A retained press (left on the broker before the agent came: it would
    /// press again at every connect), a press of no button and a press for no reminder are
    /// ignored, each kind said once.
    @Test func homeAssistantsButtonsCompleteAndSnoozeReminders() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe(["homeassistant/#", "geoalarm/#"])
        let config = try Self.bakeryConfig(broker, extra: "homeassistant = true\nhomeassistant_buttons = true\n[output]\nsnooze = \"20m\"")
        let press = { (reminder: String) in "geoalarm/\(Self.clientID)/reminder/\(reminder)/press" }
        try broker.publish(press("station"), "done", retain: true)
        let nothingListens = try GPSFake()
        let state = Command.scratchState()
        let agent = try Background(["run", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(nothingListens.port)"])
        let done = "homeassistant/button/\(Self.clientID)/done_bakery/config"
        let snooze = "homeassistant/button/\(Self.clientID)/snooze_bakery/config"
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).objects(on: snooze).count == 1 }, "\(subscriber.stdout)")
        let lines = MQTTLines(subscriber.stdout)
        #expect(lines.objects(on: done).first?["name"] as? String == "Buy bread: Done")
        #expect(lines.objects(on: snooze).first?["name"] as? String == "Buy bread: Snooze 20 min")
        #expect(lines.objects(on: done).first?["command_topic"] as? String == press("bakery"))
        #expect(lines.objects(on: snooze).first?["payload_press"] as? String == "snooze")
        // Said once every subscription is acknowledged.
        #expect(agent.waitUntil { $0.stderr.contains("connected to \(broker.url)") }, "\(agent.stderr)")
        try broker.publish(press("nobody"), "done")
        try broker.publish(press("bakery"), "Done")
        try broker.publish(press("bakery"), "Done")
        let pressed = Date()
        try broker.publish(press("station"), "snooze")
        try broker.publish(press("bakery"), "done")
        let attributes = { (reminder: String) in "geoalarm/\(Self.clientID)/reminder/\(reminder)/attributes" }
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).objects(on: attributes("bakery")).last?["completed"] as? Bool == true },
                "\(agent.stderr)")
        let station = try #require(MQTTLines(subscriber.stdout).objects(on: attributes("station")).last)
        #expect(station["completed"] as? Bool == false, "the retained press was not taken: \(station)")
        let until = try #require((station["snoozed_until"] as? String).flatMap { try? Date($0, strategy: .iso8601) }, "\(station)")
        #expect(until.timeIntervalSince(pressed) > 1190 && until.timeIntervalSince(pressed) < 1260, "\(until) for a press at \(pressed)")
        let status = try Command.run(["status", "--json", "-c", config, "--state", state])
        let rows = status.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(rows.first { $0["id"] as? String == "bakery" }?["completed"] as? Bool == true, "\(status.stdout)")
        #expect(rows.first { $0["id"] as? String == "station" }?["snoozed_until"] as? String != nil, "\(status.stdout)")
        for said in ["\"Done\" pressed for reminder bakery", "\"Snooze 20 min\" pressed for reminder station",
                     "ignored a retained press on \(press("station"))", "ignored a press on \(press("nobody")): no reminder",
                     "ignored a press of \"Done\" on \(press("bakery")): the buttons are done and snooze"] {
            #expect(agent.stderr.components(separatedBy: said).count == 2, "said once: \(said)\n\(agent.stderr)")
        }
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }

    /// A task's Done button names its task: pressed as Home Assistant still shows it after
    /// another member's task came to take the id it was made with (a press can cross the new
    /// discovery on its way), it completes the task it was made for, never theirs.
    @Test func aTasksDoneButtonActsOnTheTaskItWasMadeFor() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe(["homeassistant/#"])
        let folder = try TaskListLiveTests.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let mine = TaskListLiveTests.object(["UID:pickupthekids-2026", "SUMMARY:Pick up the kids"] + TaskListLiveTests.appleArrive("47.0", "8.0", radius: 100))
        try mine.write(toFile: folder + "/mine.ics", atomically: true, encoding: .utf8)
        let config = try Command.temporaryFile("""
            [[tasklist]]
            name = "Errands"
            vdir = "\(folder)"

            [mqtt]
            url = "\(broker.url)"
            client_id = "\(Self.clientID)"
            owntracks_topic = "\(Self.ownTopic)"
            homeassistant = true
            homeassistant_buttons = true
            """)
        let nothingListens = try GPSFake()
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(nothingListens.port)"])
        let button = "homeassistant/button/\(Self.clientID)/done_errands_pickupth_"
        let doneButtons = { (output: String) in MQTTLines(output).messages.filter { $0.topic.hasPrefix(button) && !$0.payload.isEmpty } }
        #expect(subscriber.waitUntil { doneButtons($0.stdout).count == 1 }, "\(subscriber.stdout)")
        let shown = try #require(doneButtons(subscriber.stdout).first)
        let made = try #require(try JSONSerialization.jsonObject(with: Data(shown.payload.utf8)) as? [String: Any])
        let pressTopic = try #require(made["command_topic"] as? String)
        let pressPayload = try #require(made["payload_press"] as? String)
        #expect(pressPayload == "done:pickupthekids-2026")
        #expect(agent.waitUntil { $0.stderr.contains("connected to \(broker.url)") }, "\(agent.stderr)")
        // Theirs takes the id the button was made with; its button is published in its place.
        let theirs = TaskListLiveTests.object(["UID:pickupth", "SUMMARY:Pick up the kids"] + TaskListLiveTests.appleArrive("46.0", "8.0", radius: 100))
        try theirs.write(toFile: folder + "/theirs.ics", atomically: true, encoding: .utf8)
        #expect(subscriber.waitUntil { doneButtons($0.stdout).contains { $0.topic == shown.topic && $0.payload.contains(#""done:pickupth""#) } },
                "\(subscriber.stdout)")
        try broker.publish(pressTopic, pressPayload)
        #expect(agent.waitUntil { $0.stderr.contains("completed errands/pickupthekids2026 in task list Errands") }, "\(agent.stderr)")
        #expect(try String(contentsOfFile: folder + "/mine.ics", encoding: .utf8).contains("STATUS:COMPLETED"))
        #expect(try String(contentsOfFile: folder + "/theirs.ics", encoding: .utf8) == theirs, "theirs is as they wrote it")
        // Pressed again once its task is gone from the list: refused, and said.
        try FileManager.default.removeItem(atPath: folder + "/mine.ics")
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 1 reminder") }, "\(agent.stderr)")
        try broker.publish(pressTopic, pressPayload)
        #expect(agent.waitUntil { $0.stderr.contains("for task pickupthekids-2026: it is no longer in its list") }, "\(agent.stderr)")
        #expect(try String(contentsOfFile: folder + "/theirs.ics", encoding: .utf8) == theirs)
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }

    @Test func aBrokerWithPasswordsTakesTheOneFromThePasswordFile() throws {
        let broker = try Mosquitto(passwords: ["agent": "s3cret words"])
        let subscriber = try broker.subscribe(["owntracks/#"], user: ("agent", "s3cret words"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-pw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let passwordFile = folder.appendingPathComponent("mqtt-password").path
        _ = FileManager.default.createFile(atPath: passwordFile, contents: Data("s3cret words\n".utf8), attributes: [.posixPermissions: 0o600])
        let config = try Self.demoConfig(broker, homeAssistant: false, extra: "username = \"agent\"\npassword_file = \"\(passwordFile)\"")
        let agent = try Self.walkDemo(config: config, seenBy: subscriber)
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)

        // A wrong password is the broker's refusal, logged, and the agent goes on logging events.
        _ = FileManager.default.createFile(atPath: passwordFile, contents: Data("wrong\n".utf8), attributes: [.posixPermissions: 0o600])
        let refused = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:1"])
        #expect(refused.waitUntil { $0.stderr.contains("the broker refused the connection") }, "\(refused.stderr)")
        #expect(refused.isRunning)
        let doctor = try Command.run(["doctor", "--headless", "-c", config, "--gpsd", "localhost:1", "--wait", "0"])
        #expect(doctor.stdoutLines.contains {
            $0.hasPrefix("FAIL  mqtt: \(broker.url) as agent: the broker refused the connection: ")
                && $0.hasSuffix("Do: check username and password_file in [mqtt], and the broker's access rules")
        }, "\(doctor.stdout)")
        refused.signal(SIGTERM)
        #expect(refused.exitStatus() == 0)
    }

    /// A broker that is not there is said with the system's reason: the connecting thread's errno
    /// (read on the loop, it said "Success").
    @Test func aBrokerThatIsNotThereIsSaidWithTheSystemsReason() throws {
        let nothingListens = try GPSFake()
        let config = try Command.temporaryFile("[mqtt]\nurl = \"mqtt://127.0.0.1:\(nothingListens.port)\"\n")
        let doctor = try Command.run(["doctor", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:1", "--wait", "0"])
        #expect(doctor.stdoutLines.contains {
            $0.hasPrefix("FAIL  mqtt: mqtt://127.0.0.1:\(nothingListens.port): Connection refused")
        }, "\(doctor.stdout)")
    }

    @Test func aTLSBrokerIsReachedWithTheCAFileAndAnUnknownAuthorityIsRefused() throws {
        let broker = try Mosquitto(tls: true)
        let authority = try #require(broker.certificates).authority
        let subscriber = try broker.subscribe(["owntracks/#"])
        let config = try Self.demoConfig(broker, homeAssistant: false, extra: "cafile = \"\(authority)\"")
        let agent = try Self.walkDemo(config: config, seenBy: subscriber)
        #expect(agent.stderr.contains("connected to mqtts://localhost:\(broker.port)"), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let doctor = try Command.run(["doctor", "--headless", "-c", config, "--gpsd", "localhost:1", "--wait", "0"])
        #expect(doctor.stdoutLines.contains("ok    mqtt: mqtts://localhost:\(broker.port) takes the connection"), "\(doctor.stdout)")

        // A certificate from another authority: the agent says so, keeps its events in the
        // outbox, and goes on.
        let stranger = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: stranger, withIntermediateDirectories: true)
        let otherAuthority = try TestCertificates(in: stranger.path).authority
        let refusedConfig = try Self.demoConfig(broker, homeAssistant: false, extra: "cafile = \"\(otherAuthority)\"")
        let replayed = try GPSFake()
        try replayed.load(LiveAgentTests.walk)
        let refused = try Background([
            "run", "--headless", "-c", refusedConfig, "--state", Command.scratchState(), "--gpsd", "localhost:\(replayed.port)",
        ])
        #expect(try replayed.playThrough(to: refused), "\(refused.stderr)")
        #expect(refused.waitUntil { $0.stdoutLines.count == 5 && $0.stderr.contains("TLS: certificate verify failed") },
                "\(refused.stderr)")
        #expect(refused.isRunning)
        refused.signal(SIGTERM)
        #expect(refused.exitStatus() == 0)
        #expect(MQTTLines(subscriber.stdout).payloads(on: Self.ownTopic + "/event").count == Self.demoCrossings.count)
        let failing = try Command.run(["doctor", "--headless", "-c", refusedConfig, "--gpsd", "localhost:1", "--wait", "0"])
        #expect(failing.status == 1)
        #expect(failing.stdoutLines.contains {
            $0.hasPrefix("FAIL  mqtt: mqtts://localhost:\(broker.port): TLS: certificate verify failed. Do: check ")
        }, "\(failing.stdout)")
    }

    /// Presence is the engine's, whatever is announced: a reminder the agent starts inside is ON
    /// from the first fixes, a snoozed one still goes ON and OFF (and has its transitions), a
    /// reminder moved by a reload is unknown until the next fixes place it, and a removed one's
    /// retained config and state are cleared.
    /// The reminders whose retained Home Assistant presence (the last state `lines` saw) is not
    /// what `geoalarm status` says: `ON` inside, `OFF` outside, `None` unknown, cleared for one
    /// not watched. Empty when they all agree.
    static func disagreementsWithStatus(config: String, state: String, lines: MQTTLines) throws -> [String] {
        let status = try Command.run(["status", "--json", "-c", config, "--state", state])
        #expect(status.status == 0, "\(status.stderr)")
        let rows = status.stdoutLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!rows.isEmpty, "\(status.stdout)")
        return rows.compactMap { row -> String? in
            guard let id = row["id"] as? String, row["kind"] as? String == "place" else { return nil }
            let expected = row["enabled"] as? Bool == false
                ? "" : ["inside": "ON", "outside": "OFF"][row["state"] as? String ?? ""] ?? "None"
            // A cleared retained state reaches a later subscriber as nothing at all.
            let shown = lines.payloads(on: "geoalarm/\(clientID)/reminder/\(id)/state").last ?? ""
            return shown == expected ? nil : "\(id): status \(row["state"] ?? "?"), Home Assistant \"\(shown)\""
        }
    }

    static func expectAgreement(config: String, state: String, lines: MQTTLines, at location: SourceLocation = #_sourceLocation) throws {
        let disagreements = try disagreementsWithStatus(config: config, state: state, lines: lines)
        #expect(disagreements.isEmpty, "\(disagreements)", sourceLocation: location)
    }

    @Test func homeAssistantPresenceFollowsTheEngineNotTheAnnouncements() throws {
        let broker = try Mosquitto()
        let subscriber = try broker.subscribe(["homeassistant/#", "geoalarm/#", Self.ownTopic + "/event"])
        let config = try Self.demoConfig(broker)
        let state = Command.scratchState()
        #expect(try Command.run(["snooze", "bread", "1h", "-c", config, "--state", state]).status == 0)
        let gpsd = try GPSFake()
        // The walk from home to the bakery, where it stays (08:06:39 to 08:10:39) at its 480th epoch.
        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<480), named: "to-the-bakery.nmea"))
        let agent = try Background(["run", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(gpsd.port)"])
        #expect(agent.waitUntil { $0.stderr.contains("connected to \(broker.url)") }, "\(agent.stderr)")
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        let node = "geoalarm/\(Self.clientID)/reminder"
        func known(_ id: String) -> [String] {
            Self.changes(MQTTLines(subscriber.stdout).payloads(on: "\(node)/\(id)/state"))
        }
        #expect(subscriber.waitUntil { _ in known("bread") == ["OFF", "ON"] }, "\(subscriber.stdout)")
        #expect(known("water-the-plants-before-you-go") == ["ON", "OFF"], "inside at start, then left")
        #expect(agent.stdoutLines.count == 1 && agent.stdoutLines[0].contains("leave  water-the-plants"), "bread is snoozed")
        // Home Assistant's event entity follows the announcements, as stdout does.
        let announced = MQTTLines(subscriber.stdout).objects(on: "geoalarm/\(Self.clientID)/announcement")
        #expect(announced.map { "\($0["event_type"] ?? "") \($0["reminder"] ?? "")" } == ["leave water-the-plants-before-you-go"], "\(announced)")
        #expect(agent.stderr.contains("arrive bread not announced: the reminder is snoozed"))
        let attributes = try #require(MQTTLines(subscriber.stdout).objects(on: "\(node)/bread/attributes").last)
        #expect(attributes["snoozed_until"] is String && attributes["completed"] as? Bool == false, "\(attributes)")
        #expect((attributes["distance_m"] as? Double ?? .infinity) <= 30, "inside its 30 m circle")
        #expect(MQTTLines(subscriber.stdout).objects(on: Self.ownTopic + "/event").map { "\($0["event"] ?? "") \($0["rid"] ?? "")" }
            == Array(Self.demoCrossings.prefix(2)))
        try Self.expectAgreement(config: config, state: state, lines: MQTTLines(subscriber.stdout))

        // The bakery's reminder moves away and the parcel's is removed, while the walk waits.
        let text = try String(contentsOfFile: config, encoding: .utf8)
        var edited = text.replacingOccurrences(of: "place = \"bakery\"", with: "lat = 38.75\nlon = -9.2")
        edited = edited.replacingOccurrences(of: "id = \"parcel\"", with: "id = \"parcel\"\nenabled = false")
        #expect(edited != text)
        try edited.write(toFile: config, atomically: true, encoding: .utf8)
        agent.signal(SIGHUP)
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config)") }, "\(agent.stderr)")
        #expect(subscriber.waitUntil { MQTTLines($0.stdout).payloads(on: "\(node)/bread/state").last == "None" },
                "moved: not known until the next fixes")
        let parcelConfig = "homeassistant/binary_sensor/\(Self.clientID)/parcel/config"
        #expect(subscriber.waitUntil {
            MQTTLines($0.stdout).payloads(on: parcelConfig).last == "" && MQTTLines($0.stdout).payloads(on: "\(node)/parcel/state").last == ""
        }, "a reminder gone is cleared from Home Assistant")
        try Self.expectAgreement(config: config, state: state, lines: MQTTLines(subscriber.stdout))

        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(480..<520), named: "on.nmea"))
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(subscriber.waitUntil { _ in known("bread") == ["OFF", "ON", "OFF"] }, "outside the moved circle")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let status = try Command.run(["status", "-c", config, "--state", state])
        #expect(status.stdoutLines.contains { $0.hasPrefix("bread ") && $0.contains("outside") }, "\(status.stdout)")
        #expect(status.stdoutLines.contains { $0.hasPrefix("water-the-plants-before-you-go ") && $0.contains("outside") }, "\(status.stdout)")
        #expect(MQTTLines(subscriber.stdout).objects(on: Self.ownTopic + "/event").count == 2, "a side learnt is no transition")
        try Self.expectAgreement(config: config, state: state, lines: MQTTLines(subscriber.stdout))

        // After a restart, with no fix yet, Home Assistant finds what the state file says.
        let late = try broker.subscribe(["geoalarm/#"])
        let nothingListens = try GPSFake()
        let restarted = try Background(["run", "--headless", "-c", config, "--state", state, "--gpsd", "localhost:\(nothingListens.port)"])
        #expect(late.waitUntil { MQTTLines($0.stdout).payloads(on: "geoalarm/\(Self.clientID)/availability").last == "online" })
        #expect(late.waitUntil { MQTTLines($0.stdout).payloads(on: "\(node)/bread/state").count >= 2 }, "republished on connect")
        restarted.signal(SIGTERM)
        #expect(restarted.exitStatus() == 0)
        try Self.expectAgreement(config: config, state: state, lines: MQTTLines(late.stdout))
    }
}
