import FoundationEssentials
import GeoAlarmCore
import GeoAlarmOwnTracks
import GeoAlarmSecretBox
import GeoAlarmStore
import GeoAlarmSystem
import Logging

/// Where the device is, as OwnTracks says it, following the pipeline's presence (not its
/// announcements): a `transition` for every crossing (this machine's, and each tracked
/// device's, through the outbox), `location`s naming the regions the position is inside, and
/// the reminders as `waypoints`, published once they are known and again only when they change.
///
/// It shows what the pipeline told it (``EventSink/stateReset(_:)``, then the changes), so the
/// regions of its locations agree with every other output from the first fix. Kept on the loop.
public final class OwnTracksSink: EventSink, MQTTParticipant {
    /// This machine's topic (`owntracks/USER/HOST`): a source on the same broker skips it.
    public let topic: String
    private let trackerID: String
    private let settings: OwnTracksSettings
    private let secrets: OwnTracksSecrets
    /// Where tracked devices' transitions go.
    private let trackedTopics: OwnTracksTopics
    /// `acc` for a fix without an error estimate: the largest error a used fix may have.
    private let unknownError: Double
    private let outbox: MQTTOutbox
    private let keeper: StateKeeper?
    private let logger: Logger
    private let state: Confined<State>

    private struct State {
        var regions = OwnTracksRegions()
        /// When each reminder and collection became a region: its waypoint's `tst`, its
        /// transitions' `wtst` (kept in the state file).
        var regionTimes: [String: Date] = [:]
        var link: MQTTLink?
        var lastFix: Fix?
        var lastLocationSent: ContinuousClock.Instant?
        /// The trigger of the location this fix's changes call for: `c` for a crossing, `t` for a side first learnt.
        var locationDue: String?
        /// The waypoints last published (retained), to publish only a change.
        var waypointsSent: String?
        /// Whether a message that could not be sealed was said (once: each one after is dropped as well).
        var sealFailureSaid = false
    }

    /// A sink publishing on `topic` with `settings`; `keeper` keeps the regions' times (none:
    /// memory), the outbox the transitions.
    public init(
        settings: OwnTracksSettings, topic: String, unknownError: Double, outbox: MQTTOutbox, keeper: StateKeeper?, loop: EventLoop,
        logger: Logger
    ) {
        self.settings = settings
        self.topic = topic
        trackerID = settings.trackerID(onTopic: topic)
        secrets = OwnTracksSecrets(secret: settings.secret, deviceSecrets: settings.deviceSecrets)
        trackedTopics = OwnTracksTopics(subscription: settings.subscribe)
        self.unknownError = unknownError
        self.outbox = outbox
        self.keeper = keeper
        self.logger = logger
        state = Confined(State(), on: loop)
    }

    /// The connection's will for the broker to publish on this machine's topic when the agent is
    /// lost: an OwnTracks `lwt`, dated now.
    public var will: MQTTMessage {
        MQTTMessage(topic: topic, text: OwnTracksMessages.lastWill(connectedAt: Date()))
    }

    public func announce(_ announcement: Announcement) {}

    public func stateReset(_ shown: ShownState) {
        state.value.regions.take(shown)
        noteRegions(Set(shown.reminders.map(\.id) + shown.collections.map(\.id)))
        publishWaypoints()
    }

    /// A crossing of this machine or of a tracked device becomes a transition, whatever the
    /// reminder's announcement policy (a first side learnt is none); this machine's also moves
    /// the regions its locations name, and sends a location (`c` for a crossing, `t` for a side
    /// first learnt), so that the regions it names are current from the first fix.
    public func presenceChanged(_ change: PresenceChange) {
        let tracked = change.fix.tracker
        if !change.isInitial {
            // A tracked device's own tid, as its messages gave it, else the apps' default for its name.
            let tid = tracked.map { change.fix.trackerLabel ?? OwnTracksMessages.trackerID(of: $0) } ?? trackerID
            let text = OwnTracksMessages.transition(change, wtst: regionTime(of: change.reminder.id), tid: tid, unknownError: unknownError)
            let eventTopic = tracked.map(trackedTopics.eventTopic(of:)) ?? "\(topic)/event"
            if let payload = sealed(text, for: tracked) { outbox.append(topic: eventTopic, payload: payload) }
        }
        guard tracked == nil else { return }
        state.value.regions.note(change)
        // Sent once the fix's changes are all in (``positionUsed(_:)``): one location a fix.
        if !change.isInitial { state.value.locationDue = "c" } else if state.value.locationDue == nil { state.value.locationDue = "t" }
    }

    /// Room in the outbox its transitions go through (``MQTTOutbox/room()``).
    public func roomForEvents() async {
        await outbox.room()
    }

    /// OwnTracks shows this machine's position.
    public var followsPositions: Bool { true }

