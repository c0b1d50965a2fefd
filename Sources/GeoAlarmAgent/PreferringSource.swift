import GeoAlarmCore
import GeoAlarmSystem

/// `--source auto`: the fixes of `preferred` (gpsd) while it gives them, else those of
/// `fallback` (GeoClue), and back as soon as the first gives a fix again.
///
/// `fallback` is paused while `preferred` feeds the agent (GeoClue may then turn its GPS and
/// Wi-Fi scans off). It takes over when `preferred` is unavailable (gpsd not running, gone), or
/// has given no usable fix for ``patience`` (a gpsd without a receiver, a receiver indoors):
/// each change is reported as ``SourceReport/switched(to:why:reportsOnlyOnMovement:)``, with
/// why. Of the source not in use, only what may cost fixes (`failed`, `warning`, `ignored`) is
/// passed on. Everything runs on `loop`.
public final class PreferringSource<Preferred: FixSource, Fallback: PausableFixSource>: FixSource {
    public let preferred: Preferred
    public let fallback: Fallback
    private let loop: EventLoop
    private let patience: Duration
    private let state: Confined<State>

    private struct State {
        var continuation: AsyncStream<SourceReport>.Continuation?
        var inUse: Side?
        /// When `preferred` last gave a usable fix.
        var lastUsable: ContinuousClock.Instant?
        /// Set to look again once `patience` has passed since the last usable fix.
        var timer: EventLoop.Timer?
        var running = 2
    }

    private enum Side {
        case preferred, fallback
    }

    /// How long `preferred` may go without a usable fix before `fallback` takes over.
    public static var defaultPatience: Duration { .seconds(10) }

    public init(preferred: Preferred, fallback: Fallback, loop: EventLoop, patience: Duration = defaultPatience) {
        self.preferred = preferred
        self.fallback = fallback
        self.loop = loop
        self.patience = patience
        state = Confined(State(), on: loop)
    }

    public var name: String { "\(preferred.name), else \(fallback.name)" }
    public var usesUndatedFixes: Bool { false }

    /// Both sources' reports, from a task each on the loop; ends when both have ended.
    public func reports() -> AsyncStream<SourceReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceReport.self)
        fallback.pause()
        loop.execute { [self] in
            state.value.continuation = continuation
            armTimer(at: .now + patience)
            Task(executorPreference: loop) { [self] in
                for await report in preferred.reports() { fromPreferred(report) }
                ended()
            }
            Task(executorPreference: loop) { [self] in
                for await report in fallback.reports() { fromFallback(report) }
                ended()
            }
        }
        return stream
    }

    public func stop() {
        preferred.stop()
        fallback.stop()
    }

    /// While the fallback feeds the agent, as it does (GeoClue asks for no more than it needs);
    /// the agent tells it where the last fix was when it takes over. Read on the loop.
    public var takesRequests: Bool { state.value.inUse == .fallback && fallback.takesRequests }

    public func request(_ need: LocationNeed) {
        fallback.request(need)
    }

    private func fromPreferred(_ report: SourceReport) {
        switch report {
        case .fixes(let fixes, _):
            if fixes.contains(where: { $0.mode >= .twoD }) {
                state.value.lastUsable = .now
                if state.value.inUse != .preferred { use(.preferred, why: "it gives fixes") }
                if state.value.timer == nil { armTimer(at: .now + patience) }
            }
            if state.value.inUse == .preferred { pass(report) }
        case .connected:
            // Said before either feeds the agent too: nothing is connected yet.
            if state.value.inUse != .fallback { pass(report) }
        case .unavailable(let reason):
            if state.value.inUse == .preferred || state.value.inUse == nil {
                use(.fallback, why: "\(preferred.name) is unavailable: \(reason)")
            }
        case .failed, .warning, .ignored, .switched:
            pass(report)
        }
    }

    private func fromFallback(_ report: SourceReport) {
        switch report {
        case .fixes, .connected, .unavailable:
            if state.value.inUse == .fallback { pass(report) }
        case .failed, .warning, .ignored, .switched:
            pass(report)
        }
    }

    /// `patience` after the last usable fix of `preferred`: the fallback takes over when no
    /// other came since.
    private func armTimer(at instant: ContinuousClock.Instant) {
        state.value.timer = loop.schedule(at: instant) { [self] in
            state.value.timer = nil
            guard state.value.inUse != .fallback else { return }
            if let last = state.value.lastUsable, ContinuousClock.now - last < patience {
                return armTimer(at: last + patience)
            }
            let silence = state.value.lastUsable == nil ? "has given no fix" : "has given no fix for \(patience)"
            use(.fallback, why: "\(preferred.name) \(silence)")
        }
    }

    private func use(_ side: Side, why: String) {
        state.value.inUse = side
        switch side {
        case .preferred:
            fallback.pause()
            pass(.switched(to: preferred.name, why: why, reportsOnlyOnMovement: preferred.reportsOnlyOnMovement))
            // It gave a fix: connected.
            pass(.connected)
        case .fallback:
            fallback.resume()
            pass(.switched(to: fallback.name, why: why, reportsOnlyOnMovement: fallback.reportsOnlyOnMovement))
        }
    }

    private func pass(_ report: SourceReport) {
        state.value.continuation?.yield(report)
    }

    private func ended() {
        state.value.running -= 1
        guard state.value.running == 0 else { return }
        if let timer = state.value.timer { loop.cancel(timer) }
        state.value.timer = nil
        state.value.continuation?.finish()
        state.value.continuation = nil
    }
}
