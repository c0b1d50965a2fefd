import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmOwnTracks
import GeoAlarmStore
import GeoAlarmSystem
import Logging
import ServiceLifecycle
import Synchronization

/// Where the device is, to an MQTT broker, as an ``EventSink`` that follows presence changes
/// (not announcements): OwnTracks `transition`s for every crossing and `location`s naming the
/// regions the position is inside, and (with `homeassistant = true`) Home Assistant discovery,
/// a presence sensor per reminder, and its distance and direction of travel sensors (following
/// proximity changes, which come only when they change noticeably).
///
/// Transitions go through an outbox in the state file: written before anything is sent, sent
/// in order (QoS from the config, 1 by default), deleted once the broker acknowledged them, and
/// sent again from the oldest after a reconnect; so none is lost while the broker is away or the
/// agent restarts. The outbox keeps at most `outbox_limit` messages; beyond that the oldest go,
/// and how many is logged. Retained state (availability, discovery, presence, the tracker's
/// position) is not queued: it is published afresh on every connect.
public final class MQTTPublisher: EventSink, Service, Sendable {
    private let settings: MQTTSettings
    /// The agent's own OwnTracks topic (`owntracks/USER/HOST`).
    private let topic: String
    private let trackerID: String
    /// `online` (retained) on connect, `offline` at a clean stop.
    private let availabilityTopic: String
    /// Seals the OwnTracks messages of this machine and of tracked devices that have a secret.
    private let secrets: OwnTracksSecrets
    private let discovery: HomeAssistantDiscovery?
    /// Where tracked devices' transitions go (with `--source owntracks`).
    private let trackedTopics: OwnTracksTopics
    /// `acc` for a fix without an error estimate: the largest error a used fix may have.
    private let unknownError: Double
    private let logger: Logger
    /// Whether this machine has a position (a receiver): else Home Assistant gets no entities.
    private let ownPosition: Bool
    private let shared: Mutex<PublisherState>
    private let client: MQTTClient
    /// Carries the client's events to this publisher (which is made after its client).
    private let events = EventRelay()
    /// When the fences restored from the state file were first placed: noted in the store at start.
    private let restoredPlacings: [String: Date]

    /// How many outbox messages are in flight (sent, not yet acknowledged) at once.
    static let window = 64

    /// A publisher for `settings`'s broker; `store` keeps the outbox (nil: in memory only);
    /// `savedPresence` is this machine's saved side of each fence, for the retained presence,
    /// `savedProximities` its saved proximities, and `lifecycles` the reminders' saved
    /// lifecycles, for its attributes. Without `ownPosition`
    /// (an agent tracking OwnTracks devices, with no receiver of its own) Home Assistant gets no
    /// entities from it: they could never change.
    public init(
        settings: MQTTSettings, user: String, hostName: String, softwareVersion: String, reminders: [Reminder],
        collections: [ReminderCollection], savedPresence: [String: SavedPresence],
        savedProximities: [String: SavedProximity] = [:], lifecycles: [String: Lifecycle], ownPosition: Bool = true, unknownError: Double, store: StateStore?, loop: EventLoop, logger: Logger
    ) {
        self.settings = settings
        topic = settings.owntracksTopic(user: user, hostName: hostName)
        trackerID = settings.trackerID ?? OwnTracksJSON.trackerID(of: String(topic.split(separator: "/").last ?? ""))
        let clientID = settings.clientID(hostName: hostName)
        discovery = settings.homeAssistant
            ? HomeAssistantDiscovery(
                prefix: settings.discoveryPrefix, clientID: clientID, owntracksTopic: topic, softwareVersion: softwareVersion)
            : nil
        secrets = OwnTracksSecrets(secret: settings.secret, deviceSecrets: settings.deviceSecrets)
        trackedTopics = OwnTracksTopics(subscription: settings.subscribe)
        self.unknownError = unknownError
        self.logger = logger
        self.ownPosition = ownPosition
        if settings.homeAssistant, !ownPosition {
            logger.info("""
                homeassistant: this agent has no position of its own (--source owntracks), so it gives Home Assistant \
                no presence sensors or tracker (and removes those it gave before); Home Assistant's OwnTracks \
                integration shows the phones from the same broker
                """)
        }
        var state = PublisherState(reminders: reminders, collections: collections, store: store)
        state.takePresence(savedPresence)
        state.takeProximities(savedProximities)
        state.lifecycles = lifecycles
        shared = Mutex(state)
        // A fence restored from the state file was placed by the fix it was confirmed by.
        restoredPlacings = savedPresence.compactMapValues(\.time)
        availabilityTopic = HomeAssistantDiscovery.availabilityTopic(clientID: clientID)
        client = MQTTClient(
            settings: settings, clientID: clientID,
            will: MQTTMessage(topic: topic, text: OwnTracksJSON.lastWill(connectedAt: Date())),
            subscriptions: discovery.map { [$0.statusTopic] } ?? [], loop: loop
        ) { [events] event in events.send(event) }
        events.deliver(to: { [weak self] event in self?.handle(event) })
    }

