import FoundationEssentials
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
///
/// Every message waiting when the loop wakes is read at once and their fixes reported together,
/// so that a burst (phones flushing their queues) is taken as fast as the broker hands it over
/// and committed in one transaction. Where the broker publishes its counters (mosquitto's
/// `$SYS`), messages it dropped are said: some may have been this agent's.
public final class OwnTracksSource: FixSource, Sendable {
    private let broker: MQTTSettings
    private let settings: OwnTracksSettings
    private let topics: OwnTracksTopics
    /// Topics never read as devices: the agent's own location messages.
    private let skipped: Set<String>
    private let clientID: String
    private let secrets: OwnTracksSecrets
    private let loop: EventLoop
    /// The connection and the reports' continuation, once ``reports()`` made them.
    private let running: Mutex<(client: MQTTClient, continuation: AsyncStream<SourceReport>.Continuation)?>
    /// The broker's count of dropped messages when first read, and when last said.
    private let dropped = Mutex<(first: Int?, said: Int?)>((nil, nil))

    /// How many unacknowledged messages the broker may send at once: so many that a burst is
    /// sent rather than queued at the broker, whose queue for a client is bounded (1,000 by
    /// mosquitto's default) and drops beyond. What is read waits in memory for the agent.
    static let receiveMaximum = 65_000

    /// mosquitto's count of the messages it dropped (a client's queue full, among others).
    static let droppedTopic = "$SYS/broker/publish/messages/dropped"

    /// `skipping` the agent's own OwnTracks topic, so that its published position is not tracked
    /// again; the connection is driven by `loop`.
    public init(broker: MQTTSettings, settings: OwnTracksSettings, hostName: String, skipping: Set<String> = [], loop: EventLoop) {
        self.broker = broker
        self.settings = settings
        topics = OwnTracksTopics(subscription: settings.subscribe)
        skipped = skipping
        clientID = broker.clientID(hostName: hostName) + "-source"
        secrets = OwnTracksSecrets(secret: settings.secret, deviceSecrets: settings.deviceSecrets)
        self.loop = loop
        running = Mutex(nil)
    }

    public var name: String { "owntracks \(settings.subscribe) at \(broker.url)" }
    public var usesUndatedFixes: Bool { false }

    /// Connects and subscribes; the sequence ends after ``stop()``.
    public func reports() -> AsyncStream<SourceReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceReport.self)
        // A persistent session of a fixed client id: what the phones publish while the agent is
        // stopped (at QoS 1 or 2) waits at the broker for its return.
        let client = MQTTClient(
            settings: broker, clientID: clientID, subscriptions: [settings.subscribe, Self.droppedTopic], persistentSession: true,
            receiveMaximum: Self.receiveMaximum, loop: loop
        ) { [self] event in
            switch event {
            case .connected:
                continuation.yield(.connected)
            case .unavailable(let reason):
                continuation.yield(.unavailable(reason))
            case .acknowledged:
                break
            case .received(let messages):
                read(messages, into: continuation)
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

    /// The fixes of `messages`, reported together, and a report for each message that is none.
    private func read(_ messages: [MQTTMessage], into continuation: AsyncStream<SourceReport>.Continuation) {
        let readAt = ContinuousClock.now
        var fixes: [Fix] = []
        for message in messages {
            if message.topic == Self.droppedTopic {
                noteDropped(message.payload, continuation)
                continue
            }
            guard !skipped.contains(message.topic), let tracker = topics.tracker(of: message.topic) else { continue }
            // Its transitions could never be published: refused rather than tracked unanswered.
            if let problem = MQTTText.topicProblem(topics.eventTopic(of: tracker)) {
                continuation.yield(.ignored(
                    kind: "unanswerable device", reason: "a device whose event topic \(problem) on \(DisplayText.excerpt(message.topic.utf8))"))
                continue
            }
            switch secrets.fix(in: message.payload, tracker: tracker) {
            case .success(let fix): fixes.append(fix)
            case .failure(let problem) where problem.kind == .otherType: break
            case .failure(let problem):
                continuation.yield(.ignored(
                    kind: problem.kind.rawValue, reason: "\(problem) on \(DisplayText.escaped(message.topic))",
                    device: problem.kind == .unsealed ? tracker : nil))
            }
        }
        if !fixes.isEmpty { continuation.yield(.fixes(fixes, readAt: readAt)) }
    }

    /// The broker's count of dropped messages: its growth since the agent connected is said
    /// (once for each growth: the broker publishes it every few seconds).
    private func noteDropped(_ payload: [UInt8], _ continuation: AsyncStream<SourceReport>.Continuation) {
        guard let count = Int(String(decoding: payload, as: UTF8.self).trimmingWhitespace()) else { return }
        let news: (since: Int, total: Int)? = dropped.withLock { dropped in
            guard let first = dropped.first else {
                dropped.first = count
                dropped.said = count
                return nil
            }
            guard count > dropped.said ?? first else { return nil }
            dropped.said = count
            return (count - first, count)
        }
        guard let news else { return }
        continuation.yield(.warning("""
            the broker has dropped \(DisplayText.counted(news.since, "message")) since this agent connected (\(news.total) in all): locations \
            may be lost; mosquitto drops what waits beyond max_queued_messages for a client that reads too slowly
            """))
    }
}
