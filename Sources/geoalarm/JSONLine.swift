import Foundation
import GeoAlarmCore
import GeoAlarmOutput

/// One JSON object printed on a line of its own, members in the order added (`list --json`,
/// `status --json`).
struct JSONLine {
    private var members: [String] = []

    mutating func add(_ key: String, _ text: String?) {
        members.append(JSONText.quote(key) + ":" + (text.map(JSONText.quote) ?? "null"))
    }

    /// Degrees (lat, lon), to 1e-8.
    mutating func add(_ key: String, degrees: Double) {
        // To 1e-8 degrees (a millimetre): what was written stays, an area's computed middle loses its float noise.
        members.append(JSONText.quote(key) + ":" + JSONText.number((degrees * 1e8).rounded() / 1e8))
    }

    /// Metres and counts, to a tenth.
    mutating func add(_ key: String, number: Double?) {
        members.append(JSONText.quote(key) + ":" + (number.map { JSONText.number(($0 * 10).rounded() / 10) } ?? "null"))
    }

    mutating func add(_ key: String, _ flag: Bool) {
        members.append(JSONText.quote(key) + ":" + (flag ? "true" : "false"))
    }

    /// A local date or date-time as ISO 8601 without a zone: `2026-12-24T16:00`.
    mutating func add(_ key: String, localDate: LocalDate) {
        add(key, localDate.description.replacingOccurrences(of: " ", with: "T"))
    }

    mutating func add(_ key: String, time: Date?) {
        add(key, time.map(Timestamp.iso8601))
    }

    var text: String { "{" + members.joined(separator: ",") + "}" }
}
