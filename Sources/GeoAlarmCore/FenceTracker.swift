import Foundation

/// Where the device is, as far as one fence is concerned.
public enum Presence: String, Sendable {
    /// No side confirmed yet (just started).
    case unknown
    case inside
    case outside
}

/// The inside/outside state machine of one fence, fed the distance of every accepted fix.
///
/// Rules, chosen against the usual geofencing complaints:
/// - A fix is *evidence for inside* when its distance is at most the radius, *evidence for
///   outside* when it is beyond radius + hysteresis. In the band between, it is evidence for
///   the side already confirmed, or for outside when nothing is confirmed yet: so jitter around
///   the boundary of a place you are in cannot make you leave it.
/// - A new side is confirmed only by `confirmations` consecutive fixes of evidence for it, so
///   one stray fix changes nothing; a fix of evidence for the current side resets the count.
/// - "Inside" additionally needs the streak to last `dwell` seconds of fix time (when both ends
///   of the streak have times), which silences drive-pasts.
/// - Fixes the engine rejects (no fix, inaccurate, out of order) never reach the tracker, so a
///   gap holds the state and does not break a streak.
public struct FenceTracker: Sendable, Equatable {
    /// The confirmed side.
    public private(set) var presence: Presence = .unknown
    /// Fix time of the fix that confirmed `presence`.
    public private(set) var confirmedAt: Date?
    private var streak: Streak?

    private struct Streak: Sendable, Equatable {
        var side: Presence
        var count: Int
        var since: Date?
    }

    public init() {}

    /// Restores a tracker to a side confirmed earlier.
    public init(presence: Presence, confirmedAt: Date?) {
        self.presence = presence
        self.confirmedAt = confirmedAt
    }

    /// True when nothing but a fix inside the fence's reach can change this tracker.
    public var isSettledOutside: Bool { presence == .outside && streak == nil }

    /// Feeds one accepted fix's distance from the centre; returns the newly confirmed side, if the side changed.
    public mutating func observe(
        distance: Double, at time: Date?, fence: FenceShape, confirmations: Int
    ) -> Presence? {
        let evidence: Presence
        if distance <= fence.radius {
            evidence = .inside
        } else if distance > fence.reach {
            evidence = .outside
        } else {
            evidence = presence == .inside ? .inside : .outside
        }
        guard evidence != presence else {
            streak = nil
            return nil
        }
        if var current = streak, current.side == evidence {
            current.count += 1
            streak = current
        } else {
            streak = Streak(side: evidence, count: 1, since: time)
        }
        guard let current = streak, current.count >= max(1, confirmations) else { return nil }
        if evidence == .inside, fence.dwell > 0, let since = current.since, let time,
           time.timeIntervalSince(since) < fence.dwell {
            return nil
        }
        presence = evidence
        confirmedAt = time
        streak = nil
        return evidence
    }
}
