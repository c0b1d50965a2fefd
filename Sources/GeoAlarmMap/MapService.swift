import GeoAlarmConfig
import GeoAlarmStore
import GeoAlarmSystem
import Logging
import ServiceLifecycle
import Synchronization

/// `geoalarm map`'s server as a lifecycle service: listens on `host:port` (port 0: one the
/// system picks) on the process's event loop, says its address with the token once it listens,
/// watches the config and the state file for changes, and stops on graceful shutdown.
public struct MapService: Service {
    private let host: String
    private let port: UInt16
    private let model: MapModel
    private let handler: MapHandler
    private let loop: EventLoop
    private let logger: Logger
    private let listening: @Sendable (MapAddress) -> Void

    /// Where Debian's libjs-leaflet installs Leaflet.
    public static let leafletFolder = "/usr/share/javascript/leaflet"

    /// `listening` hears the addresses to open once the server takes connections.
    public init(
        config: Config, store: StateStore?, host: String, port: UInt16, loop: EventLoop, logger: Logger,
        listening: @escaping @Sendable (MapAddress) -> Void
    ) {
        self.host = host
        self.port = port
        self.loop = loop
        self.logger = logger
        self.listening = listening
        model = MapModel(config: config, store: store, logger: logger)
        handler = MapHandler(model: model, page: MapPage(settings: config.map), leafletFolder: Self.leafletFolder)
    }

    public func run() async throws {
        let listening: (descriptor: Int32, port: UInt16)
        do {
            listening = try System.listen(host: host, port: port)
        } catch {
            throw StartError(description: "cannot listen on \(IPAddress.shown(host)):\(port): \(error.call): \(error.reason)")
        }
        let server = LoopHTTPServer(loop: loop, largestBody: MapChange.largestBody) { [handler] request, peer in
            handler.reply(to: request, from: peer)
        }
        loop.execute { server.start(listening: listening.descriptor) }
        let watcher = watchFiles()
        announce(port: listening.port)
        // Until graceful shutdown; then the loop closes the server's socket and its connections.
        try? await gracefulShutdown()
        if let (watcher, watch) = watcher { watcher.stop(watch, on: loop) }
        loop.execute { server.stop() }
    }

    /// Why the server could not start.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Lets requests in and says the address.
    private func announce(port: UInt16) {
        let names = System.hostName().map { name in [name, name + ".local"] } ?? []
        let access = MapAccess(token: MapAccess.makeToken(), host: host, port: Int(port), machineNames: names)
        handler.access.withLock { $0 = access }
        // A browser on this machine reaches a server listening on every address through loopback.
        let local = IPAddress(host)?.isUnspecified == true ? (host.contains(":") ? "::1" : "127.0.0.1") : host
        let base = "http://\(IPAddress.shown(local)):\(port)/"
        listening(MapAddress(withToken: base + "#token=" + access.token, oneTimeLink: { [handler] in base + "#code=" + handler.makeCode() }))
    }

    private enum Change: Sendable {
        case config, state
    }

    /// Reads the config and the state file again whenever they change (the agent writes the
    /// state file's write-ahead log; an editor or `geoalarm add` replaces the config).
    private func watchFiles() -> (FileWatcher<Change>, EventLoop.Watch)? {
        var files = [FileWatcher.Watch(path: model.configPath, events: .replaced, report: Change.config)]
        for folder in model.current.config.taskListSettings.compactMap(\.folder) {
            files.append(FileWatcher.Watch(filesOf: folder, ending: ".ics", events: [.replaced, .removed], report: .config))
        }
        if let store = model.store {
            files.append(FileWatcher.Watch(path: store.path + "-wal", events: [.written, .replaced], report: .state))
            files.append(FileWatcher.Watch(path: store.path, events: [.written, .replaced], report: .state))
        }
        guard let watcher = FileWatcher(files) else {
            logger.warning("cannot watch \(model.configPath) and the state file: the map shows them as they were when it started")
            return nil
        }
        for path in watcher.unwatched { logger.warning("cannot watch \(path) for changes: the map shows it as it was when it started") }
        let watch = watcher.start(on: loop) { [model] change in
            switch change {
            case .config: model.reloadConfig()
            case .state: model.reloadState()
            }
        }
        return (watcher, watch)
    }
}

/// Where `geoalarm map` is open.
public struct MapAddress: Sendable {
    /// The address with its token after `#` (which the browser never sends): for the user to
    /// open or copy, in as many browsers as they like.
    public let withToken: String
    /// Makes an address that opens the map once, for this user's browser on this machine, with a
    /// code that works for ten minutes: for a command line, which every local user can read.
    public let oneTimeLink: @Sendable () -> String
}
