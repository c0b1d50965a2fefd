internal import CGPS
import Foundation
import GeoAlarmCore
import GeoAlarmSystem

/// Live fixes from gpsd through libgps, as a ``FixSource``.
///
/// A thread of its own connects. Once connected, the reports are read by the agent's task loop
/// when it runs (``OneThreadExecutors/watch(_:onReadable:)``), so that a report wakes one
/// thread, while the connecting thread waits for a stop or a lost connection; elsewhere (in
/// tests) that thread reads them itself. Either waits in `poll` on libgps's socket and on an
/// eventfd that ``stop()`` writes, with no timeout. It reconnects by itself:
/// when gpsd is not running, restarts or dies, it reports `unavailable` and tries again after
/// 1 s, doubling to 60 s (one wait on the eventfd, which a stop cuts short), back to 1 s once
/// connected: a laptop whose gpsd is off wakes it once a minute.
public final class GPSDSource: FixSource {
    public let endpoint: GPSDEndpoint
    /// Watch only this receiver (gpsd device path), or every one when nil.
    public let device: String?
    /// Written by ``stop()``; nil when no eventfd could be made (then the reader cannot start).
    private let stopEvent: Int32?
    /// Written by the task loop when it finds the connection lost.
    private let lostEvent: Int32?

    static let firstRetry = 1.0
    static let longestRetry = 60.0

    public init(endpoint: GPSDEndpoint, device: String? = nil) {
        self.endpoint = endpoint
        self.device = device
        stopEvent = try? System.eventDescriptor()
        lostEvent = try? System.eventDescriptor()
    }

    public var name: String { "gpsd at \(endpoint)" }
    public var usesUndatedFixes: Bool { false }

    /// Starts the reader thread; the sequence ends after ``stop()``.
    public func reports() -> AsyncStream<SourceReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceReport.self)
        guard let stopEvent, let lostEvent else {
            continuation.yield(.failed("cannot make an eventfd to stop the reader"))
            continuation.finish()
            return stream
        }
        let thread = Thread { [self] in
            readLoop(continuation, stopEvent: stopEvent, lostEvent: lostEvent)
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

    private func readLoop(_ continuation: AsyncStream<SourceReport>.Continuation, stopEvent: Int32, lostEvent: Int32) {
        let reader = ReportReader(continuation: continuation)
        defer { reader.deallocate() }
        var retry = Self.firstRetry
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
            guard gps_open(endpoint.host, String(endpoint.port), reader.data) == 0 else {
                if backOff(String(cString: gps_errstr(errno))) { continue }
                return
            }
            guard LibGPS.watch(reader.data, device: device) >= 0 else {
                gps_close(reader.data)
                if backOff("gpsd refused the watch request") { continue }
                return
            }
            continuation.yield(.connected)
            retry = Self.firstRetry
            lastReason = nil
            let socket = reader.data.pointee.gps_fd
            var lost = false
            if let watch = OneThreadExecutors.watch(socket, onReadable: {
                if reader.readWaiting() { return true }
                System.signalEvent(lostEvent)
                return false
            }) {
                lost = System.wait(stopEvent: stopEvent, readable: lostEvent, seconds: nil) == .data
                OneThreadExecutors.unwatch(watch)
                System.clearEvent(lostEvent)
            } else {
                while System.wait(stopEvent: stopEvent, readable: socket, seconds: nil) == .data {
                    if !reader.readWaiting() {
                        lost = true
                        break
                    }
                }
            }
            gps_close(reader.data)
            guard lost, backOff("connection lost") else { return }
        }
    }
}

/// libgps's connection data and a buffer for its reports, used by one thread at a time: the
/// connecting thread, or the task loop while it watches the socket.
private final class ReportReader: @unchecked Sendable {
    let data = LibGPS.newData()
    private let message = UnsafeMutableBufferPointer<CChar>.allocate(capacity: 16_384)
    private let continuation: AsyncStream<SourceReport>.Continuation

    init(continuation: AsyncStream<SourceReport>.Continuation) {
        self.continuation = continuation
    }

    func deallocate() {
        data.deallocate()
        message.deallocate()
    }

    /// Reads every report gpsd has sent (libgps keeps what one read left over) and passes on the
    /// TPVs; false when the connection is lost.
    func readWaiting() -> Bool {
        repeat {
            let count = geoalarm_gps_read(data, message.baseAddress, Int32(message.count))
            if count < 0 { return false }
            guard count > 0, LibGPS.isTPV(message.baseAddress!) else { continue }
            var raw = geoalarm_gps_fix()
            geoalarm_gps_copy_fix(data, &raw)
            continuation.yield(.fixes([TPVConversion.fix(from: raw)], readAt: .now))
        } while gps_waiting(data, 0)
        return true
    }
}
