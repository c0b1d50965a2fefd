import Foundation
import GeoAlarmCore
@testable import GeoAlarmStore
import GeoAlarmSystem
import GeoAlarmTestSupport
import Synchronization
import Testing

struct StateStoreTests {
    static func path() -> String { Command.scratchState() }

    static let office = Reminder(id: "office", title: "Office", geometry: .circle(center: Coordinate(latitude: 38.7226, longitude: -9.1094), radius: 100), hysteresis: 25, trigger: .both)

    static func event(_ kind: EventKind, at second: Double, reminder: Reminder = office) -> GeofenceEvent {
        GeofenceEvent(kind: kind, reminder: reminder,
                      fix: Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + second), coordinate: Coordinate(latitude: 38.7227, longitude: -9.1094)),
                      distance: 11.1)
    }

    @Test func aNewStoreIsPrivateInWALModeAndMigratesOnce() throws {
        let path = Self.path()
        _ = try StateStore(path: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: (path as NSString).deletingLastPathComponent)
        #expect((folder[.posixPermissions] as? Int) == 0o700)
        _ = try StateStore(path: path)  // opening again must not migrate twice
        let journal = try Command.run([path, "PRAGMA journal_mode;"], executable: "/usr/bin/sqlite3")
        #expect(journal.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "wal")
        let migrations = try Command.run([path, "SELECT identifier FROM grdb_migrations;"], executable: "/usr/bin/sqlite3")
        #expect(migrations.stdoutLines == [
            "1: reminder state and history", "2: reminder lifecycle and last fix",
            "3: history of time alarms, which have no position",
            "4: tracked devices and the MQTT outbox",
            "5: when each reminder was first seen (OwnTracks regions' wtst)",
            "6: named queues and string sets, the MQTT outbox and discovery topics moved into them",
            "7: the last fix's error estimate (the map's circle around you)",
            "8: each reminder's proximity (distance to its edge, direction of travel, time to arrival)",
            "9: the ids of task lists' reminders by their tasks' UIDs, so that their state follows a renamed list or a moved task",
            "10: the last good copy of task lists on CalDAV servers",
            "11: this machine's sides and the reminders' lifecycles in tables of their own",
        ])
    }

    /// A queue keeps its order across opening the file again, drops its oldest beyond the limit,
    /// forgets what was delivered, and never mixes with another queue.
    @Test func aQueueKeepsOrderDropsTheOldestAndForgetsWhatWasDelivered() throws {
        let path = Self.path()
        let outbox = try StateStore(path: path).queue(named: "outbox")
        let other = try StateStore(path: path).queue(named: "other")
        for number in 1...5 {
            let dropped = try outbox.append([QueuedMessage(key: "t", payload: Array("m\(number)".utf8))], limit: 3).dropped
            #expect(dropped == (number > 3 ? 1 : 0))
            try other.append([QueuedMessage(key: "o", payload: [UInt8(number)])], limit: 10)
        }
        let waiting = try StateStore(path: path).queue(named: "outbox").all()
        #expect(waiting.map { String(decoding: $0.payload, as: UTF8.self) } == ["m3", "m4", "m5"])
        #expect(waiting.map(\.number) == waiting.map(\.number).sorted())
        try outbox.remove([waiting[0].number])
        try outbox.remove([waiting[0].number])
        #expect(try outbox.all().map(\.number) == Array(waiting.dropFirst().map(\.number)))
        // Several at once, in one transaction each: beyond the limit the oldest of the file go.
        let appended = try outbox.append(["x", "y", "z"].map { QueuedMessage(key: "t", payload: Array($0.utf8)) }, limit: 3)
        #expect(appended.numbers.count == 3 && appended.numbers == appended.numbers.sorted() && appended.dropped == 2)
        try outbox.remove(Array(appended.numbers.prefix(2)))
        #expect(try outbox.all().map { String(decoding: $0.payload, as: UTF8.self) } == ["z"])
        #expect(try other.all().map(\.payload) == (1...5).map { [UInt8($0)] }, "another queue's limit and removals leave it be")
    }

    @Test func aStringSetIsReplacedWhole() throws {
        let store = try StateStore(path: Self.path())
        #expect(try store.stringSet(named: "topics").values().isEmpty)
        try store.stringSet(named: "topics").replace(with: ["a", "b"])
        try store.stringSet(named: "others").replace(with: ["x"])
        try store.stringSet(named: "topics").replace(with: ["b", "c"])
        #expect(try store.stringSet(named: "topics").values() == ["b", "c"])
        #expect(try store.stringSet(named: "others").values() == ["x"])
    }

    /// A file of schema 5 kept the MQTT outbox and discovery topics in tables of their own:
    /// opened by this build, they are in the named queue and set, in order and numbered as before,
    /// and new messages are numbered after the highest number the outbox ever gave.
    @Test func schemaFivesOutboxAndDiscoveryTopicsAreCarriedOver() throws {
        let path = Self.path()
        _ = try StateStore(path: path)
        // Schema 5 as migration 4 made it, holding what a broker outage left behind.
        let back = try Command.run([path, """
            DROP TABLE queue; DROP TABLE string_set;
            DELETE FROM grdb_migrations WHERE identifier LIKE '6:%';
            DELETE FROM sqlite_sequence WHERE name = 'queue';
            CREATE TABLE mqtt_outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL, payload BLOB NOT NULL);
            CREATE TABLE mqtt_discovery (topic TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
            INSERT INTO mqtt_outbox (id, topic, payload) VALUES (7, 'geoalarm/a/event', X'6669727374'), (9, 'geoalarm/a/event', X'7365636F6E64');
            UPDATE sqlite_sequence SET seq = 20 WHERE name = 'mqtt_outbox';
            INSERT INTO mqtt_discovery VALUES ('homeassistant/device_tracker/a/config'), ('homeassistant/sensor/b/config');
            """], executable: "/usr/bin/sqlite3")
        #expect(back.status == 0, "\(back.stderr)")
        let store = try StateStore(path: path)
        let outbox = store.queue(named: "mqtt-outbox")
        let carried = try outbox.all()
        #expect(carried.map(\.number) == [7, 9])
        #expect(carried.map { String(decoding: $0.payload, as: UTF8.self) } == ["first", "second"])
        #expect(carried.allSatisfy { $0.key == "geoalarm/a/event" })
        #expect(try outbox.append([QueuedMessage(key: "k", payload: [])], limit: 10).numbers == [21], "after the highest number given")
        #expect(try store.stringSet(named: "mqtt-discovery").values()
                == ["homeassistant/device_tracker/a/config", "homeassistant/sensor/b/config"])
        #expect(store.schemaVersion() == StateStore.knownSchemaVersion)
    }

    /// A reminder's first sighting is kept (OwnTracks names its region by it) until it is removed.
    @Test func aRemindersFirstSightingIsKeptUntilItIsForgotten() throws {
        let store = try StateStore(path: Self.path())
        let first = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try store.lifecycles.noteFirstSeen(["office": first, "home": first]) == ["office": first, "home": first])
        let later = first.addingTimeInterval(3600)
        #expect(try store.lifecycles.noteFirstSeen(["office": later, "shop": later]) == ["office": first, "home": first, "shop": later])
        _ = try store.forget("office")
        #expect(try store.lifecycles.noteFirstSeen(["office": later])["office"] == later, "added again: a new region")
    }

    @Test func changesAndEventsAreKeptAndRead() throws {
        let store = try StateStore(path: Self.path())
        let time = Date(timeIntervalSince1970: 1_800_000_010)
        func change(_ event: GeofenceEvent) -> PresenceChange {
            PresenceChange(reminder: event.reminder, presence: event.kind == .arrive ? .inside : .outside, fix: event.fix,
                           distance: event.distance, isInitial: false)
        }
        try store.record([change(Self.event(.arrive, at: 10))], events: [Self.event(.arrive, at: 10)])
        try store.record([change(Self.event(.leave, at: 60))], events: [Self.event(.leave, at: 60)])
        #expect(try store.sides.saved() == ["office": SavedPresence(
            presence: .outside, time: time.addingTimeInterval(50), fenceKey: Self.office.fenceKey)])
        let history = try store.history.entries()
        #expect(history.map(\.kind) == [.arrive, .leave])
        #expect(history.first == EventHistory.Entry(
            time: time, kind: .arrive, reminderID: "office", title: "Office",
            coordinate: Coordinate(latitude: 38.7227, longitude: -9.1094), distance: 11.1))
        #expect(try store.history.entries(since: time.addingTimeInterval(1)).map(\.kind) == [.leave])
        #expect(try store.history.entries(until: time.addingTimeInterval(50)).map(\.kind) == [.arrive], "before, not at, until")
        #expect(try store.history.entries(since: time, until: time.addingTimeInterval(51)).map(\.kind) == [.arrive, .leave])
        #expect(try store.history.entries(reminder: "elsewhere").isEmpty)
        #expect(try store.history.entries(last: 1).map(\.kind) == [.leave], "the latest one")
        #expect(try store.history.entries(last: 5).map(\.kind) == [.arrive, .leave], "oldest first")
        #expect(try store.history.prune(before: time.addingTimeInterval(1)) == 1)
        #expect(try store.history.entries().count == 1)
    }

    /// The map draws the last fix with its error circle.
    /// Ending a place's snooze ends what silences it: its own snooze, and its collection's when
    /// the collection was snoozed whole; another collection's, or a reminder's that only begins
    /// alike, stays.
    @Test func endingAPlacesSnoozeEndsItsCollectionsToo() throws {
        let store = try StateStore(path: Self.path())
        let until = Date(timeIntervalSince1970: 1_800_003_600)
        for id in ["shops", "shops/2", "shop", "bakeries"] { try store.lifecycles.snooze(id, until: until) }
        #expect(try store.lifecycles.endSnooze(of: "shops/2") == ["shops/2", "shops"])
        #expect(try store.lifecycles.all().filter { $0.value.snoozedUntil != nil }.keys.sorted() == ["bakeries", "shop"])
        #expect(try store.lifecycles.endSnooze(of: "shops/2").isEmpty, "nothing left to end")
        try store.lifecycles.snooze("shops", until: until)
        #expect(try store.lifecycles.endSnooze(of: "shops/7") == ["shops"])
        #expect(try store.lifecycles.endSnooze(of: "shop") == ["shop"])
        try store.lifecycles.snooze("errands", until: until)
        #expect(try store.lifecycles.endSnooze(of: "errands/milk").isEmpty, "a task of list Errands is no place of the reminder errands")
        #expect(try store.lifecycles.all().filter { $0.value.snoozedUntil != nil }.keys.sorted() == ["bakeries", "errands"])
    }

    /// Completions made at once through stores of their own (as the agent, a task list's sync
    /// and a command each hold one): exactly one makes it, and every other is told that one's
    /// time, which is the one kept. Then only the first of two un-completions undoes it.
    @Test func ofCompletionsAtOnceTheFirstStandsAndTheOthersAreToldIt() throws {
        let path = Self.path()
        try StateStore(path: path).lifecycles.snooze("office", until: nil)
        let stores = try (0..<8).map { _ throws in try StateStore(path: path) }
        let answers = Mutex<[Int: Result<Date?, StoreError>]>([:])
        DispatchQueue.concurrentPerform(iterations: stores.count) { index in
            let answer = Result { () throws(StoreError) in
                try stores[index].lifecycles.complete("office", at: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)))
            }
            answers.withLock { $0[index] = answer }
        }
        let all = try answers.withLock { $0 }.mapValues { try $0.get() }
        let winners = all.filter { $0.value == nil }.map(\.key)
        #expect(all.count == stores.count && winners.count == 1, "\(all)")
        let kept = try #require(try StateStore(path: path).lifecycles.all()["office"]?.completedAt)
        #expect(winners.first.map { Date(timeIntervalSince1970: 1_800_000_000 + Double($0)) } == kept)
        #expect(all.values.compactMap { $0 }.allSatisfy { $0 == kept }, "\(all)")
        #expect(try stores[0].lifecycles.uncomplete("office") && !stores[1].lifecycles.uncomplete("office"))
        #expect(try StateStore(path: path).lifecycles.all()["office"]?.completedAt == nil)
    }

    /// The agent's Done, pressed before it has read a command's completion, keeps that earlier
    /// completion in the file; after an un-completion, a Done is written.
    @Test func theAgentsDoneKeepsACompletionMadeMeanwhile() throws {
        let path = Self.path()
        let keeper = StateKeeper(path: path, logger: CapturingLog().logger)
        _ = keeper.lifecycles()
        try StateStore(path: path).lifecycles.complete("office", at: Date(timeIntervalSince1970: 1_800_000_000))
        keeper.apply(.complete(at: Date(timeIntervalSince1970: 1_800_000_500)), to: "office")
        #expect(try StateStore(path: path).lifecycles.all()["office"]?.completedAt == Date(timeIntervalSince1970: 1_800_000_000))
        try StateStore(path: path).lifecycles.uncomplete("office")
        keeper.apply(.complete(at: Date(timeIntervalSince1970: 1_800_000_900)), to: "office")
        #expect(try StateStore(path: path).lifecycles.all()["office"]?.completedAt == Date(timeIntervalSince1970: 1_800_000_900))
    }

    @Test func theLastFixKeepsItsErrorEstimate() throws {
        let store = try StateStore(path: Self.path())
        #expect(try store.sides.lastFix() == nil)
        let fix = Fix(time: Date(timeIntervalSince1970: 1_800_000_000), coordinate: Coordinate(latitude: 38.71, longitude: -9.13), horizontalError: 7.5)
        try store.sides.setLastFix(fix)
        #expect(try store.sides.lastFix() == fix)
        let unknown = Fix(time: nil, coordinate: Coordinate(latitude: 1, longitude: 2))
        try store.sides.setLastFix(unknown)
        #expect(try store.sides.lastFix() == unknown)
    }

    /// A last fix on no map, as a file edited by hand may hold, is none: `status`, `list`,
    /// `add --here` and the map measure from nowhere rather than from it.
    @Test(arguments: ["lat = 1e300", "lat = 91", "lon = -181", "lon = 9e999"])
    func aLastFixOnNoMapIsNone(edit: String) throws {
        let path = Self.path()
        try StateStore(path: path).sides.setLastFix(Fix(time: nil, coordinate: Coordinate(latitude: 38.71, longitude: -9.13)))
        _ = try Command.run([path, "UPDATE last_fix SET \(edit);"], executable: "/usr/bin/sqlite3")
        #expect(try StateStore(path: path).sides.lastFix() == nil)
    }

    @Test func anUnusableFileIsNamedWithWhatToDo() throws {
        let garbage = Self.path()
        try FileManager.default.createDirectory(atPath: (garbage as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(String(repeating: "this is not a database ", count: 200).utf8).write(to: URL(fileURLWithPath: garbage))
        #expect {
            try StateStore(path: garbage)
        } throws: { error in
            let text = (error as? StoreError)?.description ?? ""
            return text.hasPrefix("state file \(garbage): ") && text.contains("not a database") && text.hasSuffix("name another with --state)")
        }
        #expect {
            try StateStore(path: "/proc/geoalarm/state.sqlite")
        } throws: { error in
            (error as? StoreError)?.description.hasPrefix("state file /proc/geoalarm/state.sqlite: cannot create its folder") == true
        }
    }

    /// A named pipe or a device node as the state file is refused at once, neither opened (a
    /// pipe would wait for a writer for ever) nor made private (a device is not ours to change).
    @Test func aPathThatIsNoRegularFileIsRefusedUntouched() throws {
        let folder = (Self.path() as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let pipe = folder + "/pipe"
        #expect(mkfifo(pipe, 0o644) == 0)
        var nodes = [(pipe, "is a named pipe, not a regular file")]
        // A device node of our own (the null device's numbers): only root may make one.
        let device = folder + "/null"
        if geteuid() == 0 {
            #expect(mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0, "major 1, minor 3, as glibc's makedev encodes small numbers")
            nodes.append((device, "is a character device, not a regular file"))
        }
        for (path, reason) in nodes {
            let before = try #require(try System.fileStatus(path))
            for open in [{ _ = try StateStore(path: path) }, { _ = try StateStore(readingFrom: path) }] as [() throws -> Void] {
                #expect {
                    try open()
                } throws: { error in
                    (error as? StoreError)?.description.hasPrefix("state file \(path): \(reason)") == true
                }
            }
            let after = try #require(try System.fileStatus(path))
            #expect(after.st_mode == before.st_mode, "\(path) left as it was")
        }
    }

    /// A file a newer geoalarm wrote (a schema change this build does not know) is refused by
    /// every way in: neither migrated nor read.
    @Test func aFileFromANewerGeoalarmIsRefused() throws {
        let path = Self.path()
        _ = try StateStore(path: path)
        let future = try Command.run(
            [path, "INSERT INTO grdb_migrations VALUES ('9: from a later version');"], executable: "/usr/bin/sqlite3")
        #expect(future.status == 0, "\(future.stderr)")
        let reason = "was written by a newer geoalarm (9: from a later version) (upgrade geoalarm to use it, and keep the file"
        for open in [{ _ = try StateStore(path: path) }, { _ = try StateStore(readingFrom: path) }] as [() throws -> Void] {
            #expect {
                try open()
            } throws: { error in
                let text = (error as? StoreError)?.description ?? ""
                return text.contains(reason) && !text.contains("move it away")
            }
        }
    }

    /// This machine's proximities are kept, the latest of each reminder; a tracked device's are not.
    @Test func theKeeperKeepsThisMachinesProximities() throws {
        let path = Self.path()
        let log = CapturingLog()
        let keeper = StateKeeper(path: path, logger: log.logger)
        func outcome(_ proximity: Proximity, second: Double) -> FixOutcome {
            .accepted([], changes: [], proximities: [ProximityChange(
                reminderID: "office", fenceKey: Self.office.fenceKey, proximity: proximity,
                time: Date(timeIntervalSince1970: 1_800_000_000 + second), device: nil)])
        }
        keeper.commit([FixRecord(proximities: outcome(Proximity(distance: 5000, direction: .unknown), second: 0).proximities)])
        keeper.commit([FixRecord(proximities: outcome(Proximity(distance: 4200, direction: .towards, closingSpeed: 14, eta: 300), second: 60).proximities)])
        // A tracked device's record carries none (FixPipeline keeps this machine's only): its side is kept under its name.
        keeper.scoped(to: "alice/phone").commit([FixRecord(device: "alice/phone")])
        let saved = try #require(try StateStore(readingFrom: path)).sides.proximities()
        #expect(saved == ["office": SavedProximity(
            proximity: Proximity(distance: 4200, direction: .towards, eta: 300), time: Date(timeIntervalSince1970: 1_800_000_060),
            fenceKey: Self.office.fenceKey)])
        #expect(log.messages.isEmpty, "\(log.messages)")
    }

    /// The core's words are written; `away_from`, which files written before it had words of its
    /// own hold, is read as `away`.
    @Test func directionsAreReadInTheCoresWordsAndTheOldOne() throws {
        let path = Self.path()
        let keeper = StateKeeper(path: path, logger: CapturingLog().logger)
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        keeper.commit([FixRecord(proximities: ProximityChanges(["office", "home"].map { id in
            ProximityChange(reminderID: id, fenceKey: Self.office.fenceKey, proximity: Proximity(distance: 900, direction: .away), time: time, device: nil)
        }))])
        let written = try Command.run([path, "SELECT reminder, direction FROM proximity ORDER BY reminder;"], executable: "/usr/bin/sqlite3")
        #expect(written.stdout == "home|away\noffice|away\n")
        _ = try Command.run([path, "UPDATE proximity SET direction = 'away_from' WHERE reminder = 'home';"], executable: "/usr/bin/sqlite3")
        let saved = try #require(try StateStore(readingFrom: path)).sides.proximities()
        #expect(saved["home"]?.proximity.direction == .away && saved["office"]?.proximity.direction == .away)
    }

    @Test func theKeeperRestoresOnlyUnchangedFencesAndFallsBackToMemory() throws {
        let path = Self.path()
        let log = CapturingLog()
        let first = StateKeeper(path: path, logger: log.logger)
        let moved = Reminder(id: "moved", title: "Moved", geometry: .circle(center: Coordinate(latitude: 38.73, longitude: -9.1094), radius: 100))
        var engine = Self.engine([Self.office, moved], from: first)
        for second in 0..<2 {
            let fix = Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: Coordinate(latitude: 38.7227, longitude: -9.1094))
            let outcome = engine.process(fix)
            first.commit([FixRecord(changes: outcome.changes, events: outcome.events)])
        }
        #expect(engine.presence(of: "office") == .inside && engine.presence(of: "moved") == .outside)
        var movedAgain = moved
        movedAgain.geometry = .circle(center: Coordinate(latitude: 38.74, longitude: -9.1094), radius: 100)
        let second = StateKeeper(path: path, logger: log.logger)
        let restored = Self.engine([Self.office, movedAgain], from: second)
        #expect(restored.presence(of: "office") == .inside)
        #expect(restored.presence(of: "moved") == .unknown, "its place changed: it starts over")
        #expect(log.messages.contains("info: restored the state of 1 reminder from \(path)"))

        let broken = StateKeeper(path: "/proc/nowhere/state.sqlite", logger: log.logger)
        #expect(!broken.isPersisting)
        #expect(log.messages.last?.hasSuffix("running in memory until it can be written (tried again with each change)") == true)
        #expect(Self.engine([Self.office], from: broken).presence(of: "office") == .unknown)
    }

    /// An engine for `reminders` from what `keeper` kept, as the pipeline makes one.
    static func engine(_ reminders: [Reminder], from keeper: StateKeeper) -> GeofenceEngine {
        let engine = GeofenceEngine(reminders: reminders, settings: EngineSettings(), restoring: keeper.savedPresence())
        keeper.restored(engine.keptStates)
        return engine
    }

    /// A file of every earlier schema is read as it is by the read-only commands (`status`,
    /// `history`, the map): each question has its answer, and the file is left unchanged.
    @Test(arguments: 1..<Schema.changes.count)
    func anOlderFileIsReadAsItIs(schema: Int) throws {
        let path = try Self.olderFile(schema: schema)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try #require(try StateStore(readingFrom: path))
        #expect(store.schemaVersion() == schema)
        try Self.expectOlderFilesState(store)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the file is not changed")
        let applied = try Command.run([path, "SELECT count(*) FROM grdb_migrations;"], executable: "/usr/bin/sqlite3")
        #expect(applied.stdout == "\(schema)\n")
    }

    /// A file of every earlier schema opened to write is brought up to date, keeping everything
    /// it held: sides, lifecycles (one without a side among them) and history.
    @Test(arguments: 1..<Schema.changes.count)
    func anOlderFileIsMigratedKeepingItsState(schema: Int) throws {
        let path = try Self.olderFile(schema: schema)
        let store = try StateStore(path: path)
        #expect(store.schemaVersion() == Schema.changes.count)
        try Self.expectOlderFilesState(store)
    }

    /// A file of `schema` holding a side with its lifecycle, a lifecycle alone and an event.
    static func olderFile(schema: Int) throws -> String {
        let path = Self.path()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var script = "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);\n"
        for change in Schema.changes.prefix(schema) {
            let quoted = change.identifier.replacingOccurrences(of: "'", with: "''")
            script += change.sql + ";\nINSERT INTO grdb_migrations VALUES ('\(quoted)');\n"
        }
        script += "INSERT INTO reminder_state (reminder, presence, confirmed_at, fence, last_fired) VALUES ('office', 'inside', 1800000000, 'k', 1800000001);\n"
        // A lifecycle without a side, as schema 1 to 10 kept it (a time alarm's).
        script += "INSERT INTO reminder_state (reminder, presence, fence, last_fired) VALUES ('call', 'unknown', '', 1800000002);\n"
        script += "INSERT INTO history (time, event, reminder, title, lat, lon, distance_m) VALUES (1800000000, 'arrive', 'office', 'Office', 38.7, -9.1, 12);\n"
        let made = try Command.run([path], stdin: script, executable: "/usr/bin/sqlite3")
        #expect(made.status == 0, "\(made.stderr)")
        return path
    }

    /// What ``olderFile(schema:)`` holds, as `store` answers it.
    static func expectOlderFilesState(_ store: StateStore) throws {
        #expect(try store.sides.saved()["office"]?.presence == .inside)
        #expect(try store.history.entries().map(\.reminderID) == ["office"])
        #expect(try store.sides.proximities().isEmpty)
        #expect(try store.lifecycles.all().mapValues(\.lastFired) == [
            "office": Date(timeIntervalSince1970: 1_800_000_001), "call": Date(timeIntervalSince1970: 1_800_000_002),
        ])
        #expect(try store.sides.saved().keys.sorted() == ["office"], "a lifecycle's placeholder row is no side")
        _ = try store.sides.lastFix()
    }

    /// A tracked device's sides are carried into the file made after a deletion: read from the
    /// file that left (still open), as the keeper keeps no copy of a fleet's sides.
    @Test func aDeletedFileCarriesEveryDevicesSides() throws {
        let path = Self.path()
        let keeper = StateKeeper(path: path, logger: CapturingLog().logger)
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        let fix = Fix(time: time, coordinate: Self.office.center)
        for device in ["alice/phone", "bob/phone"] {
            keeper.scoped(to: device).commit([FixRecord(
                changes: [PresenceChange(reminder: Self.office, presence: .inside, fix: fix, distance: 0, isInitial: true)], device: device)])
        }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        keeper.commit([FixRecord(lastFix: fix)])
        let store = try #require(try StateStore(readingFrom: path))
        for device in ["alice/phone", "bob/phone"] {
            #expect(try store.sides.saved(device: device)["office"] == SavedPresence(presence: .inside, time: time, fenceKey: Self.office.fenceKey))
        }
        #expect(try store.sides.trackedDevices() == ["alice/phone", "bob/phone"])
    }

    /// Writes beyond what waits in memory for a file that cannot be written: the oldest go, but
    /// the sides they set are written once the file can be.
    @Test func theSidesOfWritesDroppedFromMemoryAreKept() throws {
        let folder = Command.scratchState() + "-folder"
        // A file where the state file's folder should be: the store cannot be made.
        try FileManager.default.createDirectory(
            atPath: (folder as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: folder, contents: Data()))
        let path = folder + "/state.sqlite"
        let log = CapturingLog()
        let keeper = StateKeeper(path: path, logger: log.logger)
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        let fix = Fix(time: time, coordinate: Self.office.center)
        let side = FixRecord(changes: [PresenceChange(reminder: Self.office, presence: .inside, fix: fix, distance: 0, isInitial: true)])
        let later = (1...100_000).map { FixRecord(lastFix: Fix(time: time.addingTimeInterval(Double($0)), coordinate: Self.office.center)) }
        keeper.commit([side] + later)
        try FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        keeper.commit([FixRecord(lastFix: Fix(time: time.addingTimeInterval(200_000), coordinate: Self.office.center))])
        let store = try #require(try StateStore(readingFrom: path))
        #expect(try store.sides.saved()["office"]?.presence == .inside)
        #expect(try store.sides.lastFix()?.time == time.addingTimeInterval(200_000))
        #expect(log.messages.contains { $0.contains("2 older ones did not fit in memory and are lost, but for the sides they set") }, "\(log.messages)")
    }

    /// The state file deleted while the keeper writes: the next write makes a new file at the
    /// path with what the keeper holds (sides, lifecycles, last fix), said once; a lifecycle a
    /// command set in that new file stays, and is read.
    @Test func aDeletedFileIsMadeAgainWithWhatTheKeeperHolds() throws {
        let path = Self.path()
        let log = CapturingLog()
        let keeper = StateKeeper(path: path, logger: log.logger)
        let home = Reminder(id: "home", title: "Home", geometry: .circle(center: Coordinate(latitude: 38.75, longitude: -9.1), radius: 100))
        var engine = Self.engine([Self.office, home], from: keeper)
        _ = keeper.lifecycles()
        keeper.apply(.snooze(until: Date(timeIntervalSince1970: 1_900_000_000)), to: "home")
        for second in 0..<2 {
            let outcome = engine.process(Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: Coordinate(latitude: 38.7227, longitude: -9.1094)))
            keeper.commit([FixRecord(changes: outcome.changes, events: outcome.events)])
        }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        // A command completes a reminder meanwhile: it makes a new file at the path.
        try StateStore(path: path).lifecycles.complete("office", at: Date(timeIntervalSince1970: 1_800_000_100))
        #expect(keeper.changedByOthers(), "another file at the path is one to read")
        let lifecycles = keeper.lifecycles()
        #expect(lifecycles["office"]?.completedAt == Date(timeIntervalSince1970: 1_800_000_100), "the command's completion is read")
        #expect(lifecycles["home"]?.snoozedUntil == Date(timeIntervalSince1970: 1_900_000_000), "the keeper's snooze carried over")
        keeper.commit([FixRecord(lastFix: Fix(time: Date(timeIntervalSince1970: 1_800_000_200), coordinate: Coordinate(latitude: 38.7, longitude: -9.1)))])
        let store = try #require(try StateStore(readingFrom: path))
        #expect(try store.sides.saved()["office"]?.presence == .inside && store.sides.saved()["home"]?.presence == .outside)
        #expect(try store.sides.lastFix()?.time == Date(timeIntervalSince1970: 1_800_000_200))
        #expect(log.messages.filter { $0.contains("was deleted or replaced") }.count == 1, "\(log.messages)")
        // Deleted again, with nothing made in its place: the next write makes it.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        keeper.commit([FixRecord(lastFix: Fix(time: Date(timeIntervalSince1970: 1_800_000_300), coordinate: Coordinate(latitude: 38.7, longitude: -9.1)))])
        let again = try #require(try StateStore(readingFrom: path))
        #expect(try again.sides.saved()["office"]?.presence == .inside && again.lifecycles.all()["office"]?.completedAt != nil)
        #expect(try again.sides.lastFix()?.time == Date(timeIntervalSince1970: 1_800_000_300))
    }
}
