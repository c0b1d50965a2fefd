import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmSystem

/// `geoalarm list`: the reminders of a config, one per line.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the reminders with where, radius and when.")

    enum SortKey: String, ExpressibleByArgument, CaseIterable {
        case title, distance, radius, due
    }

    @OptionGroup var options: ConfigOptions
    @OptionGroup var stateOptions: StateOptions

    @Flag(help: "Show completed reminders too (hidden by default).")
    var all = false

    @Option(help: "Sort by title (case-insensitive), distance (needs --from), radius or due date (undated last).")
    var sort: SortKey = .title

    @Option(help: ArgumentHelp("Show distances from this point.", valueName: "lat,lon"))
    var from: String?

    @Flag(help: "Print one JSON object per line (keys in the man page) instead of a table.")
    var json = false

    func validate() throws {
        if let from, case .failure(let error) = ReminderRules.parseLocation(from) {
            throw ValidationError("--from: \(error.description)")
        }
        if sort == .distance, from == nil { throw ValidationError("--sort distance needs --from LAT,LON.") }
    }

    func run() async throws {
        let (config, _) = try await options.load(fetchingInto: stateOptions.path)
        let completed = try completedIDs()
        let origin = from.flatMap { try? ReminderRules.parseLocation($0).get() }
        func distance(_ reminder: Reminder) -> Double? {
            origin.map { reminder.distance(from: $0) }
        }
        let shown = all ? config.reminders : config.reminders.filter { !completed.contains($0.id) }
        func due(_ reminder: Reminder) -> Date { reminder.schedule.due?.moment(in: SystemTimeZone()) ?? .distantFuture }
        let sorted = shown.sorted { a, b in
            switch sort {
            case .title:
                // Letters alike whatever their case and accents ("école" beside "Ecole").
                func key(_ title: String) -> String { Reminder.withoutDiacritics(title).lowercased() }
                return (key(a.title), a.id) < (key(b.title), b.id)
            case .distance: return (distance(a) ?? 0, a.id) < (distance(b) ?? 0, b.id)
            case .radius: return (a.geometry.circumradius, a.id) < (b.geometry.circumradius, b.id)
            case .due: return due(a) == due(b) ? a.id < b.id : due(a) < due(b)
            }
        }
        var rows = [["ID", "TITLE", "WHERE", "RADIUS", "WHEN"] + (origin == nil ? [] : ["DISTANCE"])]
        var lines: [JSONLine] = []
        for reminder in sorted {
            var line = JSONLine()
            line.add("id", reminder.id)
            line.add("title", reminder.title)
            line.add("kind", "place")
            lines.append(Self.placeMembers(reminder, into: line, completed: completed.contains(reminder.id), distance: distance(reminder)))
            let (place, size): (String, String)
            switch reminder.geometry {
            case .circle(let center, let radius):
                (place, size) = (reminder.placeName.map { "\($0) (\(center))" } ?? center.description, Self.metres(radius))
            case .area(let area):
                (place, size) = ("area around \(area.center)", "\(area.edgeCount) edges")
            }
            var row = [
                reminder.id, reminder.title, place, size,
                reminder.trigger.rawValue + (reminder.isEnabled ? "" : " (disabled)")
                    + (completed.contains(reminder.id) ? " (completed)" : ""),
            ]
            if let metres = distance(reminder) { row.append(Self.metres(metres)) }
            rows.append(row)
        }
        for collection in config.collections {
            let template = collection.template
            let radii = collection.places.lazy.compactMap { place in
                if case .circle(_, let radius) = place.geometry { radius } else { nil }
            }
            let areas = collection.places.count - radii.count
            let (smallest, largest) = (radii.min() ?? 0, radii.max() ?? 0)
            var radius = smallest == largest ? Self.metres(smallest) : "\(Self.metres(smallest))-\(Self.metres(largest))"
            if areas == collection.places.count { radius = "areas" } else if areas > 0 { radius += " and areas" }
            let file = config.collectionLoads.first { $0.collectionID == collection.id }?.file ?? "?"
            var row = [
                "\(collection.id)/*", template.title, "\(collection.places.count) places from \(file)", radius,
                template.trigger.rawValue + (template.isEnabled ? "" : " (disabled)"),
            ]
            let nearest = origin.flatMap { collection.nearestDistance(from: $0) }
            if origin != nil { row.append(nearest.map { "\(Self.metres($0)) (nearest)" } ?? "-") }
            rows.append(row)
            var line = JSONLine()
            line.add("id", "\(collection.id)/*")
            line.add("title", template.title)
            line.add("kind", "collection")
            line.add("places", number: Double(collection.places.count))
            line.add("file", file)
            line.add("radius_m_min", number: areas == collection.places.count ? nil : smallest)
            line.add("radius_m_max", number: areas == collection.places.count ? nil : largest)
            line.add("areas", number: Double(areas))
            line.add("when", template.trigger.rawValue)
            line.add("enabled", template.isEnabled)
            if origin != nil { line.add("nearest_m", number: nearest) }
            lines.append(line)
        }
        let alarms = (all ? config.alarms : config.alarms.filter { !completed.contains($0.id) })
            .sorted { $0.at.start(in: SystemTimeZone()) < $1.at.start(in: SystemTimeZone()) }
        for alarm in alarms {
            var row = [alarm.id, alarm.title, "at \(alarm.at.localDate(in: SystemTimeZone()))", "-", "alarm" + (completed.contains(alarm.id) ? " (completed)" : "")]
            if origin != nil { row.append("-") }
            rows.append(row)
            var line = JSONLine()
            line.add("id", alarm.id)
            line.add("title", alarm.title)
            line.add("kind", "alarm")
            line.add("at", localDate: alarm.at.localDate(in: SystemTimeZone()))
            line.add("enabled", alarm.isEnabled)
            line.add("completed", completed.contains(alarm.id))
            lines.append(line)
        }
        if json {
            for line in lines { try Console.line(line.text) }
        } else {
            for line in TextTable.lines(rows) { try Console.line(line) }
        }
    }

    /// A reminder's members after its id, title and kind.
    private static func placeMembers(_ reminder: Reminder, into line: JSONLine, completed: Bool, distance: Double?) -> JSONLine {
        var line = line
        line.add("lat", degrees: reminder.center.latitude)
        line.add("lon", degrees: reminder.center.longitude)
        line.add("place", reminder.placeName)
        switch reminder.geometry {
        case .circle(_, let radius):
            line.add("radius_m", number: radius)
        case .area(let area):
            line.add("radius_m", number: nil)
            line.add("area_polygons", number: Double(area.polygons.count))
            line.add("area_edges", number: Double(area.edgeCount))
        }
        line.add("when", reminder.trigger.rawValue)
        line.add("enabled", reminder.isEnabled)
        line.add("completed", completed)
        if let distance { line.add("distance_m", number: distance) }
        return line
    }

    private static func metres(_ value: Double) -> String {
        value >= 10_000 ? "\((value / 100).rounded() / 10) km" : "\(Metres.rounded(value)) m"
    }

    /// Ids of completed reminders, from the state file when there is one.
    private func completedIDs() throws -> Set<String> {
        guard FileManager.default.fileExists(atPath: stateOptions.path) else { return [] }
        return Set(try stateOptions.open().lifecycles().filter { $0.value.completedAt != nil }.keys)
    }
}
