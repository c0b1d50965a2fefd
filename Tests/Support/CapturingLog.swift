import Logging
import Synchronization

/// Log messages, kept for the assertions.
public final class CapturingLog: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    public var logLevel: Logger.Level = .debug
    public var metadata: Logger.Metadata = [:]

    public init() {}

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    public func log(event: LogEvent) { lines.withLock { $0.append("\(event.level): \(event.message)") } }
    /// Every message so far, as "level: message".
    public var messages: [String] { lines.withLock { $0 } }
    /// A logger writing here.
    public var logger: Logger { Logger(label: "test") { _ in self } }
}
