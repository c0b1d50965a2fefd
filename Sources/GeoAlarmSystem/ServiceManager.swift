/// systemd's notification socket (`$NOTIFY_SOCKET`, sd_notify(3)'s protocol spoken without
/// libsystemd): how a `Type=notify` service says it is ready, what it is doing (the `Status:`
/// line of `systemctl status`) and that it stops.
public final class ServiceManager: Sendable {
    private let descriptor: Int32
    /// Where systemd listens: a path, or "@name" in the abstract namespace.
    public let socketPath: String
    /// The unit the agent runs as (from its control group); nil when that does not say.
    public let unit: RunningUnit?

    /// The socket named by NOTIFY_SOCKET in `environment`; nil when there is none (the agent
    /// was not started by systemd as a notify service).
    public init?(environment: [String: String]) throws(SystemError) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        socketPath = path
        descriptor = try System.localDatagramSocket()
        unit = (try? UserFile.contents(of: "/proc/self/cgroup", limit: 1 << 16)).flatMap { RunningUnit(cgroup: String(decoding: $0, as: UTF8.self)) }
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

/// The systemd unit a process runs as, named by its control group: a system unit
/// (`0::/system.slice/geoalarm-headless.service`) or one of a user's service manager
/// (`.../user@1000.service/app.slice/geoalarm.service`).
public struct RunningUnit: Sendable, Equatable {
    /// The unit's name, `geoalarm.service`.
    public var name: String
    /// Whether a user's service manager runs it (`systemctl --user`).
    public var isUsers: Bool

    public init(name: String, isUsers: Bool) {
        self.name = name
        self.isUsers = isUsers
    }

    /// From `/proc/self/cgroup`'s text: the innermost service of the unified hierarchy's path
    /// (`0::`), or of systemd's own one where cgroups v1 are mounted (`name=systemd`); nil
    /// outside a service (a session's scope, no systemd).
    public init?(cgroup text: String) {
        let hierarchies = text.split(separator: "\n").compactMap { line -> (name: Substring, path: Substring)? in
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            return fields.count == 3 ? (fields[1], fields[2]) : nil
        }
        guard let path = (hierarchies.first { $0.name.isEmpty } ?? hierarchies.first { $0.name == "name=systemd" })?.path else { return nil }
        let levels = path.split(separator: "/")
        guard let last = levels.lastIndex(where: { $0.hasSuffix(".service") }) else { return nil }
        self.init(name: String(levels[last]), isUsers: levels[..<last].contains { $0.hasPrefix("user@") && $0.hasSuffix(".service") })
    }

    /// What restarts it: `systemctl --user restart geoalarm.service`.
    public var restartCommand: String { "systemctl \(isUsers ? "--user " : "")restart \(name)" }
}
