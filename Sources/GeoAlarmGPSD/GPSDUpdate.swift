import GeoAlarmCore

/// What a gpsd connection reports, in order.
public enum GPSDUpdate: Sendable, Equatable {
    /// Connected and watching.
    case connected
    /// A connection attempt failed or an open connection was lost; the source retries by itself.
    case unavailable(reason: String)
    /// A TPV from gpsd, converted (its mode may be no fix), with when it was read.
    case report(Fix, readAt: ContinuousClock.Instant)
}
