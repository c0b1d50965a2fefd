import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmStore
import GeoAlarmSystem

/// What the map shows, read from the config and the state file, as the page's JSON.
///
/// The state's part follows the engine, not the pop-ups: each reminder's side is the one the
/// agent confirmed (and saved for its fence as it is now), the position is the last fix it used.
struct MapData: Sendable {
    let config: Config
    /// The config's reminders and collection places, for the spatial index behind a map's view.
    let engine: GeofenceEngine
    var state = SavedState()

    /// What the state file holds that the map shows.
    struct SavedState: Sendable, Equatable {
        var presence: [String: SavedPresence] = [:]
        /// Each reminder's distance, direction of travel and time to arrival, as the agent noted them.
        var proximities: [String: SavedProximity] = [:]
        var lifecycles: [String: Lifecycle] = [:]
        var lastFix: Fix?
        /// The most recent arrivals, departures and approaches, newest last.
        var history: [EventHistory.Entry] = []
    }

    /// How many past events the page lists.
    static let historyShown = 100

    init(config: Config) {
        self.config = config
        engine = GeofenceEngine(reminders: config.reminders, collections: config.collections, settings: config.settings)
    }

    /// Reads what the map shows of `store`.
    static func read(_ store: StateStore) throws(StoreError) -> SavedState {
        // This machine's own events at a place (a time alarm has none; tracked devices' are theirs).
        let history = try store.history.entries(last: historyShown * 2).filter { $0.coordinate != nil && $0.device == nil }.suffix(historyShown)
        return SavedState(
            presence: try store.sides.saved(), proximities: try store.sides.proximities(), lifecycles: try store.lifecycles.all(),
            lastFix: try store.sides.lastFix(),
            history: Array(history))
    }

    /// The reminders (their shapes, titles and triggers) and the collections, as the page draws
    /// them: what only the config says, fetched again only when the config changes.
    func remindersJSON() -> String {
        var object = JSONObject()
        object.add("config", config.path)
        object.add("reminders", raw: "[" + config.reminders.map { shapeJSON($0).text }.joined(separator: ",") + "]")
        object.add("collections", raw: "[" + config.collections.map { collection in
            var entry = JSONObject()
            entry.add("id", collection.id)
            entry.add("title", collection.template.title)
            entry.add("places", number: Double(collection.places.count))
            return entry.text
        }.joined(separator: ",") + "]")
        object.add("lists", raw: "[" + config.taskListSettings.map { JSONText.quote($0.name) }.joined(separator: ",") + "]")
        // The Snooze button's length (`[output] snooze`), and its label as the pop-ups write it.
        object.add("snooze", number: config.snooze)
        object.add("snooze_label", ReminderButton.snooze.label(snooze: config.snooze))
        return object.text
    }

    /// Where each reminder stands (its side, proximity and what silences it, by id), the last
    /// position and the recent events: what the state file says, small whatever the shapes.
    func stateJSON(now: Date) -> String {
        var object = JSONObject()
        object.add("reminders", raw: "{" + config.reminders.map { reminder in
            JSONText.quote(reminder.id) + ":" + stateJSON(of: reminder, now: now).text
        }.joined(separator: ",") + "}")
        object.add("position", raw: state.lastFix.map(Self.positionJSON) ?? "null")
        object.add("history", raw: "[" + state.history.map(Self.eventJSON).joined(separator: ",") + "]")
        return object.text
    }

    /// The collection places whose fence meets `box`: at most `limit`, and whether that is all.
    func places(in box: GeoBox, limit: Int, now: Date) -> String {
        let reminderIDs = Set(config.reminders.map(\.id))
        // The index answers for reminders too; they are in the snapshot already.
        let (fences, complete) = engine.fences(in: box, limit: limit + reminderIDs.count)
        let places = fences.filter { !reminderIDs.contains($0.id) }
        var object = JSONObject()
        object.add("places", raw: "[" + places.prefix(limit).map { reminderJSON($0, now: now).text }.joined(separator: ",") + "]")
        object.add("complete", complete && places.count <= limit)
        return object.text
    }

    /// One reminder or collection place: its shape, its side, its proximity and what silences it.
    private func reminderJSON(_ reminder: Reminder, now: Date) -> JSONObject {
        var object = shapeJSON(reminder)
        object.add(contentsOf: stateJSON(of: reminder, now: now))
        return object
    }