    /// Where the agent's own OwnTracks locations go: a source reading the same broker skips them.
    public var ownTopic: String { topic }

    /// Connects (in the background, retrying until it can) and publishes until graceful
    /// shutdown, then says goodbye (see ``stop()``).
    public func run() async throws {
        shared.withLock { state in
            state.noteFirstSeen(restoredPlacings, logger: logger)
            state.loadOutbox(logger: logger)
        }
        logger.info("publishing to \(settings.url) as \(client.clientID) on \(topic)")
        client.start()
        try? await gracefulShutdown()
        await stop()
    }

    /// Announcements are not this sink's: it shows where the device is, which presence changes tell.
    public func announce(_ announcement: Announcement) {}

    /// A crossing of this machine or of a tracked device becomes an OwnTracks transition,
    /// whatever the reminder's announcement policy (a first side learnt is none); this machine's
    /// change also updates the retained presence and the regions its locations name.
    public func presenceChanged(_ change: PresenceChange) {
        let tracked = change.fix.tracker
        shared.withLock { state in
            if state.noteFirstPlaced(change, logger: logger), state.connected { publishWaypoints(state) }
            if !change.isInitial {
                // A tracked device's own tid, as its messages gave it, else the apps' default for its name.
                let tid = tracked.map { change.fix.trackerLabel ?? OwnTracksJSON.trackerID(of: $0) } ?? trackerID
                let text = OwnTracksJSON.transition(
                    change, wtst: state.firstSeen(of: change.reminder.id), tid: tid, unknownError: unknownError)
                let eventTopic = tracked.map(trackedTopics.eventTopic(of:)) ?? "\(topic)/event"
                state.append(
                    OutboxMessage(topic: eventTopic, payload: secrets.payload(text, for: tracked)), limit: settings.outboxLimit,
                    logger: logger)
                pump(&state)
            }
            guard tracked == nil else { return }
            let update = state.note(change)
            guard state.connected else { return }
            if let discovery, let update {
                publishState(update, discovery: discovery)
                if case .reminder(let id, _) = update { publishAttributes(ofReminder: id, discovery: discovery, state: state) }
            }
            if !change.isInitial { publishLocation(change.fix, trigger: "c", state: &state) }
        }
    }

    /// This machine's reminder's distance and direction sensors, where they changed.
    public func proximityChanged(_ change: ProximityChange) {
        guard change.device == nil, let discovery else { return }
        shared.withLock { state in
            let id = change.reminderID
            guard state.reminders.contains(where: { $0.id == id }) else { return }
            let before = state.proximities[id]
            state.proximities[id] = change.proximity
            guard state.connected else { return }
            publishProximity(
                ofReminder: id, discovery: discovery, state: state,
                distance: HomeAssistantDiscovery.distanceState(before) != HomeAssistantDiscovery.distanceState(change.proximity),
                direction: before?.direction != change.proximity.direction)
        }
    }

