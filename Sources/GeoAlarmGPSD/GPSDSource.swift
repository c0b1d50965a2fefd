internal import CGPS
import Foundation
import GeoAlarmCore
import Synchronization

/// Live fixes from gpsd through libgps, read on a thread of their own.
///
/// The read loop (`gps_open`, a JSON watch, `gps_waiting`, `gps_read`) runs off Swift's
/// cooperative pool, since libgps blocks. It reconnects by itself: when gpsd is not running,
/// restarts or dies, it reports `unavailable` and tries again after 1 s, doubling to 30 s,
/// back to 1 s once connected.
public final class GPSDSource: Sendable {
    public let endpoint: GPSDEndpoint
    /// Watch only this receiver (gpsd device path), or every one when nil.
    public let device: String?
    private let stopping = Mutex(false)

    static let firstRetry = 1.0
    static let longestRetry = 30.0
    /// How long one wait for data lasts before the stop flag is looked at again.
    static let waitMicroseconds: Int32 = 200_000

    public init(endpoint: GPSDEndpoint, device: String? = nil) {
        self.endpoint = endpoint
        self.device = device
    }

    /// Starts the reader thread; the stream finishes after `stop()`.
    public func updates() -> AsyncStream<GPSDUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: GPSDUpdate.self)
        let thread = Thread { [self] in
            readLoop(continuation)
            continuation.finish()
        }
        thread.name = "gpsd reader"
        thread.start()
        return stream
    }

    /// Asks the reader thread to close its connection and end the stream (within about 0.2 s).
    public func stop() {
        stopping.withLock { $0 = true }
    }

    private var isStopping: Bool { stopping.withLock { $0 } }

    private func readLoop(_ continuation: AsyncStream<GPSDUpdate>.Continuation) {
        guard let data = geoalarm_gps_new() else { return }
        defer { geoalarm_gps_free(data) }
        var retry = Self.firstRetry
        var message = [CChar](repeating: 0, count: 16_384)
        /// Reports why gpsd cannot be used, waits, and doubles the next wait.
        func backOff(_ reason: String) {
            continuation.yield(.unavailable(reason: reason))
            pause(seconds: retry)
            retry = min(retry * 2, Self.longestRetry)
        }
        while !isStopping {
            guard gps_open(endpoint.host, String(endpoint.port), data) == 0 else {
                backOff(String(cString: gps_errstr(errno)))
                continue
            }
            guard geoalarm_gps_watch(data, device) >= 0 else {
                gps_close(data)
                backOff("gpsd refused the watch request")
                continue
            }
            continuation.yield(.connected)
            retry = Self.firstRetry
            var lost = false
            while !isStopping {
                guard gps_waiting(data, Self.waitMicroseconds) else { continue }
                let count = message.withUnsafeMutableBufferPointer {
                    geoalarm_gps_read(data, $0.baseAddress, Int32($0.count))
                }
                if count < 0 {
                    lost = true
                    break
                }
                guard count > 0, geoalarm_gps_message_is_tpv(message) != 0 else { continue }
                var raw = geoalarm_gps_fix()
                geoalarm_gps_copy_fix(data, &raw)
                continuation.yield(.report(TPVConversion.fix(from: raw), readAt: .now))
            }
            gps_close(data)
            if lost { backOff("connection lost") }
        }
    }

    /// Sleeps in short steps so that `stop()` is heard.
    private func pause(seconds: Double) {
        let end = Date().addingTimeInterval(seconds)
        while !isStopping, Date() < end { Thread.sleep(forTimeInterval: 0.05) }
    }
}
