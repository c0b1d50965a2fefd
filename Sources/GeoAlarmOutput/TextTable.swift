import GeoAlarmCore

/// Rows of cells as aligned columns, two spaces apart, without trailing spaces.
public enum TextTable {
    /// Every cell is shown with its control characters escaped (titles come from the user).
    public static func lines(_ rows: [[String]]) -> [String] {
        let rows = rows.map { $0.map(DisplayText.escaped) }
        guard let header = rows.first else { return [] }
        let widths = (0..<header.count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            let padded = zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }
            let line = padded.joined(separator: "  ")
            return String(line[..<(line.lastIndex(where: { $0 != " " }).map { line.index(after: $0) } ?? line.startIndex)])
        }
    }
}
