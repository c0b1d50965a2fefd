import GeoAlarmCore
import GeoAlarmSystem
import GeoAlarmTOML

/// The OwnTracks keys of `[mqtt]`: where this machine's messages go and with which tracker id,
/// how often its location is sent, the secrets messages are sealed and opened with, and the
/// devices `run --source owntracks` reads and how many it keeps.
public struct OwnTracksSettings: Sendable, Equatable {
    /// `owntracks_topic`; nil: `owntracks/USER/HOSTNAME`.
    public var topic: String?
    /// `tid`: the tracker id this machine's messages carry; nil: the last two letters or digits
    /// of the topic's device level, as the apps make it.
    public var trackerID: String?
    /// Read from `secret_file`: the secret this machine's messages are sealed with, and every
    /// tracked device's without a secret of its own.
    public var secret: String?
    /// Read from the files `[mqtt.device_secrets]` names: each tracked device's own secret (by
    /// `USER/DEVICE`, as its topic names it), as the Recorder and Home Assistant keep them.
    public var deviceSecrets: [String: String] = [:]
    /// `subscribe`: the topic filter tracked devices' locations are read from.
    public var subscribe = "owntracks/+/+"
    /// `location_interval`: seconds between location messages while no event happens.
    public var locationInterval = 60.0
    /// `max_devices`: how many devices are tracked at most; new ones beyond are refused.
    public var maxDevices = OwnTracksSettings.defaultMaxDevices
    /// `device_idle`: seconds without a message after which a tracked device leaves memory.
    public var deviceIdle = 3600.0

    public static let defaultMaxDevices = 10_000
    /// The keys of `[mqtt]` these are.
    public static let keys = ["owntracks_topic", "tid", "secret_file", "device_secrets", "subscribe", "location_interval", "max_devices", "device_idle"]

    public init(topic: String? = nil, trackerID: String? = nil, subscribe: String = "owntracks/+/+", locationInterval: Double = 60) {
        self.topic = topic
        self.trackerID = trackerID
        self.subscribe = subscribe
        self.locationInterval = locationInterval
    }

    /// Where this machine's messages go: the configured topic, else `owntracks/USER/HOSTNAME`.
    public func topic(user: String, hostName: String) -> String {
        topic ?? "owntracks/\(Self.topicLevel(user))/\(Self.topicLevel(hostName))"
    }

    /// The tracker id of this machine's messages on `topic`.
    public func trackerID(onTopic topic: String) -> String {
        trackerID ?? OwnTracksMessages.trackerID(of: String(topic.split(separator: "/").last ?? ""))
    }

    /// `text` made fit for one topic level: no `/`, `+`, `#` or NUL.
    static func topicLevel(_ text: String) -> String {
        let cleaned = String(text.map { "/+#\u{0}".contains($0) ? "_" : $0 })
        return cleaned.isEmpty ? "unknown" : cleaned
    }

    /// The keys whose values differ in `other` (secrets named, never shown).
    public func changedKeys(in other: OwnTracksSettings) -> [String] {
        let pairs: [(String, Bool)] = [
            ("owntracks_topic", topic != other.topic), ("tid", trackerID != other.trackerID), ("secret_file", secret != other.secret),
            ("device_secrets", deviceSecrets != other.deviceSecrets), ("subscribe", subscribe != other.subscribe),
            ("location_interval", locationInterval != other.locationInterval), ("max_devices", maxDevices != other.maxDevices),
            ("device_idle", deviceIdle != other.deviceIdle),
        ]
        return pairs.filter(\.1).map(\.0)
    }

    /// Reads these keys of `table` (`[mqtt]`), each problem reported through `reader`; a secret
    /// file is found beside the config (`resolve`).
    public static func read(_ table: TOMLTable, context: String, reader: inout some TableReading, resolve: (String) -> String) -> OwnTracksSettings {
        var settings = OwnTracksSettings()
        if let file = reader.string(table, "secret_file", context: context) {
            settings.secret = secret(in: resolve(file), table: table, context: context, key: "secret_file", reader: &reader)
        }
        if let devices = reader.typed(table, "device_secrets", context: context, expected: "a table ([mqtt.device_secrets])", { $0.table }) {
            for device in devices.keys.sorted() {
                let deviceContext = "\(context).device_secrets"
                if device.isEmpty || device.contains("+") || device.contains("#") || device.hasPrefix("/") || device.hasSuffix("/") {
                    reader.report(in: devices, deviceContext, device, "must name a device as its topic does: \"USER/DEVICE\"")
                } else if let file = reader.string(devices, device, context: deviceContext) {
                    settings.deviceSecrets[device] = secret(in: resolve(file), table: devices, context: deviceContext, key: device, reader: &reader)
                }
            }
        }
        if let topic = reader.string(table, "owntracks_topic", context: context) {
            // Transitions and waypoints go to levels below it.
            if let problem = MQTTText.topicProblem(topic, room: "/waypoints".utf8.count) {
                reader.report(in: table, context, "owntracks_topic", problem)
            } else {
                settings.topic = topic
            }
        }
        if let tid = reader.string(table, "tid", context: context) {
            if (1...2).contains(tid.count), tid.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) }) {
                settings.trackerID = tid
            } else {
                reader.report(in: table, context, "tid", "must be one or two letters or digits, as the OwnTracks apps show it")
            }
        }
        if let filter = reader.string(table, "subscribe", context: context) {
            if let problem = MQTTText.filterProblem(filter) {
                reader.report(in: table, context, "subscribe", "\(problem): give a topic filter such as \"owntracks/+/+\"")
            } else {
                settings.subscribe = filter
            }
        }
        if let idle = reader.span(table, "device_idle", context: context) {
            if idle >= 1 { settings.deviceIdle = idle } else { reader.report(in: table, context, "device_idle", "must be at least 1s") }
        }
        if let interval = reader.span(table, "location_interval", context: context) {
            if interval >= 1 {
                settings.locationInterval = interval
            } else {
                reader.report(in: table, context, "location_interval", "must be at least 1s")
            }
        }
        if let most = reader.integer(table, "max_devices", context: context, expected: "a number of devices", in: 1...10_000_000) {
            settings.maxDevices = most
        }
        return settings
    }

    /// The secret in `path`, a file only its owner can read; nil, reported, when it cannot be used.
    private static func secret(in path: String, table: TOMLTable, context: String, key: String, reader: inout some TableReading) -> String? {
        switch PasswordFile.read(path) {
        case .success(let secret): return secret
        case .failure(let problem):
            reader.report(in: table, context, key, "\(path): \(problem.message)")
            return nil
        }
    }
}
