import ArgumentParser
import GeoAlarmConfig
import GeoAlarmCore

/// `geoalarm list`: the reminders of a config, one per line.
struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the reminders with where, radius and when.")

    enum SortKey: String, ExpressibleByArgument, CaseIterable {
        case title, distance, radius
    }

    @OptionGroup var options: ConfigOptions

    @Option(help: "Sort by title (case-insensitive), distance (needs --from) or radius.")
    var sort: SortKey = .title

    @Option(help: ArgumentHelp("Show distances from this point.", valueName: "lat,lon"))
    var from: String?

    func validate() throws {
        if let from, case .failure(let error) = ReminderRules.parseLocation(from) {
            throw ValidationError("--from: \(error.description)")
        }
        if sort == .distance, from == nil { throw ValidationError("--sort distance needs --from LAT,LON.") }
    }

    func run() throws {
        let config = try options.load()
        let origin = from.flatMap { try? ReminderRules.parseLocation($0).get() }
        func distance(_ reminder: Reminder) -> Double? {
            origin.map { Haversine.distance($0, reminder.center) }
        }
        let sorted = config.reminders.sorted { a, b in
            switch sort {
            case .title:
                let order = a.title.localizedCaseInsensitiveCompare(b.title)
                return order == .orderedSame ? a.id < b.id : order == .orderedAscending
            case .distance: return (distance(a) ?? 0, a.id) < (distance(b) ?? 0, b.id)
            case .radius: return (a.radius, a.id) < (b.radius, b.id)
            }
        }
        var rows = [["ID", "TITLE", "WHERE", "RADIUS", "WHEN"] + (origin == nil ? [] : ["DISTANCE"])]
        for reminder in sorted {
            let place = reminder.placeName.map { "\($0) (\(reminder.center))" } ?? reminder.center.description
            var row = [
                reminder.id, reminder.title, place, Self.metres(reminder.radius),
                reminder.trigger.rawValue + (reminder.isEnabled ? "" : " (disabled)"),
            ]
            if let metres = distance(reminder) { row.append(Self.metres(metres)) }
            rows.append(row)
        }
        for row in rows { print(Self.align(row, widths: Self.widths(rows)).trimmingTrailingSpaces) }
    }

    private static func metres(_ value: Double) -> String {
        value >= 10_000 ? "\((value / 100).rounded() / 10) km" : "\(Int(value.rounded())) m"
    }

    private static func widths(_ rows: [[String]]) -> [Int] {
        (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
    }

    private static func align(_ row: [String], widths: [Int]) -> String {
        zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
    }
}

private extension String {
    var trimmingTrailingSpaces: String {
        String(self[..<(lastIndex(where: { $0 != " " }).map { index(after: $0) } ?? startIndex)])
    }
}
