import GeoAlarmCore

/// Rows of cells as aligned columns, two spaces apart, without trailing spaces.
public enum TextTable {
    /// Every cell is shown with its control characters escaped (titles come from the user), and
    /// measured in the columns a terminal gives it (a CJK title or an emoji takes two a character).
    public static func lines(_ rows: [[String]]) -> [String] {
        let rows = rows.map { $0.map(DisplayText.escaped) }
        guard let header = rows.first else { return [] }
        let columns = rows.map { $0.map(DisplayText.columns) }
        let widths = (0..<header.count).map { column in columns.map { $0[column] }.max() ?? 0 }
        return rows.indices.map { index in
            let padded = rows[index].indices.map { column in
                rows[index][column] + String(repeating: " ", count: widths[column] - columns[index][column])
            }
            let line = padded.joined(separator: "  ")
            return String(line[..<(line.lastIndex(where: { $0 != " " }).map { line.index(after: $0) } ?? line.startIndex)])
        }
    }
}
