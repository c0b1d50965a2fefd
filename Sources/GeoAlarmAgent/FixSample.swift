import GeoAlarmCore
import GeoAlarmSystem

/// What a short look at a live source (gpsd, GeoClue) found: for `add --here` and `doctor`,
/// which ask once and go.
public struct FixSample: Sendable {
    /// Why the source could not be reached (or was lost), when it could not; nil when it answered.
    public var unreachable: String?
    /// How many reports the source sent, fix or not.
    public var reports = 0
    /// The newest report that carried a position (mode 2D or 3D).
    public var latestPosition: Fix?
    /// The newest report of any mode (says "no fix" when the receiver has none).
    public var latest: Fix?
    /// The first position that `accept` took, which ended the look early.
    public var accepted: Fix?

    /// Starts `source` (on `loop`) and reads its reports until `accept` takes a position or
    /// `patience` has passed since the source answered, whichever is first; gives up at once
    /// when the source says it cannot be reached, and after ``connectionPatience`` (or
    /// `patience`, when longer) when it has not answered by then.
    public static func take(
        from source: some FixSource, patience: Duration, loop: EventLoop, accept: @escaping @Sendable (Fix) -> Bool
    ) async -> FixSample {
        // The patience is for reports: a wait of 0 still asks the source whether it is there.
        let waitForAnswer = max(patience, connectionPatience)
        let unanswered = loop.schedule(at: .now + waitForAnswer) { source.stop() }
        var waitForReports: EventLoop.Timer?
        defer {
            loop.cancel(unanswered)
            if let waitForReports { loop.cancel(waitForReports) }
        }
        var sample = FixSample()
        sample.unreachable = "no answer in \(Span.describe(Double(waitForAnswer.components.seconds)))"
        for await report in source.reports() {
            switch report {
            case .connected:
                sample.unreachable = nil
                loop.cancel(unanswered)
                waitForReports = loop.schedule(at: .now + patience) { source.stop() }
            case .ignored, .warning, .switched:
                break
            case .unavailable(let reason), .failed(let reason):
                sample.unreachable = reason
                source.stop()
            case .fixes(let fixes, _):
                for fix in fixes where sample.accepted == nil {
                    sample.reports += 1
                    sample.latest = fix
                    guard fix.mode >= .twoD else { continue }
                    sample.latestPosition = fix
                    if accept(fix) {
                        sample.accepted = fix
                        source.stop()
                    }
                }
            }
        }
        return sample
    }

    /// How long a look waits for the source to answer at all, however short its patience for
    /// reports (longer than GeoClue takes to say it has no agent).
    public static let connectionPatience: Duration = .seconds(5)
}
