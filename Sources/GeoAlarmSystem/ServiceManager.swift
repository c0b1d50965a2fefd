/// systemd's notification socket (`$NOTIFY_SOCKET`, sd_notify(3)'s protocol spoken without
/// libsystemd): how a `Type=notify` service says it is ready, what it is doing (the `Status:`
/// line of `systemctl status`) and that it stops.
public final class ServiceManager: Sendable {
    private let descriptor: Int32
    /// Where systemd listens: a path, or "@name" in the abstract namespace.
    public let socketPath: String

    /// The socket named by NOTIFY_SOCKET in `environment`; nil when there is none (the agent
    /// was not started by systemd as a notify service).
    public init?(environment: [String: String]) throws(SystemError) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        socketPath = path
        descriptor = try System.localDatagramSocket()
    }

    deinit { System.close(descriptor) }

    /// Sends `fields` ("READY=1", "STATUS=..."), one a line, in one message.
    public func notify(_ fields: [String]) throws(SystemError) {
        try System.sendDatagram(descriptor, Array(fields.joined(separator: "\n").utf8), toLocalPath: socketPath)
    }

    /// "RELOADING=1" with the moment it began (`MONOTONIC_USEC`, as `Type=notify-reload` wants
    /// it): the unit shows "reloading" until the next "READY=1".
    public static func reloading() -> [String] {
        ["RELOADING=1", "MONOTONIC_USEC=\(System.monotonicMicroseconds())"]
    }

    /// "STATUS=text", its line breaks made spaces: a line break would start another field.
    public static func status(_ text: String) -> String {
        "STATUS=" + String(text.map { $0.isNewline ? " " : $0 })
    }
}
