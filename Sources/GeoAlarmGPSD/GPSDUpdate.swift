import GeoAlarmCore

/// What a gpsd connection reports, in order.
public enum GPSDUpdate: Sendable, Equatable {
    /// Connected and watching.
    case connected
    /// A connection attempt failed or an open connection was lost; a retry follows after `retryIn` seconds.
    case unavailable(reason: String, retryIn: Double)
    /// A TPV from gpsd, converted (its mode may be no fix), with when it was read.
    case report(Fix, readAt: ContinuousClock.Instant)
}
