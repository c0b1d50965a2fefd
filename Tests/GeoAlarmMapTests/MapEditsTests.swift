import Foundation
import GeoAlarmConfig
import GeoAlarmCore
@testable import GeoAlarmMap
import GeoAlarmStore
import GeoAlarmTestSupport
import Testing

/// The page's changes as they reach the config file and the state file.
struct MapEditsTests {
    static let text = """
        # my places
        [places]
        bakery = "38.7105,-9.1366"

        [[reminder]]
        id = "bread"
        title = "Buy bread"
        place = "bakery"
        radius = "30m"   # the door

        [[reminder]]
        title = "Water the plants"
        location = "38.7139,-9.1334"

        """

    static func configFile() throws -> (path: String, config: Config) {
        let path = try Command.temporaryFile(text)
        return (path, try ConfigLoader.load(path: path))
    }

    @Test func aRequestsMembersAreReadAndOthersPassedOver() throws {
        let change = try MapChange.parse(Array(#"{"id":"bread","title":"Bread","radius":"40m","lat":38.5,"lon":-9.25,"x":[1,{"y":2}],"seconds":60}"#.utf8))
        #expect(change == MapChange(id: "bread", title: "Bread", radius: "40m", latitude: 38.5, longitude: -9.25, seconds: 60))
        #expect(change.location == "38.5,-9.25")
        for bad in ["", "[]", "{", #"{"id":}"#, "{} {}", "null"] {
            #expect(throws: MapChange.Invalid.self, "\(bad)") { try MapChange.parse(Array(bad.utf8)) }
        }
        #expect(throws: MapChange.Invalid.self) { try MapChange.parse(Array(repeating: 0x20, count: MapChange.largestBody + 1)) }
    }

    @Test func anAddedReminderGetsAnIdOfItsOwn() throws {
        let (path, config) = try Self.configFile()
        let id = try MapEdits.add(
            MapChange(title: "Water the plants", radius: "25m", latitude: 38.71, longitude: -9.14, when: "leave"), to: config)
        #expect(id == "water-the-plants-2", "its title's slug is taken")
        let after = try ConfigLoader.load(path: path)
        let added = try #require(after.reminders.first { $0.id == id })
        #expect(added.title == "Water the plants" && added.trigger == .leave && added.geometry.radius == 25)
        #expect(added.center == Coordinate(latitude: 38.71, longitude: -9.14))
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix(Self.text), "appended, every byte before kept")
    }

    /// A collection's id and a task list's are taken too: a reminder titled as one of them is
    /// numbered, not refused as a duplicate.
    @Test func anAddedReminderDoesNotTakeACollectionsOrAListsId() throws {
        let folder = try Command.temporaryFile("name,lat,lon\nLidl,38.7,-9.1\n", named: "shops.csv")
        let tasks = URL(fileURLWithPath: folder).deletingLastPathComponent().appendingPathComponent("errands").path
        try FileManager.default.createDirectory(atPath: tasks, withIntermediateDirectories: true)
        let path = try Command.temporaryFile(Self.text + """
            [[collection]]
            file = "\(folder)"
            title = "Shop {name}"

            [[tasklist]]
            name = "Errands"
            vdir = "\(tasks)"

            """)
        let config = try ConfigLoader.load(path: path)
        #expect(try MapEdits.add(MapChange(title: "Shops", latitude: 38.7, longitude: -9.1), to: config) == "shops-2")
        #expect(try MapEdits.add(MapChange(title: "Errands", latitude: 38.7, longitude: -9.1), to: config) == "errands-2")
        #expect(try MapEdits.add(MapChange(title: "Stamps", latitude: 38.7, longitude: -9.1), to: config) == "stamps")
        let after = try ConfigLoader.load(path: path)
        #expect(Set(after.reminders.map(\.id)).isSuperset(of: ["shops-2", "errands-2", "stamps"]))
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.contains(#"id = "shops-2""#) && !written.contains(#"id = "stamps""#), "an id line only where the title's slug is taken")
    }

    @Test func anInvalidChangeIsRefusedAsCheckWouldAndNothingIsWritten() throws {
        let (path, config) = try Self.configFile()
        for change in [
            MapChange(id: "bread", radius: "-5m"), MapChange(id: "bread", radius: "wide"), MapChange(id: "bread", title: "  "),
            MapChange(id: "nope", radius: "5m"), MapChange(id: "bread", latitude: 95, longitude: 0), MapChange(id: "bread", latitude: 1),
        ] {
            #expect(throws: MapEdits.Refusal.self, "\(change)") { try MapEdits.change(change, in: config) }
        }
        do {
            try MapEdits.change(MapChange(id: "bread", radius: "-5m"), in: config)
        } catch {
            #expect(error.description.contains("radius") && error.description.contains(path), "\(error)")
        }
        #expect(throws: MapEdits.Refusal.self) { try MapEdits.add(MapChange(title: "", latitude: 1, longitude: 2), to: config) }
        #expect(throws: MapEdits.Refusal.self) { try MapEdits.add(MapChange(title: "x", radius: "-1m", latitude: 1, longitude: 2), to: config) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == Self.text)
    }

    @Test func aMoveAndANewRadiusChangeOnlyTheirLines() throws {
        let (path, config) = try Self.configFile()
        try MapEdits.change(MapChange(id: "bread", radius: "45m", latitude: 38.7, longitude: -9.13), in: config)
        let expected = Self.text.replacingOccurrences(of: "place = \"bakery\"\nradius = \"30m\"   # the door", with: "location = \"38.7,-9.13\"\nradius = \"45m\"   # the door")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == expected)
    }

    @Test func removalAndLifecycleReachTheStateFile() throws {
        let (path, config) = try Self.configFile()
        let store = try StateStore(path: Command.scratchState())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try MapEdits.apply(.complete, MapChange(id: "bread"), in: config, store: store, now: now)
        #expect(try store.lifecycles.all()["bread"]?.completedAt == now)
        try MapEdits.apply(.complete, MapChange(id: "bread"), in: config, store: store, now: now.addingTimeInterval(60))
        #expect(try store.lifecycles.all()["bread"]?.completedAt == now, "the first completion stands")
        try MapEdits.apply(.snooze, MapChange(id: "water-the-plants", seconds: 600), in: config, store: store, now: now)
        #expect(try store.lifecycles.all()["water-the-plants"]?.snoozedUntil == now.addingTimeInterval(600))
        #expect(throws: MapEdits.Refusal.self) { try MapEdits.apply(.snooze, MapChange(id: "bread", seconds: -1), in: config, store: store, now: now) }
        #expect(throws: MapEdits.Refusal.self) { try MapEdits.apply(.complete, MapChange(id: "nope"), in: config, store: store, now: now) }
        try MapEdits.remove(MapChange(id: "bread"), from: config, store: store)
        #expect(try store.lifecycles.all()["bread"] == nil, "its state forgotten, as geoalarm remove does")
        #expect(try ConfigLoader.load(path: path).reminders.map(\.id) == ["water-the-plants"])
    }

    /// A radius given as a number is metres, never dropped for the default; a member of a known
    /// name but another type is refused, never passed over.
    @Test func aRadiusAsANumberIsMetresAndAMistypedMemberIsRefused() throws {
        #expect(try MapChange.parse(Array(#"{"id":"bread","radius":120}"#.utf8)).radius == "120m")
        #expect(try MapChange.parse(Array(#"{"id":"bread","radius":12.5}"#.utf8)).radius == "12.5m")
        #expect(try MapChange.parse(Array(#"{"id":"bread","radius":null}"#.utf8)).radius == nil)
        for bad in [#"{"radius":true}"#, #"{"radius":[1]}"#, #"{"title":5}"#, #"{"lat":"38.7"}"#, #"{"id":{}}"#, #"{"seconds":"60"}"#] {
            #expect(throws: MapChange.Invalid.self, "\(bad)") { try MapChange.parse(Array(bad.utf8)) }
        }
        let (path, config) = try Self.configFile()
        let id = try MapEdits.add(MapChange(title: "Stamps", radius: "120m", latitude: 38.7, longitude: -9.1), to: config)
        #expect(try ConfigLoader.load(path: path).reminders.first { $0.id == id }?.geometry.radius == 120)
    }

    /// A title without letters or digits has no slug; the page has no id field: one is made up.
    @Test func aTitleWithoutLettersGetsAnId() throws {
        let (path, config) = try Self.configFile()
        let first = try MapEdits.add(MapChange(title: "🍞", latitude: 38.7, longitude: -9.1), to: config)
        let second = try MapEdits.add(MapChange(title: "!!!", latitude: 38.7, longitude: -9.1), to: ConfigLoader.load(path: path))
        #expect(first == "reminder" && second == "reminder-2")
        #expect(try ConfigLoader.load(path: path).reminders.first { $0.id == "reminder" }?.title == "🍞")
    }

    /// A snooze lasts at most 365 days, as the CLI and the man page say.
    @Test func aSnoozeLastsAtMostAYear() throws {
        let (_, config) = try Self.configFile()
        let store = try StateStore(path: Command.scratchState())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try MapEdits.apply(.snooze, MapChange(id: "bread", seconds: 365 * 86400), in: config, store: store, now: now)
        #expect(throws: MapEdits.Refusal.self) {
            try MapEdits.apply(.snooze, MapChange(id: "bread", seconds: 366 * 86400), in: config, store: store, now: now)
        }
    }

