import Foundation
import GeoAlarmConfig
import GeoAlarmCore
@testable import GeoAlarmMQTT
import GeoAlarmOwnTracks
import GeoAlarmStore
import GeoAlarmTestSupport
import GeoAlarmSystem
import Logging
import Synchronization
import Testing

/// The messages the MQTT adapter writes and reads, without a broker.
struct MQTTFormatTests {
    static let bakery = Reminder(id: "bakery", title: "Buy \"bread\"", geometry: .circle(center: Coordinate(latitude: 47, longitude: 8), radius: 100))

    static func object(_ text: String?) throws -> [String: Any] {
        let bytes = Data(try #require(text).utf8)
        return try #require(JSONSerialization.jsonObject(with: bytes) as? [String: Any])
    }

    @Test func aTransitionHasTheBookletsMembersAndNeverAZeroAccuracy() throws {
        let time = Date(timeIntervalSince1970: 1_795_248_399.6)
        let fix = Fix(time: time, coordinate: Coordinate(latitude: 47.0001, longitude: 8), horizontalError: 0.2)
        let enter = try Self.object(OwnTracksMessages.transition(
            PresenceChange(reminder: Self.bakery, presence: .inside, fix: fix, distance: 11, isInitial: false),
            wtst: Date(timeIntervalSince1970: 1_795_000_000.5), tid: "pi", unknownError: 100))
        #expect(enter["_type"] as? String == "transition")
        #expect(enter["event"] as? String == "enter")
        #expect(enter["desc"] as? String == "Buy \"bread\"")
        #expect(enter["rid"] as? String == "bakery")
        #expect(enter["tst"] as? Int == 1_795_248_399)
        #expect(enter["acc"] as? Int == 1, "0.2 m rounds up to 1: OwnTracks reads 0 as unknown")
        #expect(enter["t"] as? String == "c")
        #expect(enter["wtst"] as? Int == 1_795_000_000, "when the reminder was first seen")
        var unknown = fix
        unknown.horizontalError = nil
        let leave = try Self.object(OwnTracksMessages.transition(
            PresenceChange(reminder: Self.bakery, presence: .outside, fix: unknown, distance: 200, isInitial: false),
            wtst: Date(timeIntervalSince1970: 1_795_000_000), tid: "pi", unknownError: 60))
        #expect(leave["event"] as? String == "leave")
        #expect(leave["acc"] as? Int == 60)
    }

    /// Each reminder is an OwnTracks waypoint whose `tst` is the `wtst` its transitions carry; an
    /// area is the circle around its middle that holds it.
    @Test func theRemindersAreOwnTracksWaypoints() throws {
        let area = try Area(polygons: [[[Coordinate(latitude: 47, longitude: 8), Coordinate(latitude: 47, longitude: 8.01),
                                          Coordinate(latitude: 47.01, longitude: 8.01), Coordinate(latitude: 47.01, longitude: 8)]]])
        var park = Self.bakery
        park.id = "park"
        park.geometry = .area(area)
        let text = OwnTracksMessages.waypoints([Self.bakery, park], firstSeen: ["bakery": Date(timeIntervalSince1970: 1_790_000_000)])
        let object = try Self.object(text)
        #expect(object["_type"] as? String == "waypoints")
        let list = try #require(object["waypoints"] as? [[String: Any]])
        #expect(list.map { $0["rid"] as? String } == ["bakery"], "the park, never placed by a fix, waits")
        let both = try #require(try Self.object(OwnTracksMessages.waypoints(
            [Self.bakery, park], firstSeen: ["bakery": Date(timeIntervalSince1970: 1), "park": Date(timeIntervalSince1970: 2)]))["waypoints"] as? [[String: Any]])
        #expect(both.map { $0["rid"] as? String } == ["bakery", "park"])
        #expect(list[0]["_type"] as? String == "waypoint" && list[0]["rad"] as? Int == 100 && list[0]["tst"] as? Int == 1_790_000_000)
        let radius = try #require(both[1]["rad"] as? Int)
        #expect((600...700).contains(radius), "half the diagonal of a 0.01-degree square at 47 N: \(radius)")
    }

    @Test func aLocationNamesTheRegionsItIsInside() throws {
        let fix = Fix(time: Date(timeIntervalSince1970: 1_795_248_399), coordinate: Coordinate(latitude: 47, longitude: 8),
                      horizontalError: 12.3, speed: 2, course: 91.6)
        let location = try Self.object(OwnTracksMessages.location(
            fix, tid: "pi", trigger: "t", inside: [("bakery", "Buy bread"), ("home", "Home")], unknownError: 100))
        #expect(location["_type"] as? String == "location")
        #expect(location["acc"] as? Int == 13)
        #expect(location["vel"] as? Int == 7, "km/h")
        #expect(location["cog"] as? Int == 92)
        #expect(location["inregions"] as? [String] == ["Buy bread", "Home"])
        #expect(location["inrids"] as? [String] == ["bakery", "home"])
        let outside = try Self.object(OwnTracksMessages.location(fix, tid: "pi", trigger: "c", inside: [], unknownError: 100))
        #expect(outside["inregions"] == nil)
    }

    @Test func discoveryGivesEachReminderAPresenceSensorOfOneDevice() throws {
        let discovery = HomeAssistantDiscovery(
            prefix: "homeassistant", clientID: "geoalarm-pi", availabilityTopic: "geoalarm/geoalarm-pi/availability", softwareVersion: "0.2.0")
        let odd = Reminder(id: "a.b", title: "Dots", geometry: .circle(center: Coordinate(latitude: 1, longitude: 1), radius: 50))
        let underscore = Reminder(id: "a_b", title: "Underscore", geometry: .circle(center: Coordinate(latitude: 1, longitude: 1), radius: 50))
        let configs = discovery.configs(reminders: [Self.bakery, odd, underscore], collections: [])
        #expect(configs.count == 11, "three reminders' presence, distance and direction sensors, the tracker and the announcements")
        let bakery = try Self.object(configs["homeassistant/binary_sensor/geoalarm-pi/bakery/config"])
        #expect(bakery["state_topic"] as? String == "geoalarm/geoalarm-pi/reminder/bakery/state")
        #expect(bakery["device_class"] as? String == "presence")
        // Available as the agent's own status says (the broker says `offline` by its will after a crash).
        #expect(bakery["availability_topic"] as? String == "geoalarm/geoalarm-pi/availability")
        #expect(bakery["payload_available"] as? String == "online" && bakery["payload_not_available"] as? String == "offline")
        #expect(bakery["availability"] == nil)
        let device = try #require(bakery["device"] as? [String: Any])
        #expect(device["identifiers"] as? [String] == ["geoalarm_geoalarm-pi"])
        #expect(device["sw_version"] as? String == "0.2.0")
        #expect(device["name"] as? String == "geoalarm-pi", "named by the client id: two agents on a host are two devices")
        let origin = try #require(bakery["origin"] as? [String: Any])
        #expect(origin["name"] as? String == "geoalarm" && origin["sw_version"] as? String == "0.2.0")
        // Ids that differ only in characters a topic level cannot hold stay apart.
        let objects = configs.keys.filter { $0.contains("/binary_sensor/") }
        #expect(Set(objects).count == 3)
        #expect(HomeAssistantDiscovery.objectID("a.b") != HomeAssistantDiscovery.objectID("a_b"))
        #expect(HomeAssistantDiscovery.objectID("a.b").allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-".contains($0)) })
        let tracker = try Self.object(configs["homeassistant/device_tracker/geoalarm-pi/location/config"])
        #expect(tracker["json_attributes_topic"] as? String == discovery.locationTopic)
        #expect(tracker["source_type"] as? String == "gps")
        // As Home Assistant's proximity: a distance in metres and a direction of travel.
        let distance = try Self.object(configs["homeassistant/sensor/geoalarm-pi/distance_bakery/config"])
        #expect(distance["state_topic"] as? String == "geoalarm/geoalarm-pi/reminder/bakery/distance")
        #expect(distance["device_class"] as? String == "distance" && distance["unit_of_measurement"] as? String == "m")
        #expect(distance["unique_id"] as? String == "geoalarm_geoalarm-pi_distance_bakery")
        let direction = try Self.object(configs["homeassistant/sensor/geoalarm-pi/direction_bakery/config"])
        #expect(direction["state_topic"] as? String == "geoalarm/geoalarm-pi/reminder/bakery/direction")
        #expect(direction["device_class"] as? String == "enum")
        #expect(discovery.retainedTopics(ofConfigTopic: "homeassistant/sensor/geoalarm-pi/direction_bakery/config")
            == ["geoalarm/geoalarm-pi/reminder/bakery/direction"])
        #expect(discovery.retainedTopics(ofConfigTopic: "homeassistant/sensor/geoalarm-pi/distance_bakery/config")
            == ["geoalarm/geoalarm-pi/reminder/bakery/distance"])
        // The announcements: an event entity whose events are the kinds an event line says.
        let announcements = try Self.object(configs["homeassistant/event/geoalarm-pi/announcements/config"])
        #expect(announcements["state_topic"] as? String == "geoalarm/geoalarm-pi/announcement")
        #expect(announcements["event_types"] as? [String] == ["arrive", "leave", "approach", "alarm"])
        #expect(discovery.retainedTopics(ofConfigTopic: "homeassistant/event/geoalarm-pi/announcements/config").isEmpty)
        #expect(HomeAssistantDiscovery.directionState(Proximity(distance: 10, direction: .unknown)) == "unknown")
        #expect(HomeAssistantDiscovery.distanceState(nil) == "None")
        #expect(HomeAssistantDiscovery.directionState(Proximity(distance: 10, direction: .away)) == "away_from")
        #expect(HomeAssistantDiscovery.distanceState(Proximity(distance: 1234.6, direction: .towards)) == "1235")
    }

    /// With buttons, each reminder has a Done and a Snooze button whose label says the snooze's
    /// length; both press on the reminder's press topic, the payload naming the button. Without,
    /// none.
    @Test func buttonsPressOnTheirRemindersPressTopic() throws {
        let odd = Reminder(id: "a.b", title: "Dots", geometry: .circle(center: Coordinate(latitude: 1, longitude: 1), radius: 50))
        func discovery(buttons: Bool) -> HomeAssistantDiscovery {
            HomeAssistantDiscovery(
                prefix: "homeassistant", clientID: "geoalarm-pi", availabilityTopic: "geoalarm/geoalarm-pi/availability",
                softwareVersion: "0.2.0", buttonSnooze: buttons ? 1200 : nil)
        }
        #expect(discovery(buttons: false).configs(reminders: [Self.bakery, odd], collections: []).keys.filter { $0.contains("/button/") }.isEmpty)
        let withButtons = discovery(buttons: true)
        let configs = withButtons.configs(reminders: [Self.bakery, odd], collections: [])
        #expect(configs.count == 12, "two reminders' three sensors and two buttons, the tracker and the announcements")
        let done = try Self.object(configs["homeassistant/button/geoalarm-pi/done_bakery/config"])
        let snooze = try Self.object(configs["homeassistant/button/geoalarm-pi/snooze_bakery/config"])
        #expect(done["name"] as? String == "Buy \"bread\": Done" && snooze["name"] as? String == "Buy \"bread\": Snooze 20 min")
        #expect(done["command_topic"] as? String == "geoalarm/geoalarm-pi/reminder/bakery/press")
        #expect(snooze["command_topic"] as? String == done["command_topic"] as? String)
        #expect(done["payload_press"] as? String == "done" && snooze["payload_press"] as? String == "snooze")
        #expect(done["unique_id"] as? String == "geoalarm_geoalarm-pi_done_bakery")
        #expect(done["availability_topic"] as? String == "geoalarm/geoalarm-pi/availability")
        #expect(withButtons.retainedTopics(ofConfigTopic: "homeassistant/button/geoalarm-pi/done_bakery/config").isEmpty)
        // The press topics are read back to their reminder's object id, and nothing else is.
        let oddTopic = withButtons.pressTopic(ofReminder: "a.b")
        #expect(withButtons.pressedObject(oddTopic).map(String.init) == HomeAssistantDiscovery.objectID("a.b"))
        #expect(withButtons.pressFilter == "geoalarm/geoalarm-pi/reminder/+/press")
        for other in ["geoalarm/geoalarm-pi/reminder/bakery/state", "geoalarm/other/reminder/bakery/press",
                      "geoalarm/geoalarm-pi/reminder//press", "geoalarm/geoalarm-pi/reminder/a/b/press"] {
            #expect(withButtons.pressedObject(other) == nil, "\(other)")
        }
    }

    /// A task's reminder's buttons name its task's key after the button, so that a press acts on
    /// the task the button was made for; a press payload is read back to its button and key,
    /// and anything else is no press.
    @Test func aTasksButtonsNameItsTask() throws {
        var task = Reminder(id: "errands/pickupth", title: "Pick up the kids", geometry: .circle(center: Coordinate(latitude: 1, longitude: 1), radius: 50))
        task.taskKey = "pickupthekids-2026"
        let discovery = HomeAssistantDiscovery(
            prefix: "homeassistant", clientID: "geoalarm-pi", availabilityTopic: "geoalarm/geoalarm-pi/availability",
            softwareVersion: "0.2.0", buttonSnooze: 1200)
        let configs = discovery.configs(reminders: [task, Self.bakery], collections: [])
        let done = try Self.object(configs["homeassistant/button/geoalarm-pi/done_\(HomeAssistantDiscovery.objectID(task.id))/config"])
        #expect(done["payload_press"] as? String == "done:pickupthekids-2026")
        let plain = try Self.object(configs["homeassistant/button/geoalarm-pi/snooze_bakery/config"])
        #expect(plain["payload_press"] as? String == "snooze")
        let pressed = { (payload: String) in HomeAssistantDiscovery.pressed(Array(payload.utf8)).map { "\($0.button) \($0.taskKey ?? "-")" } }
        #expect(pressed("done:pickupthekids-2026") == "done pickupthekids-2026")
        #expect(pressed("snooze:a:b") == "snooze a:b", "the key is all after the first colon")
        #expect(pressed("done") == "done -")
        for refused in ["Done", "done:", ":key", "later:key", "", "done key"] {
            #expect(pressed(refused) == nil, "\(refused)")
        }
    }

    /// An announcement as Home Assistant's event: its kind as `event_type`, and what a `--json`
    /// event line says of it.
    @Test func anAnnouncementIsAnEventWithWhatItsLineSays() throws {
        var reminder = Self.bakery
        reminder.notes = "Two loaves"
        let fix = Fix(time: Date(timeIntervalSince1970: 1_795_248_399), coordinate: Coordinate(latitude: 47.0002, longitude: 8))
        let event = try Self.object(HomeAssistantDiscovery.announcement(.crossing(GeofenceEvent(kind: .arrive, reminder: reminder, fix: fix, distance: 22.26))))
        #expect(event["event_type"] as? String == "arrive" && event["event"] as? String == "arrive")
        #expect(event["reminder"] as? String == "bakery" && event["title"] as? String == "Buy \"bread\"" && event["notes"] as? String == "Two loaves")
        #expect(event["distance_m"] as? Double == 22.3 && event["time"] as? String == "2026-11-21T08:06:39Z")
    }

    /// A collection's sensor is named from its title without the place's `{name}`, or from its id.
    @Test func aCollectionsSensorIsNamedFromItsTitleOrId() throws {
        func collection(_ title: String) -> ReminderCollection {
            var template = Self.bakery
            template.title = title
            return ReminderCollection(id: "cameras", template: template, places: [CollectionPlace(geometry: .circle(center: Self.bakery.center, radius: 50))])
        }
        #expect(HomeAssistantDiscovery.name(of: collection("Speed camera: {name}")) == "Speed camera")
        #expect(HomeAssistantDiscovery.name(of: collection("{name}")) == "cameras")
        #expect(HomeAssistantDiscovery.name(of: collection("Cameras")) == "Cameras")
        let discovery = HomeAssistantDiscovery(
            prefix: "homeassistant", clientID: "geoalarm-pi", availabilityTopic: "geoalarm/geoalarm-pi/availability", softwareVersion: "0.2.0")
        let configs = discovery.configs(reminders: [], collections: [collection("{name}")])
        let sensor = try Self.object(configs["homeassistant/sensor/geoalarm-pi/collection_cameras/config"])
        #expect(sensor["name"] as? String == "cameras")
        #expect(discovery.retainedTopics(ofConfigTopic: "homeassistant/sensor/geoalarm-pi/collection_cameras/config")
            == ["geoalarm/geoalarm-pi/collection/cameras/state"])
        #expect(discovery.retainedTopics(ofConfigTopic: "homeassistant/binary_sensor/geoalarm-pi/bakery/config")
            == [discovery.stateTopic(ofReminder: "bakery"), discovery.attributesTopic(ofReminder: "bakery")])
        #expect(discovery.retainedTopics(ofConfigTopic: "homeassistant/device_tracker/geoalarm-pi/location/config").isEmpty)
    }

    @Test func aPresenceSensorsAttributesSayWhatTheReminderIsAndWhereItStands() throws {
        var reminder = Self.bakery
        reminder.schedule.due = LocalDate(parsing: "2026-12-24")
        let lifecycle = Lifecycle(completedAt: nil, snoozedUntil: Date(timeIntervalSince1970: 1_795_251_999),
                                  lastFired: Date(timeIntervalSince1970: 1_795_248_399))
        let attributes = try Self.object(HomeAssistantDiscovery.reminderAttributes(
            reminder, distance: 42.4, lifecycle: lifecycle, timeZone: .utc))
        #expect(attributes["id"] as? String == "bakery")
        #expect(attributes["title"] as? String == "Buy \"bread\"")
        #expect(attributes["shape"] as? String == "circle")
        #expect(attributes["radius_m"] as? Int == 100)
        #expect(attributes["distance_m"] as? Int == 42)
        #expect(attributes["completed"] as? Bool == false)
        #expect(attributes["snoozed_until"] as? String == "2026-11-21T09:06:39Z")
        #expect(attributes["last_announced"] as? String == "2026-11-21T08:06:39Z")
        #expect(attributes["due"] as? String == "2026-12-25T00:00:00Z", "due on the 24th: overdue once that day is over")
        let unknown = try Self.object(HomeAssistantDiscovery.reminderAttributes(
            Self.bakery, distance: nil, lifecycle: Lifecycle(), timeZone: .utc))
        #expect(unknown["distance_m"] is NSNull && unknown["due"] is NSNull && unknown["snoozed_until"] is NSNull)
    }

    /// `inregions`/`inrids` name the reminders and the collection places the position is inside.
    @Test func theRegionsALocationNamesFollowThePresenceOfRemindersAndPlaces() {
        var template = Self.bakery
        template.title = "Camera {name}"
        let cameras = ReminderCollection(id: "cameras", template: template, places: [
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 47.001, longitude: 8), radius: 50), name: "north"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 47.002, longitude: 8), radius: 50), name: "far"),
        ])
        var regions = OwnTracksRegions()
        regions.take(ShownState(reminders: [Self.bakery], collections: [cameras], sides: ["bakery": .outside]))
        func change(_ reminder: Reminder, _ presence: Presence) -> PresenceChange {
            PresenceChange(reminder: reminder, presence: presence, fix: Fix(time: nil, coordinate: reminder.center),
                           distance: 0, isInitial: false)
        }
        regions.note(change(Self.bakery, .inside))
        regions.note(change(cameras.member(0), .inside))
        #expect(regions.inside.map(\.id) == ["bakery", "cameras/1"])
        #expect(regions.inside.map(\.title) == ["Buy \"bread\"", "Camera north"])
        regions.note(change(cameras.member(0), .outside))
        regions.note(change(Self.bakery, .outside))
        #expect(regions.inside.isEmpty)
        // The pipeline's state at a start (a reload) is where they start from: inside already.
        regions.take(ShownState(reminders: [Self.bakery], collections: [cameras], sides: ["bakery": .inside],
                                placesInside: ["cameras/2": cameras.member(1)]))
        #expect(regions.inside.map(\.id) == ["bakery", "cameras/2"])
    }

    @Test func anMQTTTableIsCheckedKeyByKey() throws {
        func diagnostics(_ table: String) -> [String] {
            do {
                _ = try ConfigLoader.parse("[mqtt]\n" + table, path: "c.toml", sections: [MQTTSetup.self])
                return []
            } catch {
                return error.diagnostics.map(\.description)
            }
        }
        let good = try ConfigLoader.parse("""
            [mqtt]
            url = "mqtts://[::1]:8884"
            qos = 2
            homeassistant = true
            discovery_prefix = "ha"
            location_interval = "5m"
            outbox_limit = 50
            """, path: "c.toml", sections: [MQTTSetup.self])
        let mqtt = try #require(good.section(MQTTSetup.self))
        #expect(mqtt.broker.host == "::1" && mqtt.broker.port == 8884 && mqtt.broker.usesTLS && mqtt.broker.qos == 2)
        #expect(mqtt.homeAssistant?.discoveryPrefix == "ha" && mqtt.homeAssistant?.buttons == false)
        let buttons = try ConfigLoader.parse("[mqtt]\nurl = \"mqtt://x\"\nhomeassistant = true\nhomeassistant_buttons = true", path: "c.toml", sections: [MQTTSetup.self])
        #expect(buttons.section(MQTTSetup.self)?.homeAssistant?.buttons == true)
        #expect(try #require(good.section(MQTTSetup.self)).changedKeys(in: try #require(buttons.section(MQTTSetup.self))).contains("homeassistant_buttons"))
        #expect(diagnostics("url = \"mqtt://x\"\nhomeassistant_buttons = \"yes\"").first?.contains("homeassistant_buttons") == true)
        #expect(mqtt.ownTracks.locationInterval == 300 && mqtt.broker.outboxLimit == 50 && mqtt.broker.url == "mqtts://[::1]:8884")
        #expect(try ConfigLoader.parse("[mqtt]\nurl = \"mqtt://broker\"", path: "c.toml", sections: [MQTTSetup.self]).section(MQTTSetup.self)?.broker.port == 1883)
        #expect(diagnostics("url = \"http://x\"") == ["c.toml:2: mqtt: url: http://x must start with mqtt:// or mqtts://"])
        // The Paho clients' schemes name the same; a WebSocket listener is not MQTT's port.
        let paho = try ConfigLoader.parse("[mqtt]\nurl = \"ssl://broker:8884\"", path: "c.toml", sections: [MQTTSetup.self]).section(MQTTSetup.self)?.broker
        #expect(paho?.usesTLS == true && paho?.port == 8884 && paho?.host == "broker")
        #expect(try ConfigLoader.parse("[mqtt]\nurl = \"tcp://broker\"", path: "c.toml", sections: [MQTTSetup.self]).section(MQTTSetup.self)?.broker.usesTLS == false)
        #expect(diagnostics("url = \"ws://x:9001\"").first?.contains("is a WebSocket address") == true)
        #expect(diagnostics("url = \"mqtt://u:p@x\"").first?.contains("mqtt://u:…@x must not hold credentials: use username and password_file") == true)
        #expect(diagnostics("url = \"mqtt://x:99999\"").first?.contains("is not 1-65535") == true)
        #expect(diagnostics("url = \"mqtt://x\"\npassword = \"hunter2\"").contains { $0.contains("a password is not written in the config") })
        #expect(diagnostics("url = \"mqtt://x\"\nqos = 3").first?.contains("3 is not 0, 1 or 2") == true)
        #expect(diagnostics("url = \"mqtt://x\"\ncafile = \"/etc/hostname\"").first?.contains("only applies to an mqtts:// url") == true)
        let pipe = (try Command.temporaryFile("") as NSString).deletingLastPathComponent + "/ca.pipe"
        #expect(mkfifo(pipe, 0o644) == 0)
        #expect(diagnostics("url = \"mqtts://x\"\ncafile = \"\(pipe)\"") == ["c.toml:3: mqtt: cafile: \(pipe) is a named pipe, not a regular file"])
        #expect(diagnostics("url = \"mqtt://x\"\nowntracks_topic = \"owntracks/#\"").first?.contains("wildcards") == true)
        #expect(diagnostics("url = \"mqtt://x\"\nhomeasistant = true").first?.contains("did you mean \"homeassistant\"") == true)
        #expect(diagnostics("qos = 1").first?.contains("url: missing") == true)
        // Strings libmosquitto would refuse one message at a time are refused here, once.
        #expect(diagnostics("url = \"mqtt://x\"\nowntracks_topic = \"owntracks/a\\u0001b\"")
            == ["c.toml:3: mqtt: owntracks_topic: holds the control character U+0001"])
        #expect(diagnostics("url = \"mqtt://x\"\ndiscovery_prefix = \"ha\\u007F\"").first?.hasSuffix("holds the control character U+007F") == true)
        #expect(diagnostics("url = \"mqtt://x\"\nclient_id = \"pi\\u0085\"").first?.hasSuffix("holds the control character U+0085") == true)
        #expect(diagnostics("url = \"mqtt://x\"\nusername = \"me\\uFDD0\"").first?.hasSuffix("holds the noncharacter U+FDD0") == true)
        let long = "owntracks/" + String(repeating: "x", count: 65_530)
        #expect(diagnostics("url = \"mqtt://x\"\nowntracks_topic = \"\(long)\"").first?.contains("with the levels added to it, more than MQTT's 65535") == true)
        for filter in ["owntracks/#/x", "owntracks/a+/+", "owntracks/x#"] {
            #expect(diagnostics("url = \"mqtt://x\"\nsubscribe = \"\(filter)\"").first?.contains("mqtt: subscribe: has ") == true, "\(filter)")
        }
        #expect(diagnostics("url = \"mqtt://x\"\nsubscribe = \"owntracks/+/+\"") == [])
        #expect(diagnostics("url = \"mqtt://x\"\nsubscribe = \"fleet/#\"") == [])
        #expect(try ConfigLoader.parse("[mqtt]\nurl = \"mqtt://x\"\ntid = \"p1\"", path: "c.toml", sections: [MQTTSetup.self]).section(MQTTSetup.self)?.ownTracks.trackerID == "p1")
        for bad in ["", "abc", "a b", "a\\u0007"] {
            #expect(diagnostics("url = \"mqtt://x\"\ntid = \"\(bad)\"").first?.contains("tid: must be one or two letters or digits") == true, "\(bad)")
        }
    }

    /// Credentials to a broker on another machine without TLS are said (by `doctor`); not over
    /// TLS, not to this machine, not without a user.
    @Test(arguments: [
        ("broker.home.example", false, "agent", true),
        ("fd00::20", false, "agent", true),
        ("broker.home.example", true, "agent", false),
        ("localhost", false, "agent", false),
        ("127.0.0.1", false, "agent", false),
        ("::1", false, "agent", false),
        ("broker.home.example", false, nil, false),
    ])
    func credentialsToABrokerWithoutTLSOnAnotherMachineAreKnown(host: String, usesTLS: Bool, username: String?, unencrypted: Bool) {
        #expect(MQTTSettings(host: host, usesTLS: usesTLS, username: username).sendsCredentialsUnencrypted == unencrypted)
    }

    /// The broker's user and password go to the config's `url`: a config others can change that
    /// names a user is refused, as a task list's is.
    @Test func brokerCredentialsInAConfigOthersCanChangeAreRefused() throws {
        let path = try Command.temporaryFile("[mqtt]\nurl = \"mqtts://broker.example\"\nusername = \"a\"\n")
        chmod(path, 0o666)
        do {
            _ = try ConfigLoader.read(path: path, sections: [MQTTSetup.self])
            Issue.record("a config others can write sent the broker's credentials")
        } catch {
            #expect("\(error)".contains("refused: it holds credentials for a server (its url and password_file), and the file"), "\(error)")
        }
        chmod(path, 0o600)
        #expect(try ConfigLoader.read(path: path, sections: [MQTTSetup.self]).sendsCredentials)
    }

    @Test func aPasswordFileMustBeTheUsersAloneAndNotEmpty() throws {
        let config = try Command.temporaryFile("")
        let folder = (config as NSString).deletingLastPathComponent
        let file = folder + "/password"
        func load() throws -> Config {
            try ConfigLoader.load(path: try Command.temporaryFile("[mqtt]\nurl = \"mqtt://x\"\nusername = \"u\"\npassword_file = \"\(file)\""), sections: [MQTTSetup.self])
        }
        _ = FileManager.default.createFile(atPath: file, contents: Data("s3cret\nignored\n".utf8), attributes: [.posixPermissions: 0o600])
        #expect(try load().section(MQTTSetup.self)?.broker.password == "s3cret")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        do {
            _ = try load()
            Issue.record("a password file others can read was taken")
        } catch {
            #expect("\(error)".contains("others can read it (mode 644): chmod 600 it"))
        }
        try FileManager.default.removeItem(atPath: file)
        do {
            _ = try load()
            Issue.record("a missing password file was taken")
        } catch {
            #expect("\(error)".contains("no such file"))
        }
    }

    /// OwnTracks secrets come from files as the password does: the shared one, and one per device.
    @Test func secretFilesAreReadForThisMachineAndEachDevice() throws {
        let folder = (try Command.temporaryFile("") as NSString).deletingLastPathComponent
        for (name, secret, mode) in [
            ("mine.key", "pi secret", 0o600), ("alice.key", "alice secret", 0o400), ("open.key", "x", 0o644),
            ("huge.key", String(repeating: "k", count: 70_000), 0o600),
        ] {
            _ = FileManager.default.createFile(atPath: "\(folder)/\(name)", contents: Data("\(secret)\n".utf8), attributes: [.posixPermissions: mode])
        }
        let good = try ConfigLoader.load(path: try Command.temporaryFile("""
            [mqtt]
            url = "mqtt://x"
            secret_file = "\(folder)/mine.key"
            [mqtt.device_secrets]
            "alice/phone" = "\(folder)/alice.key"
            """), sections: [MQTTSetup.self])
        #expect(good.section(MQTTSetup.self)?.ownTracks.secret == "pi secret")
        #expect(good.section(MQTTSetup.self)?.ownTracks.deviceSecrets == ["alice/phone": "alice secret"])
        let bad = """
            [mqtt]
            url = "mqtt://x"
            secret_file = "\(folder)/open.key"
            device_secrets = { "owntracks/+" = "\(folder)/alice.key", "bob/phone" = "\(folder)/none.key", "carol/phone" = "\(folder)/huge.key" }
            """
        do {
            _ = try ConfigLoader.load(path: try Command.temporaryFile(bad), sections: [MQTTSetup.self])
            Issue.record("unusable secrets were taken")
        } catch {
            let text = "\(error)"
            #expect(text.contains("secret_file: \(folder)/open.key: others can read it (mode 644): chmod 600 it"), "\(text)")
            #expect(text.contains("owntracks/+: must name a device as its topic does"), "\(text)")
            #expect(text.contains("bob/phone: \(folder)/none.key: no such file"), "\(text)")
            #expect(text.contains("carol/phone: \(folder)/huge.key: cannot read: larger than 64 KiB"), "\(text)")
        }
    }

    /// The outbox keeps its messages in the state file before anything is sent: beyond its limit
    /// the oldest go, in the file too; a restart reads what waits.
    @Test(arguments: [true, false])
    func theOutboxFollowsTheFile(withFile: Bool) throws {
        let path = Command.scratchState()
        let logger = Logger(label: "test")
        let keeper = withFile ? StateKeeper(path: path, logger: logger) : nil
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let outbox = MQTTOutbox(limit: 3, qos: 1, keeper: keeper, loop: loop, logger: logger)
        let waiting = try Self.onLoop(loop) {
            outbox.load()
            for text in ["a", "b", "c", "d"] { outbox.append(topic: "t", payload: Array(text.utf8)) }
            return outbox.waiting
        }
        #expect(waiting == 3)
        // The file is written at the end of the loop's turn: a later turn comes after it.
        try Self.onLoop(loop) {}
        guard withFile else { return }
        #expect(try StateStore(path: path).queue(named: MQTTOutbox.queue).all().map { String(decoding: $0.payload, as: UTF8.self) } == ["b", "c", "d"])
        let restarted = MQTTOutbox(limit: 3, qos: 1, keeper: StateKeeper(path: path, logger: logger), loop: loop, logger: logger)
        #expect(try Self.onLoop(loop) {
            restarted.load()
            return restarted.waiting
        } == 3)
    }

    /// Runs `body` on `loop`'s thread (where sinks and the outbox live) and returns what it gave.
    static func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        loop.execute {
            result.withLock { $0 = body() }
            done.signal()
        }
        done.wait()
        return try #require(result.withLock { $0 })
    }

    @Test func eachTrackedDeviceKeepsItsOwnSideInTheStateFile() throws {
        let path = Command.scratchState()
        let store = try StateStore(path: path)
        let change = PresenceChange(
            reminder: Self.bakery, presence: .inside, fix: Fix(time: Date(timeIntervalSince1970: 10), coordinate: Self.bakery.center),
            distance: 0, isInitial: false)
        try store.record([change], events: [], device: "alice/phone")
        #expect(try store.sides.saved(device: "alice/phone")["bakery"]?.presence == .inside)
        #expect(try store.sides.saved(device: "bob/car").isEmpty)
        #expect(try store.sides.saved().isEmpty, "this machine's own side is apart")
        // A device's engine is a copy of the shared one, restored from its own rows.
        let engine = GeofenceEngine(reminders: [Self.bakery], settings: EngineSettings())
        let alice = engine.copyForTrackedDevice(restoring: try store.sides.saved(device: "alice/phone"))
        #expect(alice.presence(of: "bakery") == .inside)
        #expect(engine.presence(of: "bakery") == .unknown)
        try store.forget("bakery")
        #expect(try store.sides.saved(device: "alice/phone").isEmpty)
    }
}
