import FoundationEssentials
import GeoAlarmCore
import GeoAlarmOwnTracks
import GeoAlarmSystem
import GeoAlarmTOML

/// The `[mqtt]` table: the broker, what goes to it for OwnTracks (``OwnTracksSettings``), and
/// Home Assistant's discovery when asked for. Read from the table the config's reader hands over
/// (``ConfigSection``): a config read with it has it as `config.section(MQTTSetup.self)`.
public struct MQTTSetup: ConfigSection, Equatable {
    public static let tableName = "mqtt"

    public var broker: MQTTSettings
    public var ownTracks: OwnTracksSettings
    /// `homeassistant = true`: discovery and states for Home Assistant.
    public var homeAssistant: HomeAssistantSettings?

    public init(broker: MQTTSettings, ownTracks: OwnTracksSettings = OwnTracksSettings(), homeAssistant: HomeAssistantSettings? = nil) {
        self.broker = broker
        self.ownTracks = ownTracks
        self.homeAssistant = homeAssistant
    }

    /// Every key of `[mqtt]`.
    public static let keys = MQTTSettings.keys + OwnTracksSettings.keys + HomeAssistantSettings.keys

    /// The `[mqtt]` table `table` of the config file `file`: nil (every problem reported through
    /// `reader`) when it cannot be used.
    public static func read(_ table: TOMLTable, file: String, reader: inout some TableReading) -> MQTTSetup? {
        let context = "mqtt"
        // "password" has its own message.
        reader.checkKeys(of: table, allowed: keys + ["password"], context: context)
        if table["password"] != nil {
            reader.report(in: table, context, "password", "a password is not written in the config: put it in a file only you can read and name it with password_file")
        }
        let broker = MQTTSettings.read(table, context: context, file: file, reader: &reader)
        let ownTracks = OwnTracksSettings.read(table, context: context, reader: &reader) { PathParts.resolve($0, besides: file) }
        var homeAssistant: HomeAssistantSettings?
        if reader.bool(table, "homeassistant", context: context) == true { homeAssistant = HomeAssistantSettings() }
        if reader.bool(table, "homeassistant_buttons", context: context) == true { homeAssistant?.buttons = true }
        if let prefix = reader.string(table, "discovery_prefix", context: context) {
            if let problem = MQTTText.topicProblem(prefix) {
                reader.report(in: table, context, "discovery_prefix", problem)
            } else {
                homeAssistant?.discoveryPrefix = prefix
            }
        }
        return broker.map { MQTTSetup(broker: $0, ownTracks: ownTracks, homeAssistant: homeAssistant) }
    }

    /// Whether the broker is given a user (and its password).
    public var sendsCredentials: Bool { broker.username != nil }

    /// The config keys whose values differ in `other` (secrets named, never shown).
    public func changedKeys(in other: MQTTSetup) -> [String] {
        var changed = broker.changedKeys(in: other.broker) + ownTracks.changedKeys(in: other.ownTracks)
        if (homeAssistant == nil) != (other.homeAssistant == nil) { changed.append("homeassistant") }
        if let ours = homeAssistant, let theirs = other.homeAssistant {
            if ours.discoveryPrefix != theirs.discoveryPrefix { changed.append("discovery_prefix") }
            if ours.buttons != theirs.buttons { changed.append("homeassistant_buttons") }
        }
        return changed
    }
}

/// Home Assistant's keys of `[mqtt]`.
public struct HomeAssistantSettings: Sendable, Equatable {
    /// `discovery_prefix`: Home Assistant's discovery topic prefix.
    public var discoveryPrefix = "homeassistant"
    /// `homeassistant_buttons`: a Done and a Snooze button per reminder, which whoever may
    /// publish on the broker can press.
    public var buttons = false

    public static let keys = ["homeassistant", "discovery_prefix", "homeassistant_buttons"]

    public init(discoveryPrefix: String = "homeassistant", buttons: Bool = false) {
        self.discoveryPrefix = discoveryPrefix
        self.buttons = buttons
    }
}

