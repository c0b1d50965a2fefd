import FoundationEssentials

/// What a receiver says about the quality of a position, as gpsd's TPV `mode`.
public enum FixMode: Int, Sendable, Comparable {
    /// Nothing known yet.
    case unknown = 0
    /// The receiver has no position.
    case noFix = 1
    /// Latitude and longitude, no altitude.
    case twoD = 2
    /// Latitude, longitude and altitude.
    case threeD = 3

    public static func < (lhs: FixMode, rhs: FixMode) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One position report from a fix source, already converted to plain values.
public struct Fix: Sendable, Equatable {
    /// When the receiver took the fix (its own clock, UTC); nil for track points recorded without time.
    public var time: Date?
    public var coordinate: Coordinate
    public var mode: FixMode
    /// Horizontal error estimate in metres (about 95% confidence, as gpsd's `eph`); nil when unknown.
    public var horizontalError: Double?
    /// Metres per second over ground, when known.
    public var speed: Double?
    /// Degrees from true north, when known.
    public var course: Double?
    /// The receiver that produced it (a device path for gpsd), when known.
    public var device: String?
    /// The tracked device the fix is of, when a source tracks several (OwnTracks `user/device`);
    /// nil for this machine's own receiver. Each tracked device has its own inside/outside state.
    public var tracker: String?
    /// The tracked device's own short label (OwnTracks' `tid`), when its messages carry one.
    public var trackerLabel: String?

    public init(
        time: Date?, coordinate: Coordinate, mode: FixMode = .threeD, horizontalError: Double? = nil,
        speed: Double? = nil, course: Double? = nil, device: String? = nil, tracker: String? = nil
    ) {
        self.tracker = tracker
        self.time = time
        self.coordinate = coordinate
        self.mode = mode
        self.horizontalError = horizontalError
        self.speed = speed
        self.course = course
        self.device = device
    }

    /// The horizontal error as gpsd would give it: `eph` when known, else the larger of `epx` and `epy`.
    public static func horizontalError(eph: Double?, epx: Double?, epy: Double?) -> Double? {
        if let eph, eph.isFinite { return eph }
        let parts = [epx, epy].compactMap { $0 }.filter(\.isFinite)
        return parts.max()
    }
}
