import FoundationEssentials
import GeoAlarmCore
import GeoAlarmOwnTracks
import GeoAlarmStore
import GeoAlarmSystem
import Logging

/// Home Assistant's view of the agent through MQTT discovery (``HomeAssistantDiscovery``),
/// following the pipeline's presence and proximities: a presence sensor per reminder with its
/// attributes, its distance and direction of travel sensors, a sensor per collection (the place
/// it is inside), and a device tracker; each retained, published afresh on every connect and when
/// Home Assistant says it started. Beside them an event entity follows the announcements. With
/// buttons, a press of a reminder's Done or Snooze goes to `onPress`, as a pop-up's button does.
///
/// A reminder gone from the config has its discovery config removed first, and its other
/// retained topics cleared only ``clearingDelay`` later, once Home Assistant has dropped the
/// entity (cleared at once, an attributes topic would reach the entity still there, which Home
/// Assistant logs as `Erroneous JSON`). Kept on the loop.
public final class HomeAssistantSink: EventSink, MQTTParticipant {
    private let discovery: HomeAssistantDiscovery
    /// Whether this machine has a position (a receiver): else Home Assistant gets no entities.
    private let ownPosition: Bool
    private let locationInterval: Double
    private let unknownError: Double
    private let keeper: StateKeeper?
    private let loop: EventLoop
    private let logger: Logger
    private let state: Confined<State>
    private let onPress: @Sendable (ReminderButton, PressedReminder) -> Void

    /// The state file's set of the discovery topics published (to remove those of reminders gone
    /// while the agent was stopped).
    static let discoverySet = "mqtt-discovery"
    /// How long after a config's removal its entity's other retained topics are cleared.
    static let clearingDelay: Duration = .seconds(5)

    private struct State {
        var shown = ShownState(reminders: [], collections: [])
        /// Metres from each reminder of the fix that last changed its side.
        var distances: [String: Double] = [:]
        /// The title of the place each collection's position is inside (nil: none).
        var placeInside: [String: String?] = [:]
        var link: MQTTLink?
        var lastLocationSent: ContinuousClock.Instant?
        var lastFix: Fix?
        /// The discovery topics published, when kept in memory.
        var publishedInMemory: Set<String> = []
        /// Retained topics waiting to be cleared (their entities' configs removed).
        var clearing: [String] = []
        var clearingTimer: EventLoop.Timer?
        /// The kinds of unusable press said (each once: a flood of them must not flood the log).
        var pressProblemsSaid: Set<String> = []
    }

    /// A sink for the agent connecting as `clientID`, with `settings`; `keeper` keeps the set of
    /// discovery topics published (none: memory). With `settings.buttons`, whose Snooze lasts
    /// `snooze` seconds, a press is given to `onPress` (on the loop) with the reminder it acts on.
    public init(
        settings: HomeAssistantSettings, clientID: String, softwareVersion: String, ownPosition: Bool, locationInterval: Double,
        unknownError: Double, snooze: Double, keeper: StateKeeper?, loop: EventLoop, logger: Logger,
        onPress: @escaping @Sendable (ReminderButton, PressedReminder) -> Void
    ) {
        discovery = HomeAssistantDiscovery(
            prefix: settings.discoveryPrefix, clientID: clientID, availabilityTopic: MQTTLink.availabilityTopic(clientID: clientID),
            softwareVersion: softwareVersion, buttonSnooze: settings.buttons && ownPosition ? snooze : nil)
        self.onPress = onPress
        self.ownPosition = ownPosition
        self.locationInterval = locationInterval
        self.unknownError = unknownError
        self.keeper = keeper
        self.loop = loop
        self.logger = logger
        state = Confined(State(), on: loop)
        if !ownPosition {
            logger.info("""
                homeassistant: this agent has no position of its own (--source owntracks), so it gives Home Assistant \
                no presence sensors or tracker (and removes those it gave before); Home Assistant's OwnTracks \
                integration shows the phones from the same broker
                """)
        }
    }

    var subscriptions: [String] { [discovery.statusTopic] + (discovery.buttonSnooze == nil ? [] : [discovery.pressFilter]) }

    /// The event entity's event, as it is made: one made while the broker is away is not sent
    /// later (a late "you are at the bakery" would mislead; the OwnTracks transition waits in
    /// the outbox). A tracked device's are not this machine's.
    public func announce(_ announcement: Announcement) {
        guard ownPosition, let link = state.value.link else { return }
        if case .crossing(let event) = announcement, event.fix.tracker != nil { return }
        link.publish(MQTTMessage(topic: discovery.announcementTopic, text: HomeAssistantDiscovery.announcement(announcement)))
    }

