import ArgumentParser
import FoundationEssentials
import GeoAlarmAgent
import GeoAlarmCalDAV
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGeoClue
import GeoAlarmGPSD
import GeoAlarmHooks
import GeoAlarmMQTT
import GeoAlarmNotify
import GeoAlarmSystem
import GeoAlarmTasks
import Glibc

/// `geoalarm doctor`: checks everything `run` needs, one line per check with what to do.
struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: """
            Check the setup: config, gpsd and the receiver's fix, GeoClue, pop-ups, MQTT broker, state file, hooks, exec \
            programs, systemd unit.
            """,
        discussion: """
            One line per check: ok; note (not a fault, with a step worth taking); skip (does not apply \
            here); FAIL, with what to do. The fix source is the one `run` takes (--source, else [location] \
            source, else auto: gpsd, else GeoClue), and the source line says which would feed the agent, \
            and why; gpsd is found as `run` finds it. Exits 0 when nothing failed, 1 otherwise.
            """)

    @OptionGroup var options: ConfigOptions

    @OptionGroup var gpsdOptions: GPSDOptions

    @Option(help: ArgumentHelp("The fix source to check, as `run --source` takes it (auto, gpsd, geoclue, owntracks).", valueName: "source"))
    var source: LocationSource?

    @Flag(help: "Skip the notification server, as `run --headless` shows no pop-ups.")
    var headless = false

    @Option(help: ArgumentHelp("How long to wait for a fix from gpsd (and from GeoClue).", valueName: "seconds"))
    var wait: Double = 5

    @OptionGroup var stateOptions: StateOptions

    func validate() throws {
        guard wait.isFinite, (0...600).contains(wait) else { throw ValidationError("--wait \(wait): give 0 to 600 seconds.") }
    }

    func run() async throws {
        var failed = false
        func report(_ finding: Finding) {
            Console.output.write(finding.line)
            if finding.verdict == .fail { failed = true }
        }
        let environment = ProcessInfo.processInfo.environment
        let (config, fetched) = await checkConfig(report)
        for list in config?.taskLists ?? [] { report(checkTaskList(list, outcome: fetched?.outcomes[list.settings.name])) }
        await checkSources(config: config, report)
        report(checkNotifications(config: config, environment: environment))
        report(await checkMQTT(config: config))
        report(stateOptions.inspect())
        report(checkHooks(environment: environment))
        report(checkCommands(config: config, environment: environment))
        report(checkSystemd(environment: environment))
        try Console.check(Console.output, failed: failed)
        if failed { throw ExitCode.failure }
    }

    /// The config, loaded as `check` loads it (its task lists on servers fetched); nil when there
    /// is none or it is invalid.
    private func checkConfig(_ report: (Finding) -> Void) async -> (Config?, FetchedTaskLists?) {
        let path: String
        do {
            path = try options.resolvedPathQuietly()
        } catch {
            report(Finding(.fail, "config", "\(error)", advice: "make one with geoalarm add --title TITLE --here (or --at LAT,LON)"))
            return (nil, nil)
        }
        let check = "geoalarm check --config \(path)"
        do {
            var config = try ConfigLoader.read(path: path, sections: ConfigOptions.sections)
            let fetched = await FetchedTaskLists.fetch(config.serverTaskLists.map(\.settings), statePath: stateOptions.path, quietly: true)
            config.loadTaskLists(cache: fetched.servers.cache)
            if let first = config.warnings.first {
                let count = config.warnings.count
                let found = count > 1 ? "\(count) warnings; the first: \(first)" : "a warning: \(first)"
                report(Finding(.note, "config", "\(path): \(config.summary); \(found)",
                               advice: count > 1 ? "\(check) lists them all" : "mend it if it is not meant, then \(check)"))
            } else {
                report(Finding(.ok, "config", "\(path): \(config.summary)"))
            }
            return (config, fetched)
        } catch {
            let first = error.diagnostics.first?.description ?? "unreadable"
            let count = error.diagnostics.count
            let found = count > 1 ? "\(count) problems; the first: \(first)" : "1 problem: \(first)"
            report(Finding(.fail, "config", found, advice: count > 1 ? "\(check) lists them all" : "fix it, then \(check)"))
            return (nil, nil)
        }
    }

    /// A task list: its folder readable, or its server reachable, the credentials accepted and
    /// the collection found; how many reminders, and the tasks passed over; credentials that
    /// cross the network unencrypted.
    private func checkTaskList(_ list: TaskListLoad, outcome: ServerTaskLists.Outcome?) -> Finding {
        let name = "tasklist \(list.settings.name)"
        if let problem = outcome?.problem {
            let copy = list.isFetched
                ? "; its last copy serves " + DisplayText.counted(list.reminders.count, "reminder") : "; there is no copy of it yet"
            return Finding(.fail, name, "\(list.settings.location): \(problem)\(copy)", advice: Self.advice(for: problem))
        }
        if let failure = list.failure {
            return Finding(.fail, name, "\(list.settings.location): \(failure)",
                           advice: "make [[tasklist]] vdir the folder vdirsyncer syncs the list into (its storage's path plus the collection)")
        }
        let server = outcome == nil ? "" : "the server answers, the credentials are accepted, the collection is found; "
        let counts = """
            \(list.settings.location): \(server)\(DisplayText.counted(list.reminders.count, "reminder")) and \
            \(DisplayText.counted(list.alarms.count, "time alarm")) from \(DisplayText.counted(list.objectCount, "task"))
            """
        if let first = list.problems.first {
            return Finding(.note, name, "\(counts); \(DisplayText.counted(list.problems.count, "problem")), the first: \(first)",
                           advice: "geoalarm check lists them all")
        }
        if case .server(let server) = list.settings.source, server.sendsCredentialsUnencrypted {
            return Finding(.note, name, "\(counts); its credentials cross the network unencrypted (http)",
                           advice: "give url as https:// (a server without TLS of its own can have it from a proxy before it)")
        }
        return Finding(.ok, name, counts)
    }

    /// What to do when a task list's server cannot be used.
    private static func advice(for trouble: ServerTaskLists.Trouble) -> String {
        switch trouble {
        case .password: "make password_file a file of yours (chmod 600) holding the password, or fix password_command"
        case .server(.refused): "check username and the password (an app password where the account has two-factor login)"
        case .server(.notACollection): "give url the address of the task list itself, as found"
        case .server(.refusedElsewhere): "give url the address it is redirected to, if the list is there now"
        case .server(.unreachable): "check the address, the network, and cafile for a server whose certificate a private authority made"
        case .server: "check the address: it must name a CalDAV collection of tasks"
        }
    }

    /// The fix source `run` would take: gpsd, GeoClue, or (auto) gpsd and then GeoClue, with a
    /// line saying which would feed the agent. Under auto, what either lacks is a note while the
    /// other gives fixes.
    private func checkSources(config: Config?, _ report: (Finding) -> Void) async {
        let source = source ?? config?.locationSource ?? .auto
        switch source {
        case .gpsd, .owntracks:
            _ = await checkGPSD(config: config, report)
        case .geoclue:
            _ = await checkGeoClue(config: config, report)
        case .auto:
            var found: [Finding] = []
            let gpsd = await checkGPSD(config: config) { found.append($0) }
            let geoclue = gpsd ? nil : await checkGeoClue(config: config) { found.append($0) }
            let either = gpsd || geoclue == true
            for var finding in found {
                if either, finding.verdict == .fail { finding.verdict = .note }
                report(finding)
            }
            if gpsd {
                report(Finding(.ok, "source", "auto: gpsd gives fixes, so it feeds the agent (GeoClue only while gpsd gives none)"))
                report(Finding(.skip, "geoclue", "gpsd feeds the agent"))
            } else if geoclue == true {
                report(Finding(.ok, "source", "auto: gpsd gives no fix, so GeoClue feeds the agent, until gpsd gives fixes again"))
            } else {
                report(Finding(.fail, "source", "auto: neither gpsd nor GeoClue gives a fix",
                               advice: "mend one of them as the lines above say"))
            }
        }
    }

    /// GeoClue on the system bus giving geoalarm a location; whether it did. Names the reminders
    /// smaller than its accuracy.
    private func checkGeoClue(config: Config?, _ report: (Finding) -> Void) async -> Bool {
        let settings = config?.settings ?? EngineSettings()
        let sample = await FixSample.take(from: GeoClueSource(), patience: .milliseconds(Int64(wait * 1000)), loop: .main) { fix in
            settings.admitsError(of: fix)
        }
        if let reason = sample.unreachable {
            report(Finding(.fail, "geoclue", reason,
                           advice: "install and allow GeoClue (geoclue-2.0), or use gpsd with a receiver (--source gpsd)"))
            return false
        }
        guard let position = sample.accepted ?? sample.latestPosition else {
            report(Finding(.fail, "geoclue", "GeoClue gave geoalarm no location in \(Span.describe(wait))",
                           advice: "check that GeoClue has a source (Wi-Fi on, or the phone's GPS), or give --wait more time"))
            return false
        }
        let error = position.horizontalError.map { "±\(Metres.rounded($0)) m" } ?? "accuracy not given (GeoClue 2.6 gives none for GPS)"
        guard sample.accepted != nil else {
            report(Finding(.fail, "geoclue", "a location at \(position.coordinate), \(error): worse than max_error, so ignored",
                           advice: "wait for a better one (GPS rather than Wi-Fi), or raise max_error in [defaults]"))
            return false
        }
        report(Finding(.ok, "geoclue", "gives a location at \(position.coordinate), \(error)"))
        if let accuracy = position.horizontalError, let small = config?.remindersSmaller(than: accuracy), !small.isEmpty {
            let shown = DisplayText.firstNamed(small)
            report(Finding(.note, "accuracy", "\(DisplayText.counted(small.count, "reminder")) smaller than GeoClue's ±\(Metres.rounded(accuracy)) m: \(shown)",
                           advice: "their sides may be misjudged until a finer location comes (a GPS receiver's)"))
        }
        return true
    }

    /// gpsd reachable, then a receiver with a usable fix; whether it gave one.
    private func checkGPSD(config: Config?, _ report: (Finding) -> Void) async -> Bool {
        let maxError = (config?.settings ?? EngineSettings()).maxError
        // The agent uses a fix only once the receiver knows the date.
        let (endpoint, sample) = await gpsdOptions.look(config: config, seconds: wait, dated: true)
        if let reason = sample.unreachable {
            report(Finding(.fail, "gpsd", "\(endpoint): \(reason)",
                           advice: "start gpsd (sudo systemctl start gpsd.socket), or give --gpsd HOST:PORT or [gpsd] in the config"))
            report(Finding(.skip, "fix", "gpsd cannot be asked"))
            return false
        }
        report(Finding(.ok, "gpsd", "\(endpoint) answers"))
        let receiver = gpsdOptions.device.map { "receiver \($0)" } ?? "a receiver"
        guard let latest = sample.latest else {
            report(Finding(.fail, "fix", "no report from \(receiver) in \(Span.describe(wait))",
                           advice: "plug the receiver in and check that gpsd knows it (gpspipe -w shows its DEVICES)"))
            return false
        }
        guard let position = sample.accepted ?? sample.latestPosition else {
            report(Finding(.fail, "fix", "\(receiver) reports no position (mode \(latest.mode.rawValue))",
                           advice: "give the antenna a view of the sky and wait a few minutes for a first fix"))
            return false
        }
        let mode = position.mode == .threeD ? "3D" : "2D"
        let error = position.horizontalError.map { "±\(Metres.rounded($0)) m" } ?? "error unknown"
        guard let time = position.time else {
            report(Finding(.fail, "fix", "\(mode) fix at \(position.coordinate), \(error), but no date yet: the agent waits for one",
                           advice: "wait for the receiver to learn the date (an RMC or ZDA sentence), or give --wait more time"))
            return false
        }
        let age = Date().timeIntervalSince(time)
        let detail = "\(mode) fix at \(position.coordinate), \(error), \(Span.describe(age)) old"
        if sample.accepted == nil, let maxError {
            report(Finding(.fail, "fix", "\(detail): worse than max_error (\(Metres.rounded(maxError)) m), so ignored",
                           advice: "wait for a better fix (open sky), or raise max_error in [defaults]"))
        } else if age > 60 {
            report(Finding(.note, "fix", "\(detail): the receiver's time is behind this machine's clock",
                           advice: "if this is no recording played through gpsd, check the receiver and the system clock"))
        } else {
            report(Finding(.ok, "fix", detail))
        }
        return sample.accepted != nil
    }

    /// The notification server, unless pop-ups are off.
    private func checkNotifications(config: Config?, environment: [String: String]) -> Finding {
        if headless { return Finding(.skip, "notifications", "--headless: no pop-ups") }
        if config?.notify == false { return Finding(.skip, "notifications", "pop-ups are off ([output] notify = false)") }
        let answer = NotificationServer.current()
        if case .failure(let failure) = answer {
            return Finding(
                .fail, "notifications", failure.reason,
                advice: "run headless if no pop-ups are wanted ([output] notify = false or run --headless)")
        }
        guard case .success(let server?) = answer else {
            let bus = environment["DBUS_SESSION_BUS_ADDRESS"].map { "on \($0)" } ?? "(no DBUS_SESSION_BUS_ADDRESS: no session bus)"
            return Finding(.fail, "notifications", "no notification server answers \(bus)",
                           advice: "start one (dunst, or your desktop's), or run headless ([output] notify = false or run --headless)")
        }
        let snooze = config?.snooze ?? Config.defaultSnooze
        let labels = ReminderButton.allCases.map { $0.label(snooze: snooze) }.joined(separator: ", ")
        let buttons = server.showsButtons ? "shows buttons (\(labels))" : "shows no buttons: use geoalarm complete and snooze"
        return Finding(.ok, "notifications", "\(server.name) \(server.version) (\(server.vendor)), \(buttons)")
    }

    /// Seconds the broker of `[mqtt]` has to take a connection.
    static let brokerWait = 5.0

    /// The broker of `[mqtt]`: whether it takes a connection with the config's credentials and
    /// TLS, and whether those credentials cross the network unencrypted.
    private func checkMQTT(config: Config?) async -> Finding {
        guard let config else { return Finding(.skip, "mqtt", "no valid config to read [mqtt] from") }
        guard let settings = config.section(MQTTSetup.self)?.broker else { return Finding(.skip, "mqtt", "no [mqtt] table: no broker is used") }
        let (answers, answered) = AsyncStream.makeStream(of: MQTTClientEvent.self)
        let clientID = settings.clientID(hostName: ProcessInfo.processInfo.shortHostName) + "-doctor"
        let client = MQTTClient(settings: settings, clientID: clientID, loop: .main) { answered.yield($0) }
        client.start()
        // As GPSDSample gives gpsd its patience: the answers end when the time is up.
        let deadline = EventLoop.main.schedule(at: .now + .seconds(Self.brokerWait)) { answered.finish() }
        let answer = await answers.first { if case .acknowledged = $0 { false } else { true } }
        EventLoop.main.cancel(deadline)
        await client.stop()
        let who = settings.username.map { " as \($0)" } ?? ""
        switch answer {
        case .connected?, .received?:
            guard settings.sendsCredentialsUnencrypted else { return Finding(.ok, "mqtt", "\(settings.url) takes the connection\(who)") }
            return Finding(.note, "mqtt", "\(settings.url) takes the connection\(who); the credentials cross the network unencrypted (mqtt://)",
                           advice: "give url as mqtts:// (brokers take TLS on port 8883), with cafile for a private authority")
        case .unavailable(let reason)?:
            // "the broker refused the connection" is the broker's answer; "Connection refused", no broker there.
            let advice = if reason.contains("refused the connection") {
                "check username and password_file in [mqtt], and the broker's access rules"
            } else if settings.usesTLS, !reason.contains("Connection refused") {
                "check that the broker speaks TLS there, that cafile holds the authority that signed its certificate, "
                    + "and that the url names the host the certificate is for"
            } else {
                "start the broker, or correct [mqtt] url (host and port)"
            }
            return Finding(.fail, "mqtt", "\(settings.url)\(who): \(reason)", advice: advice)
        case .acknowledged?, nil:
            return Finding(.fail, "mqtt", "\(settings.url): no answer within \(Int(Self.brokerWait)) s",
                           advice: "check that the host is reachable and a broker listens on that port")
        }
    }

    /// The hooks folder: safe to run from, and what in it runs.
    private func checkHooks(environment: [String: String]) -> Finding {
        guard let folder = ConfigLocation.hooksDirectory(environment: environment) else {
            return Finding(.skip, "hooks", "no home folder, so no hooks folder")
        }
        guard System.exists(folder) else { return Finding(.ok, "hooks", "none (\(folder) does not exist)") }
        if let problem = FileSafety.hooksFolderProblem(folder) { return Finding(.fail, "hooks", problem) }
        let hooks = HookRunner.hooks(in: folder)
        let running = hooks.executable.isEmpty ? "none runs" : "\(hooks.executable.joined(separator: ", ")) run"
        guard hooks.notExecutable.isEmpty else {
            return Finding(.note, "hooks", "\(folder): \(running); \(hooks.notExecutable.joined(separator: ", ")) not executable, so skipped",
                           advice: "chmod +x the ones meant to run")
        }
        return Finding(.ok, "hooks", "\(folder): \(running)")
    }

    /// The programs the config's `exec` keys run: each found as the agent starts it (a path, or
    /// a name on PATH), or named with the reminders that would run it in vain.
    private func checkCommands(config: Config?, environment: [String: String]) -> Finding {
        guard let config else { return Finding(.skip, "exec", "no config to read") }
        var users: [String: [String]] = [:]
        for reminder in config.reminders + config.collections.map(\.template) {
            guard let program = reminder.alert.command.first else { continue }
            users[program, default: []].append(reminder.id)
        }
        guard !users.isEmpty else { return Finding(.skip, "exec", "no reminder runs a command") }
        let searchPath = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let missing = users.keys.sorted().filter { System.programPath($0, searchPath: searchPath) == nil }
        guard missing.isEmpty else {
            let named = missing.map { program in
                let ids = users[program] ?? []
                return "\(DisplayText.escaped(program)) (\(ids.prefix(3).joined(separator: ", "))\(ids.count > 3 ? ", …" : ""))"
            }
            return Finding(.fail, "exec", "not found (a name is looked for on PATH): \(named.joined(separator: "; "))",
                           advice: "install it, or give its full path (command -v NAME); under systemd the agent has the user manager's PATH")
        }
        return Finding(.ok, "exec", "\(DisplayText.counted(users.count, "program")) found: \(users.keys.sorted().joined(separator: ", "))")
    }

    /// The units: installed, enabled, running, where systemd runs.
    private func checkSystemd(environment: [String: String]) -> Finding {
        guard SystemdUnitState.systemdIsRunning else { return Finding(.skip, "systemd", "systemd does not run this machine") }
        var units: [(name: String, user: Bool)] = [("geoalarm-headless.service", false)]
        if geteuid() != 0 { units.insert(("geoalarm.service", true), at: 0) }
        var described: [String] = []
        var installed: [(name: String, user: Bool, state: SystemdUnitState)] = []
        for unit in units {
            let scope = unit.user ? "user" : "system"
            guard let state = SystemdUnitState.query(unit.name, user: unit.user, environment: environment) else {
                described.append("\(unit.name) (\(scope)): systemctl does not answer")
                continue
            }
            guard state.isInstalled else { continue }
            installed.append((unit.name, unit.user, state))
            described.append("\(unit.name) (\(scope)): \(state.isEnabled ? "enabled" : "not enabled"), \(state.activeState)")
        }
        if let broken = installed.first(where: { $0.state.hasFailed }) {
            return Finding(.fail, "systemd", described.joined(separator: "; "),
                           advice: "see why: journalctl \(broken.user ? "--user " : "")-u \(broken.name)")
        }
        if installed.isEmpty {
            return Finding(.note, "systemd", "no geoalarm unit installed" + (described.isEmpty ? "" : " (\(described.joined(separator: "; ")))"),
                           advice: "install the package (or make install) to run geoalarm with your session")
        }
        if !installed.contains(where: { $0.state.isRunning }) {
            let first = installed[0]
            return Finding(.note, "systemd", described.joined(separator: "; "),
                           advice: "systemctl \(first.user ? "--user " : "")enable --now \(first.name)")
        }
        return Finding(.ok, "systemd", described.joined(separator: "; "))
    }
}
