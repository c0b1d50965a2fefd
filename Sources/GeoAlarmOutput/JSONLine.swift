import FoundationEssentials
import GeoAlarmCore
import GeoAlarmEncoding

/// One JSON object printed on a line of its own, members in the order added (`list --json`,
/// `status --json`): a ``JSONObject`` with numbers rounded as these commands show them.
public struct JSONLine {
    private var object = JSONObject()

    public init() {}

    public mutating func add(_ key: String, _ text: String?) {
        object.add(key, text)
    }

    /// Degrees (lat, lon), to 1e-8.
    public mutating func add(_ key: String, degrees: Double) {
        // To 1e-8 degrees (a millimetre): what was written stays, an area's computed middle loses its float noise.
        object.add(key, number: (degrees * 1e8).rounded() / 1e8)
    }

    /// Metres and counts, to a tenth.
    public mutating func add(_ key: String, number: Double?) {
        object.add(key, raw: number.map { JSONText.number(($0 * 10).rounded() / 10) } ?? "null")
    }

    public mutating func add(_ key: String, _ flag: Bool) {
        object.add(key, flag)
    }

    /// A local date or date-time as ISO 8601 without a zone: `2026-12-24T16:00`.
    public mutating func add(_ key: String, localDate: LocalDate?) {
        add(key, localDate.map { $0.description.replacing(" ", with: "T") })
    }

    public mutating func add(_ key: String, time: Date?) {
        add(key, time.map(Timestamp.iso8601))
    }

    public var text: String { object.text }
}
