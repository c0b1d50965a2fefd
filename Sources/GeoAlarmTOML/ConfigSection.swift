/// A top-level table of the config file that a module other than the config's reads: the
/// config's reader hands it the table and itself (so that its problems are reported with the
/// same rules, in the same list), and keeps what it gives without knowing its type. The MQTT
/// module's `[mqtt]` is one, so that the reminders' reader links no broker client.
public protocol ConfigSection: Sendable {
    /// Its table's name at the top level of the file.
    static var tableName: String { get }
    /// The table `table` of the config file `file`: nil (every problem reported through `reader`)
    /// when it cannot be used.
    static func read(_ table: TOMLTable, file: String, reader: inout some TableReading) -> Self?
    /// The keys whose values differ in `other` (a reloaded config's), as the file names them.
    func changedKeys(in other: Self) -> [String]
    /// Whether it sends credentials to a server it names: whoever can rewrite the file could
    /// point them at a server of theirs, so such a file must be the user's alone.
    var sendsCredentials: Bool { get }
}

extension ConfigSection {
    /// ``changedKeys(in:)`` for a section of unknown type: every key (`*`) when it is not one of
    /// these.
    public func changedKeys(inAny other: any ConfigSection) -> [String] {
        guard let other = other as? Self else { return ["*"] }
        return changedKeys(in: other)
    }
}