    public func stateReset(_ shown: ShownState) {
        let before = state.value.shown
        state.value.shown = shown
        // A moved or resized fence's last distance belongs to another fence.
        let keys = Dictionary(before.reminders.map { ($0.id, $0.fenceKey) }, uniquingKeysWith: { first, _ in first })
        state.value.distances = state.value.distances.filter { id, _ in shown.reminders.contains { $0.id == id && $0.fenceKey == keys[id] } }
        state.value.placeInside = [:]
        for (_, place) in shown.placesInside.sorted(by: { $0.key < $1.key }) {
            if let collection = shown.collections.first(where: { $0.memberIndex(of: place.id) != nil }) {
                state.value.placeInside[collection.id] = place.title
            }
        }
        publishDiscovery()
    }

    public func presenceChanged(_ change: PresenceChange) {
        guard change.fix.tracker == nil else { return }
        let id = change.reminder.id
        let inside = change.presence == .inside
        if state.value.shown.reminders.contains(where: { $0.id == id }) {
            state.value.distances[id] = change.distance
            let changed = state.value.shown.sides[id] != change.presence
            state.value.shown.sides[id] = change.presence
            if changed { publishPresence(ofReminder: id) }
            publishAttributes(ofReminder: id)
            return
        }
        guard let collection = state.value.shown.collections.first(where: { $0.memberIndex(of: id) != nil }) else { return }
        if inside { state.value.shown.placesInside[id] = change.reminder } else { state.value.shown.placesInside[id] = nil }
        let current = state.value.placeInside[collection.id] ?? nil
        if inside {
            state.value.placeInside[collection.id] = change.reminder.title
        } else if current == change.reminder.title {
            state.value.placeInside[collection.id] = .some(nil)
        } else {
            return
        }
        publishPlace(ofCollection: collection.id)
    }

    /// Home Assistant's distance and direction sensors follow each reminder's proximity.
    public var followsProximity: Bool { true }

    public func proximityChanged(_ change: ProximityChange) {
        guard change.device == nil else { return }
        let id = change.reminderID
        guard state.value.shown.reminders.contains(where: { $0.id == id }) else { return }
        let before = state.value.shown.proximities[id]
        state.value.shown.proximities[id] = change.proximity
        publishProximity(
            ofReminder: id, distance: HomeAssistantDiscovery.distanceState(before) != HomeAssistantDiscovery.distanceState(change.proximity),
            direction: before?.direction != change.proximity.direction)
    }

    public func lifecyclesChanged(_ lifecycles: [String: Lifecycle]) {
        let changed = state.value.shown.reminders.map(\.id).filter { state.value.shown.lifecycles[$0] != lifecycles[$0] }
        state.value.shown.lifecycles = lifecycles
        for id in changed { publishAttributes(ofReminder: id) }
    }

    /// The device tracker shows this machine's position, where it is published.
    public var followsPositions: Bool { ownPosition }

    /// The device tracker's position, every `location_interval` while nothing happens.
    public func positionUsed(_ fix: Fix) {
        guard fix.tracker == nil, ownPosition else { return }
        state.value.lastFix = fix
        if let last = state.value.lastLocationSent, ContinuousClock.now - last < .seconds(locationInterval) { return }
        publishPosition(fix)
    }

    func connected(_ link: MQTTLink) {
        state.value.link = link
        publishDiscovery()
        if let fix = state.value.lastFix { publishPosition(fix) }
    }

    func disconnected() {
        state.value.link = nil
    }

    /// The agent stops: what waits to be cleared is cleared now.
    func stopping() {
        if let timer = state.value.clearingTimer { loop.cancel(timer) }
        state.value.clearingTimer = nil
        clearNow()
    }

    /// Home Assistant (re)started: everything is published again. A button pressed: its action.
    func received(_ messages: [MQTTMessage]) {
        if discovery.buttonSnooze != nil {
            for message in messages {
                if let object = discovery.pressedObject(message.topic) { press(message, object: object) }
            }
        }
        guard messages.contains(where: { $0.topic == discovery.statusTopic && $0.payload == Array("online".utf8) }) else { return }
        logger.info("Home Assistant is online: publishing discovery again")
        publishDiscovery()
    }

    /// A press on the press topic of the reminder `object` names: its button, for a reminder
    /// shown and a button it has. One naming a task's key acts on that task's reminder, whatever
    /// id it has now (the button's may be another task's since); its task gone, it is refused.
    /// A retained one is an old press, whoever left it.
    private func press(_ message: MQTTMessage, object: Substring) {
        let topic = DisplayText.excerpt(message.topic.utf8, limit: 200)
        guard !message.retain else { return pressProblem("retained", "a retained press on \(topic) (a press is never kept)") }
        guard let (button, taskKey) = HomeAssistantDiscovery.pressed(message.payload) else {
            return pressProblem("payload", "a press of \"\(DisplayText.excerpt(message.payload))\" on \(topic): the buttons are done and snooze")
        }
        let shown = state.value.shown.reminders
        if let taskKey {
            guard let reminder = shown.first(where: { $0.taskKey == taskKey }) else {
                return pressProblem("gone", "a press on \(topic) for task \(DisplayText.excerpt(taskKey.utf8, limit: 200)): it is no longer in its list")
            }
            return onPress(button, PressedReminder(id: reminder.id, taskKey: taskKey))
        }
        guard let reminder = shown.first(where: { HomeAssistantDiscovery.objectID($0.id) == object }) else {
            return pressProblem("unknown", "a press on \(topic): no reminder of this agent has it")
        }
        onPress(button, PressedReminder(id: reminder.id, taskKey: reminder.taskKey))
    }

