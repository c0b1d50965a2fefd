internal import CMosquitto
import FoundationEssentials
import GeoAlarmSystem
import Glibc
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
    /// Messages on subscribed topics: every one that was waiting when the loop woke, in order.
    case received([MQTTMessage])
}

/// A connection to an MQTT broker through libmosquitto, driven by an ``EventLoop``: the one
/// place libmosquitto is called from.
///
/// The loop waits on the connection's socket with everything else it waits on and calls
/// `mosquitto_loop_read`, `mosquitto_loop_write` (when libmosquitto has something to write) and
/// `mosquitto_loop_misc` (a timer at the next keepalive ping), never libmosquitto's own thread.
/// Only connecting happens elsewhere: `mosquitto_connect` blocks in name resolution and
/// `connect`, so each attempt runs on a short-lived thread that hands the connection back to the
/// loop and ends. While the broker is away the client waits 1 s, then doubling to 60 s, on a
/// timer of the loop. By default each connection starts a new session (clean session, MQTT
/// 3.1.1), so messages the broker never acknowledged are the caller's to publish again on
/// ``MQTTClientEvent/connected``; a persistent session (a reader's) has the broker keep its
/// subscriptions, and the messages for them at QoS 1 or 2, while the client is away, to deliver
/// when it returns. A reader that gives a receive maximum speaks MQTT 5, so that the broker sends
/// it that many unacknowledged messages at once rather than its default (20 for mosquitto) and
/// queues none of a burst for it, where its queue's bound (1,000) would drop some; a broker that
/// speaks no MQTT 5 is spoken to in 3.1.1 from then on.
///
/// ``publish(_:)`` and the handler run on the loop's thread; ``start()`` and ``stop()`` may be
/// called from anywhere.
public final class MQTTClient: Sendable {
    /// Where to connect, as whom.
    public let settings: MQTTSettings
    /// This connection's client id.
    public let clientID: String
    private let will: MQTTMessage?
    private let subscriptions: [String]
    private let persistentSession: Bool
    private let receiveMaximum: Int?
    private let handler: @Sendable (MQTTClientEvent) -> Void
    private let loop: EventLoop
    private let session: Confined<Session>

    /// A libmosquitto client handle and the library whose functions take it.
    private typealias Client = (handle: OpaquePointer, library: LibMosquitto)

    /// What the client keeps between the loop's callbacks.
    private struct Session {
        var phase = Phase.idle
        /// The libmosquitto client of the current connection, with the library it came from, and
        /// what its callbacks reach.
        var client: Client?
        var callbacks: CallbackBox?
        var watch: EventLoop.Watch?
        var keepaliveTimer: EventLoop.Timer?
        var goodbyeTimer: EventLoop.Timer?
        var reconnection = Reconnection()
        /// When the connection last read and wrote (for the keepalive's timer).
        var lastRead = ContinuousClock.now
        var lastWrite = ContinuousClock.now
        /// ``stop()``s waiting for the goodbye to be written.
        var goodbyes: [@Sendable (Bool) -> Void] = []
        /// Whether to speak MQTT 5 (a receive maximum was asked for, and the broker speaks it).
        var version5 = false
    }

    private enum Phase {
        case idle, connecting, connected, waiting, stopping, stopped
    }

    /// Seconds between keepalive pings when nothing else is sent.
    static let keepalive: Int32 = 60

    /// A client for `settings`'s broker on `loop`; `will` is what the broker publishes if the
    /// connection is lost without a goodbye; `subscriptions` are subscribed at QoS `settings.qos`
    /// on every connect; with `persistentSession` the broker keeps the session of `clientID`
    /// across disconnections; `handler` hears every event, on the loop's thread.
    public init(
        settings: MQTTSettings, clientID: String, will: MQTTMessage? = nil, subscriptions: [String] = [],
        persistentSession: Bool = false, receiveMaximum: Int? = nil, loop: EventLoop,
        handler: @escaping @Sendable (MQTTClientEvent) -> Void
    ) {
        self.settings = settings
        self.clientID = clientID
        self.will = will
        self.subscriptions = subscriptions
        self.persistentSession = persistentSession
        self.receiveMaximum = receiveMaximum
        self.loop = loop
        self.handler = handler
        session = Confined(Session(version5: receiveMaximum != nil), on: loop)
    }