    /// Updates the attributes of the reminders whose lifecycle changed.
    public func lifecyclesChanged(_ lifecycles: [String: Lifecycle]) {
        shared.withLock { state in
            let changed = state.reminders.map(\.id).filter { state.lifecycles[$0] != lifecycles[$0] }
            state.lifecycles = lifecycles
            guard state.connected, let discovery else { return }
            for id in changed { publishAttributes(ofReminder: id, discovery: discovery, state: state) }
        }
    }

    public func positionUsed(_ fix: Fix) {
        guard fix.tracker == nil else { return }
        shared.withLock { state in
            state.lastFix = fix
            guard state.connected else { return }
            if let last = state.lastLocationSent, ContinuousClock.now - last < .seconds(settings.locationInterval) { return }
            publishLocation(fix, trigger: "t", state: &state)
        }
    }

    /// A reloaded config: a reminder moved, resized or reshaped has no known side until the
    /// engine confirms one (its retained presence says so), a removed one's presence is cleared.
    public func remindersChanged(_ reminders: [Reminder], collections: [ReminderCollection]) {
        shared.withLock { state in
            state.takeReminders(reminders, collections: collections)
            guard state.connected else { return }
            publishWaypoints(state)
            if let discovery { publishDiscovery(discovery, state: &state) }
        }
    }

    /// Says `offline` (a clean stop is no crash, but the agent is gone) and disconnects.
    private func stop() async {
        shared.withLock { state in
            if state.connected { client.publish(MQTTMessage(topic: availabilityTopic, text: "offline", retain: true)) }
            if state.dropped > 0 { logger.warning("mqtt outbox: \(state.dropped) events were dropped as it was full") }
        }
        if await !client.stop() {
            logger.warning("""
                mqtt: the goodbye to \(settings.url) was not written within \(Int(MQTTClient.goodbyeWait)) s; the broker may \
                publish the will (an lwt) as for a crash
                """)
        }
    }

    // MARK: The client's events (on the loop)

    private func handle(_ event: MQTTClientEvent) {
        switch event {
        case .connected:
            logger.info("connected to \(settings.url)")
            shared.withLock { state in
                state.connected = true
                state.inFlight = [:]
                state.lastSent = 0
                client.publish(MQTTMessage(topic: availabilityTopic, text: "online", retain: true))
                publishWaypoints(state)
                if let discovery { publishDiscovery(discovery, state: &state) }
                if let fix = state.lastFix { publishLocation(fix, trigger: "t", state: &state) }
                pump(&state)
            }
        case .unavailable(let reason):
            let waiting = shared.withLock { state in
                state.connected = false
                state.inFlight = [:]
                return state.waiting
            }
            logger.warning("mqtt broker \(settings.url) unavailable: \(reason); retrying (\(waiting) events wait in the outbox)")
        case .acknowledged(let id):
            shared.withLock { state in
                guard let number = state.inFlight.removeValue(forKey: id) else { return }
                state.remove(number, logger: logger)
                pump(&state)
            }
        case .received(let message):
            guard let discovery, message.topic == discovery.statusTopic, message.payload == Array("online".utf8) else { return }
            logger.info("Home Assistant is online: publishing discovery again")
            shared.withLock { state in publishDiscovery(discovery, state: &state) }
        }
    }

    // MARK: Publishing (with the state locked)

