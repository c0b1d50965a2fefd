import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmMap
import GeoAlarmStore
import GeoAlarmSystem
import Glibc
import Logging
import ServiceLifecycle

/// `geoalarm map`: the reminders, where you are and what happened, on a page in your browser.
struct Map: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the reminders, the last position and recent events on a map in the browser, and edit them there.",
        discussion: """
            Starts a web server on 127.0.0.1 and prints the address to open, with a token that every \
            request must carry. Changes made on the page go through the same editor as `add` and \
            `remove`; a running agent picks them up. Tiles come from [map] tiles. SIGTERM or SIGINT \
            (Ctrl-C) stop it. To use it from another machine, keep it on 127.0.0.1 and forward the port \
            with ssh -L.
            """)

    @OptionGroup var options: ConfigOptions
    @OptionGroup var stateOptions: StateOptions

    @Option(help: ArgumentHelp(
        "Where to listen: ADDRESS:PORT, or PORT on 127.0.0.1 (port 0: one the system picks).", valueName: "address"))
    var listen = ListenAddress(host: "127.0.0.1", port: 0)

    @Flag(help: "Open the page in the desktop's browser (xdg-open).")
    var open = false

    func run() async throws {
        let logger = Diagnostics.logger
        let store = openStore(logger: logger)
        // A server's task list is drawn from the copy the agent keeps; its changes wait there for the agent.
        let config = try options.load(taskCache: store?.taskLists)
        guard System.exists(MapService.leafletFolder + "/leaflet.js") else {
            Diagnostics.error("Leaflet is not installed in \(MapService.leafletFolder): install Debian's libjs-leaflet")
            throw ExitCode.failure
        }
        if !listen.isLoopback {
            logger.warning("""
                listening on \(listen.host): anyone who can reach this machine and learns the token can change your \
                reminders, and the token crosses the network unencrypted; an SSH tunnel to 127.0.0.1 is safer
                """)
        }
        let service = MapService(
            config: config, store: store, host: listen.host, port: listen.port, loop: .main, logger: logger
        ) { [open] address in
            do {
                try Console.line("geoalarm map: open \(address.withToken)")
            } catch {
                return
            }
            // The command line is for every local user to read: it gets a link that works once, for this user.
            if open { Self.openInBrowser(address.oneTimeLink(), logger: logger) }
        }
        let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }

    /// The state file, writable when it can be; else read-only, or none (said on stderr).
    private func openStore(logger: Logger) -> StateStore? {
        do {
            return try StateStore(path: stateOptions.path)
        } catch {
            logger.warning("\(error); the map cannot complete or snooze reminders")
        }
        do {
            return try StateStore(readingFrom: stateOptions.path)
        } catch {
            logger.warning("\(error); the map shows no state")
            return nil
        }
    }

    /// Starts `xdg-open ADDRESS`, reaped on a thread of its own once it ends.
    private static func openInBrowser(_ address: String, logger: Logger) {
        do {
            let child = try ChildProcess.spawn(["xdg-open", address], environment: ProcessInfo.processInfo.environment)
            try EventLoop.main.runOnThread(named: "xdg-open", { try? System.wait(child.pid, block: true) }, then: { status in
                if let status, status != 0 { logger.warning("xdg-open ended with status \(status): open the address by hand") }
            })
        } catch {
            logger.warning("cannot start xdg-open (\(error)): open the address by hand")
        }
    }
}

/// `--listen`: an IP address and a port.
struct ListenAddress: ExpressibleByArgument {
    var host: String
    var port: UInt16

    init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// "PORT", "ADDRESS:PORT", "[IPv6]:PORT"; `localhost` is 127.0.0.1.
    init?(argument: String) {
        guard let address = try? NetworkAddress(authority: Substring(argument)) else { return nil }
        // A port alone is one on 127.0.0.1.
        let (host, portText) = address.portText.map { (String(address.host), $0) } ?? ("127.0.0.1", address.host)
        guard let port = UInt16(portText) else { return nil }
        let resolved = host == "localhost" ? "127.0.0.1" : host
        guard IPAddress(resolved) != nil else { return nil }
        self.init(host: resolved, port: port)
    }

    var isLoopback: Bool { IPAddress(host)?.isLoopback == true }

    var defaultValueDescription: String { "127.0.0.1:\(port)" }
}
