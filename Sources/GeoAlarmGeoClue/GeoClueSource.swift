internal import CGeoClue
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import Synchronization

/// Live fixes from GeoClue2, the system bus's location service (Wi-Fi positioning on a laptop,
/// the modem's GPS on a Linux phone), as a ``FixSource``.
///
/// libgeoclue-2 is loaded when the source is first wanted (``LibGeoClue``): an agent that gpsd
/// feeds never maps it, nor GLib. Its proxies run on a GLib main context of their own, iterated
/// by a thread of its own (`geoclue`, a ``GeoClueSession``): GDBus delivers every reply and
/// signal to the context that made the call, and a thread blocked in that context's poll costs
/// nothing between two updates. The reports go to the agent's loop through the source's stream,
/// its requests (``request(_:)``, ``pause()``, ``resume()``, ``stop()``) come in as calls run on
/// that context: the only ways between the two threads.
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
    fileprivate let state = Mutex(Shared())

    /// What both threads touch: the stream, the GLib thread's session, and what the agent last asked.
    fileprivate struct Shared {
        var continuation: AsyncStream<SourceReport>.Continuation?
        /// The GLib thread's work while it runs (it is started only once the source is first wanted).
        var session: GeoClueSession?
        var request = GeoClueRequest.everyUpdate
        var isPaused = false
    }

    public init(desktopID: String = DesktopEntry.id) {
        self.desktopID = desktopID
    }

    public var name: String { "GeoClue" }
    public var usesUndatedFixes: Bool { false }
    public var reportsOnlyOnMovement: Bool { true }
    public var takesRequests: Bool { true }

    /// Starts the GLib thread, which looks for GeoClue on the system bus (once resumed, when
    /// paused before: an agent that gpsd feeds loads no library, starts no thread, opens no bus);
    /// the sequence ends after ``stop()``.
    public func reports() -> AsyncStream<SourceReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceReport.self)
        let paused = state.withLock { shared in
            shared.continuation = continuation
            return shared.isPaused
        }
        if !paused { startThread() }
        return stream
    }

    /// Loads libgeoclue-2 (the first time) and starts the GLib thread, unless it runs; a library
    /// or thread that cannot be had ends the sequence, saying why.
    private func startThread() {
        let isWanted = { (shared: Shared) in shared.session == nil && shared.continuation != nil }
        guard state.withLock({ isWanted($0) }) else { return }
        // The first time, the library is opened here, outside the lock that the loop's calls take.
        let loaded = LibGeoClue.loaded
        let session = state.withLock { shared -> Result<GeoClueSession, DynamicLibrary.Unavailable>? in
            guard isWanted(shared) else { return nil }
            return loaded.map { library in
                let session = GeoClueSession(source: self, library: library)
                shared.session = session
                return session
            }
        }
        let failure: String
        switch session {
        case nil: return
        case .failure(let unavailable): failure = unavailable.reason
        case .success(let session):
            do {
                try System.startThread(named: "geoclue") { session.run() }
                return
            } catch {
                failure = "cannot start GeoClue's thread: \(error.reason)"
            }
        }
        let continuation = state.withLock { shared in
            defer { (shared.continuation, shared.session) = (nil, nil) }
            return shared.continuation
        }
        continuation?.yield(.failed(failure))
        continuation?.finish()
    }

    /// Ends the client (GeoClue stops its sources when no client is left) and the sequence.
    public func stop() {
        let neverStarted = state.withLock { shared in
            defer { if shared.session == nil { shared.continuation = nil } }
            return shared.session == nil ? shared.continuation : nil
        }
        neverStarted?.finish()
        onGLibThread { $0.end() }
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

    fileprivate func report(_ report: SourceReport) {
        _ = state.withLock { $0.continuation }?.yield(report)
    }

    /// Runs `work` once on the GLib thread, while it runs.
    private func onGLibThread(_ work: @escaping @Sendable (GeoClueSession) -> Void) {
        state.withLock { $0.session }?.post(work)
    }
}

