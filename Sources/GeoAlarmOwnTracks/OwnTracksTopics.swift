/// Which tracked device an OwnTracks topic is of, and where that device's events go.
///
/// The subscription's literal levels before its first wildcard are the prefix (`owntracks` in
/// `owntracks/+/+`); what follows in a message's topic names the device (`alice/phone`), and the
/// device's transitions go to `PREFIX/DEVICE/event`, as OwnTracks' apps publish them.
public struct OwnTracksTopics: Sendable {
    /// The prefix's levels.
    private let prefix: [Substring]

    public init(subscription: String) {
        let levels = subscription.split(separator: "/", omittingEmptySubsequences: false)
        let literal = levels.prefix { $0 != "+" && $0 != "#" }
        prefix = Array(literal.prefix(max(0, levels.count - 1)))
    }

    /// The device a message's topic is of (`alice/phone`); nil for a topic outside the prefix or
    /// one of the apps' sub-topics (`.../event`, `.../cmd`, `.../info`...), which are not locations.
    public func tracker(of topic: String) -> String? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count > prefix.count, levels.starts(with: prefix) else { return nil }
        let rest = levels[prefix.count...]
        if rest.count > 2, let last = rest.last, Self.subTopics.contains(String(last)) { return nil }
        return rest.joined(separator: "/")
    }

    /// Where a tracked device's transitions are published.
    public func eventTopic(of tracker: String) -> String {
        (prefix.map(String.init) + [tracker, "event"]).joined(separator: "/")
    }

    /// The sub-topics OwnTracks' apps publish beside their locations.
    static let subTopics: Set<String> = ["event", "cmd", "info", "step", "beacon", "dump", "status", "waypoint", "waypoints", "request"]
}
