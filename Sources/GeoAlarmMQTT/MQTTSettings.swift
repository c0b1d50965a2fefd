/// The `[mqtt]` table: which broker, as whom, and what goes to it.
public struct MQTTSettings: Sendable, Equatable {
    /// The broker's host name or address.
    public var host: String
    /// 1883 for `mqtt://`, 8883 for `mqtts://` unless the URL gives one.
    public var port: Int
    /// `mqtts://`: TLS, checked against `caFile` (else the system's certificates).
    public var usesTLS: Bool
    /// `cafile`: the certificate authority the broker's certificate must come from.
    public var caFile: String?
    public var username: String?
    /// Read from `password_file`, a file only its owner can read.
    public var password: String?
    /// `client_id`; nil: `geoalarm-HOSTNAME`.
    public var clientID: String?
    /// `owntracks_topic`; nil: `owntracks/USER/HOSTNAME`.
    public var owntracksTopic: String?
    /// `tid`: the OwnTracks tracker id this machine's messages carry; nil: the last two letters
    /// or digits of the device level of the OwnTracks topic, as the apps make it.
    public var trackerID: String?
    /// Read from `secret_file`: the OwnTracks encryption secret this machine's messages are
    /// sealed with, and the one for every tracked device without a secret of its own.
    public var secret: String?
    /// Read from the files `[mqtt.device_secrets]` names: the secret of each tracked device
    /// (`USER/DEVICE`, as its topic names it), as the Recorder and Home Assistant keep them.
    public var deviceSecrets: [String: String] = [:]
    /// `homeassistant`: publish Home Assistant discovery and presence.
    public var homeAssistant: Bool
    /// `discovery_prefix`: Home Assistant's discovery topic prefix.
    public var discoveryPrefix: String
    /// `qos`: 0, 1 or 2 for everything published and subscribed.
    public var qos: Int
    /// `subscribe`: the topic filter `run --source owntracks` reads locations from.
    public var subscribe: String
    /// `location_interval`: seconds between location messages while no event happens.
    public var locationInterval: Double
    /// `outbox_limit`: how many events wait for the broker at most; the oldest go first.
    public var outboxLimit: Int
    /// `max_devices`: how many devices `--source owntracks` tracks at most; new ones beyond are refused.
    public var maxDevices: Int = defaultMaxDevices
    /// `device_idle`: seconds without a message after which a tracked device leaves memory (its
    /// state stays in the state file, and comes back with its next message).
    public var deviceIdle: Double = 3600

    public static let defaultPort = 1883
    public static let defaultTLSPort = 8883
    public static let defaultOutboxLimit = 10_000
    public static let defaultMaxDevices = 10_000

