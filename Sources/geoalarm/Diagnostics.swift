import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmSystem
import Logging

/// Messages for the user on stderr: config problems verbatim, everything else through swift-log.
enum Diagnostics {
    static let logger: Logger = {
        LoggingSystem.bootstrap { _ in
            var handler = StderrLogHandler()
            handler.logLevel = ProcessInfo.processInfo.environment["GEOALARM_LOG_LEVEL"]
                .flatMap(Logger.Level.init(rawValue:)) ?? .info
            return handler
        }
        return Logger(label: "geoalarm")
    }()

    /// Prints each config problem on its own line, as `geoalarm check` does.
    static func report(_ error: ConfigError) {
        // Nothing more can be said where stderr cannot be written.
        try? System.writeAll(2, Array((error.description + "\n").utf8))
    }

    /// An error of the command, a line of the log per line of `message` (an edit refused with
    /// the config's problems, one a line), each escaped as every log line is.
    static func error(_ message: String) {
        for line in message.split(separator: "\n", omittingEmptySubsequences: false) { logger.error("\(line)") }
    }
}

/// `geoalarm: warning: message`, one line per message: journald and terminals add their own timestamps.
struct StderrLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// A message is one line, its control characters escaped, so that nothing it quotes (a
    /// title, a file's text) can forge a log line or a colour.
    func log(event: LogEvent) {
        var line = "geoalarm: \(event.level): \(DisplayText.escaped("\(event.message)"))"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty {
            line += " (" + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") + ")"
        }
        try? System.writeAll(2, Array((line + "\n").utf8))
    }
}
