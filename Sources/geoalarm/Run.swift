import ArgumentParser
import FoundationEssentials
import GeoAlarmAgent
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGeoClue
import GeoAlarmGPSD
import GeoAlarmHooks
import GeoAlarmMQTT
import GeoAlarmNotify
import GeoAlarmOutput
import GeoAlarmStore
import GeoAlarmSystem
import Glibc
import Logging
import ServiceLifecycle

/// `geoalarm run`: the live agent on gpsd's or GeoClue's fixes, as a service group: the source,
/// the file watcher, the pipeline and (with pop-ups) the notifier.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch live fixes (gpsd, GeoClue, or OwnTracks devices through MQTT) and announce every arrival and departure.",
        discussion: """
            Events are printed as `replay` prints them. Fixes come from --source, else [location] source \
            in the config, else auto: gpsd while it gives fixes, else GeoClue (a laptop's Wi-Fi \
            positioning, a phone's GPS), and back to gpsd when it gives fixes again. gpsd is found from \
            --gpsd, else [gpsd] in the config, else GPSD_HOST/GPSD_PORT, else localhost:2947; the agent \
            waits for it and reconnects by itself. With --source owntracks, locations come from [mqtt] subscribe instead, and each \
            device has its own inside/outside state. With [mqtt] in the config, events and the position \
            are also published to the broker. SIGTERM or SIGINT stop it; SIGHUP reloads the config (an \
            invalid one is reported and the previous one stays in force).
            """)

    @OptionGroup var options: ConfigOptions

    @Option(help: ArgumentHelp(
        """
        Where fixes come from: auto (the default: gpsd, else GeoClue), gpsd, geoclue, or owntracks \
        (locations through the [mqtt] broker).
        """,
        valueName: "source"))
    var source: LocationSource?

    @OptionGroup var gpsdOptions: GPSDOptions

    @Flag(help: "Print each event as a JSON object on one line.")
    var json = false

    @Flag(help: "Log events only, never show desktop pop-ups (as [output] notify = false). Hooks still run.")
    var headless = false

    @OptionGroup var stateOptions: StateOptions

    func run() async throws {
        // Before anything else, while this is the only thread: a signal that comes while the
        // config loads waits for the agent's SignalService (every later thread inherits the mask).
        System.blockSignals(SignalService.blockedSignals)
        let loop = EventLoop.main
        let logger = Diagnostics.logger
        let keeper = StateKeeper(path: stateOptions.path, logger: logger)
        // A server's task list starts from its copy in the state file: the agent fires with the
        // server away; its sync service fetches it at once.
        let config = try options.load(taskCache: keeper.taskListCache)
        let environment = ProcessInfo.processInfo.environment
        let endpoint = gpsdOptions.endpoint(config: config, environment: environment)
        let source = source ?? config.locationSource ?? .auto
        // The agent outlives its stdout (`geoalarm run | head`): said once, and events go on being
        // recorded, shown and passed to hooks.
        let stdout = LineWriter(flushEachLine: true) { error in
            logger.warning("""
                standard output is gone (\(error.reason)): event lines are no longer printed; events are still \
                recorded in the state file, shown and passed to hooks
                """)
        }
        let channel = AgentChannel()
        // The sinks, in the order they hear of an event; those that are also services (their
        // threads, children and connections) start before the agent and stop after it.
        var sinks: [any EventSink] = [EventLog(format: json ? .json : .text, writer: stdout, journal: Diagnostics.journalOnStdout)]
        var services: [any Service] = []
        // A button pressed (a pop-up's, or Home Assistant's after `origin`) is logged and goes
        // straight to the agent, which writes the state file for other processes.
        let snooze = config.snooze
        let pressed = { @Sendable (button: ReminderButton, reminder: PressedReminder, origin: String) in
            logger.info("\(origin)\"\(button.label(snooze: snooze))\" pressed for reminder \(reminder.id)")
            channel.continuation.yield(.reminderAction(button.action(at: Date(), snooze: snooze), reminder))
        }
        if headless || !config.notify {
            logger.info("headless: events are logged, no pop-ups")
        } else {
            let notifier = DesktopNotifier(logger: logger, snooze: snooze) { pressed($0, $1, "") }
            sinks.append(notifier)
            services.append(notifier)
        }
        let hostName = ProcessInfo.processInfo.shortHostName
        var ownTopic: String?
        if let mqtt = config.section(MQTTSetup.self) {
            let clientID = mqtt.broker.clientID(hostName: hostName)
            let unknownError = config.settings.maxError ?? 100
            let outbox = MQTTOutbox(limit: mqtt.broker.outboxLimit, qos: mqtt.broker.qos, keeper: keeper, loop: loop, logger: logger)
            let ownTracks = OwnTracksSink(
                settings: mqtt.ownTracks, topic: mqtt.ownTracks.topic(user: environment["USER"] ?? "user", hostName: hostName),
                unknownError: unknownError, outbox: outbox, keeper: keeper, loop: loop, logger: logger)
            let homeAssistant = mqtt.homeAssistant.map { settings in
                HomeAssistantSink(
                    settings: settings, clientID: clientID, softwareVersion: GeoAlarm.configuration.version, ownPosition: source != .owntracks,
                    locationInterval: mqtt.ownTracks.locationInterval, unknownError: unknownError, snooze: snooze, keeper: keeper,
                    loop: loop, logger: logger
                ) { pressed($0, $1, "homeassistant: ") }
            }
            // After the pop-ups (seen at once), before the hooks; Home Assistant's state before the
            // OwnTracks location that names the same regions.
            if let homeAssistant { sinks.append(homeAssistant) }
            sinks.append(ownTracks)
            services.append(MQTTLink(
                settings: mqtt.broker, clientID: clientID, outbox: outbox, ownTracks: ownTracks, homeAssistant: homeAssistant, loop: loop,
                logger: logger))
            ownTopic = ownTracks.topic
        }
        let hooks = HookRunner(
            directory: ConfigLocation.hooksDirectory(environment: environment), timeout: config.hookTimeout, loop: loop,
            logger: logger)
        sinks.append(hooks)
        services.append(hooks)
        switch source {
        case .auto:
            let fixes = PreferringSource(
                preferred: GPSDSource(endpoint: endpoint, device: gpsdOptions.device, loop: loop), fallback: GeoClueSource(), loop: loop)
            services += agentServices(source: fixes, channel: channel, config: config, keeper: keeper, sinks: sinks)
        case .gpsd:
            let fixes = GPSDSource(endpoint: endpoint, device: gpsdOptions.device, loop: loop)
            services += agentServices(source: fixes, channel: channel, config: config, keeper: keeper, sinks: sinks)
        case .geoclue:
            services += agentServices(source: GeoClueSource(), channel: channel, config: config, keeper: keeper, sinks: sinks)
        case .owntracks:
            guard let mqtt = config.section(MQTTSetup.self) else {
                Diagnostics.error("\(config.path): --source owntracks needs an [mqtt] table with the broker's url")
                throw ExitCode.failure
            }
            let fixes = OwnTracksSource(
                broker: mqtt.broker, settings: mqtt.ownTracks, hostName: hostName, skipping: Set(ownTopic.map { [$0] } ?? []), loop: loop)
            services += agentServices(source: fixes, channel: channel, config: config, keeper: keeper, sinks: sinks)
        }
        // Shut down in reverse order: the source stops first, then the agent, the hooks, MQTT and
        // the notifier's loop last. The signal service ends the group when SIGTERM or SIGINT comes.
        let signals = ServiceGroupConfiguration.ServiceConfiguration(
            service: SignalService(channel: channel, loop: loop, logger: logger), successTerminationBehavior: .gracefullyShutdownGroup)
        var configuration = ServiceGroupConfiguration(
            services: [signals] + services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }, logger: logger)
        configuration.maximumCancellationDuration = nil
        let group = ServiceGroup(configuration: configuration)
        try await group.run()
    }

    /// The agent on `source`'s fixes, its file watcher and the source itself, in the order they start.
    private func agentServices<Source: FixSource>(
        source: Source, channel: AgentChannel, config: Config, keeper: StateKeeper, sinks: [any EventSink]
    ) -> [any Service] {
        let logger = Diagnostics.logger
        let taskLists = TaskListService(
            servers: ServerTaskLists(cache: keeper.taskListCache, loop: .main), lists: config.serverTaskLists.map(\.settings),
            channel: channel, loop: .main, logger: logger)
        var serviceManager: ServiceManager?
        do {
            serviceManager = try ServiceManager(environment: ProcessInfo.processInfo.environment)
        } catch {
            logger.warning("cannot open a socket to tell systemd how the agent stands: \(error)")
        }
        return [
            AlarmAgent(
                source: source, channel: channel, loop: .main, config: config, state: keeper, sinks: sinks, taskLists: taskLists,
                logger: logger, serviceManager: serviceManager, ownTracks: config.section(MQTTSetup.self)?.ownTracks),
            WatcherService(
                configPath: config.path, statePath: keeper.isPersisting ? stateOptions.path : nil,
                taskFolders: config.taskListSettings.compactMap(\.folder), channel: channel, loop: .main, logger: logger),
            taskLists,
            SourceService(source: source, channel: channel),
        ]
    }
}

extension LocationSource: ExpressibleByArgument {}