    /// Sends the outbox's next messages, up to ``window`` in flight.
    private func pump(_ state: inout PublisherState) {
        guard state.connected, state.inFlight.count < Self.window else { return }
        for message in state.pending(after: state.lastSent, limit: Self.window - state.inFlight.count) {
            switch client.publish(MQTTMessage(topic: message.topic, payload: message.payload)) {
            case .notConnected:
                return
            case .refused(let reason):
                // Never sendable: kept, it would hold every message after it for ever.
                state.lastSent = message.number
                state.remove(message.number, logger: logger)
                state.refused += 1
                logger.warning("""
                    mqtt: dropped a message for \(DisplayText.excerpt(message.topic.utf8)) that cannot be sent \
                    (\(reason)); \(state.refused) so far
                    """)
            case .sent(let id):
                state.lastSent = message.number
                // At QoS 0 nothing is acknowledged: sent is done.
                if settings.qos == 0 { state.remove(message.number, logger: logger) } else { state.inFlight[id] = message.number }
            }
        }
    }

    private func publishLocation(_ fix: Fix, trigger: String, state: inout PublisherState) {
        let inside = state.insideReminders()
        let text = OwnTracksJSON.location(fix, tid: trackerID, trigger: trigger, inside: inside, unknownError: unknownError)
        client.publish(MQTTMessage(topic: topic, payload: secrets.payload(text, for: nil)))
        if let discovery {
            let accuracy = OwnTracksJSON.accuracy(of: fix, unknown: unknownError)
            client.publish(MQTTMessage(
                topic: discovery.locationTopic, text: HomeAssistantDiscovery.attributes(of: fix, accuracy: accuracy), retain: true))
        }
        state.lastLocationSent = .now
    }

    private func publishState(_ change: PresenceUpdate, discovery: HomeAssistantDiscovery) {
        switch change {
        case .reminder(let id, let inside):
            let text = inside.map { $0 ? "ON" : "OFF" } ?? HomeAssistantDiscovery.noValue
            client.publish(MQTTMessage(topic: discovery.stateTopic(ofReminder: id), text: text, retain: true))
        case .collection(let id, let place):
            client.publish(MQTTMessage(topic: discovery.stateTopic(ofCollection: id), text: place ?? HomeAssistantDiscovery.unknownText, retain: true))
        }
    }

    /// A reminder's distance and (or) direction of travel, retained.
    private func publishProximity(
        ofReminder id: String, discovery: HomeAssistantDiscovery, state: PublisherState, distance: Bool, direction: Bool
    ) {
        let proximity = state.proximities[id]
        if distance {
            client.publish(MQTTMessage(
                topic: discovery.distanceTopic(ofReminder: id), text: HomeAssistantDiscovery.distanceState(proximity), retain: true))
        }
        if direction {
            client.publish(MQTTMessage(
                topic: discovery.directionTopic(ofReminder: id), text: HomeAssistantDiscovery.directionState(proximity), retain: true))
        }
    }

    /// The reminders as OwnTracks regions, retained on `OWNTRACKS_TOPIC/waypoints`.
    private func publishWaypoints(_ state: PublisherState) {
        let text = OwnTracksJSON.waypoints(state.reminders, firstSeen: state.firstSeen)
        client.publish(MQTTMessage(topic: "\(topic)/waypoints", payload: secrets.payload(text, for: nil), retain: true))
    }

    private func publishAttributes(ofReminder id: String, discovery: HomeAssistantDiscovery, state: PublisherState) {
        guard let reminder = state.reminders.first(where: { $0.id == id }) else { return }
        let text = HomeAssistantDiscovery.reminderAttributes(
            reminder, distance: state.distances[id], lifecycle: state.lifecycles[id] ?? Lifecycle(), timeZone: SystemTimeZone())
        client.publish(MQTTMessage(topic: discovery.attributesTopic(ofReminder: id), text: text, retain: true))
    }

