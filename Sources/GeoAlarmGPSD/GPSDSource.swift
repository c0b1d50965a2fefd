internal import CGPS
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import Glibc
import Synchronization

/// Live fixes from gpsd through libgps, as a ``FixSource``, on an ``EventLoop``.
///
/// The loop waits on libgps's socket with everything else it waits on, so that a report from
/// gpsd wakes one thread, once. Only connecting happens elsewhere: `gps_open` blocks in
/// `connect` (a gpsd on another host may take minutes to answer or fail), so each attempt runs
/// on a short-lived thread that hands the connection to the loop and ends. The source
/// reconnects by itself: when gpsd is not running, restarts or dies, it reports `unavailable`
/// and tries again after 1 s, doubling to 60 s (a timer on the loop), back to 1 s once
/// connected: a laptop whose gpsd is off wakes once a minute.
public final class GPSDSource: FixSource {
    public let endpoint: GPSDEndpoint
    /// Watch only this receiver (gpsd device path), or every one when nil.
    public let device: String?
    private let loop: EventLoop
    private let session: Confined<Session>

    /// What the source keeps between the loop's callbacks.
    private struct Session {
        var continuation: AsyncStream<SourceReport>.Continuation?
        /// The open connection, and the loop's watch on its socket.
        var connection: (GPSConnection, EventLoop.Watch)?
        var reconnection = Reconnection()
        var isStopped = false
    }

    public init(endpoint: GPSDEndpoint, device: String? = nil, loop: EventLoop) {
        self.endpoint = endpoint
        self.device = device
        self.loop = loop
        session = Confined(Session(), on: loop)
    }

    public var name: String { "gpsd at \(endpoint)" }
    public var usesUndatedFixes: Bool { false }

    /// Starts connecting; the sequence ends after ``stop()``.
    public func reports() -> AsyncStream<SourceReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceReport.self)
        loop.execute { [self] in
            session.value.continuation = continuation
            connect()
        }
        return stream
    }

    /// Closes the connection and ends the sequence (on the loop, soon after the call).
    public func stop() {
        loop.execute { [self] in
            guard !session.value.isStopped else { return }
            session.value.isStopped = true
            session.value.reconnection.cancel(on: loop)
            disconnect()
            session.value.continuation?.finish()
            session.value.continuation = nil
        }
    }

    private func connect() {
        session.value.reconnection.retrying()
        guard !session.value.isStopped else { return }
        let connection = GPSConnection()
        do {
            try loop.runOnThread(named: "gpsd connect", { [endpoint, device] in connection.open(endpoint, device: device) }) {
                [self] problem in opened(connection, problem: problem)
            }
        } catch {
            backOff("cannot start a thread to connect: \(error.reason)")
        }
    }

    /// The connecting thread's result (that thread has ended).
    private func opened(_ connection: GPSConnection, problem: String?) {
        if session.value.isStopped { return connection.close() }
        if let problem { return backOff(problem) }
        session.value.continuation?.yield(.connected)
        session.value.reconnection.connected()
        let watch = loop.watch(connection.socket) { [self] _ in readWaiting() }
        session.value.connection = (connection, watch)
    }

    private func readWaiting() {
        guard let (connection, _) = session.value.connection, let continuation = session.value.continuation else { return }
        let open = connection.readWaiting { continuation.yield(.fixes([$0], readAt: .now)) }
        if !open {
            disconnect()
            backOff("connection lost")
        }
    }

    private func disconnect() {
        guard let (connection, watch) = session.value.connection else { return }
        loop.unwatch(watch)
        connection.close()
        session.value.connection = nil
    }

    /// Reports why gpsd cannot be used (when it is news) and tries again later (see ``Reconnection``).
    private func backOff(_ reason: String) {
        if session.value.reconnection.failed(reason, on: loop, retry: { [self] in connect() }) {
            session.value.continuation?.yield(.unavailable(reason))
        }
    }
}

/// One connection to gpsd: libgps's data and a buffer for its reports. The connecting thread
/// opens it, then the loop reads it; the lock around them makes that hand-over safe.
final class GPSConnection: Sendable {
    private struct Resources {
        let data = LibGPS.newData()
        let message = UnsafeMutableBufferPointer<CChar>.allocate(capacity: 16_384)
        var isOpen = false
    }

    private let resources = Mutex(Resources())

    deinit {
        close()
        resources.withLock { resources in
            resources.data.deallocate()
            resources.message.deallocate()
        }
    }

    /// Connects and asks for JSON reports of every device (or `device`); why not, when it failed.
    func open(_ endpoint: GPSDEndpoint, device: String?) -> String? {
        resources.withLock { resources in
            guard gps_open(endpoint.host, String(endpoint.port), resources.data) == 0 else {
                return String(cString: gps_errstr(System.lastError))
            }
            guard LibGPS.watch(resources.data, device: device) >= 0 else {
                gps_close(resources.data)
                return "gpsd refused the watch request"
            }
            resources.isOpen = true
            return nil
        }
    }

    /// The socket to wait on.
    var socket: Int32 { resources.withLock { $0.data.pointee.gps_fd } }

    /// Reads every report gpsd has sent (libgps keeps what one read left over) and passes on the
    /// TPVs; false when the connection is lost.
    func readWaiting(_ fix: (Fix) -> Void) -> Bool {
        resources.withLock { resources in
            repeat {
                let count = geoalarm_gps_read(resources.data, resources.message.baseAddress, Int32(resources.message.count))
                if count < 0 { return false }
                guard count > 0, LibGPS.isTPV(resources.message.baseAddress!) else { continue }
                var raw = geoalarm_gps_fix()
                geoalarm_gps_copy_fix(resources.data, &raw)
                fix(TPVConversion.fix(from: raw))
            } while gps_waiting(resources.data, 0)
            return true
        }
    }

    func close() {
        resources.withLock { resources in
            guard resources.isOpen else { return }
            gps_close(resources.data)
            resources.isOpen = false
        }
    }
}
