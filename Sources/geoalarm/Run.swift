import ArgumentParser
import Foundation
import GeoAlarmAgent
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmHooks
import GeoAlarmNotify
import GeoAlarmStore
import GeoAlarmOutput
import Logging
import ServiceLifecycle

/// `geoalarm run`: the live agent on gpsd's fixes, as a service group: the source, the file
/// watcher, the pipeline and (with pop-ups) the notifier.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch live fixes from gpsd and announce every arrival and departure.",
        discussion: """
            Events are printed as `replay` prints them. gpsd is found from --gpsd, else [gpsd] in the \
            config, else GPSD_HOST/GPSD_PORT, else localhost:2947; the agent waits for it and reconnects \
            by itself. SIGTERM or SIGINT stop it; SIGHUP reloads the config (an invalid one is reported and \
            the previous one stays in force).
            """)

    @OptionGroup var options: ConfigOptions

    @Option(help: ArgumentHelp("Where fixes come from: gpsd (the default).", valueName: "source"))
    var source: SourceKind = .gpsd

    @OptionGroup var gpsdOptions: GPSDOptions

    @Flag(help: "Print each event as a JSON object on one line.")
    var json = false

    @Flag(help: "Log events only, never show desktop pop-ups (as [output] notify = false). Hooks still run.")
    var headless = false

    @OptionGroup var stateOptions: StateOptions

    func run() async throws {
        let config = try options.load()
        let logger = Diagnostics.logger
        let environment = ProcessInfo.processInfo.environment
        let endpoint = gpsdOptions.endpoint(config: config, environment: environment)
        var sinks: [any EventSink] = [EventLog(format: json ? .json : .text)]
        var services: [any Service] = []
        if headless || !config.notify {
            logger.info("headless: events are logged, no pop-ups")
        } else {
            let statePath = stateOptions.path
            let notifier = DesktopNotifier(logger: logger) { action, reminder in
                logger.info("\"\(action == .done ? "Done" : "Snooze 1 h")\" pressed for reminder \(reminder)")
                do {
                    let store = try StateStore(path: statePath)
                    switch action {
                    case .done: try store.setCompleted(reminder, at: Date())
                    case .snooze: try store.snooze(reminder, until: Date().addingTimeInterval(3600))
                    }
                } catch {
                    logger.error("\(error)")
                }
            }
            sinks.append(notifier)
            services.append(NotifierService(notifier: notifier))
        }
        sinks.append(HookRunner(
            directory: ConfigLocation.hooksDirectory(environment: environment), timeout: config.hookTimeout, logger: logger))
        let keeper = StateKeeper(path: stateOptions.path, logger: logger)
        let channel = AgentChannel()
        let fixes = GPSDSource(endpoint: endpoint, device: gpsdOptions.device)
        services.append(AlarmAgent(source: fixes, channel: channel, config: config, state: keeper, sinks: sinks, logger: logger))
        services.append(WatcherService(
            configPath: config.path, statePath: keeper.isPersisting ? stateOptions.path : nil, channel: channel, logger: logger))
        services.append(SourceService(source: fixes, channel: channel))
        // Shut down in reverse order: the source stops first, the notifier's loop last.
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// The fix sources `run` knows.
enum SourceKind: String, ExpressibleByArgument, CaseIterable {
    case gpsd
}
