internal import CGeoClue
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import Synchronization

/// Live fixes from GeoClue2, the system bus's location service (Wi-Fi positioning on a laptop,
/// the modem's GPS on a Linux phone), as a ``FixSource``.
///
/// libgeoclue-2's proxies run on a GLib main context of the source's own, iterated by a thread
/// of its own (`geoclue`): GDBus delivers every reply and signal to the context that made the
/// call, and a thread blocked in that context's poll costs nothing between two updates. The
/// reports go to the agent's loop through the source's stream, its requests (``request(_:)``,
/// ``pause()``, ``resume()``, ``stop()``) come in as calls run on that context: the only ways
/// between the two threads.
///
/// The source follows the daemon's name on the bus: it asks for a client once GeoClue is there
/// (starting it where the bus can), says `unavailable` when it leaves (a restart, an upgrade)
/// and asks again when it is back. A client comes only once a location agent is registered for
/// this user (GNOME Shell, Phosh, KDE's): when none answers for ``agentWait``, that is said,
/// with what to do, and the request stays open (an agent may start later). An agent's refusal
/// is said once; GeoClue is asked again when it next comes onto the bus.
public final class GeoClueSource: PausableFixSource, Sendable {
    /// The desktop file id GeoClue and its agents know geoalarm by.
    public let desktopID: String
    /// How long a client may take before the want of an agent is said.
    public static let agentWait: Duration = .seconds(3)
    /// How long GeoClue may take to give a first location once started (or at a lower level):
    /// longer, and it has no source for what was asked.
    public static let firstLocationWait: Duration = .seconds(15)
    private let state = Mutex(Shared())
    /// The GLib main context the source's calls are made and answered on.
    private let context: MainContext
    private let glib: Confined<GLibState>

    /// What both threads touch: the stream, and what the agent last asked.
    private struct Shared {
        var continuation: AsyncStream<SourceReport>.Continuation?
        /// Whether the GLib thread was started (it is only once the source is first wanted).
        var isRunning = false
        var request = GeoClueRequest.everyUpdate
        var isPaused = false
    }

    /// What only the GLib thread touches.
    private struct GLibState {
        var loop: OpaquePointer?
        var watch: guint = 0
        /// Bumped each time the daemon leaves: replies to an earlier connection's calls are dropped.
        var generation = 0
        var manager: OpaquePointer?
        var client: OpaquePointer?
        var started = false
        /// What the client was last given (its threshold 0 while a first location is awaited).
        var sent: GeoClueRequest?
        /// The lowest level asked for: exact once a lower one gave no location.
        var levelFloor = GeoClueAccuracy.neighborhood
        /// Set from a start, or a lower level asked, until a location comes.
        var awaitingLocation = false
        /// The one deadline pending (GeoClue's answer to GetClient, its first location), and
        /// what it does when reached.
        var deadline: guint = 0
        var atDeadline: ((GeoClueSource) -> Void)?
        /// Whether the daemon was there at the last look (nil: not looked yet).
        var present: Bool?
    }

    public init(desktopID: String = DesktopEntry.id) {
        self.desktopID = desktopID
        let context = MainContext()
        self.context = context
        // The thread that iterates the context owns it (g_main_loop_run acquires it).
        glib = Confined(GLibState()) { g_main_context_is_owner(context.pointer) != 0 }
    }

    public var name: String { "GeoClue" }
    public var usesUndatedFixes: Bool { false }
    public var reportsOnlyOnMovement: Bool { true }
    public var takesRequests: Bool { true }