    /// Every config and known state, retained; the configs of reminders gone since the last time are cleared.
    private func publishDiscovery(_ discovery: HomeAssistantDiscovery, state: inout PublisherState) {
        let configs = ownPosition ? discovery.configs(reminders: state.reminders, collections: state.collections) : [:]
        for (configTopic, payload) in configs.sorted(by: { $0.key < $1.key }) {
            client.publish(MQTTMessage(topic: configTopic, text: payload, retain: true))
        }
        for stale in state.publishedConfigs().subtracting(configs.keys).sorted() {
            client.publish(MQTTMessage(topic: stale, payload: [], retain: true))
            for retained in discovery.retainedTopics(ofConfigTopic: stale) {
                client.publish(MQTTMessage(topic: retained, payload: [], retain: true))
            }
        }
        state.notePublishedConfigs(Set(configs.keys), logger: logger)
        guard ownPosition else { return }
        for reminder in state.reminders {
            publishState(.reminder(reminder.id, state.presence[reminder.id]), discovery: discovery)
            publishAttributes(ofReminder: reminder.id, discovery: discovery, state: state)
            publishProximity(ofReminder: reminder.id, discovery: discovery, state: state, distance: true, direction: true)
        }
        for collection in state.collections {
            publishState(.collection(collection.id, state.placeInside[collection.id] ?? nil), discovery: discovery)
        }
    }
}

/// A presence the retained state must show.
enum PresenceUpdate: Equatable {
    /// A reminder's side: true inside, false outside, nil not known.
    case reminder(String, Bool?)
    /// The place of the collection the position is inside (its title), or nil.
    case collection(String, String?)
}

/// A message waiting in the outbox for the broker.
struct OutboxMessage: Sendable, Equatable {
    /// Its place in the outbox (0 for one not stored yet).
    var number: Int64 = 0
    var topic: String
    var payload: [UInt8]
}

/// What the publisher keeps between calls, under its lock.
struct PublisherState {
    /// The state file's queue that holds the outbox, and its set of discovery topics published.
    static let outboxQueue = "mqtt-outbox"
    static let discoverySet = "mqtt-discovery"

    var reminders: [Reminder]
    var collections: [ReminderCollection]
    /// The outbox's file; nil keeps it in memory only.
    var store: StateStore?
    /// The outbox, oldest first: a copy of what the file holds (read once, at start), so that
    /// sending reads no file; all of it when there is no file.
    var outbox: [OutboxMessage] = []
    /// The number the next message gets when the outbox has no file.
    var nextNumber: Int64 = 1
    var connected = false
    /// Outbox numbers by the message id they were sent with.
    var inFlight: [Int32: Int64] = [:]
    /// The outbox number sent last on this connection.
    var lastSent: Int64 = 0
    /// Events dropped from a full outbox.
    var dropped = 0
    /// Messages dropped because they can never be sent.
    var refused = 0
    /// This machine's side of each reminder (true inside), as the presence changes said.
    var presence: [String: Bool] = [:]
    /// Metres from each reminder of the fix that last changed its side.
    var distances: [String: Double] = [:]
    /// Each reminder's proximity, as this machine's last proximity change said.
    var proximities: [String: Proximity] = [:]
    /// The reminders' lifecycles, for their sensors' attributes.
    var lifecycles: [String: Lifecycle] = [:]
    /// When each reminder and collection was first seen, that is placed by a fix (kept in the
    /// state file): the `wtst` that names it as an OwnTracks region, never after its transitions.
    var firstSeen: [String: Date] = [:]
    /// The title of the place each collection's position is inside (nil: none).
    var placeInside: [String: String?] = [:]
    /// Every collection place the position is inside: their titles by id.
    var placesInside: [String: String] = [:]
    var lastFix: Fix?
    var lastLocationSent: ContinuousClock.Instant?
    /// The discovery topics published, when kept in memory.
    var memoryConfigs: Set<String> = []

    init(reminders: [Reminder], collections: [ReminderCollection], store: StateStore?) {
        self.reminders = reminders
        self.collections = collections
        self.store = store
    }

