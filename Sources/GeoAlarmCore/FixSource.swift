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
    /// The source's reports; called once.
    func reports() -> Reports
    /// Ends the reports soon (a live source); a recording may ignore it.
    func stop()
}
