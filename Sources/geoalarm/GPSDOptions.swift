import ArgumentParser
import FoundationEssentials
import GeoAlarmAgent
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmSystem

extension GPSDEndpoint: ExpressibleByArgument {
    /// Reads `HOST`, `HOST:PORT` or `[IPv6]:PORT`.
    public init?(argument: String) {
        self.init(parsing: argument)
    }
}

/// `--gpsd` and `--device`: where `run`, `add --here` and `doctor` find gpsd, the same way.
struct GPSDOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Where gpsd listens: HOST, HOST:PORT or [IPv6]:PORT (default: [gpsd] in the config, "
            + "else GPSD_HOST/GPSD_PORT, else localhost:2947).",
        valueName: "host[:port]"))
    var gpsd: GPSDEndpoint?

    @Option(help: ArgumentHelp("Use only this receiver (its gpsd device path).", valueName: "path"))
    var device: String?

    /// The endpoint in force: `--gpsd`, else `[gpsd]` in `config`, else the environment, else localhost:2947.
    func endpoint(config: Config?, environment: [String: String]) -> GPSDEndpoint {
        let fromConfig = config.flatMap { config in
            (config.gpsdHost != nil || config.gpsdPort != nil)
                ? GPSDEndpoint(host: config.gpsdHost ?? "localhost", port: config.gpsdPort ?? GPSDEndpoint.defaultPort) : nil
        }
        return GPSDEndpoint.resolve(option: gpsd, config: fromConfig, environment: environment)
    }

    /// Reads gpsd (found as ``endpoint(config:environment:)`` finds it) for up to `seconds`,
    /// until a fix the engine would take with `config`'s settings (`max_error`, else the
    /// default): with `dated`, also only once the receiver knows the date.
    func look(config: Config?, seconds: Double, dated: Bool) async -> (endpoint: GPSDEndpoint, sample: FixSample) {
        let endpoint = endpoint(config: config, environment: ProcessInfo.processInfo.environment)
        let settings = config?.settings ?? EngineSettings()
        let source = GPSDSource(endpoint: endpoint, device: device, loop: .main)
        let sample = await FixSample.take(from: source, patience: .milliseconds(Int64(seconds * 1000)), loop: .main) { fix in
            (!dated || fix.time != nil) && settings.admitsError(of: fix)
        }
        return (endpoint, sample)
    }
}
