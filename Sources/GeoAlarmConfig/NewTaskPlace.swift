import GeoAlarmCore
import GeoAlarmICalendar
import GeoAlarmTasks

/// What `add --list` was told of where a new task is, as typed: a position, or a name of
/// `[places]` or of a `[[collection]]`, with the circle's radius and when it fires.
public struct NewTaskPlace: Sendable {
    public var at: String?
    public var place: String?
    public var radius: String?
    public var when: String?

    public init(at: String?, place: String?, radius: String?, when: String?) {
        self.at = at
        self.place = place
        self.radius = radius
        self.when = when
    }

    /// Why a new task cannot be placed so: a message naming the option at fault.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Where the new task of `list` is in `config`: `at`, or the place of `[places]` that `place`
    /// names (with the radius, else the config's, and the trigger, else arrive), or the collection
    /// it names (its LOCATION alone, for the list's `location_tasks` to read as any of its places:
    /// each place keeps its size and the list says when, so `radius` and `when` are refused).
    public func location(in config: Config, list: TaskListSettings) -> Result<TaskEdits.NewTask.Location, Problem> {
        let coordinate: Coordinate
        if let at {
            switch ReminderRules.parseLocation(at) {
            case .success(let point): coordinate = point
            case .failure(let problem): return .failure(Problem(description: "--at \(DisplayText.escaped(at)): \(problem)"))
            }
        } else if let place, let named = NamedPlaces(config.places).place(named: place) {
            coordinate = named.coordinate
        } else if let place, let collection = ReminderCollection.named(place, among: config.collections) {
            guard list.locationTasks != nil else {
                return .failure(Problem(description: """
                    --place \(DisplayText.escaped(place)) is the collection \(collection.id): task list \(list.name) reads a task's \
                    place by name only with location_tasks (give it location_tasks = "arrive")
                    """))
            }
            if let option = [("--radius", radius), ("--when", when)].first(where: { $0.1 != nil })?.0 {
                return .failure(Problem(description: """
                    \(option) does not apply at a collection's places: each keeps its size, and the list's location_tasks says when
                    """))
            }
            return .success(.words(place))
        } else {
            let known = [("places", config.places.keys.sorted()), ("collections", config.collections.map(\.id))]
                .filter { !$0.1.isEmpty }.map { "\($0.0): \($0.1.joined(separator: ", "))" }
            return .failure(Problem(description: "no place \"\(DisplayText.escaped(place ?? ""))\" in \(config.path)"
                + (known.isEmpty ? ": it has no [places] and no [[collection]]" : "; \(known.joined(separator: "; "))")))
        }
        let metres: Double
        do {
            metres = try radius.map(Length.parse) ?? config.taskDefaults.radius
        } catch {
            return .failure(Problem(description: "--radius \(DisplayText.escaped(radius ?? "")): \(error)"))
        }
        guard metres > 0 else { return .failure(Problem(description: "--radius \(DisplayText.escaped(radius ?? "")): must be above 0")) }
        guard let trigger = when.map(Trigger.init(parsing:)) ?? .arrive else {
            return .failure(Problem(description: "--when \(DisplayText.escaped(when ?? "")): use arrive, leave or both"))
        }
        return .success(.place(TaskPlace(coordinate: coordinate, radius: metres, name: place), trigger))
    }
}
