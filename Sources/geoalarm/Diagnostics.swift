import Foundation
import GeoAlarmConfig
import Logging

/// Messages for the user on stderr: config problems verbatim, everything else through swift-log.
enum Diagnostics {
    static let logger: Logger = {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = ProcessInfo.processInfo.environment["GEOALARM_LOG_LEVEL"]
                .flatMap(Logger.Level.init(rawValue:)) ?? .info
            return handler
        }
        return Logger(label: "geoalarm")
    }()

    /// Prints each config problem on its own line, as `geoalarm check` does.
    static func report(_ error: ConfigError) {
        FileHandle.standardError.write(Data((error.description + "\n").utf8))
    }

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("geoalarm: error: \(message)\n".utf8))
    }
}
