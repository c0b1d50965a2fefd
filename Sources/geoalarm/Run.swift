import ArgumentParser
import Foundation
import GeoAlarmAgent
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmHooks
import GeoAlarmMQTT
import GeoAlarmNotify
import GeoAlarmStore
import GeoAlarmOutput
import Logging
import ServiceLifecycle

/// `geoalarm run`: the live agent on gpsd's fixes, as a service group: the source, the file
/// watcher, the pipeline and (with pop-ups) the notifier.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch live fixes (gpsd, or OwnTracks devices through MQTT) and announce every arrival and departure.",
        discussion: """
            Events are printed as `replay` prints them. gpsd is found from --gpsd, else [gpsd] in the \
            config, else GPSD_HOST/GPSD_PORT, else localhost:2947; the agent waits for it and reconnects \
            by itself. With --source owntracks, locations come from [mqtt] subscribe instead, and each \
            device has its own inside/outside state. With [mqtt] in the config, events and the position \
            are also published to the broker. SIGTERM or SIGINT stop it; SIGHUP reloads the config (an \
            invalid one is reported and the previous one stays in force).
            """)

    @OptionGroup var options: ConfigOptions

    @Option(help: ArgumentHelp(
        "Where fixes come from: gpsd (the default), or owntracks (locations through the [mqtt] broker).",
        valueName: "source"))
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
        // The agent outlives its stdout (`geoalarm run | head`): said once, and events go on being
        // recorded, shown and passed to hooks.
        let stdout = LineWriter(flushEachLine: true) { error in
            logger.warning("""
                standard output is gone (\(error.reason)): event lines are no longer printed; events are still \
                recorded in the state file, shown and passed to hooks
                """)
        }
        var sinks: [any EventSink] = [EventLog(format: json ? .json : .text, writer: stdout)]
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
        let hostName = ProcessInfo.processInfo.shortHostName
        var ownTopic: String?
        if let mqtt = config.mqtt {
            let publisher = MQTTPublisher(
                settings: mqtt, user: environment["USER"] ?? "user", hostName: hostName,
                softwareVersion: GeoAlarm.configuration.version, reminders: config.reminders.filter(\.isEnabled),
                collections: config.collections.filter(\.template.isEnabled), savedPresence: keeper.savedPresence(),
                lifecycles: keeper.lifecycles(), ownPosition: source == .gpsd, unknownError: config.settings.maxError ?? 100, store: keeper.sharedStore, logger: logger)
            // After the pop-ups (seen at once), before the hooks.
            sinks.insert(publisher, at: sinks.count - 1)
            publisher.start()
            ownTopic = publisher.ownTopic
        }
        let channel = AgentChannel()
        switch source {
        case .gpsd:
            let fixes = GPSDSource(endpoint: endpoint, device: gpsdOptions.device)
            services += agentServices(source: fixes, channel: channel, config: config, keeper: keeper, sinks: sinks)
        case .owntracks:
            guard let mqtt = config.mqtt else {
                Diagnostics.error("\(config.path): --source owntracks needs an [mqtt] table with the broker's url")
                throw ExitCode.failure
            }
            let fixes = OwnTracksSource(settings: mqtt, hostName: hostName, skipping: Set(ownTopic.map { [$0] } ?? []))
            services += agentServices(source: fixes, channel: channel, config: config, keeper: keeper, sinks: sinks)
        }
        // Shut down in reverse order: the source stops first, the notifier's loop last.
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// The agent on `source`'s fixes, its file watcher and the source itself, in the order they start.
    private func agentServices<Source: FixSource>(
        source: Source, channel: AgentChannel, config: Config, keeper: StateKeeper, sinks: [any EventSink]
    ) -> [any Service] {
        let logger = Diagnostics.logger
        return [
            AlarmAgent(source: source, channel: channel, config: config, state: keeper, sinks: sinks, logger: logger),
            WatcherService(
                configPath: config.path, statePath: keeper.isPersisting ? stateOptions.path : nil, channel: channel,
                logger: logger),
            SourceService(source: source, channel: channel),
        ]
    }
}

/// The fix sources `run` knows.
enum SourceKind: String, ExpressibleByArgument, CaseIterable {
    case gpsd
    /// OwnTracks locations of many devices through the `[mqtt]` broker.
    case owntracks
}
