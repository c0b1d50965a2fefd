internal import CMosquitto
import Foundation
import GeoAlarmConfig
import GeoAlarmSystem
import Synchronization

/// One MQTT message, as published or received.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool

    public init(topic: String, payload: [UInt8], retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }

    public init(topic: String, text: String, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), retain: retain)
    }
}

/// What the connection to the broker reports, on the client's own thread.
public enum MQTTClientEvent: Sendable {
    /// Connected, and every subscription acknowledged by the broker; everything published before is to be published again.
    case connected
    /// Not connected, and retrying by itself: why (the broker's refusal, a lost connection).
    case unavailable(String)
    /// The broker acknowledged the message with this id (QoS 1).
    case acknowledged(Int32)
    /// A message on a subscribed topic.
    case received(MQTTMessage)
}

/// A connection to an MQTT broker through libmosquitto, kept up by a thread of its own: the one
/// place libmosquitto is called from.
///
/// The thread sleeps in libmosquitto's loop until the socket has data, a publish from another
/// thread wakes it, or the keepalive ping is due; while the broker is away it waits 1 s, then
/// doubling to 60 s, on an eventfd that ``stop()`` writes. By default each connection starts a
/// new session (clean session, MQTT 3.1.1), so messages the broker never acknowledged are the
/// caller's to publish again on ``MQTTClientEvent/connected``; a persistent session (a reader's)
/// has the broker keep its subscriptions, and the messages for them at QoS 1 or 2, while the
/// client is away, to deliver when it returns.
public final class MQTTClient: @unchecked Sendable {
    /// Where to connect, as whom.
    public let settings: MQTTSettings
    /// This connection's client id.
    public let clientID: String
    private let will: MQTTMessage?
    private let subscriptions: [String]
    private let persistentSession: Bool
    private let handler: @Sendable (MQTTClientEvent) -> Void
    /// The live libmosquitto handle (nil between connections) and whether stop was asked;
    /// held while another thread publishes, so the handle is not destroyed meanwhile.
    private let shared = Mutex<(handle: OpaquePointer?, stopping: Bool)>((nil, false))
    private let stopEvent: Int32?
    /// Signalled by the thread as it ends: after its goodbye to the broker has been written.
    private let finishedEvent: Int32?
    private var thread: Thread?

    static let firstRetry = 1.0
    static let longestRetry = 60.0
    /// Seconds between keepalive pings when nothing else is sent.
    static let keepalive: Int32 = 60

    private static let libraryReady: Bool = mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue

    /// A client for `settings`'s broker; `will` is what the broker publishes if the connection
    /// is lost without a goodbye; `subscriptions` are subscribed at QoS `settings.qos` on every
    /// connect; with `persistentSession` the broker keeps the session of `clientID` across
    /// disconnections; `handler` hears every event, on the client's thread.
    public init(
        settings: MQTTSettings, clientID: String, will: MQTTMessage? = nil, subscriptions: [String] = [],
        persistentSession: Bool = false, handler: @escaping @Sendable (MQTTClientEvent) -> Void
    ) {
        self.settings = settings
        self.clientID = clientID
        self.will = will
        self.subscriptions = subscriptions
        self.persistentSession = persistentSession
        self.handler = handler
        stopEvent = try? System.eventDescriptor()
        finishedEvent = try? System.eventDescriptor()
    }

    /// "mqtt://localhost:1883", for logs.
    public var name: String { settings.url }

