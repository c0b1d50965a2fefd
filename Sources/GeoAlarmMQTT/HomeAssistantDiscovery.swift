import FoundationEssentials
import GeoAlarmCore
import GeoAlarmEncoding

/// Home Assistant's MQTT discovery for one agent: a device named by the agent's MQTT client id,
/// with a presence `binary_sensor` per reminder and, as Home Assistant's own proximity sensors
/// are, a distance `sensor` (metres to its edge) and a direction of travel `sensor` (arrived,
/// away_from, stationary, towards) per reminder; a `sensor` per collection (the place it is
/// inside; unknown when none), a `device_tracker` whose position is in its attributes topic, and
/// an `event` entity that follows the announcements (what a pop-up shows); with buttons, a Done
/// and a Snooze `button` per reminder, pressed on its press topic.
/// Every config carries an `origin` (the software that made it), as Home Assistant asks.
///
/// Topics: configs under `PREFIX/COMPONENT/NODE/OBJECT/config` (retained), states under
/// `geoalarm/NODE/...` (retained). Availability is the link's `geoalarm/NODE/availability`:
/// `online` (retained) once connected, `offline` at a clean stop and, by the connection's will,
/// when the agent is lost.
struct HomeAssistantDiscovery {
    let prefix: String
    /// The agent's id in topics and unique ids: its client id with only `[A-Za-z0-9_-]` kept.
    let node: String
    /// What Home Assistant shows as the device's name: the client id, so that two agents on one
    /// host are two devices with two names.
    let deviceName: String
    let softwareVersion: String
    /// `online` or `offline`, retained (see ``MQTTLink``).
    let availabilityTopic: String
    /// The length of the Snooze button's snooze, in seconds, where there are buttons; nil: none.
    let buttonSnooze: Double?

    init(prefix: String, clientID: String, availabilityTopic: String, softwareVersion: String, buttonSnooze: Double? = nil) {
        self.prefix = prefix
        node = Self.objectID(clientID)
        deviceName = clientID
        self.availabilityTopic = availabilityTopic
        self.softwareVersion = softwareVersion
        self.buttonSnooze = buttonSnooze
    }

    /// A text or enum sensor's state when there is no value: Home Assistant's own state string
    /// for unknown. (Its MQTT sensor takes `None` as no value only for a numeric sensor; a text
    /// sensor would show the word.)
    static let unknownText = "unknown"
    /// A numeric sensor's (and a binary sensor's) payload for no value, which Home Assistant
    /// shows as unknown.
    static let noValue = "None"

    /// A collection's name: its title with the place's `{name}` left out, else its id.
    static func name(of collection: ReminderCollection) -> String {
        let written = collection.titleNamesPlace ? collection.template.title.replacing("{name}", with: "") : collection.template.title
        let title = written.trimming(while: { $0.isWhitespace || $0.isPunctuation })
        return title.isEmpty ? collection.id : title
    }

    /// Where Home Assistant says it (re)started: discovery is published again then.
    var statusTopic: String { "\(prefix)/status" }
    /// The device tracker's attributes: latitude, longitude, gps_accuracy.
    var locationTopic: String { "geoalarm/\(node)/location" }
    /// Each announcement as it is made (not retained): the event entity's.
    var announcementTopic: String { "geoalarm/\(node)/announcement" }

    func stateTopic(ofReminder id: String) -> String { topic(kind: "reminder", object: Self.objectID(id), "state") }
    /// A reminder's presence sensor's attributes (``reminderAttributes(_:distance:lifecycle:timeZone:)``).
    func attributesTopic(ofReminder id: String) -> String { topic(kind: "reminder", object: Self.objectID(id), "attributes") }
    func stateTopic(ofCollection id: String) -> String { topic(kind: "collection", object: Self.objectID(id), "state") }
    /// A reminder's distance sensor's state: metres to its edge.
    func distanceTopic(ofReminder id: String) -> String { topic(kind: "reminder", object: Self.objectID(id), "distance") }
    /// A reminder's direction of travel sensor's state.
    func directionTopic(ofReminder id: String) -> String { topic(kind: "reminder", object: Self.objectID(id), "direction") }
    /// Where a reminder's buttons are pressed: the payload is ``pressPayload(_:taskKey:)``.
    func pressTopic(ofReminder id: String) -> String { topic(kind: "reminder", object: Self.objectID(id), "press") }
    /// Every reminder's press topic.
    var pressFilter: String { topic(kind: "reminder", object: "+", "press") }

    /// What a reminder's button sends when pressed: the button's name (``ReminderButton``), and
    /// for a task's reminder its task's key after a colon (`done:UID`), so that a press acts on
    /// the task the button was made for, even one that Home Assistant still shows under an id
    /// another task of its list has come to take.
    static func pressPayload(_ button: ReminderButton, taskKey: String?) -> String {
        taskKey.map { "\(button.rawValue):\($0)" } ?? button.rawValue
    }