/// The broker's keys of `[mqtt]`: where it is, as whom, at which QoS, and how many events may
/// wait for it.
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
    /// `qos`: 0, 1 or 2 for everything published and subscribed.
    public var qos: Int
    /// `outbox_limit`: how many events wait for the broker at most; the oldest go first.
    public var outboxLimit: Int

    public static let defaultPort = 1883
    public static let defaultTLSPort = 8883
    public static let defaultOutboxLimit = 10_000
    public static let keys = ["url", "cafile", "username", "password_file", "client_id", "qos", "outbox_limit"]

    public init(
        host: String, port: Int = defaultPort, usesTLS: Bool = false, caFile: String? = nil, username: String? = nil,
        password: String? = nil, clientID: String? = nil, qos: Int = 1, outboxLimit: Int = defaultOutboxLimit
    ) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
        self.caFile = caFile
        self.username = username
        self.password = password
        self.clientID = clientID
        self.qos = qos
        self.outboxLimit = outboxLimit
    }

    /// The keys whose values differ in `other` (the password named, never shown).
    public func changedKeys(in other: MQTTSettings) -> [String] {
        let pairs: [(String, Bool)] = [
            ("url", url != other.url), ("cafile", caFile != other.caFile), ("username", username != other.username),
            ("password_file", password != other.password), ("client_id", clientID != other.clientID), ("qos", qos != other.qos),
            ("outbox_limit", outboxLimit != other.outboxLimit),
        ]
        return pairs.filter(\.1).map(\.0)
    }

    /// "mqtt://host:port" or "mqtts://host:port".
    public var url: String {
        "\(usesTLS ? "mqtts" : "mqtt")://\(IPAddress.shown(host)):\(port)"
    }

    /// Whether the credentials cross a network unencrypted: a user over `mqtt://` (no TLS) to a
    /// broker on another machine than this one.
    public var sendsCredentialsUnencrypted: Bool {
        username != nil && !usesTLS && !IPAddress.isThisMachine(host)
    }

    /// The client id to connect with: the configured one, else `geoalarm-HOSTNAME`.
    public func clientID(hostName: String) -> String {
        clientID ?? "geoalarm-\(hostName)"
    }

    /// Reads the broker's keys of `table`; nil (reported) when they cannot be used.
    static func read(_ table: TOMLTable, context: String, file: String, reader: inout some TableReading) -> MQTTSettings? {
        guard let url = reader.string(table, "url", context: context) else {
            if table["url"] == nil { reader.report(in: table, context, "url", "missing: give the broker as url = \"mqtt://HOST:PORT\"") }
            return nil
        }
        var settings: MQTTSettings
        switch parseURL(url) {
        case .success(let parsed):
            settings = MQTTSettings(host: parsed.host, port: parsed.port, usesTLS: parsed.tls)
        case .failure(let problem):
            reader.report(in: table, context, "url", "\(DisplayText.url(url)) \(problem.message)")
            return nil
        }
        if let cafile = reader.string(table, "cafile", context: context) {
            if !settings.usesTLS { reader.report(in: table, context, "cafile", "only applies to an mqtts:// url") }
            let resolved = PathParts.resolve(cafile, besides: file)
            if ((try? System.fileStatus(resolved)) ?? nil) == nil {
                reader.report(in: table, context, "cafile", "\(resolved): no such file")
            } else if let problem = FileSafety.notRegularFileProblem(resolved) {
                // A named pipe would hold the MQTT thread for ever when OpenSSL reads it.
                reader.report(in: table, context, "cafile", "\(resolved) \(problem)")
            }
            settings.caFile = resolved
        }
        if let username = reader.string(table, "username", context: context) {
            if let problem = MQTTText.stringProblem(username) {
                reader.report(in: table, context, "username", problem)
            } else {
                settings.username = username
            }
        }
        if let passwordFile = reader.string(table, "password_file", context: context) {
            let resolved = PathParts.resolve(passwordFile, besides: file)
            switch PasswordFile.read(resolved) {
            case .success(let password): settings.password = password
            case .failure(let problem): reader.report(in: table, context, "password_file", "\(resolved): \(problem.message)")
            }
            if settings.username == nil { reader.report(in: table, context, "password_file", "needs a username") }
        }
        if let clientID = reader.string(table, "client_id", context: context) {
            // The source connects as CLIENT_ID-source, the will's watch as CLIENT_ID-lwt.
            if clientID.isEmpty || clientID.utf8.count > MQTTText.longest - 7 {
                reader.report(in: table, context, "client_id", "must be 1 to \(MQTTText.longest - 7) bytes")
            } else if let problem = MQTTText.stringProblem(clientID) {
                reader.report(in: table, context, "client_id", problem)
            } else {
                settings.clientID = clientID
            }
        }
        if let qos = reader.typed(table, "qos", context: context, expected: "0, 1 or 2", { $0.int }) {
            if (0...2).contains(qos) { settings.qos = qos } else { reader.report(in: table, context, "qos", "\(qos) is not 0, 1 or 2") }
        }
        if let limit = reader.integer(table, "outbox_limit", context: context, expected: "a number of events", in: 1...10_000_000) {
            settings.outboxLimit = limit
        }
        return settings
    }

    /// Reads `mqtt://host[:port]` or `mqtts://host[:port]` (an IPv6 address in brackets; the
    /// Paho clients' `tcp://` and `ssl://` too): host, port and TLS, or why not.
    public static func parseURL(_ text: String) -> Result<(host: String, port: Int, tls: Bool), URLProblem> {
        let schemes = [("mqtt://", false), ("tcp://", false), ("mqtts://", true), ("ssl://", true)]
        guard let (_, tls) = schemes.first(where: { text.hasPrefix($0.0) }) else {
            let websocket = text.hasPrefix("ws://") || text.hasPrefix("wss://")
            return .failure(URLProblem(websocket
                ? "is a WebSocket address, which geoalarm does not speak: give the broker's MQTT port (mqtt://HOST:1883, mqtts://HOST:8883)"
                : "must start with mqtt:// or mqtts://"))
        }
        let address: NetworkAddress
        do {
            address = try NetworkAddress(url: Substring(text))
        } catch {
            return .failure(URLProblem(error.description))
        }
        if address.userInfo != nil { return .failure(URLProblem("must not hold credentials: use username and password_file")) }
        if !["", "/"].contains(address.path) || address.query != nil || address.fragment != nil {
            return .failure(URLProblem("must not have a path"))
        }
        let host = address.host
        guard !host.isEmpty else { return .failure(URLProblem("has no host")) }
        guard host.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
            return .failure(URLProblem("has a host with spaces or non-ASCII characters"))
        }
        var port = tls ? defaultTLSPort : defaultPort
        if let portText = address.portText {
            guard let number = address.port else {
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
