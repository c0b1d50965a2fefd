import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmPipeline
import GeoAlarmStore
import Logging
import Synchronization
import Testing

/// A pop-up's button goes straight to the pipeline: the state file is written, the announcer
/// follows, and every sink hears of it.
struct ReminderActionTests {
    /// What a sink was told of lifecycles.
    final class Recorder: EventSink {
        let completed = Mutex<[String]>([])
        let lifecycles = Mutex<[[String: Lifecycle]]>([])
        func announce(_ announcement: Announcement) {}
        func reminderCompleted(_ id: String) { completed.withLock { $0.append(id) } }
        func lifecyclesChanged(_ lifecycles: [String: Lifecycle]) { self.lifecycles.withLock { $0.append(lifecycles) } }
    }

    static let shop = Coordinate(latitude: 38.7105, longitude: -9.1366)

    static func pipeline(state path: String, recorder: Recorder) -> FixPipeline {
        let reminders = [Reminder(id: "shop", title: "Shop", geometry: .circle(center: Self.shop, radius: 50), trigger: .arrive)]
        return FixPipeline(
            watching: ReminderSet(reminders: reminders),
            state: StateKeeper(path: path, logger: Logger(label: "test")), sinks: [recorder], timeZone: FixedOffset.utc)
    }

    @Test func doneCompletesTheReminderInTheStateFileAndOnEverySink() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("actions-\(UUID().uuidString).sqlite").path
        let recorder = Recorder()
        let pipeline = Self.pipeline(state: path, recorder: recorder)
        let pressed = Date(timeIntervalSince1970: 1_800_000_000)
        let lifecycles = pipeline.apply(.complete(at: pressed), to: "shop")
        #expect(lifecycles["shop"]?.completedAt == pressed)
        #expect(pipeline.announcer.lifecycles["shop"]?.completedAt == pressed)
        #expect(recorder.completed.withLock { $0 } == ["shop"])
        #expect(recorder.lifecycles.withLock { $0.last?["shop"]?.completedAt } == pressed)
        // Written for other processes (`geoalarm status`), and not again told as completed.
        #expect(try StateStore(path: path).lifecycles.all()["shop"]?.completedAt == pressed)
        let again = pipeline.apply(.complete(at: pressed.addingTimeInterval(5)), to: "shop")
        #expect(recorder.completed.withLock { $0 } == ["shop"], "a pop-up of a completed reminder is closed once")
        // Done on a pop-up shown before: the first completion stands, here and in the file.
        #expect(again["shop"]?.completedAt == pressed)
        #expect(try StateStore(path: path).lifecycles.all()["shop"]?.completedAt == pressed)
    }

    /// A task at a collection's places ("any supermarket"): Done at one of them is the task's,
    /// written to its list (by the agent), not to the state file; it silences that place until the
    /// list, read again, no longer has the task. A task that comes back, reopened in its app,
    /// speaks again at every place.
    @Test func doneAtAPlaceOfATaskIsTheTasksAndAReopenedTaskSpeaksAgainEverywhere() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("actions-\(UUID().uuidString).sqlite").path
        let recorder = Recorder()
        let places = [CollectionPlace(geometry: .circle(center: Self.shop, radius: 50), name: "Baixa")]
        let milk = ReminderCollection(
            id: "errands/milk", template: Reminder(id: "errands/milk", title: "Buy milk", geometry: .circle(center: Self.shop, radius: 50)),
            places: places)
        let watched = ReminderSet(reminders: [], collections: [milk], taskKeys: ["milk-uid": "errands/milk"])
        let pipeline = FixPipeline(
            watching: watched, state: StateKeeper(path: path, logger: Logger(label: "test")), sinks: [recorder], timeZone: FixedOffset.utc)
        let pressed = Date(timeIntervalSince1970: 1_800_000_000)
        _ = pipeline.apply(.complete(at: pressed), to: "errands/milk/1")
        #expect(pipeline.isCompleted("errands/milk/1") && recorder.completed.withLock { $0 } == ["errands/milk/1"])
        #expect(try StateStore(path: path).lifecycles.all()["errands/milk/1"] == nil, "its completion lives in its task")
        // The list read again still has it (reopened there, or the completion not yet written): it speaks again.
        pipeline.reload(watched)
        #expect(!pipeline.isCompleted("errands/milk/1"))
    }

    /// Snooze on a pop-up of one place of a task at a collection's places silences the task at
    /// every place (the next supermarket too), kept in the state file under the task's id.
    @Test func snoozeAtAPlaceOfATaskSilencesItAtEveryPlace() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("actions-\(UUID().uuidString).sqlite").path
        let recorder = Recorder()
        let other = Coordinate(latitude: 38.7200, longitude: -9.1366)
        let milk = ReminderCollection(
            id: "errands/milk", template: Reminder(id: "errands/milk", title: "Buy milk", geometry: .circle(center: Self.shop, radius: 50)),
            places: [CollectionPlace(geometry: .circle(center: Self.shop, radius: 50)), CollectionPlace(geometry: .circle(center: other, radius: 50))])
        let pipeline = FixPipeline(
            watching: ReminderSet(reminders: [], collections: [milk], taskKeys: ["milk-uid": "errands/milk"]),
            state: StateKeeper(path: path, logger: Logger(label: "test")), sinks: [recorder], timeZone: FixedOffset.utc)
        let until = Date(timeIntervalSince1970: 1_800_003_600)
        _ = pipeline.apply(.snooze(until: until), to: "errands/milk/1")
        #expect(try StateStore(path: path).lifecycles.all()["errands/milk"]?.snoozedUntil == until)
        let between = Coordinate(latitude: 38.7152, longitude: -9.1366)
        var silenced: [Silence] = []
        for (second, place) in [between, between, other, other].enumerated() {
            let result = pipeline.process(
                Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: place),
                receivedAt: Date(timeIntervalSince1970: 1_800_000_000), undatedUsable: false)
            #expect(result.announced.isEmpty)
            silenced += result.silenced.map(\.reason)
        }
        #expect(silenced == [.snoozed], "arriving at its other place")
    }

    /// A task at a collection's places whose list is renamed: the side of each place, the
    /// task's snooze and each place's history follow it to its new id, in the running pipeline
    /// and in the state file (a restart finds them there).
    @Test func aRenamedListTakesTheSidesAndSnoozeOfATasksPlaces() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("actions-\(UUID().uuidString).sqlite").path
        let other = Coordinate(latitude: 38.7200, longitude: -9.1366)
        func milk(in list: String) -> ReminderSet {
            let template = Reminder(id: "\(list)/milk", title: "Buy milk", geometry: .circle(center: Self.shop, radius: 50), trigger: .arrive)
            let places = [CollectionPlace(geometry: .circle(center: other, radius: 50)), CollectionPlace(geometry: .circle(center: Self.shop, radius: 50))]
            return ReminderSet(
                reminders: [], collections: [ReminderCollection(id: "\(list)/milk", template: template, places: places)],
                taskKeys: ["milk-uid": "\(list)/milk"])
        }
        let keeper = StateKeeper(path: path, logger: Logger(label: "test"))
        let pipeline = FixPipeline(watching: milk(in: "errands"), state: keeper, sinks: [Recorder()], timeZone: FixedOffset.utc)
        let far = Coordinate(latitude: 38.7300, longitude: -9.1366)
        func walk(_ places: [Coordinate], from second: Int, on pipeline: FixPipeline) -> [String] {
            places.enumerated().flatMap { offset, place in
                pipeline.process(
                    Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second + offset)), coordinate: place),
                    receivedAt: Date(timeIntervalSince1970: 1_800_000_000), undatedUsable: false
                ).announced.map(\.reminder.id)
            }
        }
        #expect(walk([far, far, Self.shop, Self.shop], from: 0, on: pipeline) == ["errands/milk/2"])
        let until = Date(timeIntervalSince1970: 1_800_003_600)
        _ = pipeline.apply(.snooze(until: until), to: "errands/milk/2")
        pipeline.reload(milk(in: "shopping"))
        #expect(pipeline.announcer.lifecycles["shopping/milk"]?.snoozedUntil == until)
        #expect(pipeline.engine.presence(of: "shopping/milk/2") == .inside)
        keeper.flush()
        let store = try StateStore(path: path)
        let sides = try store.sides.saved()
        #expect(sides["shopping/milk/2"]?.presence == .inside && sides["errands/milk/2"] == nil, "\(sides)")
        #expect(try store.history.entries(reminder: "shopping/milk/2").map(\.kind) == [.arrive])
        #expect(try store.history.entries(reminder: "errands/milk/2").isEmpty)
        // Restarted on the renamed list: still inside, still snoozed.
        let restarted = FixPipeline(
            watching: milk(in: "shopping"), state: StateKeeper(path: path, logger: Logger(label: "test")), sinks: [], timeZone: FixedOffset.utc)
        #expect(restarted.engine.presence(of: "shopping/milk/2") == .inside)
        #expect(restarted.announcer.lifecycles["shopping/milk"]?.snoozedUntil == until)
    }

    @Test func snoozeSilencesTheReminderUntilItsEnd() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("actions-\(UUID().uuidString).sqlite").path
        let recorder = Recorder()
        let pipeline = Self.pipeline(state: path, recorder: recorder)
        let until = Date(timeIntervalSince1970: 1_800_003_600)
        _ = pipeline.apply(.snooze(until: until), to: "shop")
        #expect(pipeline.announcer.lifecycles["shop"]?.snoozedUntil == until)
        #expect(try StateStore(path: path).lifecycles.all()["shop"]?.snoozedUntil == until)
        #expect(recorder.completed.withLock { $0 }.isEmpty)
        // Arriving during the snooze is recorded, not announced (the first side, outside, is learnt).
        let far = Coordinate(latitude: 38.7200, longitude: -9.1366)
        var silenced: [Silence] = []
        for (second, place) in [far, far, Self.shop, Self.shop].enumerated() {
            let result = pipeline.process(
                Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: place),
                receivedAt: Date(timeIntervalSince1970: 1_800_000_000), undatedUsable: false)
            #expect(result.announced.isEmpty)
            silenced += result.silenced.map(\.reason)
        }
        #expect(silenced == [.snoozed])
    }
}