    /// The button a press's payload names, and the task key after it if any; nil for none of the
    /// buttons.
    static func pressed(_ payload: [UInt8]) -> (button: ReminderButton, taskKey: String?)? {
        let text = String(decoding: payload, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { return ReminderButton(rawValue: text).map { ($0, nil) } }
        let key = String(text[text.index(after: colon)...])
        guard let button = ReminderButton(rawValue: String(text[..<colon])), !key.isEmpty else { return nil }
        return (button, key)
    }

    /// The object id of the reminder whose press topic `topic` is; nil for any other topic.
    func pressedObject(_ topic: String) -> Substring? {
        let head = "geoalarm/\(node)/reminder/"
        guard topic.hasPrefix(head), topic.hasSuffix("/press") else { return nil }
        let object = topic.dropFirst(head.count).dropLast("/press".count)
        return object.isEmpty || object.contains("/") ? nil : object
    }

    /// A proximity's direction as the direction sensor's state: Home Assistant's proximity's
    /// own words (arrived, away_from, stationary, towards), and ``unknownText`` before a minute
    /// of fixes says.
    static func directionState(_ proximity: Proximity?) -> String {
        switch proximity?.direction {
        case .towards: "towards"
        case .away: "away_from"
        case .stationary: "stationary"
        case .arrived: "arrived"
        case .unknown, nil: unknownText
        }
    }

    /// A proximity's distance as the distance sensor's state: whole metres.
    static func distanceState(_ proximity: Proximity?) -> String {
        guard let distance = proximity?.distance, distance.isFinite else { return noValue }
        return JSONText.number(distance.rounded())
    }

    /// `geoalarm/NODE/KIND/OBJECT/LEAF`, for an object id already fit for a topic level.
    private func topic(kind: String, object: some StringProtocol, _ leaf: String) -> String {
        "geoalarm/\(node)/\(kind)/\(object)/\(leaf)"
    }

    /// The retained topics besides its config of the entity whose config is on `configTopic` (as
    /// ``configs(reminders:collections:)`` names them): its state, and a reminder's attributes;
    /// none for the tracker, whose position is retained apart.
    func retainedTopics(ofConfigTopic configTopic: String) -> [String] {
        let levels = configTopic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 4, levels.last == "config" else { return [] }
        let (component, object) = (levels[levels.count - 4], levels[levels.count - 2])
        if component == "binary_sensor" {
            return [topic(kind: "reminder", object: object, "state"), topic(kind: "reminder", object: object, "attributes")]
        }
        if component == "sensor", object.hasPrefix("collection_") {
            return [topic(kind: "collection", object: object.dropFirst("collection_".count), "state")]
        }
        for leaf in ["distance", "direction"] where component == "sensor" && object.hasPrefix("\(leaf)_") {
            return [topic(kind: "reminder", object: object.dropFirst(leaf.count + 1), leaf)]
        }
        return []
    }

    /// Every retained config message for these reminders and collections, by topic.
    func configs(reminders: [Reminder], collections: [ReminderCollection]) -> [String: String] {
        var result: [String: String] = [:]
        for reminder in reminders {
            let object = Self.objectID(reminder.id)
            var payload = entity(name: reminder.title, object: "reminder_\(object)")
            payload.add("state_topic", stateTopic(ofReminder: reminder.id))
            payload.add("json_attributes_topic", attributesTopic(ofReminder: reminder.id))
            payload.add("device_class", "presence")
            payload.add("payload_on", "ON")
            payload.add("payload_off", "OFF")
            result["\(prefix)/binary_sensor/\(node)/\(object)/config"] = payload.text
            var distance = entity(name: "\(reminder.title) distance", object: "distance_\(object)")
            distance.add("state_topic", distanceTopic(ofReminder: reminder.id))
            distance.add("device_class", "distance")
            distance.add("unit_of_measurement", "m")
            distance.add("suggested_display_precision", number: 0)
            result["\(prefix)/sensor/\(node)/distance_\(object)/config"] = distance.text
            var direction = entity(name: "\(reminder.title) direction of travel", object: "direction_\(object)")
            direction.add("state_topic", directionTopic(ofReminder: reminder.id))
            // No `options`: a Home Assistant that checks them would refuse "unknown".
            direction.add("device_class", "enum")
            result["\(prefix)/sensor/\(node)/direction_\(object)/config"] = direction.text
            guard let buttonSnooze else { continue }
            for button in ReminderButton.allCases {
                var payload = entity(name: "\(reminder.title): \(button.label(snooze: buttonSnooze))", object: "\(button.rawValue)_\(object)")
                payload.add("command_topic", pressTopic(ofReminder: reminder.id))
                payload.add("payload_press", Self.pressPayload(button, taskKey: reminder.taskKey))
                payload.add("icon", button == .done ? "mdi:check-circle-outline" : "mdi:alarm-snooze")
                result["\(prefix)/button/\(node)/\(button.rawValue)_\(object)/config"] = payload.text
            }
        }
        for collection in collections {
            let object = Self.objectID(collection.id)
            var payload = entity(name: Self.name(of: collection), object: "collection_\(object)")
            payload.add("state_topic", stateTopic(ofCollection: collection.id))
            payload.add("icon", "mdi:map-marker-radius")
            result["\(prefix)/sensor/\(node)/collection_\(object)/config"] = payload.text
        }
        var tracker = entity(name: "Location", object: "location")
        tracker.add("json_attributes_topic", locationTopic)
        tracker.add("source_type", "gps")
        result["\(prefix)/device_tracker/\(node)/location/config"] = tracker.text
        var announcements = entity(name: "Announcements", object: "announcements")
        announcements.add("state_topic", announcementTopic)
        let kinds: [EventKind] = [.arrive, .leave, .approach, .alarm]
        announcements.add("event_types", raw: "[" + kinds.map { JSONText.quote($0.rawValue) }.joined(separator: ",") + "]")
        announcements.add("icon", "mdi:bell-ring-outline")
        result["\(prefix)/event/\(node)/announcements/config"] = announcements.text
        return result
    }

    /// An announcement as the event entity's payload: its `event_type` (arrive, leave, approach,
    /// alarm) and the members of a `--json` event line (`reminder`, `title`, `notes`, `distance_m`...).
    static func announcement(_ announcement: Announcement) -> String {
        var object = EventFormat.object(for: EventRecord(announcement))
        object.add("event_type", announcement.kind.rawValue)
        return object.text
    }

    /// The members every entity has: name, unique id, availability and the device.
    private func entity(name: String, object: String) -> JSONObject {
        var payload = JSONObject()
        payload.add("name", name)
        payload.add("unique_id", "geoalarm_\(node)_\(object)")
        payload.add("availability_topic", availabilityTopic)
        payload.add("payload_available", "online")
        payload.add("payload_not_available", "offline")
        var device = JSONObject()
        device.add("identifiers", raw: "[" + JSONText.quote("geoalarm_\(node)") + "]")
        device.add("name", deviceName)
        device.add("manufacturer", "geoalarm")
        device.add("model", "geoalarm location reminders")
        device.add("sw_version", softwareVersion)
        payload.add("device", raw: device.text)
        var origin = JSONObject()
        origin.add("name", "geoalarm")
        origin.add("sw_version", softwareVersion)
        payload.add("origin", raw: origin.text)
        return payload
    }

    /// A reminder's presence sensor's attributes: what it is (id, title, circle or area), how far
    /// the last fix that changed its side was (null before any), and its lifecycle (times in
    /// ISO 8601 UTC, null when unset; `due` is the moment it becomes overdue, its schedule read in
    /// `timeZone`).
    static func reminderAttributes(_ reminder: Reminder, distance: Double?, lifecycle: Lifecycle, timeZone: some TimeZoneRules) -> String {
        var object = JSONObject()
        object.add("id", reminder.id)
        object.add("title", reminder.title)
        switch reminder.geometry {
        case .circle(_, let radius):
            object.add("shape", "circle")
            object.add("radius_m", number: radius)
        case .area:
            object.add("shape", "area")
        }
        object.add("distance_m", number: distance.map { $0.rounded() })
        object.add("completed", lifecycle.completedAt != nil)
        object.add("snoozed_until", lifecycle.snoozedUntil.map(Timestamp.iso8601))
        object.add("due", reminder.schedule.due.map { Timestamp.iso8601($0.moment(in: timeZone)) })
        object.add("last_announced", lifecycle.lastFired.map(Timestamp.iso8601))
        return object.text
    }

    /// The device tracker's attributes for `fix`.
    static func attributes(of fix: Fix, accuracy: Double) -> String {
        var object = JSONObject()
        object.add("latitude", number: fix.coordinate.latitude)
        object.add("longitude", number: fix.coordinate.longitude)
        object.add("gps_accuracy", number: accuracy)
        return object.text
    }

    /// `text` fit for a topic level and a Home Assistant object id: `[A-Za-z0-9_-]` kept, other
    /// characters made `_`; when any was changed, a digest of the whole is added so that ids
    /// such as `a.b` and `a_b` stay apart.
    static func objectID(_ text: String) -> String {
        var changed = false
        let kept = String(text.unicodeScalars.map { scalar -> Character in
            if scalar.isASCII, scalar == "_" || scalar == "-" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                return Character(scalar)
            }
            changed = true
            return "_"
        })
        guard changed || kept.isEmpty else { return kept }
        return kept + "_" + String(StableHash.of(text) & 0x7fff_ffff, radix: 36)
    }
}