    /// This machine's position: at once when its regions changed, else every `location_interval`.
    public func positionUsed(_ fix: Fix) {
        guard fix.tracker == nil else { return }
        state.value.lastFix = fix
        if let trigger = state.value.locationDue {
            state.value.locationDue = nil
            return publishLocation(fix, trigger: trigger)
        }
        if let last = state.value.lastLocationSent, ContinuousClock.now - last < .seconds(settings.locationInterval) { return }
        publishLocation(fix, trigger: "t")
    }

    func connected(_ link: MQTTLink) {
        state.value.link = link
        state.value.waypointsSent = nil
        publishWaypoints()
        if let fix = state.value.lastFix { publishLocation(fix, trigger: "t") }
    }

    func disconnected() {
        state.value.link = nil
    }

    // MARK: Parts

    /// `text` as published for `tracker` (``OwnTracksSecrets/payload(_:for:)``); nil, said the
    /// first time, when its secret cannot seal it: nothing that has a secret goes in the clear.
    private func sealed(_ text: String, for tracker: String?) -> [UInt8]? {
        if let payload = secrets.payload(text, for: tracker) { return payload }
        if !state.value.sealFailureSaid {
            state.value.sealFailureSaid = true
            logger.error("""
                owntracks: cannot seal messages with the secret (\(SecretBox.unavailability ?? "libsodium failed")): \
                none is sent, and none in the clear
                """)
        }
        return nil
    }

    /// The reminders as OwnTracks regions, retained on `TOPIC/waypoints`, when connected and
    /// changed: never an empty list (which a phone would take as "no regions"; with none left,
    /// the retained list is cleared).
    private func publishWaypoints() {
        guard let link = state.value.link else { return }
        let reminders = state.value.regions.reminders
        let text = reminders.isEmpty ? "" : OwnTracksMessages.waypoints(reminders, firstSeen: state.value.regionTimes)
        guard text != state.value.waypointsSent else { return }
        if text.isEmpty, state.value.waypointsSent == nil { return }
        guard let payload = text.isEmpty ? [] : sealed(text, for: nil) else { return }
        link.publish(MQTTMessage(topic: "\(topic)/waypoints", payload: payload, retain: true))
        state.value.waypointsSent = text
    }

    private func publishLocation(_ fix: Fix, trigger: String) {
        guard let link = state.value.link else { return }
        let text = OwnTracksMessages.location(
            fix, tid: trackerID, trigger: trigger, inside: state.value.regions.inside, unknownError: unknownError)
        guard let payload = sealed(text, for: nil) else { return }
        link.publish(MQTTMessage(topic: topic, payload: payload))
        state.value.lastLocationSent = .now
    }

    /// Gives each of `ids` (reminders and collections) without one the time it became a region:
    /// now; and reads those kept.
    private func noteRegions(_ ids: Set<String>) {
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let missing = ids.filter { state.value.regionTimes[$0] == nil }
        guard !missing.isEmpty else { return }
        let times = Dictionary(uniqueKeysWithValues: missing.map { ($0, now) })
        do {
            if let kept = try keeper?.withStore({ store throws(StoreError) in try store.lifecycles.noteFirstSeen(times) }) {
                state.value.regionTimes = kept
                return
            }
        } catch {
            logger.error("\(error); OwnTracks regions are dated from this run")
        }
        state.value.regionTimes.merge(times) { kept, _ in kept }
    }

    /// When the region of a reminder or collection place (by its collection) began.
    private func regionTime(of id: String) -> Date {
        if let time = state.value.regionTimes[id] { return time }
        let collection = state.value.regions.collections.first { $0.memberIndex(of: id) != nil }?.id
        return collection.flatMap { state.value.regionTimes[$0] } ?? Date(timeIntervalSince1970: 0)
    }
}

/// The regions this machine is inside, as an OwnTracks location names them: the reminders (in
/// config order) and the collection places (by id), following the pipeline's state and changes.
struct OwnTracksRegions {
    private(set) var reminders: [Reminder] = []
    private(set) var collections: [ReminderCollection] = []
    /// The reminders this machine is inside.
    private var insideReminders: Set<String> = []
    /// The collection places it is inside: their titles by id.
    private var placesInside: [String: String] = [:]

    mutating func take(_ shown: ShownState) {
        reminders = shown.reminders
        collections = shown.collections
        insideReminders = Set(shown.sides.filter { $0.value == .inside }.keys)
        placesInside = shown.placesInside.mapValues(\.title)
    }

    mutating func note(_ change: PresenceChange) {
        let id = change.reminder.id
        let isInside = change.presence == .inside
        if reminders.contains(where: { $0.id == id }) {
            if isInside { insideReminders.insert(id) } else { insideReminders.remove(id) }
        } else {
            placesInside[id] = isInside ? change.reminder.title : nil
        }
    }

    /// `inregions`' titles and `inrids`' ids.
    var inside: [(id: String, title: String)] {
        reminders.filter { insideReminders.contains($0.id) }.map { ($0.id, $0.title) }
            + placesInside.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
