import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmOwnTracks
import GeoAlarmSystem
import Synchronization

/// Locations that OwnTracks apps (or anything speaking their JSON) publish to a broker, as a
/// ``FixSource`` of many tracked devices: `run --source owntracks`.
///
/// It subscribes to `[mqtt] subscribe` (`owntracks/+/+` by default); each message's topic names
/// its device (see ``OwnTracksTopics``), which becomes the fix's ``Fix/tracker``; encrypted
/// messages are opened with the device's secret (``OwnTracksSecrets``). A payload that is no
/// location (malformed, encrypted without a secret, out of range) is reported as ignored, with
/// its kind and why; the other messages the apps send (`lwt`, `transition`...) are passed over.
public final class OwnTracksSource: FixSource, Sendable {
    private let settings: MQTTSettings
    private let topics: OwnTracksTopics
    /// Topics never read as devices: the agent's own location messages.
    private let skipped: Set<String>
    private let clientID: String
    private let secrets: OwnTracksSecrets
    private let loop: EventLoop
    /// The connection and the reports' continuation, once ``reports()`` made them.
    private let running: Mutex<(client: MQTTClient, continuation: AsyncStream<SourceReport>.Continuation)?>

    /// `skipping` the agent's own OwnTracks topic, so that its published position is not tracked
    /// again; the connection is driven by `loop`.
    public init(settings: MQTTSettings, hostName: String, skipping: Set<String> = [], loop: EventLoop) {
        self.settings = settings
        topics = OwnTracksTopics(subscription: settings.subscribe)
        skipped = skipping
        clientID = settings.clientID(hostName: hostName) + "-source"
        secrets = OwnTracksSecrets(secret: settings.secret, deviceSecrets: settings.deviceSecrets)
        self.loop = loop
        running = Mutex(nil)
    }

    public var name: String { "owntracks \(settings.subscribe) at \(settings.url)" }
    public var usesUndatedFixes: Bool { false }

    /// Connects and subscribes; the sequence ends after ``stop()``.
    public func reports() -> AsyncStream<SourceReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceReport.self)
        // A persistent session of a fixed client id: what the phones publish while the agent is
        // stopped (at QoS 1 or 2) waits at the broker for its return.
        let client = MQTTClient(
            settings: settings, clientID: clientID, subscriptions: [settings.subscribe], persistentSession: true, loop: loop
        ) { [topics, skipped, secrets] event in
            switch event {
            case .connected:
                continuation.yield(.connected)
            case .unavailable(let reason):
                continuation.yield(.unavailable(reason))
            case .acknowledged:
                break
            case .received(let message):
                guard !skipped.contains(message.topic), let tracker = topics.tracker(of: message.topic) else { return }
                // Its transitions could never be published: refused rather than tracked unanswered.
                if let problem = MQTTText.topicProblem(topics.eventTopic(of: tracker)) {
                    continuation.yield(.ignored(
                        kind: "unanswerable device",
                        reason: "a device whose event topic \(problem) on \(DisplayText.excerpt(message.topic.utf8))"))
                    return
                }
                let readAt = ContinuousClock.now
                switch secrets.fix(in: message.payload, tracker: tracker) {
                case .success(let fix): continuation.yield(.fixes([fix], readAt: readAt))
                case .failure(let problem) where problem.kind == .otherType: break
                case .failure(let problem):
                    continuation.yield(.ignored(
                        kind: problem.kind.rawValue, reason: "\(problem) on \(DisplayText.escaped(message.topic))",
                        device: problem.kind == .unsealed ? tracker : nil))
                }
            }
        }
        running.withLock { $0 = (client, continuation) }
        client.start()
        return stream
    }

    /// Disconnects; the reports end at once (a connect still under way is left to finish alone).
    public func stop() {
        guard let (client, continuation) = running.withLock({ running in defer { running = nil }; return running }) else { return }
        client.stop(then: { _ in })
        continuation.finish()
    }
}
