/// systemd's journal as a service's standard output or error: `JOURNAL_STREAM` names the
/// device and inode of the stream systemd connected (sd-daemon(3)), and a line written to it
/// may begin with its syslog priority (`<4>` for a warning), which the journal takes as the
/// line's priority rather than the unit's default.
public enum JournalStream {
    /// A line's syslog priority.
    public enum Priority: Int, Sendable {
        case critical = 2, error, warning, notice, info, debug

        /// What begins a line of this priority: `<4>` for a warning.
        public var prefix: String { "<\(rawValue)>" }
    }

    /// Whether `descriptor` is the stream `environment`'s `JOURNAL_STREAM` names (a descriptor
    /// redirected elsewhere, as `2>file` in the unit, is not).
    public static func isConnected(_ descriptor: Int32, environment: [String: String]) -> Bool {
        guard let named = environment["JOURNAL_STREAM"] else { return false }
        let parts = named.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]),
              let info = try? System.fstat(descriptor)
        else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
