import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import Logging
import ServiceLifecycle
import Synchronization

/// What goes through the link to the broker: the outbox, the OwnTracks sink, the Home Assistant
/// sink. Each hears, on the loop, when a connection is up (to publish what it shows afresh) and
/// the messages on its subscriptions.
protocol MQTTParticipant: Sendable {
    /// Subscriptions of the link's connection this participant reads.
    var subscriptions: [String] { get }
    /// A connection is up (every subscription acknowledged): publish what it shows.
    func connected(_ link: MQTTLink)
    /// The connection is gone; the link connects again by itself.
    func disconnected()
    /// Messages on a subscription.
    func received(_ messages: [MQTTMessage])
    /// The agent stops: the last things to publish before `offline`.
    func stopping()
}

extension MQTTParticipant {
    var subscriptions: [String] { [] }
    func disconnected() {}
    func received(_ messages: [MQTTMessage]) {}
    func stopping() {}
}

/// The agent's link to the broker, as a service: the connection everything is published on, and
/// what the broker says when the agent is lost.
///
/// The broker keeps `geoalarm/NODE/availability`: `online` (retained) once connected, `offline`
/// at a clean stop, and `offline` by the connection's will when the agent is lost (a crash, kill
/// -9, the network gone), so that whoever reads it later (Home Assistant started after a crash)
/// is not told it is up. A connection has one will, and OwnTracks' consumers (the Recorder, Home
/// Assistant's OwnTracks) look for an `lwt` on the device's own topic: a second connection, which
/// publishes nothing, carries that one. Both connect and reconnect by themselves on the loop.
public final class MQTTLink: Service, Sendable {
    private let settings: MQTTSettings
    /// The client id of the main connection; the will's is this with `-lwt`.
    public let clientID: String
    /// `online` (retained) on connect, `offline` at a clean stop and by the will.
    public let availabilityTopic: String
    private let main: MQTTClient
    private let watchman: MQTTClient?
    private let outbox: MQTTOutbox
    private let participants: [any MQTTParticipant]
    private let logger: Logger
    private let connected: Confined<Bool>

    /// A link to `settings`'s broker as `clientID`, for the outbox (which hears the broker's
    /// acknowledgements), the OwnTracks sink (whose will the broker publishes on this machine's
    /// topic when the agent is lost) and the Home Assistant sink, when there is one.
    public convenience init(
        settings: MQTTSettings, clientID: String, outbox: MQTTOutbox, ownTracks: OwnTracksSink, homeAssistant: HomeAssistantSink?,
        loop: EventLoop, logger: Logger
    ) {
        let sinks: [any MQTTParticipant] = [ownTracks] + (homeAssistant.map { [$0] } ?? [])
        self.init(
            settings: settings, clientID: clientID, ownTracksWill: ownTracks.will, outbox: outbox, participants: sinks, loop: loop,
            logger: logger)
    }

    /// A link to `settings`'s broker as `clientID`, for `participants` (the outbox hears the
    /// broker's acknowledgements); `ownTracksWill`, when given, is what the broker publishes on
    /// the device's topic when the agent is lost.
    init(
        settings: MQTTSettings, clientID: String, ownTracksWill: MQTTMessage?, outbox: MQTTOutbox,
        participants: [any MQTTParticipant], loop: EventLoop, logger: Logger
    ) {
        self.settings = settings
        self.clientID = clientID
        self.outbox = outbox
        // The outbox first: its waiting transitions go before the states that follow them.
        self.participants = [outbox] + participants
        self.logger = logger
        availabilityTopic = Self.availabilityTopic(clientID: clientID)
        connected = Confined(false, on: loop)
        let events = LinkEvents()
        main = MQTTClient(
            settings: settings, clientID: clientID, will: MQTTMessage(topic: availabilityTopic, text: "offline", retain: true),
            subscriptions: participants.flatMap(\.subscriptions), loop: loop
        ) { event in events.send(event) }
        watchman = ownTracksWill.map { will in
            MQTTClient(settings: settings, clientID: clientID + "-lwt", will: will, loop: loop) { _ in }
        }
        events.deliver { [weak self] event in self?.handle(event) }
    }

    /// The availability topic of the agent connecting as `clientID`: `geoalarm/NODE/availability`.
    public static func availabilityTopic(clientID: String) -> String {
        "geoalarm/\(HomeAssistantDiscovery.objectID(clientID))/availability"
    }

    /// Connects (retrying until it can) and serves until graceful shutdown, then says `offline`
    /// and disconnects: a clean stop is no crash, but the agent is gone.
    public func run() async throws {
        outbox.load()
        logger.info("publishing to \(settings.url) as \(clientID)")
        main.start()
        watchman?.start()
        try? await gracefulShutdown()
        for participant in participants { participant.stopping() }
        if connected.value { main.publish(MQTTMessage(topic: availabilityTopic, text: "offline", retain: true)) }
        async let watchmanGone = watchman?.stop() ?? true
        if await !main.stop() {
            logger.warning("""
                mqtt: the goodbye to \(settings.url) was not written within \(Int(MQTTClient.goodbyeWait)) s; the broker may \
                publish the will as for a crash
                """)
        }
        _ = await watchmanGone
    }

    /// Whether the main connection is up.
    var isConnected: Bool { connected.value }

    /// Publishes `message` on the main connection (on the loop).
    @discardableResult
    func publish(_ message: MQTTMessage) -> MQTTClient.PublishResult {
        main.publish(message)
    }

    private func handle(_ event: MQTTClientEvent) {
        switch event {
        case .connected:
            logger.info("connected to \(settings.url)")
            connected.value = true
            main.publish(MQTTMessage(topic: availabilityTopic, text: "online", retain: true))
            for participant in participants { participant.connected(self) }
        case .unavailable(let reason):
            connected.value = false
            for participant in participants { participant.disconnected() }
            let waiting = DisplayText.counted(outbox.waiting, "event")
            logger.warning("mqtt broker \(settings.url) unavailable: \(reason); retrying (\(waiting) in the outbox)")
        case .acknowledged(let id):
            outbox.acknowledged(id)
        case .received(let messages):
            for participant in participants { participant.received(messages) }
        }
    }
}

/// Hands a client's events to whoever ``deliver(_:)`` names (once it exists: the link is made
/// after its clients).
private final class LinkEvents: Sendable {
    /// The receiver in a struct: a bare closure kept in the generic `Mutex` is reabstracted on
    /// every `withLock`, and the `inout` access writes the wrapped closure back, so each event
    /// would add a thunk to the chain every later event runs through (10,000 devices' events
    /// made it hundreds of thousands deep).
    private struct Receiver: Sendable {
        let call: @Sendable (MQTTClientEvent) -> Void
    }

    private let receiver = Mutex<Receiver?>(nil)

    func deliver(_ receiver: @escaping @Sendable (MQTTClientEvent) -> Void) {
        self.receiver.withLock { $0 = Receiver(call: receiver) }
    }

    /// Calls the receiver with the lock released.
    func send(_ event: MQTTClientEvent) {
        receiver.withLock { $0 }?.call(event)
    }
}