    /// A collection's place has one id on the map as in the CLI: another spelling of its number is refused.
    @Test func aPlaceHasOneId() throws {
        let config = try MapDataTests.config()
        let store = try StateStore(path: Command.scratchState())
        try MapEdits.apply(.complete, MapChange(id: "grid/1"), in: config, store: store, now: Date())
        for alias in ["grid/01", "grid/+1"] {
            #expect {
                try MapEdits.apply(.complete, MapChange(id: alias), in: config, store: store, now: Date())
            } throws: { error in
                "\(error)".contains("its places are grid/1 to grid/2500")
            }
        }
        #expect(try store.lifecycles.all().keys.sorted() == ["grid/1"])
    }

    /// Unsnooze on a place the map shows snoozed with its whole collection wakes the collection.
    @Test func unsnoozingAPlaceOfACollectionSnoozedWholeWakesIt() throws {
        let config = try MapDataTests.config()
        let store = try StateStore(path: Command.scratchState())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try store.lifecycles.snooze("grid", until: now.addingTimeInterval(3600))
        try MapEdits.apply(.snooze, MapChange(id: "grid/7", seconds: 0), in: config, store: store, now: now)
        #expect(try store.lifecycles.all()["grid"]?.snoozedUntil == nil)
    }

    /// A task at a collection's places ("Shops"): the map's Snooze on one place is the task's, at
    /// every place; its Done completes the task in its file.
    @Test func aTaskAtACollectionsPlacesIsSnoozedAndCompletedWhole() throws {
        let (path, _) = try Self.configFile()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("errands"), withIntermediateDirectories: true)
        try "name;lat;lon\nBaixa;38.71;-9.14\nRato;38.72;-9.15\n".write(to: folder.appendingPathComponent("shops.csv"), atomically: true, encoding: .utf8)
        try "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:milk\r\nSUMMARY:Buy milk\r\nLOCATION:Shops\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
            .write(to: folder.appendingPathComponent("errands/milk.ics"), atomically: true, encoding: .utf8)
        try (Self.text + "\n[[collection]]\nid = \"shops\"\nfile = \"shops.csv\"\n\n[[tasklist]]\nname = \"Errands\"\nvdir = \"errands\"\nlocation_tasks = \"arrive\"\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        var config = try ConfigLoader.load(path: path)
        let task = try #require(config.collections.first { $0.id.hasPrefix("errands/") }?.id)
        let store = try StateStore(path: Command.scratchState())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try MapEdits.apply(.snooze, MapChange(id: "\(task)/2", seconds: 600), in: config, store: store, now: now)
        #expect(try store.lifecycles.all()[task]?.snoozedUntil == now.addingTimeInterval(600) && store.lifecycles.all()["\(task)/2"] == nil)
        try MapEdits.apply(.complete, MapChange(id: "\(task)/1"), in: config, store: store, now: now)
        config = try ConfigLoader.load(path: path)
        #expect(!config.collections.contains { $0.id == task } && config.taskOrigin(of: task)?.isClosed == true)
    }

    /// On the map, a reminder can go to a task list (a new task file), and a task is completed,
    /// reopened and removed where it lives; its place and title stay its app's.
    @Test func tasksAreAddedCompletedAndRemovedInTheirList() throws {
        let (path, _) = try Self.configFile()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("errands").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try (Self.text + "\n[[tasklist]]\nname = \"Errands\"\nvdir = \"errands\"\n").write(toFile: path, atomically: true, encoding: .utf8)
        let id = try MapEdits.add(
            MapChange(title: "Stamps", radius: "40m", latitude: 38.7, longitude: -9.1, when: "both", list: "Errands"), to: ConfigLoader.load(path: path))
        #expect(id.hasPrefix("errands/"))
        var config = try ConfigLoader.load(path: path)
        let task = try #require(config.reminders.first { $0.id == id })
        #expect(task.title == "Stamps" && task.trigger == .both && task.geometry == .circle(center: Coordinate(latitude: 38.7, longitude: -9.1), radius: 40))
        #expect(throws: MapEdits.Refusal.self) { try MapEdits.change(MapChange(id: id, radius: "50m"), in: config) }
        let store = try StateStore(path: Command.scratchState())
        try MapEdits.apply(.complete, MapChange(id: id), in: config, store: store, now: Date())
        config = try ConfigLoader.load(path: path)
        #expect(!config.reminders.contains { $0.id == id } && config.taskOrigin(of: id)?.isClosed == true)
        #expect(try store.lifecycles.all()[id] == nil, "a task's completion is not the state file's")
        try MapEdits.apply(.uncomplete, MapChange(id: id), in: config, store: store, now: Date())
        config = try ConfigLoader.load(path: path)
        #expect(config.reminders.contains { $0.id == id })
        try MapEdits.remove(MapChange(id: id), from: config, store: store)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".ics") }.isEmpty)
        #expect(throws: MapEdits.Refusal.self) { try MapEdits.add(MapChange(title: "x", latitude: 1, longitude: 2, list: "Nope"), to: config) }
    }

    /// The page's Complete names a task by its key as well as its id: another member's task that
    /// came to take the id since the page was drawn is left alone, and the task shown is completed.
    @Test func aTasksButtonActsOnTheTaskThePageShowed() throws {
        let (path, _) = try Self.configFile()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("errands").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try (Self.text + "\n[[tasklist]]\nname = \"Errands\"\nvdir = \"errands\"\ngeo_tasks = \"arrive\"\n").write(toFile: path, atomically: true, encoding: .utf8)
        func task(_ uid: String) -> String {
            "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:\(uid)\r\nSUMMARY:Pick up the kids\r\nGEO:38.7;-9.1\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
        }
        try task("pickupthekids-2026").write(toFile: folder + "/mine.ics", atomically: true, encoding: .utf8)
        let shown = try #require(try ConfigLoader.load(path: path).reminders.first { $0.id.hasPrefix("errands/") })
        #expect(shown.id == "errands/pickupth" && shown.taskKey == "pickupthekids-2026")
        try task("pickupth").write(toFile: folder + "/theirs.ics", atomically: true, encoding: .utf8)
        let config = try ConfigLoader.load(path: path)
        try MapEdits.apply(.complete, MapChange(id: shown.id, taskKey: shown.taskKey), in: config, store: nil, now: Date())
        #expect(try String(contentsOfFile: folder + "/mine.ics", encoding: .utf8).contains("STATUS:COMPLETED"))
        #expect(try String(contentsOfFile: folder + "/theirs.ics", encoding: .utf8) == task("pickupth"))
        // A task gone from its list since: refused, with why.
        #expect(throws: MapEdits.Refusal.self) {
            try MapEdits.apply(.complete, MapChange(id: shown.id, taskKey: "gone"), in: config, store: nil, now: Date())
        }
    }
}
