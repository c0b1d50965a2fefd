import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmICalendar
import GeoAlarmTasks
import Testing

/// Where `add --list` puts a new task: a position, a place of `[places]` (by its name as typed),
/// or a collection (its LOCATION alone, for a list that reads it); each refusal names its option.
struct NewTaskPlaceTests {
    static let config = try! ConfigLoader.parse("""
        [defaults]
        radius = "80m"
        [places]
        post_office = "38.7079,-9.1365"
        """, path: "/c.toml")
    static let errands = TaskListSettings(name: "Errands", folder: "/l", locationTasks: .arrive)

    static func location(at: String? = nil, place: String? = nil, radius: String? = nil, when: String? = nil,
                         config: Config = Self.config, list: TaskListSettings = Self.errands) -> Result<TaskEdits.NewTask.Location, NewTaskPlace.Problem> {
        NewTaskPlace(at: at, place: place, radius: radius, when: when).location(in: config, list: list)
    }

    static func problem(_ result: Result<TaskEdits.NewTask.Location, NewTaskPlace.Problem>) -> String? {
        if case .failure(let problem) = result { problem.description } else { nil }
    }

    @Test func aPositionOrANamedPlaceWithItsCircleAndTrigger() throws {
        guard case .place(let place, let trigger) = try Self.location(at: "38.7105,-9.1366", radius: "40m", when: "leave").get() else {
            Issue.record("not a place")
            return
        }
        #expect(place == TaskPlace(coordinate: Coordinate(latitude: 38.7105, longitude: -9.1366), radius: 40, name: nil) && trigger == .leave)
        guard case .place(let named, let arrive) = try Self.location(place: "Post Office").get() else {
            Issue.record("not a place")
            return
        }
        #expect(named.coordinate == Coordinate(latitude: 38.7079, longitude: -9.1365) && named.radius == 80 && named.name == "Post Office")
        #expect(arrive == .arrive)
        #expect(Self.problem(Self.location(at: "north")) == #"--at north: "north" is not a position: LAT,LON (38.7105,-9.1366), a geo: URI, a link from OpenStreetMap, Google Maps, Apple Maps or OsmAnd, or degrees with N/S and E/W (38°42'37.8"N 9°08'11.8"W)"#)
        #expect(Self.problem(Self.location(place: "post_office", radius: "0m"))?.hasPrefix("--radius 0m: must be above 0") == true)
        #expect(Self.problem(Self.location(place: "post_office", when: "soon")) == "--when soon: use arrive, leave or both")
    }

    @Test func aCollectionIsTheTasksWordsForAListThatReadsThem() throws {
        var config = Self.config
        config.collections = [ReminderCollection(id: "shops", template: config.taskDefaults.template, places: [])]
        guard case .words(let words) = try Self.location(place: "Shops", config: config).get() else {
            Issue.record("not words")
            return
        }
        #expect(words == "Shops")
        #expect(Self.problem(Self.location(place: "Shops", config: config, list: TaskListSettings(name: "Errands", folder: "/l")))?
            .contains("give it location_tasks = \"arrive\"") == true)
        #expect(Self.problem(Self.location(place: "Shops", when: "leave", config: config))?
            .hasPrefix("--when does not apply at a collection's places") == true)
        #expect(Self.problem(Self.location(place: "Shop", config: config)) == "no place \"Shop\" in /c.toml; places: post_office; collections: shops")
        let bare = try ConfigLoader.parse("", path: "/c.toml")
        #expect(Self.problem(Self.location(place: "x", config: bare)) == "no place \"x\" in /c.toml: it has no [places] and no [[collection]]")
    }
}
