import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmReplay

/// Locations that OwnTracks apps (or anything speaking their JSON) publish to a broker, as a
/// ``FixSource`` of many tracked devices: `run --source owntracks`.
///
/// It subscribes to `[mqtt] subscribe` (`owntracks/+/+` by default); each message's topic names
/// its device (see ``OwnTracksTopics``), which becomes the fix's ``Fix/tracker``. A payload that
/// is no location (malformed, another `_type`, out of range) is reported as ignored, with why.
public final class OwnTracksSource: FixSource, @unchecked Sendable {
    private let settings: MQTTSettings
    private let topics: OwnTracksTopics
    /// Topics never read as devices: the agent's own location messages.
    private let skipped: Set<String>
    private let clientID: String
    private var client: MQTTClient?
    private var continuation: AsyncStream<SourceReport>.Continuation?

    /// `skipping` the agent's own OwnTracks topic, so that its published position is not tracked again.
    public init(settings: MQTTSettings, hostName: String, skipping: Set<String> = []) {
        self.settings = settings
        topics = OwnTracksTopics(subscription: settings.subscribe)
        skipped = skipping
        clientID = settings.clientID(hostName: hostName) + "-source"
    }

    public var name: String { "owntracks \(settings.subscribe) at \(settings.url)" }
    public var usesUndatedFixes: Bool { false }

    /// Connects and subscribes; the sequence ends after ``stop()``.
    public func reports() -> AsyncStream<SourceReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceReport.self)
        let client = MQTTClient(settings: settings, clientID: clientID, subscriptions: [settings.subscribe]) { [topics, skipped] event in
            switch event {
            case .connected:
                continuation.yield(.connected)
            case .unavailable(let reason):
                continuation.yield(.unavailable(reason))
            case .acknowledged:
                break
            case .received(let message):
                guard !skipped.contains(message.topic), let tracker = topics.tracker(of: message.topic) else { return }
                let readAt = ContinuousClock.now
                switch OwnTracksLocation.parse(message.payload, tracker: tracker) {
                case .success(let location): continuation.yield(.fixes([location.fix], readAt: readAt))
                case .failure(let problem) where problem.isOtherType: break
                case .failure(let problem): continuation.yield(.ignored("\(problem) on \(DisplayText.escaped(message.topic))"))
                }
            }
        }
        self.client = client
        self.continuation = continuation
        client.start()
        return stream
    }

    /// Disconnects; the reports end at once (a connect still under way is left to finish alone).
    public func stop() {
        client?.stop()
        client = nil
        continuation?.finish()
        continuation = nil
    }
}
