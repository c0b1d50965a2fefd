internal import CGPS
import Foundation
import GeoAlarmCore
import GeoAlarmSystem

/// Live fixes from gpsd through libgps, read on a thread of its own, as a ``FixSource``.
///
/// The reader waits in `poll` on libgps's socket and on an eventfd that ``stop()`` writes, with
/// no timeout: it wakes once per report from gpsd and once to stop. It reconnects by itself:
/// when gpsd is not running, restarts or dies, it reports `unavailable` and tries again after
/// 1 s, doubling to 60 s (one wait on the eventfd, which a stop cuts short), back to 1 s once
/// connected: a laptop whose gpsd is off wakes it once a minute.
public final class GPSDSource: FixSource {
    public let endpoint: GPSDEndpoint
    /// Watch only this receiver (gpsd device path), or every one when nil.
    public let device: String?
    /// Written by ``stop()``; nil when no eventfd could be made (then the reader cannot start).
    private let stopEvent: Int32?

    static let firstRetry = 1.0
    static let longestRetry = 60.0

    public init(endpoint: GPSDEndpoint, device: String? = nil) {
        self.endpoint = endpoint
        self.device = device
        stopEvent = try? System.eventDescriptor()
    }

    public var name: String { "gpsd at \(endpoint)" }
    public var usesUndatedFixes: Bool { false }

    /// Starts the reader thread; the sequence ends after ``stop()``.
    public func reports() -> AsyncStream<SourceReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceReport.self)
        guard let stopEvent else {
            continuation.yield(.failed("cannot make an eventfd to stop the reader"))
            continuation.finish()
            return stream
        }
        let thread = Thread { [self] in
            readLoop(continuation, stopEvent: stopEvent)
            continuation.finish()
        }
        thread.name = "gpsd reader"
        thread.start()
        return stream
    }

    /// Wakes the reader, which closes its connection and ends the sequence at once.
    public func stop() {
        if let stopEvent { System.signalEvent(stopEvent) }
    }

    private func readLoop(_ continuation: AsyncStream<SourceReport>.Continuation, stopEvent: Int32) {
        let data = LibGPS.newData()
        defer { data.deallocate() }
        var retry = Self.firstRetry
        var message = [CChar](repeating: 0, count: 16_384)
        var lastReason: String?
        /// Reports why gpsd cannot be used (once while the reason stays the same: each report wakes
        /// the agent), waits (false when stopped meanwhile), and doubles the next wait.
        func backOff(_ reason: String) -> Bool {
            if reason != lastReason { continuation.yield(.unavailable(reason)) }
            lastReason = reason
            defer { retry = min(retry * 2, Self.longestRetry) }
            return System.wait(stopEvent: stopEvent, readable: nil, seconds: retry) == .timeout
        }
        while true {
            guard gps_open(endpoint.host, String(endpoint.port), data) == 0 else {
                if backOff(String(cString: gps_errstr(errno))) { continue }
                return
            }
            guard LibGPS.watch(data, device: device) >= 0 else {
                gps_close(data)
                if backOff("gpsd refused the watch request") { continue }
                return
            }
            continuation.yield(.connected)
            retry = Self.firstRetry
            lastReason = nil
            var lost = false
            reading: while System.wait(stopEvent: stopEvent, readable: data.pointee.gps_fd, seconds: nil) == .data {
                // One wake-up reads every report gpsd sent; libgps keeps what one read left over.
                repeat {
                    let count = message.withUnsafeMutableBufferPointer {
                        geoalarm_gps_read(data, $0.baseAddress, Int32($0.count))
                    }
                    if count < 0 {
                        lost = true
                        break reading
                    }
                    guard count > 0, message.withUnsafeBufferPointer({ LibGPS.isTPV($0.baseAddress!) }) else { continue }
                    var raw = geoalarm_gps_fix()
                    geoalarm_gps_copy_fix(data, &raw)
                    continuation.yield(.fixes([TPVConversion.fix(from: raw)], readAt: .now))
                } while gps_waiting(data, 0)
            }
            gps_close(data)
            guard lost, backOff("connection lost") else { return }
        }
    }
}
