/// What a source of fixes reports, in order.
public enum SourceReport: Sendable {
    /// Connected (a live source), or reconnected after being unavailable.
    case connected
    /// Cannot deliver for now, and retrying by itself (gpsd down, a broker away); why, for the log.
    case unavailable(String)
    /// Fixes in the order they were taken (a live source sends one at a time, a recording many),
    /// with the moment they were read, for latency figures.
    case fixes([Fix], readAt: ContinuousClock.Instant)
    /// A message that carried no usable fix: its kind (`malformed`, `encrypted, no key`...),
    /// counted apart, and why, for the log. With `device`, a fault of that device's own setup
    /// (a phone that publishes in the clear although it has a secret): said once for each device.
    case ignored(kind: String, reason: String, device: String? = nil)
    /// The source cannot go on (a recording that cannot be read further); why, for the log.
    case failed(String)
    /// Something the source saw that may cost fixes (a broker that dropped messages): for the log.
    case warning(String)
    /// Fixes come from another of the sources behind this one now (`auto`: GeoClue while gpsd
    /// gives none): its name, why, and whether it reports only once the device moved.
    case switched(to: String, why: String, reportsOnlyOnMovement: Bool)
}

/// A source that can be told to stop reporting for a while (GeoClue, while gpsd feeds the agent).
public protocol PausableFixSource: FixSource {
    /// Stops the reports (and the work behind them) until ``resume()``.
    func pause()
    func resume()
}

/// Where fixes come from: gpsd, a recorded track, and later others, behind one seam.
///
/// `reports()` is an async sequence that ends when the source is exhausted (a recording) or
/// after ``stop()`` (a live source, which otherwise runs for ever and reconnects by itself).
public protocol FixSource: Sendable {
    associatedtype Reports: AsyncSequence<SourceReport, Never> & Sendable

    /// "gpsd at localhost:2947", "walk.nmea": names the source in logs.
    var name: String { get }
    /// Whether a position without a time can be used. Only a recording whose points carry no
    /// time at all (GPX without `<time>`) says yes: any other undated position is one from
    /// before the receiver knew the date, and waits for it.
    var usesUndatedFixes: Bool { get }
    /// Whether fixes come only once the device moved (GeoClue with a distance threshold):
    /// then a silence means standing still, not a receiver gone quiet.
    var reportsOnlyOnMovement: Bool { get }
    /// The source's reports; called once.
    func reports() -> Reports
    /// Ends the reports soon (a live source); a recording may ignore it.
    func stop()
    /// Whether the source hears ``request(_:)`` now: the agent works out what it needs only
    /// while it does (read at each of its fixes, and when it switches).
    var takesRequests: Bool { get }
    /// Hears what the engine needs after each of the source's fixes (``LocationNeed``): a
    /// source that can be told how often to report (GeoClue) asks for no more than that.
    func request(_ need: LocationNeed)
}

extension FixSource {
    /// A receiver reports steadily (gpsd: once a second), moving or not.
    public var reportsOnlyOnMovement: Bool { false }

    /// A receiver or a recording reports as it does, whatever is needed.
    public var takesRequests: Bool { false }
    public func request(_ need: LocationNeed) {}
}
