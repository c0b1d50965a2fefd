import GeoAlarmCore
import GeoAlarmSystem

/// What a short look at gpsd found: for `add --here` and `doctor`, which ask once and go.
public struct GPSDSample: Sendable {
    /// Why gpsd could not be reached (or was lost), when it could not; nil when it answered.
    public var unreachable: String?
    /// How many reports gpsd sent, fix or not.
    public var reports = 0
    /// The newest report that carried a position (mode 2D or 3D).
    public var latestPosition: Fix?
    /// The newest report of any mode (says "no fix" when the receiver has none).
    public var latest: Fix?
    /// The first position that `accept` took, which ended the look early.
    public var accepted: Fix?

    /// Connects to gpsd at `endpoint` (on `loop`) and reads its reports until `accept` takes a
    /// position or `patience` has passed since gpsd answered, whichever is first; gives up at
    /// once when gpsd cannot be reached, and after ``connectionPatience`` (or `patience`, when
    /// longer) when it has not answered by then.
    public static func take(
        from endpoint: GPSDEndpoint, device: String? = nil, patience: Duration, loop: EventLoop,
        accept: @escaping @Sendable (Fix) -> Bool
    ) async -> GPSDSample {
        let source = GPSDSource(endpoint: endpoint, device: device, loop: loop)
        // The patience is for reports: a wait of 0 still asks gpsd whether it is there.
        let waitForAnswer = max(patience, connectionPatience)
        let unanswered = loop.schedule(at: .now + waitForAnswer) { source.stop() }
        var waitForReports: EventLoop.Timer?
        defer {
            loop.cancel(unanswered)
            if let waitForReports { loop.cancel(waitForReports) }
        }
        var sample = GPSDSample()
        sample.unreachable = "no answer in \(Span.describe(Double(waitForAnswer.components.seconds)))"
        for await report in source.reports() {
            switch report {
            case .connected:
                sample.unreachable = nil
                loop.cancel(unanswered)
                waitForReports = loop.schedule(at: .now + patience) { source.stop() }
            case .ignored, .warning:
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

    /// How long a look waits for gpsd to answer at all, however short its patience for reports.
    public static let connectionPatience: Duration = .seconds(5)
}