/// The GLib thread's side of a ``GeoClueSource``: the context it iterates, the proxies made on
/// it, and what it last gave GeoClue. Made with the library loaded, when the thread is started;
/// let go when the thread ends. Only ``post(_:)`` is called from another thread.
final class GeoClueSession: @unchecked Sendable {
    private let source: GeoClueSource
    private let library: LibGeoClue
    /// The GLib main context the session's calls are made and answered on, its own.
    private let context: OpaquePointer?
    private let glib: Confined<GLibState>

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
        var atDeadline: ((GeoClueSession) -> Void)?
        /// Whether the daemon was there at the last look (nil: not looked yet).
        var present: Bool?
        /// What watches for the system bus's socket while there is no bus (inotify, through GIO),
        /// and whether it watches the socket itself or the nearest of its folders that exists.
        var busMonitor: UnsafeMutablePointer<GFileMonitor>?
        var busMonitorWatchesSocket = false
    }

    fileprivate init(source: GeoClueSource, library: LibGeoClue) {
        self.source = source
        self.library = library
        let context = library.mainContextNew()
        self.context = context
        // The thread that iterates the context owns it (g_main_loop_run acquires it).
        let owned = ContextAddress(pointer: context)
        glib = Confined(GLibState()) { library.mainContextIsOwner(owned.pointer) != 0 }
    }

    deinit {
        library.mainContextUnref(context)
    }

    /// A context's address, which the check of its owner takes to whichever thread asks (it
    /// only asks GLib about it).
    private struct ContextAddress: @unchecked Sendable {
        let pointer: OpaquePointer?
    }

    private static let busName = "org.freedesktop.GeoClue2"
    private static let managerPath = "/org/freedesktop/GeoClue2/Manager"

    /// The thread's work: the context as its thread-default one (GDBus answers there), iterated
    /// until ``end()``; then the source's sequence ends.
    fileprivate func run() {
        library.mainContextPushThreadDefault(context)
        let loop = library.mainLoopNew(context, 0)
        glib.value.loop = loop
        watchName()
        library.mainLoopRun(loop)
        library.mainLoopUnref(loop)
        glib.value.loop = nil
        library.mainContextPopThreadDefault(context)
        let continuation = source.state.withLock { shared in
            defer { (shared.continuation, shared.session) = (nil, nil) }
            return shared.continuation
        }
        continuation?.finish()
    }

    /// Drops the client, stops following the daemon's name and ends the thread's loop.
    fileprivate func end() {
        dropClient()
        stopWatchingForBus()
        if glib.value.watch != 0 { library.busUnwatchName(glib.value.watch) }
        glib.value.watch = 0
        glib.value.loop.map { library.mainLoopQuit($0) }
    }

    /// Follows GeoClue's name on the system bus (starting it where the bus can).
    private func watchName() {
        if glib.value.watch != 0 { library.busUnwatchName(glib.value.watch) }
        glib.value.watch = library.busWatchName(
            G_BUS_TYPE_SYSTEM, Self.busName, G_BUS_NAME_WATCHER_FLAGS_AUTO_START,
            { _, _, _, me in Unmanaged<GeoClueSession>.fromOpaque(me!).takeUnretainedValue().appeared() },
            { connection, _, me in Unmanaged<GeoClueSession>.fromOpaque(me!).takeUnretainedValue().vanished(hasBus: connection != nil) },
            Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    /// With no system bus, GLib's name watch never looks again: the bus's socket is watched for
    /// instead (through inotify: on its folder, or, while that is missing, on the nearest folder
    /// of its path that exists, stepping down as they are made), and once it is made the name is
    /// followed anew. An address that names no file (an abstract socket, TCP) cannot be watched so.
    private func watchForBus() {
        guard glib.value.busMonitor == nil,
              let path = SystemBusAddress.socketPath(ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"])
        else { return }
        let folder = PathParts.split(path).folder
        // The nearest folder of the path that exists, and the one below it on the way.
        var nearest = folder, below = folder
        while nearest != "/", nearest != ".", !System.exists(nearest) { (below, nearest) = (nearest, PathParts.split(nearest).folder) }
        let watchesSocket = nearest == folder
        let file = library.fileNewForPath(watchesSocket ? path : nearest)
        defer { library.objectUnref(UnsafeMutableRawPointer(file)) }
        var error: UnsafeMutablePointer<GError>?
        let made = watchesSocket
            ? library.fileMonitorFile(file, G_FILE_MONITOR_NONE, nil, &error)
            : library.fileMonitorDirectory(file, G_FILE_MONITOR_NONE, nil, &error)
        guard let monitor = made else {
            return report(.warning("cannot watch for the system bus at \(path): \(message(&error) ?? "no reason given")"))
        }
        let changed: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, OpaquePointer?, GFileMonitorEvent, UnsafeMutableRawPointer?) -> Void = {
            _, _, _, event, me in
            guard event == G_FILE_MONITOR_EVENT_CREATED else { return }
            Unmanaged<GeoClueSession>.fromOpaque(me!).takeUnretainedValue().busPathMade()
        }
        _ = library.signalConnectData(
            UnsafeMutableRawPointer(monitor), "changed", unsafeBitCast(changed, to: GCallback.self), Unmanaged.passUnretained(self).toOpaque(),
            nil, GConnectFlags(0))
        glib.value.busMonitor = monitor
        glib.value.busMonitorWatchesSocket = watchesSocket
        // A folder on the way made while the watch was being set up (`mkdir -p`) is stepped into now.
        if !watchesSocket, System.exists(below) { busPathMade() }
    }

    /// The bus's socket was made, and GeoClue is looked for on it; or a folder on its way was,
    /// and the watch steps down.
    private func busPathMade() {
        let socketMade = glib.value.busMonitorWatchesSocket
        stopWatchingForBus()
        guard socketMade else { return watchForBus() }
        // Not looked for on this bus yet: what the first look finds is said.
        glib.value.present = nil
        watchName()
    }

    private func stopWatchingForBus() {
        guard let monitor = glib.value.busMonitor else { return }
        _ = library.fileMonitorCancel(monitor)
        library.objectUnref(UnsafeMutableRawPointer(monitor))
        glib.value.busMonitor = nil
    }

    private func report(_ report: SourceReport) {
        source.report(report)
    }

    /// GeoClue is on the bus: its manager, then a client.
    private func appeared() {
        glib.value.present = true
        let call = Reply(self)
        library.managerProxyNew(
            G_BUS_TYPE_SYSTEM, G_DBUS_PROXY_FLAGS_NONE, Self.busName, Self.managerPath, nil,
            { _, result, call in
                Reply.take(call) { session in
                    var error: UnsafeMutablePointer<GError>?
                    let manager = session.library.managerProxyFinish(result, &error)
                    session.managerMade(manager, error: session.message(&error))
                }
            }, call.pointer)
    }

    private func managerMade(_ manager: OpaquePointer?, error: String?) {
        guard let manager else { return report(.unavailable("GeoClue's manager cannot be reached: \(error ?? "no reason given")")) }
        glib.value.manager = manager
        // GeoClue 2.6 answers GetClient only once an agent is registered for this user: the
        // call waits as long as it takes (no D-Bus timeout), and the want is said meanwhile.
        library.proxySetDefaultTimeout(UnsafeMutablePointer(manager), gint(Int32.max))
        setDeadline(after: GeoClueSource.agentWait) { $0.noAgentYet() }
        let call = Reply(self)
        library.managerGetClient(
            manager, nil,
            { manager, result, call in
                Reply.take(call) { session in
                    var path: UnsafeMutablePointer<gchar>?
                    var error: UnsafeMutablePointer<GError>?
                    let got = session.library.managerGetClientFinish(OpaquePointer(manager), &path, result, &error)
                    defer { session.library.free(path) }
                    session.clientNamed(got != 0 ? path.map { String(cString: $0) } : nil, error: session.message(&error))
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
        library.clientProxyNew(
            G_BUS_TYPE_SYSTEM, G_DBUS_PROXY_FLAGS_NONE, Self.busName, path, nil,
            { _, result, call in
                Reply.take(call) { session in
                    var error: UnsafeMutablePointer<GError>?
                    let client = session.library.clientProxyFinish(result, &error)
                    session.clientMade(client, error: session.message(&error))
                }
            }, call.pointer)
    }

    private func clientMade(_ client: OpaquePointer?, error: String?) {
        guard let client else { return report(.unavailable("GeoClue's client cannot be reached: \(error ?? "no reason given")")) }
        glib.value.client = client
        library.clientSetDesktopID(client, source.desktopID)
        sendRequest()
        let updated: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<gchar>?, UnsafePointer<gchar>?, UnsafeMutableRawPointer?) -> Void = {
            _, _, new, me in
            guard let new else { return }
            Unmanaged<GeoClueSession>.fromOpaque(me!).takeUnretainedValue().locationUpdated(String(cString: new))
        }
        _ = library.signalConnectData(
            UnsafeMutableRawPointer(client), "location-updated", unsafeBitCast(updated, to: GCallback.self), Unmanaged.passUnretained(self).toOpaque(), nil,
            GConnectFlags(0))
        if !source.state.withLock({ $0.isPaused }) { startClient() }
    }

    fileprivate func startClient() {
        guard let client = glib.value.client, !glib.value.started else { return }
        glib.value.started = true
        let call = Reply(self)
        library.clientStart(
            client, nil,
            { client, result, call in
                Reply.take(call) { session in
                    var error: UnsafeMutablePointer<GError>?
                    let started = session.library.clientStartFinish(OpaquePointer(client), result, &error)
                    session.clientStarted(started != 0, error: session.message(&error))
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
        setDeadline(after: GeoClueSource.firstLocationWait) { $0.noLocationYet() }
    }

    /// No location since the client started, or since a lower level was asked for.
    private func noLocationYet() {
        let level = glib.value.sent?.accuracy ?? .exact
        guard level == .exact else {
            // No Wi-Fi positioning here (or no network for its lookups): exact from now on.
            glib.value.levelFloor = .exact
            report(.warning("""
                GeoClue gave no location in \(GeoClueSource.firstLocationWait) at the \(level) level (no Wi-Fi positioning here, or no \
                network for its lookups): geoalarm asks it for exact locations from now on
                """))
            sendRequest()
            return setDeadline(after: GeoClueSource.firstLocationWait) { $0.noLocationYet() }
        }
        report(.warning("""
            GeoClue gave no location in \(GeoClueSource.firstLocationWait) since it started: it has no source for one (a GPS, Wi-Fi \
            with a network), or the desktop caps geoalarm's accuracy (its location settings); the last known state holds
            """))
    }

    fileprivate func stopClient() {
        guard let client = glib.value.client, glib.value.started else { return }
        glib.value.started = false
        cancelDeadline()
        library.clientStop(client, nil, nil, nil)
    }

    /// Gives the client what the agent asked last (never below the level floor), when it
    /// differs from what it has. A lower level than before is asked with no threshold, until a
    /// location at that level comes (GeoClue passes over one within the threshold of the last):
    /// none in ``GeoClueSource/firstLocationWait``, and the floor is raised to exact.
    fileprivate func sendRequest() {
        guard let client = glib.value.client else { return }
        var wanted = source.state.withLock { $0.request }
        wanted.accuracy = max(wanted.accuracy, glib.value.levelFloor)
        let sent = glib.value.sent
        if let sent, wanted.accuracy < sent.accuracy, glib.value.started, !glib.value.awaitingLocation {
            glib.value.awaitingLocation = true
            setDeadline(after: GeoClueSource.firstLocationWait) { $0.noLocationYet() }
        }
        if glib.value.awaitingLocation { wanted.distanceThreshold = 0 }
        guard wanted != sent else { return }
        if wanted.accuracy != sent?.accuracy { library.clientSetAccuracyLevel(client, wanted.accuracy.rawValue) }
        if wanted.distanceThreshold != sent?.distanceThreshold { library.clientSetDistanceThreshold(client, wanted.distanceThreshold) }
        glib.value.sent = wanted
    }

    private func locationUpdated(_ path: String) {
        let call = Reply(self)
        library.locationProxyNew(
            G_BUS_TYPE_SYSTEM, G_DBUS_PROXY_FLAGS_NONE, Self.busName, path, nil,
            { _, result, call in
                Reply.take(call) { session in
                    var error: UnsafeMutablePointer<GError>?
                    guard let location = session.library.locationProxyFinish(result, &error) else {
                        // The daemon drops a location once two newer ones came: nothing to read.
                        session.library.clearError(&error)
                        return
                    }
                    defer { session.library.objectUnref(UnsafeMutableRawPointer(location)) }
                    session.read(location)
                }
            }, call.pointer)
    }

    private func read(_ location: OpaquePointer) {
        // Timestamp is "(tt)": seconds and microseconds.
        var time: [UInt64] = []
        if let stamp = library.timestamp(location), library.variantTypeString(stamp).map({ String(cString: $0) }) == "(tt)" {
            time = (0..<2).map { index in
                let part = library.variantChild(stamp, gsize(index))
                defer { library.variantUnref(part) }
                return UInt64(library.variantUInt64(part))
            }
        }
        let reading = GeoClueReading(
            latitude: library.latitude(location), longitude: library.longitude(location),
            accuracy: library.accuracy(location), altitude: library.altitude(location),
            speed: library.speed(location), heading: library.heading(location),
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
        if !hasBus { watchForBus() }
        guard wasThere != false else { return }
        if !hasBus {
            report(.unavailable("""
                there is no system bus to find GeoClue on (DBUS_SYSTEM_BUS_ADDRESS, \(SystemBusAddress.defaultSocket)); GeoClue is \
                looked for once the bus's socket is made
                """))
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
            if glib.value.started { library.clientStop(client, nil, nil, nil) }
            library.objectUnref(UnsafeMutableRawPointer(client))
        }
        if let manager = glib.value.manager { library.objectUnref(UnsafeMutableRawPointer(manager)) }
        glib.value.client = nil
        glib.value.manager = nil
        glib.value.started = false
        glib.value.sent = nil
    }

    /// Runs `work` after `wait`, unless cancelled (or another deadline is set) before.
    private func setDeadline(after wait: Duration, _ work: @escaping (GeoClueSession) -> Void) {
        cancelDeadline()
        let timer = library.timeoutSourceNewSeconds(guint(wait.components.seconds))
        library.sourceSetCallback(timer, { me in
            let session = Unmanaged<GeoClueSession>.fromOpaque(me!).takeUnretainedValue()
            let work = session.glib.value.atDeadline
            (session.glib.value.deadline, session.glib.value.atDeadline) = (0, nil)
            work?(session)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque(), nil)
        glib.value.deadline = library.sourceAttach(timer, context)
        glib.value.atDeadline = work
        library.sourceUnref(timer)
    }

    private func cancelDeadline() {
        if glib.value.deadline != 0, let timer = library.mainContextFindSource(context, glib.value.deadline) {
            library.sourceDestroy(timer)
        }
        (glib.value.deadline, glib.value.atDeadline) = (0, nil)
    }

    /// Runs `work` once on the GLib thread (an idle source of the context, which removes itself).
    fileprivate func post(_ work: @escaping @Sendable (GeoClueSession) -> Void) {
        let call = Unmanaged.passRetained(GLibCall(session: self, work: work)).toOpaque()
        let idle = library.idleSourceNew()
        library.sourceSetCallback(idle, { call in
            let call = Unmanaged<GLibCall>.fromOpaque(call!).takeRetainedValue()
            call.work(call.session)
            return 0
        }, call, nil)
        _ = library.sourceAttach(idle, context)
        library.sourceUnref(idle)
    }

    /// The message of `error`, which is cleared.
    private func message(_ error: inout UnsafeMutablePointer<GError>?) -> String? {
        defer { library.clearError(&error) }
        return error.map { String(cString: $0.pointee.message) }
    }

    /// A call's reply, handed to the session only while the connection it was made on lasts.
    private final class Reply {
        let session: GeoClueSession
        let generation: Int

        init(_ session: GeoClueSession) {
            self.session = session
            generation = session.glib.value.generation
        }

        /// Retained until ``take(_:_:)`` (its reply comes exactly once).
        var pointer: UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

        static func take(_ pointer: UnsafeMutableRawPointer?, _ body: (GeoClueSession) -> Void) {
            let reply = Unmanaged<Reply>.fromOpaque(pointer!).takeRetainedValue()
            guard reply.generation == reply.session.glib.value.generation else { return }
            body(reply.session)
        }
    }

    private final class GLibCall: Sendable {
        let session: GeoClueSession
        let work: @Sendable (GeoClueSession) -> Void

        init(session: GeoClueSession, work: @escaping @Sendable (GeoClueSession) -> Void) {
            self.session = session
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
