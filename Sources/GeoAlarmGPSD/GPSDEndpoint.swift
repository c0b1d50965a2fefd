import GeoAlarmCore
import GeoAlarmSystem

/// Where gpsd listens.
public struct GPSDEndpoint: Sendable, Equatable, CustomStringConvertible {
    public static let defaultPort = 2947

    public var host: String
    public var port: Int

    public init(host: String = "localhost", port: Int = defaultPort) {
        self.host = host
        self.port = port
    }

    /// Reads `HOST`, `HOST:PORT`, `[IPv6]:PORT` or a bare IPv6 address; nil when the port is not 1-65535.
    public init?(parsing text: String) {
        guard let address = try? NetworkAddress(authority: Substring(text)), !address.host.isEmpty,
              address.portText == nil || address.port != nil
        else { return nil }
        self.init(host: String(address.host), port: address.port ?? Self.defaultPort)
    }

    /// The endpoint in force: `--gpsd`, else `[gpsd]` in the config, else `GPSD_HOST`/`GPSD_PORT`, else localhost:2947.
    public static func resolve(
        option: GPSDEndpoint?, config: GPSDEndpoint?, environment: [String: String]
    ) -> GPSDEndpoint {
        if let option { return option }
        if let config { return config }
        var endpoint = GPSDEndpoint()
        if let host = environment["GPSD_HOST"], !host.isEmpty { endpoint.host = host }
        if let port = environment["GPSD_PORT"].flatMap(NetworkAddress.portNumber) { endpoint.port = port }
        return endpoint
    }

    public var description: String {
        "\(IPAddress.shown(host)):\(port)"
    }
}
