/// How a client that lost its server (gpsd, an MQTT broker) tries again: after 1 s, doubling
/// each time up to a minute, and from 1 s again once the server took it; and whether a reason
/// is news: a reason is told once while it stays the same, since each report wakes the agent.
///
/// Kept on the loop with the rest of its client's state.
public struct Reconnection: Sendable {
    /// Seconds before the first retry, and the longest wait.
    public static let firstWait = 1.0
    public static let longestWait = 60.0

    /// Seconds the next failure waits before its retry.
    public private(set) var nextWait = Reconnection.firstWait
    private var lastReason: String?
    /// The retry scheduled, until it fires or is cancelled.
    private var timer: EventLoop.Timer?

    public init() {}

    /// Notes a failed attempt or a lost connection and schedules `retry` on `loop` after the
    /// current wait, doubling the next one; whether `reason` is news to report.
    public mutating func failed(_ reason: String, on loop: EventLoop, retry: @escaping @Sendable () -> Void) -> Bool {
        let isNews = reason != lastReason
        lastReason = reason
        let wait = nextWait
        nextWait = min(wait * 2, Self.longestWait)
        timer = loop.schedule(at: .now + .milliseconds(Int64(wait * 1000)), retry)
        return isNews
    }

    /// The retry scheduled has begun (its timer fired).
    public mutating func retrying() {
        timer = nil
    }

    /// The server took the connection: the next failure waits the first wait, and is news.
    public mutating func connected() {
        nextWait = Self.firstWait
        lastReason = nil
    }

    /// Cancels the retry scheduled, if any (the client stops).
    public mutating func cancel(on loop: EventLoop) {
        if let timer { loop.cancel(timer) }
        timer = nil
    }
}
