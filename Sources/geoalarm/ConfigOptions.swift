import ArgumentParser
import FoundationEssentials
import GeoAlarmAgent
import GeoAlarmConfig

/// The `--config` option shared by every command that reads reminders.
struct ConfigOptions: ParsableArguments {
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The reminders file.",
            discussion: "Default: $XDG_CONFIG_HOME/geoalarm/config.toml, ~/.config/geoalarm/config.toml, "
                + "then /etc/geoalarm/config.toml.",
            valueName: "file"))
    var config: String?

    /// The path of the file to read, explained on stderr when there is none.
    func resolvedPath() throws -> String {
        do {
            return try resolvedPathQuietly()
        } catch {
            Diagnostics.error("\(error)")
            throw ExitCode.failure
        }
    }

    /// The path of the config file to read; throws ``ConfigNotFound`` (and says nothing) when there is none.
    func resolvedPathQuietly() throws -> String {
        try ConfigLocation.resolve(
            explicit: config, environment: ProcessInfo.processInfo.environment,
            exists: { FileManager.default.fileExists(atPath: $0) })
    }

    /// Loads and validates the config, printing every problem and failing when there are any.
    /// Rows skipped in collection files and tasks passed over in task lists are warnings (every
    /// one with `everyProblem`), followed by what each collection and list loaded.
    func load(everyProblem: Bool = false) throws -> Config {
        let path = try resolvedPath()
        do {
            let config = try ConfigLoader.load(path: path)
            AlarmAgent.logSources(of: config, to: Diagnostics.logger, everyProblem: everyProblem)
            return config
        } catch {
            Diagnostics.report(error)
            throw ExitCode.failure
        }
    }
}
