import Foundation
import GeoAlarmCore
@testable import GeoAlarmStore
import GeoAlarmSystem
import GeoAlarmTestSupport
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
        ])
    }

    /// A reminder's first sighting is kept (OwnTracks names its region by it) until it is removed.
    @Test func aRemindersFirstSightingIsKeptUntilItIsForgotten() throws {
        let store = try StateStore(path: Self.path())
        let first = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try store.noteFirstSeen(["office": first, "home": first]) == ["office": first, "home": first])
        let later = first.addingTimeInterval(3600)
        #expect(try store.noteFirstSeen(["office": later, "shop": later]) == ["office": first, "home": first, "shop": later])
        _ = try store.forget("office")
        #expect(try store.noteFirstSeen(["office": later])["office"] == later, "added again: a new region")
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
        #expect(try store.savedPresence() == ["office": SavedPresence(
            presence: .outside, time: time.addingTimeInterval(50), fenceKey: Self.office.fenceKey)])
        let history = try store.history()
        #expect(history.map(\.kind) == [.arrive, .leave])
        #expect(history.first == StateStore.HistoryEntry(
            time: time, kind: .arrive, reminderID: "office", title: "Office",
            coordinate: Coordinate(latitude: 38.7227, longitude: -9.1094), distance: 11.1))
        #expect(try store.history(since: time.addingTimeInterval(1)).map(\.kind) == [.leave])
        #expect(try store.history(reminder: "elsewhere").isEmpty)
        #expect(try store.prune(before: time.addingTimeInterval(1)) == 1)
        #expect(try store.history().count == 1)
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
        let reason = "was written by a newer geoalarm (9: from a later version); upgrade geoalarm to use it"
        #expect {
            try StateStore(path: path)
        } throws: { error in
            (error as? StoreError)?.description.contains(reason) == true
        }
        #expect {
            try StateStore(readingFrom: path)
        } throws: { error in
            (error as? StoreError)?.description.contains(reason) == true
        }
    }

    @Test func theKeeperRestoresOnlyUnchangedFencesAndFallsBackToMemory() throws {
        let path = Self.path()
        let log = CapturingLog()
        let first = StateKeeper(path: path, logger: log.logger)
        let moved = Reminder(id: "moved", title: "Moved", geometry: .circle(center: Coordinate(latitude: 38.73, longitude: -9.1094), radius: 100))
        var engine = first.engine(reminders: [Self.office, moved], settings: EngineSettings())
        for second in 0..<2 {
            let fix = Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: Coordinate(latitude: 38.7227, longitude: -9.1094))
            let outcome = engine.process(fix)
            first.save(outcome, announced: outcome.events, announcer: Announcer(timeZone: .gmt))
        }
        #expect(engine.presence(of: "office") == .inside && engine.presence(of: "moved") == .outside)
        var movedAgain = moved
        movedAgain.geometry = .circle(center: Coordinate(latitude: 38.74, longitude: -9.1094), radius: 100)
        let second = StateKeeper(path: path, logger: log.logger)
        let restored = second.engine(reminders: [Self.office, movedAgain], settings: EngineSettings())
        #expect(restored.presence(of: "office") == .inside)
        #expect(restored.presence(of: "moved") == .unknown, "its place changed: it starts over")
        #expect(log.messages.contains("info: restored the state of 1 reminders from \(path)"))

        let broken = StateKeeper(path: "/proc/nowhere/state.sqlite", logger: log.logger)
        #expect(!broken.isPersisting)
        #expect(log.messages.last?.hasSuffix("state will not persist, running in memory") == true)
        #expect(broken.engine(reminders: [Self.office], settings: EngineSettings()).presence(of: "office") == .unknown)
    }
}