    /// Takes a reloaded config's reminders: the side of one whose fence changed is no longer known.
    mutating func takeReminders(_ reminders: [Reminder], collections: [ReminderCollection]) {
        let fences = Dictionary(self.reminders.map { ($0.id, $0.fenceKey) }, uniquingKeysWith: { first, _ in first })
        for reminder in reminders where fences[reminder.id] != reminder.fenceKey {
            presence[reminder.id] = nil
            distances[reminder.id] = nil
            proximities[reminder.id] = nil
        }
        let kept = Set(reminders.map(\.id))
        presence = presence.filter { kept.contains($0.key) }
        proximities = proximities.filter { kept.contains($0.key) }
        placesInside = placesInside.filter { id, _ in collections.contains { $0.memberIndex(of: id) != nil } }
        self.reminders = reminders
        self.collections = collections
    }

    /// Notes first sightings (those seen before keep their time), and reads every one kept.
    mutating func noteFirstSeen(_ times: [String: Date], logger: Logger) {
        for (id, time) in times where firstSeen[id] == nil { firstSeen[id] = Date(timeIntervalSince1970: time.timeIntervalSince1970.rounded(.down)) }
        guard let store else { return }
        do {
            firstSeen = try store.noteFirstSeen(times)
        } catch {
            logger.error("\(error); OwnTracks regions are dated from this run")
        }
    }

    /// Notes the first fix that placed a reminder, or a collection (by one of its places): true
    /// when it is a reminder seen for the first time (its waypoint is new).
    mutating func noteFirstPlaced(_ change: PresenceChange, logger: Logger) -> Bool {
        let id = reminders.contains { $0.id == change.reminder.id }
            ? change.reminder.id : collections.first { $0.memberIndex(of: change.reminder.id) != nil }?.id
        guard let id, firstSeen[id] == nil else { return false }
        noteFirstSeen([id: change.fix.time ?? Date()], logger: logger)
        return id == change.reminder.id
    }

    /// When the region of a reminder or collection place (by its collection) was first seen.
    func firstSeen(of id: String) -> Date {
        if let seen = firstSeen[id] { return seen }
        let collection = collections.first { $0.memberIndex(of: id) != nil }?.id
        return collection.flatMap { firstSeen[$0] } ?? Date(timeIntervalSince1970: 0)
    }

    /// Takes the sides saved at start.
    mutating func takePresence(_ saved: [String: SavedPresence]) {
        for reminder in reminders {
            if let side = saved[reminder.id], side.presence != .unknown { presence[reminder.id] = side.presence == .inside }
        }
        for (id, side) in saved where side.presence == .inside {
            for collection in collections {
                guard let place = collection.memberIndex(of: id) else { continue }
                placeInside[collection.id] = collection.member(place).title
                placesInside[id] = collection.member(place).title
            }
        }
    }

    /// Takes the proximities saved at start, of the fences as they are now.
    mutating func takeProximities(_ saved: [String: SavedProximity]) {
        for reminder in reminders {
            if let kept = saved[reminder.id], kept.fenceKey == reminder.fenceKey { proximities[reminder.id] = kept.proximity }
        }
    }

    /// Notes a change of side; what the retained state must now show, if it changed.
    mutating func note(_ change: PresenceChange) -> PresenceUpdate? {
        let inside = change.presence == .inside
        let id = change.reminder.id
        if reminders.contains(where: { $0.id == id }) {
            distances[id] = change.distance
            guard presence[id] != inside else { return nil }
            presence[id] = inside
            return .reminder(id, inside)
        }
        for collection in collections where collection.memberIndex(of: id) != nil {
            placesInside[id] = inside ? change.reminder.title : nil
            let current = placeInside[collection.id] ?? nil
            if inside {
                placeInside[collection.id] = change.reminder.title
            } else if current == change.reminder.title {
                placeInside[collection.id] = .some(nil)
            } else {
                return nil
            }
            return .collection(collection.id, placeInside[collection.id] ?? nil)
        }
        return nil
    }

