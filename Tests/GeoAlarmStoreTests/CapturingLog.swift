import Logging
import Synchronization

/// Log messages, kept for the assertions.
final class CapturingLog: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    var logLevel: Logger.Level = .debug
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { lines.withLock { $0.append("\(event.level): \(event.message)") } }
    var messages: [String] { lines.withLock { $0 } }
    var logger: Logger { Logger(label: "test") { _ in self } }
}
