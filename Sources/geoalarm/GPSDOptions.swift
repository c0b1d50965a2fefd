import ArgumentParser
import GeoAlarmConfig
import GeoAlarmGPSD

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
}