    /// Starts the connection thread.
    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "mqtt \(clientID)"
        self.thread = thread
        thread.start()
    }

    /// What became of a message given to ``publish(_:)``.
    public enum PublishResult: Sendable, Equatable {
        /// Sent with this message id (acknowledged later through ``MQTTClientEvent/acknowledged(_:)``).
        case sent(Int32)
        /// Not sent: there is no connection now.
        case notConnected
        /// Never sendable (a topic or payload libmosquitto or MQTT refuses): why.
        case refused(String)
    }

    /// Publishes `message` at the configured QoS when connected.
    @discardableResult
    public func publish(_ message: MQTTMessage) -> PublishResult {
        shared.withLock { state in
            guard let handle = state.handle, !state.stopping else { return .notConnected }
            var id: Int32 = 0
            let result = message.payload.withUnsafeBytes { bytes in
                mosquitto_publish(
                    handle, &id, message.topic, Int32(clamping: bytes.count), bytes.baseAddress, Int32(settings.qos), message.retain)
            }
            switch result {
            case MOSQ_ERR_SUCCESS.rawValue: return .sent(id)
            case MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_LOST.rawValue, MOSQ_ERR_NOMEM.rawValue, MOSQ_ERR_ERRNO.rawValue:
                return .notConnected
            default:
                return .refused(Self.describe(result))
            }
        }
    }

    /// Says goodbye to the broker (after what was already published) and ends the thread; false
    /// when a connection was up and its goodbye was not written within ``goodbyeWait`` (the broker
    /// may then publish the will, as for a crash).
    @discardableResult
    public func stop() -> Bool {
        let connected = shared.withLock { state -> Bool in
            state.stopping = true
            guard let handle = state.handle else { return false }
            mosquitto_disconnect(handle)
            return true
        }
        if let stopEvent { System.signalEvent(stopEvent) }
        // The goodbye is written by the thread: leaving before it is would have the broker
        // publish the will as for a crash. A connect still under way is left to finish alone.
        guard thread != nil, let finishedEvent else { return true }
        let wake = System.wait(stopEvent: finishedEvent, readable: nil, seconds: connected ? Self.goodbyeWait : Self.connectingWait)
        return !connected || wake != .timeout
    }

    private var isStopping: Bool { shared.withLock { $0.stopping } }

    /// Seconds ``stop()`` waits for the thread to say goodbye to the broker: a bound for a
    /// machine too busy to schedule it, never reached otherwise.
    static let goodbyeWait = 30.0
    /// Seconds ``stop()`` waits for a thread that is not connected (backing off ends at once; a
    /// connect under way cannot be cut short).
    static let connectingWait = 1.0

    deinit {
        if let stopEvent { System.close(stopEvent) }
        if let finishedEvent { System.close(finishedEvent) }
    }

    private func run() {
        defer { if let finishedEvent { System.signalEvent(finishedEvent) } }
        guard Self.libraryReady else { return handler(.unavailable("libmosquitto could not be initialised")) }
        var retry = Self.firstRetry
        var lastReason: String?
        while !isStopping {
            let reason: String
            switch connectAndServe() {
            case .stopped: return
            case .lost(let why, let wasConnected):
                reason = why
                if wasConnected { retry = Self.firstRetry }
            }
            if reason != lastReason { handler(.unavailable(reason)) }
            lastReason = reason
            guard waitBeforeRetry(seconds: retry) else { return }
            retry = min(retry * 2, Self.longestRetry)
        }
    }

    private enum SessionEnd {
        case stopped
        case lost(String, wasConnected: Bool)
    }

    /// One connection, from connect to its loss or a stop.
    private func connectAndServe() -> SessionEnd {
        let box = Unmanaged.passRetained(CallbackBox(client: self))
        defer { box.release() }
        guard let handle = mosquitto_new(clientID, !persistentSession, box.toOpaque()) else {
            return .lost("cannot make a libmosquitto client: \(String(cString: strerror(errno)))", wasConnected: false)
        }
        defer { mosquitto_destroy(handle) }
        if let problem = configure(handle) { return .lost(problem, wasConnected: false) }
        let connected = mosquitto_connect(handle, settings.host, Int32(settings.port), Self.keepalive)
        guard connected == MOSQ_ERR_SUCCESS.rawValue else {
            return .lost(box.takeUnretainedValue().reason(for: connected), wasConnected: false)
        }
        let stopped = shared.withLock { state in
            if !state.stopping { state.handle = handle }
            return state.stopping
        }
        if stopped { return .stopped }
        var result: Int32
        repeat {
            result = mosquitto_loop(handle, Self.keepalive * 1000, 1)
            // Subscribed here, once libmosquitto has left its connect callback and made the
            // session active: what is published from inside that callback is not acknowledged as
            // usual. Told once the broker has acknowledged every subscription, so that a message
            // published after `connected` is one the subscriptions receive.
            let callbacks = box.takeUnretainedValue()
            if callbacks.takeNewlyAccepted() {
                callbacks.subscriptionsPending = subscriptions.count
                subscribeAll()
            }
            if callbacks.takeNewlySubscribed() { handler(.connected) }
        } while result == MOSQ_ERR_SUCCESS.rawValue
        let wasConnected = box.takeUnretainedValue().accepted
        let reason = box.takeUnretainedValue().reason(for: result)
        shared.withLock { $0.handle = nil }
        if isStopping { return .stopped }
        return .lost(reason, wasConnected: wasConnected)
    }

    /// Sets credentials, TLS, the will and the protocol; why it failed, or nil.
    private func configure(_ handle: OpaquePointer) -> String? {
        _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        _ = mosquitto_threaded_set(handle, true)
        mosquitto_connect_callback_set(handle) { _, context, code in
            CallbackBox.from(context).connected(code)
        }
        mosquitto_subscribe_callback_set(handle) { _, context, _, _, _ in
            CallbackBox.from(context).subscribed()
        }
        mosquitto_publish_callback_set(handle) { _, context, id in
            CallbackBox.from(context).client.handler(.acknowledged(id))
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let message else { return }
            CallbackBox.from(context).received(message.pointee)
        }
        // Only OpenSSL's reason for a failed handshake ("certificate verify failed") is taken from
        // the library's log; its result code says no more than "a TLS error occurred".
        mosquitto_log_callback_set(handle) { _, context, level, text in
            guard level == MOSQ_LOG_ERR, let text else { return }
            CallbackBox.from(context).noteError(String(cString: text))
        }
        if let username = settings.username {
            let result = mosquitto_username_pw_set(handle, username, settings.password)
            if result != MOSQ_ERR_SUCCESS.rawValue { return "username: \(Self.describe(result))" }
        }
        if settings.usesTLS {
            let result = mosquitto_tls_set(handle, settings.caFile, settings.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil)
            if result != MOSQ_ERR_SUCCESS.rawValue { return "TLS with cafile \(settings.caFile ?? "-"): \(Self.describe(result))" }
        }
        if let will {
            let result = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(settings.qos), will.retain)
            }
            if result != MOSQ_ERR_SUCCESS.rawValue { return "will on \(will.topic): \(Self.describe(result))" }
        }
        return nil
    }

    /// Waits `seconds` or until stopped; false when stopped.
    private func waitBeforeRetry(seconds: Double) -> Bool {
        guard let stopEvent else { return false }
        return System.wait(stopEvent: stopEvent, readable: nil, seconds: seconds) == .timeout && !isStopping
    }

    /// libmosquitto's words for a result code (the system's for an errno one).
    static func describe(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        if code == MOSQ_ERR_NO_CONN.rawValue || code == MOSQ_ERR_CONN_LOST.rawValue { return "connection lost" }
        // "A TLS error occurred." without its full stop, as it goes inside a sentence.
        var words = String(cString: mosquitto_strerror(code))
        if words.hasSuffix(".") { words.removeLast() }
        return words
    }

    /// What libmosquitto's C callbacks reach the client through (their context pointer).
    private final class CallbackBox {
        let client: MQTTClient
        /// Set once the broker accepted this connection.
        var accepted = false
        /// The broker's reason for refusing the connection, when it did.
        var refusal: String?
        /// OpenSSL's reason for the last failed TLS handshake (`certificate verify failed`).
        var tlsProblem: String?
        /// Set by the connect callback, taken by the loop.
        private var newlyAccepted = false
        /// Subscriptions of this connection the broker has not acknowledged yet; nil once told.
        var subscriptionsPending: Int?

        init(client: MQTTClient) {
            self.client = client
        }

        static func from(_ context: UnsafeMutableRawPointer?) -> CallbackBox {
            Unmanaged<CallbackBox>.fromOpaque(context!).takeUnretainedValue()
        }

        func connected(_ code: Int32) {
            guard code == 0 else {
                refusal = "the broker refused the connection: \(String(cString: mosquitto_connack_string(code)))"
                return
            }
            accepted = true
            newlyAccepted = true
        }

        /// Keeps the reason of an OpenSSL error line (`OpenSSL Error[0]: error:0A000086:SSL
        /// routines::certificate verify failed`): the text after its last colon.
        func noteError(_ line: String) {
            guard line.hasPrefix("OpenSSL Error"), let reason = line.split(separator: ":").last else { return }
            tlsProblem = reason.trimmingCharacters(in: .whitespaces)
        }

        /// Why a connection failed with `code`: the broker's refusal, OpenSSL's reason, or the code's words.
        func reason(for code: Int32) -> String {
            if let refusal { return refusal }
            if code == MOSQ_ERR_TLS.rawValue, let tlsProblem { return "TLS: \(tlsProblem)" }
            return MQTTClient.describe(code)
        }

        /// Whether the broker accepted the connection since the last call.
        func takeNewlyAccepted() -> Bool {
            defer { newlyAccepted = false }
            return newlyAccepted
        }

        func subscribed() {
            subscriptionsPending = subscriptionsPending.map { $0 - 1 }
        }

        /// Whether the broker has acknowledged every subscription of this connection since the last call.
        func takeNewlySubscribed() -> Bool {
            guard let pending = subscriptionsPending, pending <= 0 else { return false }
            subscriptionsPending = nil
            return true
        }

        func received(_ message: mosquitto_message) {
            guard let topic = message.topic else { return }
            let count = Int(max(0, message.payloadlen))
            let payload = count == 0 || message.payload == nil
                ? [] : Array(UnsafeRawBufferPointer(start: message.payload, count: count))
            client.handler(.received(MQTTMessage(topic: String(cString: topic), payload: payload, retain: message.retain)))
        }
    }

    /// Subscribes to every topic filter, on each new connection.
    private func subscribeAll() {
        shared.withLock { state in
            guard let handle = state.handle else { return }
            for filter in subscriptions { _ = mosquitto_subscribe(handle, nil, filter, Int32(settings.qos)) }
        }
    }
}