    /// Starts the GLib thread, which looks for GeoClue on the system bus (once resumed, when
    /// paused before: an agent that gpsd feeds starts no thread, opens no bus); the sequence
    /// ends after ``stop()``.
    public func reports() -> AsyncStream<SourceReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceReport.self)
        let paused = state.withLock { shared in
            shared.continuation = continuation
            return shared.isPaused
        }
        if !paused { startThread() }
        return stream
    }

    private func startThread() {
        let start = state.withLock { shared in
            defer { shared.isRunning = true }
            return !shared.isRunning && shared.continuation != nil
        }
        guard start else { return }
        do {
            try System.startThread(named: "geoclue") { [self] in runContext() }
        } catch {
            let continuation = state.withLock { shared in
                defer { (shared.continuation, shared.isRunning) = (nil, false) }
                return shared.continuation
            }
            continuation?.yield(.failed("cannot start GeoClue's thread: \(error.reason)"))
            continuation?.finish()
        }
    }

    /// Ends the client (GeoClue stops its sources when no client is left) and the sequence.
    public func stop() {
        let neverStarted = state.withLock { shared in
            defer { if !shared.isRunning { shared.continuation = nil } }
            return shared.isRunning ? nil : shared.continuation
        }
        neverStarted?.finish()
        onGLibThread { source in
            source.dropClient()
            if source.glib.value.watch != 0 { g_bus_unwatch_name(source.glib.value.watch) }
            source.glib.value.watch = 0
            source.glib.value.loop.map { g_main_loop_quit($0) }
        }
    }

    /// Asks GeoClue for the updates that can matter now (``GeoClueRequest/init(need:)``); sent at
    /// once when a client is running.
    public func request(_ need: LocationNeed) {
        let request = GeoClueRequest(need: need)
        let changed = state.withLock { shared in
            defer { shared.request = request }
            return shared.request != request
        }
        if changed { onGLibThread { $0.sendRequest() } }
    }

    /// Stops the client's updates (another source feeds the agent): GeoClue may turn its
    /// sources off. ``resume()`` starts them again.
    public func pause() {
        state.withLock { $0.isPaused = true }
        onGLibThread { $0.stopClient() }
    }

    /// Starts the client's updates again after ``pause()`` (the first time, the thread).
    public func resume() {
        state.withLock { $0.isPaused = false }
        startThread()
        onGLibThread { $0.startClient() }
    }

    // MARK: The GLib thread

    private static let busName = "org.freedesktop.GeoClue2"
    private static let managerPath = "/org/freedesktop/GeoClue2/Manager"

    /// The thread's work: the context as its thread-default one (GDBus answers there), iterated
    /// until ``stop()``.
    private func runContext() {
        g_main_context_push_thread_default(context.pointer)
        let loop = g_main_loop_new(context.pointer, 0)
        glib.value.loop = loop
        let me = Unmanaged.passUnretained(self).toOpaque()
        glib.value.watch = g_bus_watch_name(
            G_BUS_TYPE_SYSTEM, Self.busName, G_BUS_NAME_WATCHER_FLAGS_AUTO_START,
            { _, _, _, me in Unmanaged<GeoClueSource>.fromOpaque(me!).takeUnretainedValue().appeared() },
            { connection, _, me in Unmanaged<GeoClueSource>.fromOpaque(me!).takeUnretainedValue().vanished(hasBus: connection != nil) },
            me, nil)
        g_main_loop_run(loop)
        g_main_loop_unref(loop)
        glib.value.loop = nil
        g_main_context_pop_thread_default(context.pointer)
        let continuation = state.withLock { shared in
            defer { (shared.continuation, shared.isRunning) = (nil, false) }
            return shared.continuation
        }
        continuation?.finish()
    }

    private func report(_ report: SourceReport) {
        _ = state.withLock { $0.continuation }?.yield(report)
    }

    /// GeoClue is on the bus: its manager, then a client.
    private func appeared() {
        glib.value.present = true
        let call = Reply(self)
        gclue_manager_proxy_new_for_bus(
            G_BUS_TYPE_SYSTEM, G_DBUS_PROXY_FLAGS_NONE, Self.busName, Self.managerPath, nil,
            { _, result, call in
                Reply.take(call) { source in
                    var error: UnsafeMutablePointer<GError>?
                    let manager = gclue_manager_proxy_new_for_bus_finish(result, &error)
                    source.managerMade(manager, error: GeoClueSource.message(&error))
                }
            }, call.pointer)
    }

    private func managerMade(_ manager: OpaquePointer?, error: String?) {
        guard let manager else { return report(.unavailable("GeoClue's manager cannot be reached: \(error ?? "no reason given")")) }
        glib.value.manager = manager
        // GeoClue 2.6 answers GetClient only once an agent is registered for this user: the
        // call waits as long as it takes (no D-Bus timeout), and the want is said meanwhile.
        g_dbus_proxy_set_default_timeout(UnsafeMutablePointer(manager), gint(Int32.max))
        setDeadline(after: Self.agentWait) { $0.noAgentYet() }
        let call = Reply(self)
        gclue_manager_call_get_client(
            manager, nil,
            { manager, result, call in
                Reply.take(call) { source in
                    var path: UnsafeMutablePointer<gchar>?
                    var error: UnsafeMutablePointer<GError>?
                    let got = gclue_manager_call_get_client_finish(OpaquePointer(manager), &path, result, &error)
                    defer { g_free(path) }
                    source.clientNamed(got != 0 ? path.map { String(cString: $0) } : nil, error: GeoClueSource.message(&error))
                }
            }, call.pointer)
    }

    private func noAgentYet() {
        report(.unavailable("""
            GeoClue gives no client yet: it does so only once a location agent runs for this user (a desktop's: GNOME \
            Shell, Phosh, KDE Plasma); on a machine without one, use gpsd (--source gpsd), or start an agent GeoClue \
            allows in /etc/geoclue/geoclue.conf; geoalarm goes on waiting for it
            """))
    }

    private func clientNamed(_ path: String?, error: String?) {
        cancelDeadline()
        guard let path else { return report(.unavailable("GeoClue gave no client: \(error ?? "no reason given")")) }
        let call = Reply(self)
        gclue_client_proxy_new_for_bus(
            G_BUS_TYPE_SYSTEM, G_DBUS_PROXY_FLAGS_NONE, Self.busName, path, nil,
            { _, result, call in
                Reply.take(call) { source in
                    var error: UnsafeMutablePointer<GError>?
                    let client = gclue_client_proxy_new_for_bus_finish(result, &error)
                    source.clientMade(client, error: GeoClueSource.message(&error))
                }
            }, call.pointer)
    }

    private func clientMade(_ client: OpaquePointer?, error: String?) {
        guard let client else { return report(.unavailable("GeoClue's client cannot be reached: \(error ?? "no reason given")")) }
        glib.value.client = client
        gclue_client_set_desktop_id(client, desktopID)
        sendRequest()
        let updated: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<gchar>?, UnsafePointer<gchar>?, UnsafeMutableRawPointer?) -> Void = {
            _, _, new, me in
            guard let new else { return }
            Unmanaged<GeoClueSource>.fromOpaque(me!).takeUnretainedValue().locationUpdated(String(cString: new))
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(client), "location-updated", unsafeBitCast(updated, to: GCallback.self), Unmanaged.passUnretained(self).toOpaque(), nil,
            GConnectFlags(0))
        if !state.withLock({ $0.isPaused }) { startClient() }
    }

    private func startClient() {
        guard let client = glib.value.client, !glib.value.started else { return }
        glib.value.started = true
        let call = Reply(self)
        gclue_client_call_start(
            client, nil,
            { client, result, call in
                Reply.take(call) { source in
                    var error: UnsafeMutablePointer<GError>?
                    let started = gclue_client_call_start_finish(OpaquePointer(client), result, &error)
                    source.clientStarted(started != 0, error: GeoClueSource.message(&error))
                }
            }, call.pointer)
    }

    private func clientStarted(_ started: Bool, error: String?) {
        guard started else {
            glib.value.started = false
            return report(.unavailable("""
                GeoClue refused geoalarm: \(error ?? "no reason given"); allow it in the desktop's location settings (GNOME: \
                Settings, Privacy, Location Services), or in /etc/geoclue/geoclue.conf ([geoalarm] allowed=true, see \
                geoalarm(1)); it is asked again when GeoClue restarts
                """))
        }
        report(.connected)
        // GeoClue gives a started client its first location whatever the threshold: until it
        // comes, none is set, and its want is said after a while.
        glib.value.awaitingLocation = true
        sendRequest()
        setDeadline(after: Self.firstLocationWait) { $0.noLocationYet() }
    }

    /// No location since the client started, or since a lower level was asked for.
    private func noLocationYet() {
        let level = glib.value.sent?.accuracy ?? .exact
        guard level == .exact else {
            // No Wi-Fi positioning here (or no network for its lookups): exact from now on.
            glib.value.levelFloor = .exact
            report(.warning("""
                GeoClue gave no location in \(Self.firstLocationWait) at the \(level) level (no Wi-Fi positioning here, or no \
                network for its lookups): geoalarm asks it for exact locations from now on
                """))
            sendRequest()
            return setDeadline(after: Self.firstLocationWait) { $0.noLocationYet() }
        }
        report(.warning("""
            GeoClue gave no location in \(Self.firstLocationWait) since it started: it has no source for one (a GPS, Wi-Fi \
            with a network), or the desktop caps geoalarm's accuracy (its location settings); the last known state holds
            """))
    }

    private func stopClient() {
        guard let client = glib.value.client, glib.value.started else { return }
        glib.value.started = false
        cancelDeadline()
        gclue_client_call_stop(client, nil, nil, nil)
    }

    /// Gives the client what the agent asked last (never below the level floor), when it
    /// differs from what it has. A lower level than before is asked with no threshold, until a
    /// location at that level comes (GeoClue passes over one within the threshold of the last):
    /// none in ``firstLocationWait``, and the floor is raised to exact.
    private func sendRequest() {
        guard let client = glib.value.client else { return }
        var wanted = state.withLock { $0.request }
        wanted.accuracy = max(wanted.accuracy, glib.value.levelFloor)
        let sent = glib.value.sent
        if let sent, wanted.accuracy < sent.accuracy, glib.value.started, !glib.value.awaitingLocation {
            glib.value.awaitingLocation = true
            setDeadline(after: Self.firstLocationWait) { $0.noLocationYet() }
        }
        if glib.value.awaitingLocation { wanted.distanceThreshold = 0 }
        guard wanted != sent else { return }
        if wanted.accuracy != sent?.accuracy { gclue_client_set_requested_accuracy_level(client, wanted.accuracy.rawValue) }
        if wanted.distanceThreshold != sent?.distanceThreshold { gclue_client_set_distance_threshold(client, wanted.distanceThreshold) }
        glib.value.sent = wanted
    }

    private func locationUpdated(_ path: String) {
        let call = Reply(self)
        gclue_location_proxy_new_for_bus(
            G_BUS_TYPE_SYSTEM, G_DBUS_PROXY_FLAGS_NONE, Self.busName, path, nil,
            { _, result, call in
                Reply.take(call) { source in
                    var error: UnsafeMutablePointer<GError>?
                    guard let location = gclue_location_proxy_new_for_bus_finish(result, &error) else {
                        // The daemon drops a location once two newer ones came: nothing to read.
                        g_clear_error(&error)
                        return
                    }
                    defer { g_object_unref(UnsafeMutableRawPointer(location)) }
                    source.read(location)
                }
            }, call.pointer)
    }

    private func read(_ location: OpaquePointer) {
        // Timestamp is "(tt)": seconds and microseconds.
        var time: [UInt64] = []
        if let stamp = gclue_location_get_timestamp(location), String(cString: g_variant_get_type_string(stamp)) == "(tt)" {
            time = (0..<2).map { index in
                let part = g_variant_get_child_value(stamp, gsize(index))
                defer { g_variant_unref(part) }
                return UInt64(g_variant_get_uint64(part))
            }
        }
        let reading = GeoClueReading(
            latitude: gclue_location_get_latitude(location), longitude: gclue_location_get_longitude(location),
            accuracy: gclue_location_get_accuracy(location), altitude: gclue_location_get_altitude(location),
            speed: gclue_location_get_speed(location), heading: gclue_location_get_heading(location),
            seconds: time.first ?? 0, microseconds: time.last ?? 0)
        switch reading.fix() {
        case .success(let fix): report(.fixes([fix], readAt: .now))
        case .failure(let problem): report(.ignored(kind: "not a place", reason: problem.description))
        }
        if glib.value.awaitingLocation {
            glib.value.awaitingLocation = false
            cancelDeadline()
            sendRequest()
        }
    }

    /// GeoClue left the bus (or there is no system bus): its client is gone with it.
    private func vanished(hasBus: Bool) {
        let wasThere = glib.value.present
        glib.value.present = false
        dropClient()
        glib.value.generation += 1
        guard wasThere != false else { return }
        if !hasBus {
            report(.unavailable("there is no system bus to find GeoClue on (DBUS_SYSTEM_BUS_ADDRESS, /run/dbus/system_bus_socket)"))
        } else if wasThere == true {
            report(.unavailable("GeoClue left the system bus (a restart, an upgrade, or it was stopped); waiting for it to come back"))
        } else {
            report(.unavailable("GeoClue is not on the system bus (is the geoclue-2.0 package installed?); waiting for it"))
        }
    }

    private func dropClient() {
        cancelDeadline()
        glib.value.awaitingLocation = false
        if let client = glib.value.client {
            if glib.value.started { gclue_client_call_stop(client, nil, nil, nil) }
            g_object_unref(UnsafeMutableRawPointer(client))
        }
        if let manager = glib.value.manager { g_object_unref(UnsafeMutableRawPointer(manager)) }
        glib.value.client = nil
        glib.value.manager = nil
        glib.value.started = false
        glib.value.sent = nil
    }

    /// Runs `work` after `wait`, unless cancelled (or another deadline is set) before.
    private func setDeadline(after wait: Duration, _ work: @escaping (GeoClueSource) -> Void) {
        cancelDeadline()
        let timer = g_timeout_source_new_seconds(guint(wait.components.seconds))
        g_source_set_callback(timer, { me in
            let source = Unmanaged<GeoClueSource>.fromOpaque(me!).takeUnretainedValue()
            let work = source.glib.value.atDeadline
            (source.glib.value.deadline, source.glib.value.atDeadline) = (0, nil)
            work?(source)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque(), nil)
        glib.value.deadline = g_source_attach(timer, context.pointer)
        glib.value.atDeadline = work
        g_source_unref(timer)
    }

    private func cancelDeadline() {
        if glib.value.deadline != 0, let timer = g_main_context_find_source_by_id(context.pointer, glib.value.deadline) {
            g_source_destroy(timer)
        }
        (glib.value.deadline, glib.value.atDeadline) = (0, nil)
    }

    /// Runs `work` once on the GLib thread (an idle source of its context, which removes itself).
    private func onGLibThread(_ work: @escaping @Sendable (GeoClueSource) -> Void) {
        guard state.withLock({ $0.isRunning }) else { return }
        let call = Unmanaged.passRetained(GLibCall(source: self, work: work)).toOpaque()
        let idle = g_idle_source_new()
        g_source_set_callback(idle, { call in
            let call = Unmanaged<GLibCall>.fromOpaque(call!).takeRetainedValue()
            call.work(call.source)
            return 0
        }, call, nil)
        g_source_attach(idle, context.pointer)
        g_source_unref(idle)
    }

    /// The message of `error`, which is cleared.
    private static func message(_ error: inout UnsafeMutablePointer<GError>?) -> String? {
        defer { g_clear_error(&error) }
        return error.map { String(cString: $0.pointee.message) }
    }

    /// A call's reply, handed to the source only while the connection it was made on lasts.
    private final class Reply {
        let source: GeoClueSource
        let generation: Int

        init(_ source: GeoClueSource) {
            self.source = source
            generation = source.glib.value.generation
        }

        /// Retained until ``take(_:_:)`` (its reply comes exactly once).
        var pointer: UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

        static func take(_ pointer: UnsafeMutableRawPointer?, _ body: (GeoClueSource) -> Void) {
            let reply = Unmanaged<Reply>.fromOpaque(pointer!).takeRetainedValue()
            guard reply.generation == reply.source.glib.value.generation else { return }
            body(reply.source)
        }
    }

    /// A GLib main context of the source's own (made at init, freed with the source).
    private final class MainContext: @unchecked Sendable {
        let pointer = g_main_context_new()

        deinit {
            g_main_context_unref(pointer)
        }
    }

    private final class GLibCall: Sendable {
        let source: GeoClueSource
        let work: @Sendable (GeoClueSource) -> Void

        init(source: GeoClueSource, work: @escaping @Sendable (GeoClueSource) -> Void) {
            self.source = source
            self.work = work
        }
    }
}

