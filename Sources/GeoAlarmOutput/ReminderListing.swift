import FoundationEssentials
import GeoAlarmCore

/// What `geoalarm list` shows of a config: its reminders, collections and time alarms, as an
/// aligned table or as one JSON object a line (keys in geoalarm(1)).
public struct ReminderListing {
    public enum SortKey: String, CaseIterable, Sendable {
        case title, distance, radius, due
    }

    /// A collection and the file its places were read from.
    public struct CollectionEntry {
        public var collection: ReminderCollection
        public var file: String

        public init(collection: ReminderCollection, file: String) {
            self.collection = collection
            self.file = file
        }
    }

    public var reminders: [Reminder]
    public var collections: [CollectionEntry]
    public var alarms: [TimeAlarm]
    /// The ids of the completed reminders and alarms: hidden unless `showsCompleted`.
    public var completed: Set<String>
    public var showsCompleted: Bool
    public var sort: SortKey
    /// The point distances are measured from; none: no distances.
    public var origin: Coordinate?
    public var timeZone: any TimeZoneRules

    public init(
        reminders: [Reminder], collections: [CollectionEntry], alarms: [TimeAlarm], completed: Set<String>, showsCompleted: Bool,
        sort: SortKey, origin: Coordinate?, timeZone: any TimeZoneRules
    ) {
        self.reminders = reminders
        self.collections = collections
        self.alarms = alarms
        self.completed = completed
        self.showsCompleted = showsCompleted
        self.sort = sort
        self.origin = origin
        self.timeZone = timeZone
    }

    /// The table's lines, its header first.
    public func tableLines() -> [String] {
        var rows = [["ID", "TITLE", "WHERE", "RADIUS", "WHEN"] + (origin == nil ? [] : ["DISTANCE"])]
        for reminder in sortedReminders() {
            let (place, size): (String, String)
            switch reminder.geometry {
            case .circle(let center, let radius):
                (place, size) = (reminder.placeName.map { "\($0) (\(center))" } ?? center.description, Self.metres(radius))
            case .area(let area):
                (place, size) = ("area around \(area.center)", "\(area.edgeCount) edges")
            }
            var row = [
                reminder.id, reminder.title, place, size,
                reminder.trigger.rawValue + (reminder.isEnabled ? "" : " (disabled)") + (completed.contains(reminder.id) ? " (completed)" : ""),
            ]
            if let metres = distance(reminder) { row.append(Self.metres(metres)) }
            rows.append(row)
        }
        for entry in collections {
            let sizes = Sizes(entry.collection)
            let template = entry.collection.template
            var radius = sizes.smallest == sizes.largest ? Self.metres(sizes.smallest) : "\(Self.metres(sizes.smallest))-\(Self.metres(sizes.largest))"
            if sizes.allAreas { radius = "areas" } else if sizes.areas > 0 { radius += " and areas" }
            var row = [
                "\(entry.collection.id)/*", template.title,
                "\(DisplayText.counted(entry.collection.places.count, "place")) from \(entry.file)", radius,
                template.trigger.rawValue + (template.isEnabled ? "" : " (disabled)"),
            ]
            if let origin { row.append(entry.collection.nearestDistance(from: origin).map { "\(Self.metres($0)) (nearest)" } ?? "-") }
            rows.append(row)
        }
        for alarm in sortedAlarms() {
            var row = [alarm.id, alarm.title, "at \(alarm.at.localDate(in: timeZone))", "-", "alarm" + (completed.contains(alarm.id) ? " (completed)" : "")]
            if origin != nil { row.append("-") }
            rows.append(row)
        }
        return TextTable.lines(rows)
    }

    /// One JSON object a reminder, collection and alarm, in the table's order.
    public func jsonLines() -> [String] {
        var lines: [JSONLine] = []
        for reminder in sortedReminders() {
            var line = JSONLine()
            line.add("id", reminder.id)
            line.add("title", reminder.title)
            line.add("kind", "place")
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
            line.add("completed", completed.contains(reminder.id))
            if let distance = distance(reminder) { line.add("distance_m", number: distance) }
            lines.append(line)
        }
        for entry in collections {
            let sizes = Sizes(entry.collection)
            let template = entry.collection.template
            var line = JSONLine()
            line.add("id", "\(entry.collection.id)/*")
            line.add("title", template.title)
            line.add("kind", "collection")
            line.add("places", number: Double(entry.collection.places.count))
            line.add("file", entry.file)
            line.add("radius_m_min", number: sizes.allAreas ? nil : sizes.smallest)
            line.add("radius_m_max", number: sizes.allAreas ? nil : sizes.largest)
            line.add("areas", number: Double(sizes.areas))
            line.add("when", template.trigger.rawValue)
            line.add("enabled", template.isEnabled)
            if let origin { line.add("nearest_m", number: entry.collection.nearestDistance(from: origin)) }
            lines.append(line)
        }
        for alarm in sortedAlarms() {
            var line = JSONLine()
            line.add("id", alarm.id)
            line.add("title", alarm.title)
            line.add("kind", "alarm")
            line.add("at", localDate: alarm.at.localDate(in: timeZone))
            line.add("enabled", alarm.isEnabled)
            line.add("completed", completed.contains(alarm.id))
            lines.append(line)
        }
        return lines.map(\.text)
    }

    /// The radii of a collection's circles and how many of its places are areas.
    private struct Sizes {
        var smallest: Double, largest: Double, areas: Int, allAreas: Bool

        init(_ collection: ReminderCollection) {
            let radii = collection.places.lazy.compactMap { place in
                if case .circle(_, let radius) = place.geometry { radius } else { nil }
            }
            (smallest, largest) = (radii.min() ?? 0, radii.max() ?? 0)
            areas = collection.places.count - radii.count
            allAreas = areas == collection.places.count
        }
    }

    private func distance(_ reminder: Reminder) -> Double? {
        origin.map { reminder.distance(from: $0) }
    }

    private func sortedReminders() -> [Reminder] {
        let shown = showsCompleted ? reminders : reminders.filter { !completed.contains($0.id) }
        func due(_ reminder: Reminder) -> Date { reminder.schedule.due?.moment(in: timeZone) ?? .distantFuture }
        return shown.sorted { a, b in
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
    }

    private func sortedAlarms() -> [TimeAlarm] {
        (showsCompleted ? alarms : alarms.filter { !completed.contains($0.id) }).sorted { $0.at.start(in: timeZone) < $1.at.start(in: timeZone) }
    }

    private static func metres(_ value: Double) -> String {
        value >= 10_000 ? "\((value / 100).rounded() / 10) km" : "\(Metres.rounded(value)) m"
    }
}