    /// What the config says of a reminder: its id, title, shape and trigger.
    private func shapeJSON(_ reminder: Reminder) -> JSONObject {
        var object = JSONObject()
        object.add("id", reminder.id)
        object.add("title", reminder.title)
        object.add("notes", reminder.notes)
        switch reminder.geometry {
        case .circle(let center, let radius):
            object.add("shape", "circle")
            object.add("center", raw: Self.pointJSON(center))
            object.add("radius", number: radius)
        case .area(let area):
            object.add("shape", "area")
            object.add("center", raw: Self.pointJSON(area.center))
            object.add("polygons", raw: "[" + area.polygons.map { rings in
                "[" + rings.map { ring in "[" + ring.map(Self.pointJSON).joined(separator: ",") + "]" }.joined(separator: ",") + "]"
            }.joined(separator: ",") + "]")
        }
        object.add("place", reminder.placeName)
        object.add("when", reminder.trigger.rawValue)
        object.add("enabled", reminder.isEnabled)
        // A task's place and title are edited in its task app.
        object.add("list", config.taskOrigin(of: reminder.id)?.list)
        object.add("key", reminder.taskKey)
        return object
    }

    /// What the state file says of a reminder: its side, its proximity and what silences it.
    private func stateJSON(of reminder: Reminder, now: Date) -> JSONObject {
        var object = JSONObject()
        let saved = state.presence[reminder.id].flatMap { $0.fenceKey == reminder.fenceKey ? $0.presence : nil } ?? .unknown
        object.add("state", saved.rawValue)
        let proximity = state.proximities[reminder.id].flatMap { $0.fenceKey == reminder.fenceKey ? $0.proximity : nil }
        object.add("direction", proximity?.direction.rawValue)
        object.add("edge_m", number: proximity.map { $0.distance.rounded() })
        object.add("eta_s", number: proximity?.eta.map { $0.rounded() })
        let lifecycle = state.lifecycles[reminder.id] ?? Lifecycle()
        object.add("completed", lifecycle.completedAt != nil)
        object.add("snoozed_until", Lifecycle.snoozedUntil(reminder.id, in: state.lifecycles).flatMap { $0 > now ? Timestamp.iso8601($0) : nil })
        object.add("out_of_hours", reminder.schedule.active.map { !$0.contains(now, in: SystemTimeZone()) } ?? false)
        object.add("starts", reminder.schedule.startsLater(than: now, in: SystemTimeZone())?.description)
        return object
    }

    private static func pointJSON(_ point: Coordinate) -> String {
        "[" + JSONText.number((point.latitude * 1e7).rounded() / 1e7) + "," + JSONText.number((point.longitude * 1e7).rounded() / 1e7) + "]"
    }

    private static func positionJSON(_ fix: Fix) -> String {
        var object = JSONObject()
        object.add("lat", number: fix.coordinate.latitude)
        object.add("lon", number: fix.coordinate.longitude)
        object.add("error", number: fix.horizontalError)
        object.add("time", fix.time.map(Timestamp.iso8601))
        return object.text
    }

    /// An event as `geoalarm history --json` prints it (the agent's event log's JSON object).
    private static func eventJSON(_ entry: EventHistory.Entry) -> String {
        EventFormat.json.line(for: EventRecord(
            time: entry.time, kind: entry.kind, reminderID: entry.reminderID, title: entry.title,
            coordinate: entry.coordinate, distance: entry.distance, device: entry.device))
    }
}

/// The part of the map a page asks for places in: its query's `south`, `west`, `north` and
/// `east` (degrees, as Leaflet gives them) and `limit`.
public struct MapView: Sendable, Equatable {
    public var box: GeoBox
    /// How many places at most: 1 to 5,000, 500 when not given.
    public var limit: Int

    /// Why a query is no view.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The view a query names; refused with why when it cannot be one (see ``GeoBox/view(south:north:west:east:)``).
    public static func parse(_ query: [String: String]) -> Result<MapView, Problem> {
        let numbers = ["south", "west", "north", "east"].map { query[$0].flatMap(Double.init) }
        guard let south = numbers[0], let west = numbers[1], let north = numbers[2], let east = numbers[3] else {
            return .failure(Problem(description: "give the view as south, west, north and east in degrees"))
        }
        switch GeoBox.view(south: south, north: north, west: west, east: east) {
        case .success(let box):
            return .success(MapView(box: box, limit: min(max(query["limit"].flatMap(Int.init) ?? 500, 1), 5000)))
        case .failure(let problem):
            return .failure(Problem(description: problem.description))
        }
    }
}