    /// "mqtt://localhost:1883", for logs.
    public var name: String { settings.url }

    /// Starts connecting.
    public func start() {
        loop.execute { [self] in connect() }
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

    /// Queues `message` at the configured QoS when connected (on the loop's thread); the loop
    /// writes it when the socket takes it.
    @discardableResult
    public func publish(_ message: MQTTMessage) -> PublishResult {
        guard session.value.phase == .connected, let (handle, mosq) = session.value.client else { return .notConnected }
        var id: Int32 = 0
        let result = message.payload.withUnsafeBytes { bytes in
            mosq.publish(
                handle, &id, message.topic, Int32(clamping: bytes.count), bytes.baseAddress, Int32(settings.qos), message.retain)
        }
        switch result {
        case MOSQ_ERR_SUCCESS.rawValue:
            followWrites()
            return .sent(id)
        case MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_LOST.rawValue, MOSQ_ERR_NOMEM.rawValue, MOSQ_ERR_ERRNO.rawValue:
            return .notConnected
        default:
            return .refused(Self.describe(result))
        }
    }

    /// Says goodbye to the broker (after what was already published), then tells `done` whether
    /// the goodbye was written: false when a connection was up and its goodbye was not written
    /// within ``goodbyeWait`` (the broker may then publish the will, as for a crash). A connect
    /// still under way is left to finish alone.
    public func stop(then done: @escaping @Sendable (Bool) -> Void = { _ in }) {
        loop.execute { [self] in
            switch session.value.phase {
            case .connected:
                session.value.phase = .stopping
                session.value.goodbyes.append(done)
                if let (handle, mosq) = session.value.client { _ = mosq.disconnect(handle) }
                session.value.goodbyeTimer = loop.schedule(at: .now + .seconds(Self.goodbyeWait)) { [self] in
                    session.value.goodbyeTimer = nil
                    endConnection()
                    finishGoodbyes(written: false)
                }
                followWrites()
            case .stopping:
                session.value.goodbyes.append(done)
            case .waiting:
                session.value.reconnection.cancel(on: loop)
                session.value.phase = .stopped
                done(true)
            case .idle, .connecting, .stopped:
                session.value.phase = .stopped
                done(true)
            }
        }
    }

    /// ``stop(then:)``, waiting for the goodbye.
    @discardableResult
    public func stop() async -> Bool {
        await withCheckedContinuation { continuation in stop { continuation.resume(returning: $0) } }
    }

    /// Seconds ``stop()`` waits for the goodbye to be written: a bound for a machine too busy to
    /// write it, never reached otherwise.
    static let goodbyeWait = 30.0

    // MARK: On the loop

    private func connect() {
        session.value.reconnection.retrying()
        guard session.value.phase == .idle || session.value.phase == .waiting else { return }
        let mosq: LibMosquitto
        switch LibMosquitto.loaded {
        case .success(let loaded): mosq = loaded
        case .failure(let failure): return handler(.unavailable(failure.reason))
        }
        let callbacks = CallbackBox(client: self)
        guard let handle = mosq.new(clientID, !persistentSession, Unmanaged.passUnretained(callbacks).toOpaque()) else {
            return lost("cannot make a libmosquitto client: \(SystemError(call: "mosquitto_new", code: System.lastError).reason)")
        }
        if let problem = configure(handle, mosq) {
            mosq.destroy(handle)
            return lost(problem)
        }
        session.value.client = (handle, mosq)
        session.value.callbacks = callbacks
        session.value.phase = .connecting
        // The handle goes to the connecting thread and comes back with its result: the loop
        // leaves it alone while the phase is `connecting`.
        let address = UInt(bitPattern: handle)
        let version5 = session.value.version5, keepsSession = persistentSession
        do {
            // The connecting thread's errno goes with the result: errno is the thread's own, and
            // read on the loop it says nothing ("Success" for a refused connection).
            try loop.runOnThread(named: "mqtt connect", { [settings, mosq] () -> ConnectResult in
                let handle = OpaquePointer(bitPattern: address)
                guard version5 else {
                    let code = mosq.connect(handle, settings.host, Int32(settings.port), Self.keepalive)
                    return ConnectResult(code: code, errno: System.lastError)
                }
                // In MQTT 5 a session outlasts the connection only for its expiry interval: never, for a reader's.
                var properties: OpaquePointer?
                if keepsSession { _ = mosq.propertyAddInt32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), UInt32.max) }
                let code = mosq.connectBindV5(handle, settings.host, Int32(settings.port), Self.keepalive, nil, properties)
                let error = System.lastError
                mosq.propertyFreeAll(&properties)
                return ConnectResult(code: code, errno: error)
            }) { [self] result in connectFinished(result) }
        } catch {
            endConnection()
            lost("cannot start a thread to connect: \(error.reason)")
        }
    }

    /// The connecting thread's result (that thread has ended).
    /// What `mosquitto_connect` returned on the connecting thread, with that thread's errno.
    private struct ConnectResult: Sendable {
        let code: Int32
        let errno: SystemError.Code
    }

    private func connectFinished(_ connected: ConnectResult) {
        let result = connected.code
        guard let (handle, mosq) = session.value.client, let callbacks = session.value.callbacks else { return }
        guard session.value.phase == .connecting else {
            // Stopped meanwhile.
            return endConnection()
        }
        guard result == MOSQ_ERR_SUCCESS.rawValue else {
            let reason = callbacks.reason(for: result, errno: connected.errno)
            endConnection()
            return lost(reason)
        }

        session.value.phase = .connected
        session.value.lastRead = .now
        session.value.lastWrite = .now
        session.value.watch = loop.watch(mosq.socket(handle), for: interest(of: handle, mosq)) { [self] _ in serve() }
        armKeepalive()
    }

    /// How many packets one wake of the loop reads at most before it turns to other work (and
    /// comes back at once: the socket is still readable). Few, so that what a burst's fixes
    /// make to send (10,000 devices' transitions, in MQTTScale) goes out as fast as it comes:
    /// read 256 at a time, they filled the outbox faster than the broker acknowledged it.
    static let packetsPerWake = 16

    /// How many QoS 1 messages this client has in flight to the broker at most (libmosquitto's
    /// own default is 20, which one round trip a wake would make the ceiling of what is sent).
    static let sendMaximum = 256

    /// Reads what the broker sent (a TLS handshake under way goes on there too): every packet
    /// waiting, so that a burst is taken as fast as the broker hands it over rather than left to
    /// fill the broker's queue for this client; writes what waits, and acts on what the
    /// callbacks noted.
    private func serve() {
        guard let (handle, mosq) = session.value.client, let callbacks = session.value.callbacks else { return }
        var result = mosq.loopRead(handle, 1)
        var packets = 1
        while result == MOSQ_ERR_SUCCESS.rawValue, packets < Self.packetsPerWake, session.value.client != nil {
            // The acknowledgements of what was read go at once: the broker sends a QoS 1
            // subscriber only so many unacknowledged messages (20 by default) at a time.
            if mosq.wantWrite(handle) { result = mosq.loopWrite(handle, 64) }
            guard result == MOSQ_ERR_SUCCESS.rawValue, System.isReadable(mosq.socket(handle)) else { break }
            result = mosq.loopRead(handle, 1)
            packets += 1
        }
        session.value.lastRead = .now
        let received = callbacks.takeReceived()
        if !received.isEmpty { handler(.received(received)) }
        // Subscribed here, once libmosquitto has left its connect callback and made the session
        // active: what is published from inside that callback is not acknowledged as usual. Told
        // once the broker has acknowledged every subscription, so that a message published after
        // `connected` is one the subscriptions receive.
        if callbacks.takeNewlyAccepted() {
            session.value.reconnection.connected()
            callbacks.subscriptionsPending = subscriptions.count
            for filter in subscriptions { _ = mosq.subscribe(handle, nil, filter, Int32(settings.qos)) }
        }
        if callbacks.takeNewlySubscribed() { handler(.connected) }
        if result == MOSQ_ERR_SUCCESS.rawValue, session.value.client != nil, mosq.wantWrite(handle) {
            result = mosq.loopWrite(handle, 64)
            session.value.lastWrite = .now
        }
        guard session.value.client != nil else { return }
        if result != MOSQ_ERR_SUCCESS.rawValue || mosq.socket(handle) < 0 {
            // Lost, or (after a stop's DISCONNECT was written) closed by libmosquitto.
            var reason = callbacks.reason(for: result)
            let stopping = session.value.phase == .stopping
            endConnection()
            if stopping { return finishGoodbyes(written: true) }
            if callbacks.refusedVersion, session.value.version5 {
                session.value.version5 = false
                reason += "; speaking MQTT 3.1.1 to it from now on"
            }
            return lost(reason)
        }
        if let watch = session.value.watch { loop.update(watch, interest: interest(of: handle, mosq)) }
    }

    /// Has the loop wake for writing when libmosquitto has something to write.
    private func followWrites() {
        guard let (handle, mosq) = session.value.client, let watch = session.value.watch else { return }
        loop.update(watch, interest: interest(of: handle, mosq))
    }

    private func interest(of handle: OpaquePointer, _ mosq: LibMosquitto) -> EventLoop.Interest {
        mosq.wantWrite(handle) ? [.readable, .writable] : .readable
    }

    /// Sets the timer for the next keepalive check: libmosquitto pings once the connection has
    /// been quiet in either direction for ``keepalive`` seconds (and gives up on a broker that
    /// does not answer).
    private func armKeepalive() {
        let quietSince = min(session.value.lastRead, session.value.lastWrite)
        let due = max(quietSince + .seconds(Int(Self.keepalive)) + .seconds(1), .now + .seconds(1))
        session.value.keepaliveTimer = loop.schedule(at: due) { [self] in
            session.value.keepaliveTimer = nil
            guard let (handle, mosq) = session.value.client,
                  session.value.phase == .connected || session.value.phase == .stopping
            else { return }
            let result = mosq.loopMisc(handle)
            if result != MOSQ_ERR_SUCCESS.rawValue {
                let reason = session.value.callbacks?.reason(for: result) ?? Self.describe(result)
                endConnection()
                return lost(reason)
            }
            followWrites()
            armKeepalive()
        }
    }

    /// Closes and frees the current connection, if any.
    private func endConnection() {
        if let watch = session.value.watch { loop.unwatch(watch) }
        if let timer = session.value.keepaliveTimer { loop.cancel(timer) }
        session.value.watch = nil
        session.value.keepaliveTimer = nil
        if let (handle, mosq) = session.value.client { mosq.destroy(handle) }
        session.value.client = nil
        session.value.callbacks = nil
        if session.value.phase == .connecting || session.value.phase == .connected { session.value.phase = .idle }
    }

    private func finishGoodbyes(written: Bool) {
        if let timer = session.value.goodbyeTimer { loop.cancel(timer) }
        session.value.goodbyeTimer = nil
        session.value.phase = .stopped
        let goodbyes = session.value.goodbyes
        session.value.goodbyes = []
        for goodbye in goodbyes { goodbye(written) }
    }

    /// Tells why (when it is news) and tries again later (see ``Reconnection``; the broker's
    /// accepting a connection starts the waits over).
    private func lost(_ reason: String) {
        guard session.value.phase != .stopped, session.value.phase != .stopping else { return }
        session.value.phase = .waiting
        if session.value.reconnection.failed(reason, on: loop, retry: { [self] in connect() }) {
            handler(.unavailable(reason))
        }
    }

    /// Sets credentials, TLS, the will and the protocol; why it failed, or nil.
    private func configure(_ handle: OpaquePointer, _ mosq: LibMosquitto) -> String? {
        if session.value.version5, let receiveMaximum {
            _ = mosq.intOption(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5)
            _ = mosq.intOption(handle, MOSQ_OPT_RECEIVE_MAXIMUM, Int32(receiveMaximum))
        } else {
            _ = mosq.intOption(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        }
        _ = mosq.intOption(handle, MOSQ_OPT_SEND_MAXIMUM, Int32(Self.sendMaximum))
        // Packets published are queued, and written by the loop: never from inside `publish`,
        // where a callback could run while its caller holds a lock.
        _ = mosq.threadedSet(handle, true)
        mosq.connectCallbackSet(handle) { _, context, code in
            CallbackBox.from(context).connected(code)
        }
        mosq.subscribeCallbackSet(handle) { _, context, _, _, _ in
            CallbackBox.from(context).subscribed()
        }
        mosq.publishCallbackSet(handle) { _, context, id in
            CallbackBox.from(context).client.handler(.acknowledged(id))
        }
        mosq.messageCallbackSet(handle) { _, context, message in
            guard let message else { return }
            CallbackBox.from(context).received(message.pointee)
        }
        // Only OpenSSL's reason for a failed handshake ("certificate verify failed") is taken from
        // the library's log; its result code says no more than "a TLS error occurred".
        mosq.logCallbackSet(handle) { _, context, level, text in
            guard level == MOSQ_LOG_ERR, let text else { return }
            CallbackBox.from(context).noteError(String(cString: text))
        }
        if let username = settings.username {
            let result = mosq.usernamePasswordSet(handle, username, settings.password)
            if result != MOSQ_ERR_SUCCESS.rawValue { return "username: \(Self.describe(result))" }
        }
        if settings.usesTLS {
            let result = mosq.tlsSet(handle, settings.caFile, settings.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil)
            if result != MOSQ_ERR_SUCCESS.rawValue { return "TLS with cafile \(settings.caFile ?? "-"): \(Self.describe(result))" }
        }
        if let will {
            let result = will.payload.withUnsafeBytes { bytes in
                mosq.willSet(handle, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(settings.qos), will.retain)
            }
            if result != MOSQ_ERR_SUCCESS.rawValue { return "will on \(will.topic): \(Self.describe(result))" }
        }
        return nil
    }

    /// libmosquitto's words for a result code (the system's for an errno one).
    static func describe(_ code: Int32, errno: SystemError.Code? = nil) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return SystemError(call: "libmosquitto", code: errno ?? System.lastError).reason }
        if code == MOSQ_ERR_NO_CONN.rawValue || code == MOSQ_ERR_CONN_LOST.rawValue { return "connection lost" }
        // "A TLS error occurred." without its full stop, as it goes inside a sentence.
        var words = LibMosquitto.library?.strerror(code).map { String(cString: $0) } ?? "libmosquitto error \(code)"
        if words.hasSuffix(".") { words.removeLast() }
        return words
    }

    /// What libmosquitto's C callbacks reach the client through (their context pointer).
    private final class CallbackBox {
        let client: MQTTClient
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

        /// Set when the broker refused the protocol's version (it speaks no MQTT 5).
        var refusedVersion = false

        func connected(_ code: Int32) {
            guard code == 0 else {
                let words = LibMosquitto.library?.connackString(code).map { String(cString: $0) } ?? "code \(code)"
                refusal = "the broker refused the connection: \(words)"
                // 1: MQTT 3.1.1's unacceptable protocol version; 132: MQTT 5's unsupported one.
                refusedVersion = code == 1 || code == 132
                return
            }
            newlyAccepted = true
        }

        /// Keeps the reason of an OpenSSL error line (`OpenSSL Error[0]: error:0A000086:SSL
        /// routines::certificate verify failed`): the text after its last colon.
        func noteError(_ line: String) {
            guard line.hasPrefix("OpenSSL Error"), let reason = line.split(separator: ":").last else { return }
            tlsProblem = reason.trimmingWhitespace()
        }

        /// Why a connection failed with `code`: the broker's refusal, OpenSSL's reason, or the code's words.
        /// Why the connection failed or ended with `code`; `errno`, when given, is the one the
        /// failing call left (on another thread: this one's says nothing of it).
        func reason(for code: Int32, errno: SystemError.Code? = nil) -> String {
            if let refusal { return refusal }
            if code == MOSQ_ERR_TLS.rawValue, let tlsProblem { return "TLS: \(tlsProblem)" }
            return MQTTClient.describe(code, errno: errno)
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

        /// Messages read in this wake, handed on together once the reading is done.
        private var inbox: [MQTTMessage] = []

        func received(_ message: mosquitto_message) {
            guard let topic = message.topic else { return }
            let count = Int(max(0, message.payloadlen))
            let payload = count == 0 || message.payload == nil
                ? [] : Array(UnsafeRawBufferPointer(start: message.payload, count: count))
            inbox.append(MQTTMessage(topic: String(cString: topic), payload: payload, retain: message.retain))
        }

        func takeReceived() -> [MQTTMessage] {
            defer { inbox = [] }
            return inbox
        }
    }
}
