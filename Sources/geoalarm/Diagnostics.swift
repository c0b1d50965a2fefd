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
            handler.journal = journalOnStderr
            handler.logLevel = ProcessInfo.processInfo.environment["GEOALARM_LOG_LEVEL"]
                .flatMap(Logger.Level.init(rawValue:)) ?? .info
            return handler
        }
        return Logger(label: "geoalarm")
    }()

    /// Whether standard error is systemd's journal, whose lines carry their priority.
    static let journalOnStderr = JournalStream.isConnected(2, environment: ProcessInfo.processInfo.environment)
    /// Whether standard output is systemd's journal, where event lines are notices.
    static let journalOnStdout = JournalStream.isConnected(1, environment: ProcessInfo.processInfo.environment)

    /// Prints each config problem on its own line, as `geoalarm check` does (in the journal,
    /// each an error).
    static func report(_ error: ConfigError) {
        let lines = error.description.split(separator: "\n", omittingEmptySubsequences: false)
        let text = lines.map { (journalOnStderr ? JournalStream.Priority.error.prefix : "") + $0 + "\n" }.joined()
        // Nothing more can be said where stderr cannot be written.
        try? System.writeAll(2, Array(text.utf8))
    }

    /// An error of the command, a line of the log per line of `message` (an edit refused with
    /// the config's problems, one a line), each escaped as every log line is.
    static func error(_ message: String) {
        for line in message.split(separator: "\n", omittingEmptySubsequences: false) { logger.error("\(line)") }
    }
}

/// `geoalarm: warning: message`, one line per message: journald and terminals add their own
/// timestamps. In the journal, `<4>warning: message`: the priority for it to file the line
/// under, and no name (it keeps the unit's).
struct StderrLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    /// Whether standard error is systemd's journal.
    var journal = false

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// A message is one line, its control characters escaped, so that nothing it quotes (a
    /// title, a file's text) can forge a log line or a colour.
    func log(event: LogEvent) {
        let head = journal ? Self.priority(event.level).prefix : "geoalarm: "
        var line = "\(head)\(event.level): \(DisplayText.escaped("\(event.message)"))"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty {
            line += " (" + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") + ")"
        }
        try? System.writeAll(2, Array((line + "\n").utf8))
    }

    /// The journal's priority for a level.
    static func priority(_ level: Logger.Level) -> JournalStream.Priority {
        switch level {
        case .trace, .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        case .critical: .critical
        }
    }
}
