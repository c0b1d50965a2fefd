import FoundationEssentials

/// Where the device is, as far as one fence is concerned.
public enum Presence: String, Sendable {
    /// No side confirmed yet (just started).
    case unknown
    case inside
    case outside
}

/// What one fix says of one fence, before the tracker weighs it.
public enum FenceEvidence: Sendable, Equatable {
    /// Within the circle's radius, or inside the area.
    case inside
    /// In the margin: beyond the radius but within radius + hysteresis, or outside the area
    /// but within hysteresis of its edge.
    case margin
    /// Farther out than that.
    case outside
}

/// The inside/outside state machine of one fence, fed the evidence of every accepted fix.
///
/// Rules, chosen against the usual geofencing complaints:
/// - A fix is *evidence for inside* when it is within the fence (a circle's radius, an area's
///   rings), *evidence for outside* when it is beyond the fence by more than the hysteresis.
///   In the margin between, it is evidence for the side already confirmed, or for outside
///   when nothing is confirmed yet: so jitter around the boundary of a place you are in
///   cannot make you leave it.
/// - A new side is confirmed only by `confirmations` consecutive fixes of evidence for it, so
///   one stray fix changes nothing; a fix of evidence for the current side resets the count.
/// - "Inside" additionally needs the streak to last `dwell` seconds of fix time (when both ends
///   of the streak have times), which silences drive-pasts.
/// - Fixes the engine rejects (no fix, inaccurate, out of order) never reach the tracker, so a
///   gap holds the state and does not break a streak.
///
/// Stored in 24 bytes (a million collection places keep a million trackers): times as seconds
/// since the reference date, with -infinity for none, and the streak as three plain fields.
public struct FenceTracker: Sendable, Equatable {
    /// The confirmed side.
    public private(set) var presence: Presence = .unknown
    /// The side the current streak of evidence is for; nil when there is none.
    private var streakSide: Presence?
    /// Consecutive fixes of evidence for `streakSide`.
    private var streakCount: UInt32 = 0
    /// Fix time of the fix that confirmed `presence`, or `Self.noTime`.
    private var confirmedTime = Self.noTime
    /// Fix time of the streak's first fix, or `Self.noTime`.
    private var streakStart = Self.noTime

    private static let noTime = -Double.infinity

    public init() {}

    /// Restores a tracker to a side confirmed earlier.
    public init(presence: Presence, confirmedAt: Date?) {
        self.presence = presence
        confirmedTime = Self.seconds(confirmedAt)
    }

    /// Fix time of the fix that confirmed `presence`.
    public var confirmedAt: Date? { Self.date(confirmedTime) }

    /// True when nothing but a fix inside the fence's reach can change this tracker.
    public var isSettledOutside: Bool { presence == .outside && streakSide == nil }

    /// True when the tracker has a side and no streak toward the other: a fix on the side it
    /// has changes nothing.
    public var isSettled: Bool { presence != .unknown && streakSide == nil }

    /// True when nothing but a fix beyond the fence's reach can change this tracker (evidence
    /// in the margin holds it inside).
    public var isSettledInside: Bool { presence == .inside && streakSide == nil }

    /// Feeds one accepted fix's evidence; returns the newly confirmed side, if the side changed.
    /// `dwell` is the seconds a streak inside must last before "arrive".
    public mutating func observe(
        _ zone: FenceEvidence, at time: Date?, dwell: Double, confirmations: Int
    ) -> Presence? {
        let evidence: Presence
        switch zone {
        case .inside: evidence = .inside
        case .outside: evidence = .outside
        case .margin: evidence = presence == .inside ? .inside : .outside
        }
        guard evidence != presence else {
            endStreak()
            return nil
        }
        if streakSide == evidence {
            if streakCount < UInt32.max { streakCount += 1 }
        } else {
            (streakSide, streakCount, streakStart) = (evidence, 1, Self.seconds(time))
        }
        guard Int(streakCount) >= max(1, confirmations) else { return nil }
        if evidence == .inside, dwell > 0, let since = Self.date(streakStart), let time,
           time.timeIntervalSince(since) < dwell {
            return nil
        }
        presence = evidence
        confirmedTime = Self.seconds(time)
        endStreak()
        return evidence
    }

    private mutating func endStreak() {
        (streakSide, streakCount, streakStart) = (nil, 0, Self.noTime)
    }

    private static func seconds(_ date: Date?) -> Double {
        date?.timeIntervalSinceReferenceDate ?? noTime
    }

    private static func date(_ seconds: Double) -> Date? {
        seconds == noTime ? nil : Date(timeIntervalSinceReferenceDate: seconds)
    }
}