/// What geoalarm asks GeoClue for: a new location only once the device moved this far from the
/// last one given (0: every update), at this accuracy.
public struct GeoClueRequest: Sendable, Equatable {
    public var distanceThreshold: UInt32
    public var accuracy: GeoClueAccuracy

    /// Every update, as exact as can be.
    public static let everyUpdate = GeoClueRequest(distanceThreshold: 0, accuracy: .exact)
    /// Distances below this ask for every update (a GPS wanders a few metres standing still).
    public static let smallestThreshold = 5.0

    public init(distanceThreshold: UInt32, accuracy: GeoClueAccuracy) {
        self.distanceThreshold = distanceThreshold
        self.accuracy = accuracy
    }

    /// The request that serves `need`: its distance in whole metres (none below
    /// ``smallestThreshold``), and the coarsest level whose locations still tell the smallest
    /// fence near apart: neighbourhood (no GPS, no Wi-Fi scan) with none under a kilometre,
    /// street (Wi-Fi) with none under 250 m, else exact (the receiver).
    public init(need: LocationNeed) {
        let distance = need.distance.isFinite ? min(need.distance, Double(UInt32.max)) : 0
        distanceThreshold = distance < Self.smallestThreshold ? 0 : UInt32(distance.rounded(.down))
        accuracy = switch need.smallestNearRadius {
        case 1000...: .neighborhood
        case 250...: .street
        default: .exact
        }
    }
}

/// GeoClue's accuracy levels (`GClueAccuracyLevel`): the coarser, the fewer sources it turns on.
public enum GeoClueAccuracy: UInt32, Sendable, Comparable {
    /// Kilometres.
    case neighborhood = 5
    /// Street level: Wi-Fi's best (tens to hundreds of metres).
    case street = 6
    /// A GPS receiver's (a phone's modem, an NMEA source).
    case exact = 8

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
