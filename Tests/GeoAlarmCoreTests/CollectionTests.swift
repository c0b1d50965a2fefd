import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// Collection places behave as reminders made from the collection's template.
struct CollectionTests {
    static let template = Reminder(
        id: "bakeries", title: "Bread at {name}", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100),
        hysteresis: 25, trigger: .both)
    static let north = Coordinate(latitude: 38.7226 + 1000 / Haversine.earthRadius * 180 / .pi, longitude: -9.1094)
    static let bakeries = ReminderCollection(id: "bakeries", template: template, places: [
        CollectionPlace(geometry: .circle(center: Scene.centre, radius: 60), name: "Padaria Central"),
        CollectionPlace(geometry: .circle(center: north, radius: 100)),
    ])

    /// A million places keep a million trackers: each must stay small.
    @Test func aTrackerTakes24Bytes() {
        #expect(MemoryLayout<FenceTracker>.stride == 24)
        let restored = FenceTracker(presence: .inside, confirmedAt: Date(timeIntervalSince1970: 1_700_000_000.25))
        #expect(restored.confirmedAt == Date(timeIntervalSince1970: 1_700_000_000.25))
        #expect(FenceTracker(presence: .outside, confirmedAt: nil).confirmedAt == nil)
    }

    /// And each place: its geometry (a circle's centre and radius, or a reference to its area) and name.
    @Test func aPlaceTakes48Bytes() {
        #expect(MemoryLayout<CollectionPlace>.stride == 48)
    }

    @Test func aMemberIsTheTemplateAtItsPlace() {
        let first = Self.bakeries.member(0)
        #expect(first.id == "bakeries/1")
        #expect(first.title == "Bread at Padaria Central")
        #expect(first.placeName == "Padaria Central")
        #expect(first.center == Scene.centre && first.geometry.radius == 60 && first.hysteresis == 25 && first.trigger == .both)
        #expect(Self.bakeries.member(1).title == "Bread at #2")
        #expect(Self.bakeries.memberIndex(of: "bakeries/2") == 1)
        // One id per place: no leading zero, sign, blank or other spelling of the number.
        for unknown in ["bakeries/3", "bakeries/0", "bakeries", "bakeries2/1", "bakeries/x", "bakeries/02", "bakeries/+2", "bakeries/ 2",
                        "bakeries/2 ", "bakeries/-1", "bakeries/٢", "bakeries/99999999999999999999999"] {
            #expect(Self.bakeries.memberIndex(of: unknown) == nil, "\(unknown)")
        }
    }

    @Test func placesArriveAndLeaveButTheirFirstOutsideIsNeitherAnnouncedNorKept() {
        var engine = GeofenceEngine(
            reminders: [Scene.reminder()], collections: [Self.bakeries], settings: EngineSettings(announceInitial: true))
        #expect(engine.fenceCount == 3)
        let first = engine.process(Scene.fix(500, at: 0))
        let second = engine.process(Scene.fix(500, at: 1))
        #expect(first.changes.isEmpty)
        // The reminder's first side is kept and announced (announce_initial); the places' are not.
        #expect(second.changes.map(\.reminderID) == ["office"])
        #expect(second.events.map(\.reminder.id) == ["office"])
        #expect(Scene.run(&engine, [990, 995], start: 2) == ["3:arrive:bakeries/2"])
        #expect(engine.presence(of: "bakeries/2") == .inside)
        #expect(engine.reminder(id: "bakeries/2")?.title == "Bread at #2")
        #expect(Scene.run(&engine, [0, 0], start: 4) == ["5:arrive:office", "5:arrive:bakeries/1", "5:leave:bakeries/2"])
    }

    @Test func reloadAndRestartKeepTheSidesOfUnchangedPlaces() {
        var old = GeofenceEngine(reminders: [], collections: [Self.bakeries])
        _ = Scene.run(&old, [0, 0])
        #expect(old.presence(of: "bakeries/1") == .inside)
        var moved = Self.bakeries
        moved.places[0].geometry = .circle(center: Scene.centre, radius: 80)
        let reloaded = GeofenceEngine(reminders: [], collections: [moved], settings: EngineSettings(), carryingStateFrom: old)
        #expect(reloaded.presence(of: "bakeries/1") == .unknown)
        #expect(reloaded.presence(of: "bakeries/2") == .outside)
        #expect(reloaded.keptStates == 1)
        let saved = ["bakeries/1": SavedPresence(presence: .inside, time: nil, fenceKey: Self.bakeries.member(0).fenceKey)]
        let restarted = GeofenceEngine(reminders: [], collections: [Self.bakeries], settings: EngineSettings(), restoring: saved)
        #expect(restarted.presence(of: "bakeries/1") == .inside)
        let edited = GeofenceEngine(reminders: [], collections: [moved], settings: EngineSettings(), restoring: saved)
        #expect(edited.presence(of: "bakeries/1") == .unknown)
    }

    @Test func aDisabledCollectionIsNotTracked() {
        var off = Self.bakeries
        off.template.isEnabled = false
        let engine = GeofenceEngine(reminders: [], collections: [off])
        #expect(engine.fenceCount == 0)
        #expect(engine.presence(of: "bakeries/1") == nil)
    }

    /// A task's LOCATION names a collection as a person writes it; an id written as it is wins
    /// over an earlier one that is only alike.
    @Test func aCollectionIsNamedByItsIdOrWordsLikeIt() {
        func collection(_ id: String) -> ReminderCollection {
            ReminderCollection(id: id, template: Self.template, places: Self.bakeries.places)
        }
        let collections = [collection("Shops"), collection("shops"), collection("super_markets")]
        #expect(ReminderCollection.named("shops", among: collections)?.id == "shops")
        #expect(ReminderCollection.named("Shops", among: collections)?.id == "Shops")
        #expect(ReminderCollection.named("SHOPS", among: collections)?.id == "Shops")
        #expect(ReminderCollection.named("Super Markets", among: collections)?.id == "super_markets")
        #expect(ReminderCollection.named("Süper-markets", among: collections)?.id == "super_markets")
        #expect(ReminderCollection.named("bakeries", among: collections) == nil)
        #expect(ReminderCollection.named("  ", among: collections) == nil)
    }

    /// A list renamed: a task's id, and each of its places' and time alarms', take the new one;
    /// an id that only begins alike does not.
    @Test func aRenameReachesATasksPlacesAndTimeAlarms() {
        let newIDs = ["errands/milk": "shopping/milk"]
        #expect(ReminderCollection.renamedID("errands/milk", by: newIDs) == "shopping/milk")
        #expect(ReminderCollection.renamedID("errands/milk/12", by: newIDs) == "shopping/milk/12")
        #expect(ReminderCollection.renamedID("errands/milk/time-1", by: newIDs) == "shopping/milk/time-1")
        #expect(ReminderCollection.renamedID("errands/milkshake", by: newIDs) == nil)
        #expect(ReminderCollection.renamedID("errands/milkshake/1", by: newIDs) == nil)
        var sides = ["errands/milk/1": 1, "errands/milk/2": 2, "shopping/milk/2": 0, "errands/bread": 3]
        ReminderCollection.rename(&sides, by: newIDs)
        #expect(sides == ["shopping/milk/1": 1, "shopping/milk/2": 2, "errands/bread": 3])
    }
}