    /// The reminders this machine is inside, in config order, then the collection places, by id.
    func insideReminders() -> [(id: String, title: String)] {
        reminders.filter { presence[$0.id] == true }.map { ($0.id, $0.title) }
            + placesInside.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    var waiting: Int { outbox.count }

    /// Reads what the file's outbox holds (left by a broker outage or a stop).
    mutating func loadOutbox(logger: Logger) {
        guard let store else { return }
        do {
            outbox = try store.queue(named: Self.outboxQueue).all().map { message in
                OutboxMessage(number: message.number, topic: message.key, payload: message.payload)
            }
            nextNumber = (outbox.last?.number ?? 0) + 1
        } catch {
            logger.error("\(error); the mqtt outbox is kept in memory from now on")
            self.store = nil
        }
    }

    mutating func append(_ message: OutboxMessage, limit: Int, logger: Logger) {
        var numbered = message
        numbered.number = nextNumber
        if let store {
            do {
                numbered.number = try store.queue(named: Self.outboxQueue)
                    .append(QueuedMessage(key: message.topic, payload: message.payload), limit: limit).number
            } catch {
                logger.error("\(error); the mqtt outbox is kept in memory from now on")
                self.store = nil
            }
        }
        nextNumber = numbered.number + 1
        outbox.append(numbered)
        // The file dropped the same oldest messages.
        let excess = outbox.count - limit
        if excess > 0 {
            outbox.removeFirst(excess)
            noteDropped(excess, limit: limit, logger: logger)
        }
    }

    private mutating func noteDropped(_ count: Int, limit: Int, logger: Logger) {
        dropped += count
        // Once, then every thousandth: a long outage must not flood the log.
        if dropped == count || dropped % 1000 < count {
            logger.warning("mqtt outbox full (\(limit) events): dropped the oldest, \(dropped) so far")
        }
    }

    /// Up to `limit` messages numbered after `number`, oldest first.
    func pending(after number: Int64, limit: Int) -> ArraySlice<OutboxMessage> {
        let first = position(after: number)
        return outbox[first..<min(first + limit, outbox.endIndex)]
    }

    /// Forgets an acknowledged message, in the file too.
    mutating func remove(_ number: Int64, logger: Logger) {
        let index = position(after: number - 1)
        guard index < outbox.endIndex, outbox[index].number == number else { return }
        outbox.remove(at: index)
        guard let store else { return }
        do {
            try store.queue(named: Self.outboxQueue).remove(number)
        } catch {
            logger.error("\(error); an acknowledged message stays in the mqtt outbox")
        }
    }

    /// The index of the first message numbered after `number` (the outbox is in number order).
    private func position(after number: Int64) -> Int {
        var low = outbox.startIndex, high = outbox.endIndex
        while low < high {
            let middle = (low + high) / 2
            if outbox[middle].number <= number { low = middle + 1 } else { high = middle }
        }
        return low
    }

    func publishedConfigs() -> Set<String> {
        guard let store else { return memoryConfigs }
        return (try? store.strings(named: Self.discoverySet)) ?? memoryConfigs
    }

    mutating func notePublishedConfigs(_ topics: Set<String>, logger: Logger) {
        memoryConfigs = topics
        guard let store else { return }
        do {
            try store.setStrings(topics, named: Self.discoverySet)
        } catch {
            logger.error("\(error); removed reminders' discovery may stay in Home Assistant")
        }
    }
}

/// Hands a client's events to whoever ``deliver(to:)`` names (once it exists).
private final class EventRelay: Sendable {
    private let receiver = Mutex<(@Sendable (MQTTClientEvent) -> Void)?>(nil)

    func deliver(to receiver: @escaping @Sendable (MQTTClientEvent) -> Void) {
        self.receiver.withLock { $0 = receiver }
    }

    func send(_ event: MQTTClientEvent) {
        receiver.withLock { $0 }?(event)
    }
}