    public init(
        host: String, port: Int = defaultPort, usesTLS: Bool = false, caFile: String? = nil, username: String? = nil,
        password: String? = nil, clientID: String? = nil, owntracksTopic: String? = nil, trackerID: String? = nil,
        homeAssistant: Bool = false,
        discoveryPrefix: String = "homeassistant", qos: Int = 1, subscribe: String = "owntracks/+/+",
        locationInterval: Double = 60, outboxLimit: Int = defaultOutboxLimit
    ) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
        self.caFile = caFile
        self.username = username
        self.password = password
        self.clientID = clientID
        self.owntracksTopic = owntracksTopic
        self.trackerID = trackerID
        self.homeAssistant = homeAssistant
        self.discoveryPrefix = discoveryPrefix
        self.qos = qos
        self.subscribe = subscribe
        self.locationInterval = locationInterval
        self.outboxLimit = outboxLimit
    }

    /// The config keys whose values differ in `other` (secrets named, never shown).
    public func changedKeys(in other: MQTTSettings) -> [String] {
        let pairs: [(String, Bool)] = [
            ("url", url != other.url), ("cafile", caFile != other.caFile), ("username", username != other.username),
            ("password_file", password != other.password), ("client_id", clientID != other.clientID),
            ("owntracks_topic", owntracksTopic != other.owntracksTopic), ("tid", trackerID != other.trackerID),
            ("secret_file", secret != other.secret), ("device_secrets", deviceSecrets != other.deviceSecrets),
            ("homeassistant", homeAssistant != other.homeAssistant), ("discovery_prefix", discoveryPrefix != other.discoveryPrefix),
            ("qos", qos != other.qos), ("subscribe", subscribe != other.subscribe),
            ("location_interval", locationInterval != other.locationInterval), ("outbox_limit", outboxLimit != other.outboxLimit),
            ("max_devices", maxDevices != other.maxDevices), ("device_idle", deviceIdle != other.deviceIdle),
        ]
        return pairs.filter(\.1).map(\.0)
    }

    /// "mqtt://host:port" or "mqtts://host:port".
    public var url: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "mqtts" : "mqtt")://\(shownHost):\(port)"
    }

    /// The client id to connect with: the configured one, else `geoalarm-HOSTNAME`.
    public func clientID(hostName: String) -> String {
        clientID ?? "geoalarm-\(hostName)"
    }

    /// Where this agent's OwnTracks messages go: the configured topic, else `owntracks/USER/HOSTNAME`.
    public func owntracksTopic(user: String, hostName: String) -> String {
        owntracksTopic ?? "owntracks/\(Self.topicLevel(user))/\(Self.topicLevel(hostName))"
    }

    /// `text` made fit for one topic level: no `/`, `+`, `#` or NUL.
    static func topicLevel(_ text: String) -> String {
        let cleaned = String(text.map { "/+#\u{0}".contains($0) ? "_" : $0 })
        return cleaned.isEmpty ? "unknown" : cleaned
    }

    /// Reads `mqtt://host[:port]` or `mqtts://host[:port]` (an IPv6 address in brackets):
    /// host, port and TLS, or why not.
    public static func parseURL(_ text: String) -> Result<(host: String, port: Int, tls: Bool), URLProblem> {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            (tls, rest) = (false, text.dropFirst("mqtt://".count))
        } else if text.hasPrefix("mqtts://") {
            (tls, rest) = (true, text.dropFirst("mqtts://".count))
        } else {
            return .failure(URLProblem("must start with mqtt:// or mqtts://"))
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        if authority.contains("@") { return .failure(URLProblem("must not hold credentials: use username and password_file")) }
        if authority.contains("/") || authority.contains("?") { return .failure(URLProblem("must not have a path")) }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return .failure(URLProblem("has an unclosed [")) }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return .failure(URLProblem("has text after ]")) }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return .failure(URLProblem("has no host")) }
        guard host.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
            return .failure(URLProblem("has a host with spaces or non-ASCII characters"))
        }
        var port = tls ? defaultTLSPort : defaultPort
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                return .failure(URLProblem("port \"\(portText)\" is not 1-65535"))
            }
            port = number
        }
        return .success((String(host), port, tls))
    }

    /// Why an MQTT URL cannot be used.
    public struct URLProblem: Error, Sendable, Equatable {
        public var message: String
        init(_ message: String) { self.message = message }
    }
}

/// The rules libmosquitto applies to the strings it sends (topics, filters, client ids, user
/// names), checked when the config is read so that nothing is refused later, one message at a time.
public enum MQTTText {
    /// The most bytes an MQTT string holds (a 16-bit length).
    public static let longest = 65535

    /// Why `text` cannot be sent as an MQTT string, or nil: at most 65,535 bytes of UTF-8, without
    /// NUL, control characters (U+0001-U+001F, U+007F-U+009F) or Unicode noncharacters.
    public static func stringProblem(_ text: String) -> String? {
        if text.utf8.count > longest { return "is \(text.utf8.count) bytes, more than MQTT's \(longest)" }
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x20 || (0x7F...0x9F).contains(value) {
                return "holds the control character U+\(String(value, radix: 16, uppercase: true).leftPadded(to: 4))"
            }
            if scalar.properties.isNoncharacterCodePoint {
                return "holds the noncharacter U+\(String(value, radix: 16, uppercase: true).leftPadded(to: 4))"
            }
        }
        return nil
    }

    /// Why `topic` cannot be published to, or nil; `room` bytes are kept for the levels added
    /// to it (`/event`, `/waypoints`).
    public static func topicProblem(_ topic: String, room: Int = 0) -> String? {
        if topic.isEmpty { return "must not be empty" }
        if topic.contains("+") || topic.contains("#") { return "must not hold the wildcards + or #" }
        if topic.hasSuffix("/") { return "must not end with /" }
        if topic.utf8.count + room > longest, room > 0 {
            return "is \(topic.utf8.count) bytes: with the levels added to it, more than MQTT's \(longest)"
        }
        return stringProblem(topic)
    }

    /// Why `filter` cannot be subscribed to, or nil: a topic whose `+` levels are whole levels
    /// and whose `#` is a whole last level, as `mosquitto_sub_topic_check` has them.
    public static func filterProblem(_ filter: String) -> String? {
        if filter.isEmpty { return "must not be empty" }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("+"), level != "+" { return "has \"\(level)\": + must be a whole level" }
            if level.contains("#"), level != "#" || index != levels.count - 1 { return "has # that is not the whole last level" }
        }
        return stringProblem(filter)
    }
}

extension String {
    /// The text with zeros before it up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
