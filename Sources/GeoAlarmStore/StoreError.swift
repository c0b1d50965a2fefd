import GeoAlarmSystem

/// The state file cannot be used, why, and what to do about it: advice that fits the cause, so
/// that nobody is told to move away a file that holds their history and that a newer geoalarm,
/// a freed disk or a fixed permission would make usable again.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var advice: Advice

    /// What would make the file usable.
    public enum Advice: Sendable, Equatable {
        /// A newer geoalarm wrote it: upgrade (keeping the file).
        case upgrade
        /// The user may not open or write it.
        case permissions
        /// Its disk is full.
        case space
        /// Another program holds it locked.
        case busy
        /// It is not an SQLite file, or a damaged one: only then may it be moved away.
        case damaged
        /// Anything else.
        case other

        /// What to do, in words.
        public var text: String {
            switch self {
            case .upgrade: "upgrade geoalarm to use it, and keep the file: it holds your history"
            case .permissions: "fix its permissions, or name another with --state"
            case .space: "free some space on its disk; geoalarm writes it again by itself"
            case .busy: "another program holds it locked; try again when it is done"
            case .damaged: "move it away and keep it for its history: geoalarm starts a new one; or name another with --state"
            case .other: "name another with --state"
            }
        }
    }

    public init(path: String, reason: String, advice: Advice = .other) {
        self.path = path
        self.reason = reason
        self.advice = advice
    }

    /// What SQLite said, with the advice its result code calls for.
    init(path: String, _ error: SQLiteError) {
        self.init(path: path, reason: error.message, advice: Self.advice(forSQLiteCode: error.code))
    }

    /// A file with schema changes this build does not know: a newer geoalarm made them.
    init(newerSchema unknown: [String], path: String) {
        self.init(path: path, reason: "was written by a newer geoalarm (\(unknown.joined(separator: ", ")))", advice: .upgrade)
    }

    public var description: String { "state file \(path): \(reason) (\(advice.text))" }
}