    /// Says an unusable press of `kind` the first time only.
    private func pressProblem(_ kind: String, _ text: String) {
        guard state.value.pressProblemsSaid.insert(kind).inserted else { return }
        logger.warning("homeassistant: ignored \(text) (said once for each kind)")
    }

    // MARK: Publishing

    private func publish(_ topic: String, _ text: String) {
        state.value.link?.publish(MQTTMessage(topic: topic, text: text, retain: true))
    }

    private func publishPresence(ofReminder id: String) {
        let side = state.value.shown.sides[id] ?? .unknown
        publish(discovery.stateTopic(ofReminder: id), side == .unknown ? HomeAssistantDiscovery.noValue : side == .inside ? "ON" : "OFF")
    }

    private func publishPlace(ofCollection id: String) {
        publish(discovery.stateTopic(ofCollection: id), (state.value.placeInside[id] ?? nil) ?? HomeAssistantDiscovery.unknownText)
    }

    private func publishAttributes(ofReminder id: String) {
        guard let reminder = state.value.shown.reminders.first(where: { $0.id == id }) else { return }
        let text = HomeAssistantDiscovery.reminderAttributes(
            reminder, distance: state.value.distances[id], lifecycle: state.value.shown.lifecycles[id] ?? Lifecycle(),
            timeZone: SystemTimeZone())
        publish(discovery.attributesTopic(ofReminder: id), text)
    }

    private func publishProximity(ofReminder id: String, distance: Bool, direction: Bool) {
        let proximity = state.value.shown.proximities[id]
        if distance { publish(discovery.distanceTopic(ofReminder: id), HomeAssistantDiscovery.distanceState(proximity)) }
        if direction { publish(discovery.directionTopic(ofReminder: id), HomeAssistantDiscovery.directionState(proximity)) }
    }

    private func publishPosition(_ fix: Fix) {
        guard state.value.link != nil else { return }
        let accuracy = OwnTracksMessages.accuracy(of: fix, unknown: unknownError)
        publish(discovery.locationTopic, HomeAssistantDiscovery.attributes(of: fix, accuracy: accuracy))
        state.value.lastLocationSent = .now
    }

    /// Every config and known state, retained; the configs of entities gone since the last time
    /// removed, their other topics cleared a little later.
    private func publishDiscovery() {
        guard state.value.link != nil else { return }
        let shown = state.value.shown
        let configs = ownPosition ? discovery.configs(reminders: shown.reminders, collections: shown.collections) : [:]
        for (configTopic, payload) in configs.sorted(by: { $0.key < $1.key }) { publish(configTopic, payload) }
        var gone: [String] = []
        for stale in publishedConfigs().subtracting(configs.keys).sorted() {
            state.value.link?.publish(MQTTMessage(topic: stale, payload: [], retain: true))
            gone += discovery.retainedTopics(ofConfigTopic: stale)
        }
        notePublishedConfigs(Set(configs.keys))
        if !gone.isEmpty { clearLater(gone) }
        guard ownPosition else { return }
        for reminder in shown.reminders {
            publishPresence(ofReminder: reminder.id)
            publishAttributes(ofReminder: reminder.id)
            publishProximity(ofReminder: reminder.id, distance: true, direction: true)
        }
        for collection in shown.collections { publishPlace(ofCollection: collection.id) }
    }

    /// Clears `topics` (retained, empty) after ``clearingDelay``: their entities are gone by then.
    private func clearLater(_ topics: [String]) {
        state.value.clearing += topics
        guard state.value.clearingTimer == nil else { return }
        state.value.clearingTimer = loop.schedule(at: .now + Self.clearingDelay) { [self] in
            state.value.clearingTimer = nil
            clearNow()
        }
    }

    private func clearNow() {
        let topics = state.value.clearing
        state.value.clearing = []
        for topic in topics { state.value.link?.publish(MQTTMessage(topic: topic, payload: [], retain: true)) }
    }

    private func publishedConfigs() -> Set<String> {
        do {
            if let kept = try keeper?.withStore({ store throws(StoreError) in try store.stringSet(named: Self.discoverySet).values() }) { return kept }
        } catch {
            logger.error("\(error); reminders removed while the agent was stopped may stay in Home Assistant")
        }
        return state.value.publishedInMemory
    }

    private func notePublishedConfigs(_ topics: Set<String>) {
        state.value.publishedInMemory = topics
        do {
            _ = try keeper?.withStore { store throws(StoreError) in try store.stringSet(named: Self.discoverySet).replace(with: topics) }
        } catch {
            logger.error("\(error); removed reminders' discovery may stay in Home Assistant")
        }
    }
}
