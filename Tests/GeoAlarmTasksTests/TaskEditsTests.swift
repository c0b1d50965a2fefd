import Foundation
import GeoAlarmCore
@testable import GeoAlarmICalendar
@testable import GeoAlarmTasks
import GeoAlarmTestSupport
import PropertyBased
import Testing

/// Completing, uncompleting and making tasks: only the lines that say so change.
struct TaskEditsTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// Times read in UTC; `Europe/Lisbon` is UTC in winter.
    static let zones = ICalendarZones(local: FixedOffset.utc, named: { $0 == "Europe/Lisbon" ? FixedOffset.utc : nil })

    /// An object's content lines as written (each with its continuations), in order.
    static func lines(_ bytes: [UInt8]) throws -> [String] {
        var lines: [String] = []
        func walk(_ component: Component) {
            lines.append(String(decoding: bytes[component.range.lowerBound...].prefix { $0 != 0x0A }, as: UTF8.self))
            for property in component.properties { lines.append(String(decoding: bytes[property.range], as: UTF8.self)) }
            for inner in component.components { walk(inner) }
        }
        walk(try ICalendarReader.read(bytes))
        return lines
    }

    /// The lines of `after` that are not in `before`, and those of `before` gone from `after`.
    static func difference(_ before: [UInt8], _ after: [UInt8]) throws -> (added: [String], removed: [String]) {
        let old = try lines(before), new = try lines(after)
        return (new.filter { !old.contains($0) }, old.filter { !new.contains($0) })
    }

    static let apple = """
        BEGIN:VCALENDAR\r
        VERSION:2.0\r
        BEGIN:VTODO\r
        CREATED:20201105T123437Z\r
        DTSTAMP:20201105T123513Z\r
        LAST-MODIFIED:20201105T123512Z\r
        SEQUENCE:3\r
        STATUS:NEEDS-ACTION\r
        SUMMARY:Location Alert\r
        UID:9710D97C-49D1-4395-90DB-14EE17E0B77A\r
        X-UNKNOWN;X-PARAM="kept":as it is\r
        BEGIN:VALARM\r
        ACTION:DISPLAY\r
        TRIGGER;VALUE=DATE-TIME:19760401T005545Z\r
        X-APPLE-PROXIMITY:ARRIVE\r
        X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-ADDRESS=Via Monte Ceneri 1\\\\n6802 R\r
         ivera\\\\nSwitzerland;X-APPLE-RADIUS=100;X-APPLE-REFERENCEFRAME=1;X-TITLE=Vi\r
         a Monte Ceneri 1 6802 Rivera Switzerland:geo:46.141813\\,8.917549\r
        END:VALARM\r
        END:VTODO\r
        END:VCALENDAR\r

        """

    @Test func completingSetsItsLinesAndKeepsEveryOtherByte() throws {
        let before = Array(Self.apple.utf8)
        let after = try TaskEdits.completing(before, uid: "9710D97C-49D1-4395-90DB-14EE17E0B77A", at: Self.now, zones: Self.zones)
        let (added, removed) = try Self.difference(before, after)
        #expect(Set(added) == [
            "STATUS:COMPLETED\r\n", "COMPLETED:20270115T080000Z\r\n", "PERCENT-COMPLETE:100\r\n",
            "LAST-MODIFIED:20270115T080000Z\r\n", "DTSTAMP:20270115T080000Z\r\n",
        ])
        #expect(Set(removed) == ["STATUS:NEEDS-ACTION\r\n", "LAST-MODIFIED:20201105T123512Z\r\n", "DTSTAMP:20201105T123513Z\r\n"])
        // Every other byte, the folded location and the unknown property among them, is where it was.
        let text = String(decoding: after, as: UTF8.self)
        #expect(text.contains("SEQUENCE:3\r\n") && text.contains("X-UNKNOWN;X-PARAM=\"kept\":as it is\r\n"))
        #expect(text.contains("X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-ADDRESS=Via Monte Ceneri 1\\\\n6802 R\r\n ivera"))
        #expect(text.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nCREATED:20201105T123437Z\r\nDTSTAMP:20270115T080000Z\r\n"))
        let task = try TaskObject(try #require(try ICalendarReader.read(after).components("VTODO").first))
        #expect(task.isClosed && task.completed == .utc(Self.now))
        // Completed again (a pop-up shown before, another device): its first completion stands.
        #expect(try TaskEdits.completing(after, uid: task.uid, at: Self.now.addingTimeInterval(600), zones: Self.zones) == after)
        // And back: not completed, its completion's lines gone.
        let undone = try TaskEdits.uncompleting(after, uid: task.uid, at: Self.now.addingTimeInterval(60))
        let back = try TaskObject(try #require(try ICalendarReader.read(undone).components("VTODO").first))
        #expect(!back.isClosed && back.completed == nil && back.status == "NEEDS-ACTION")
        let (_, gone) = try Self.difference(after, undone)
        #expect(gone.contains("COMPLETED:20270115T080000Z\r\n") && gone.contains("PERCENT-COMPLETE:100\r\n"))
        #expect(try Self.lines(undone).count == Self.lines(before).count)
    }

    @Test func anObjectWithLFLinesGetsLFLines() throws {
        let before = Array(Self.apple.replacingOccurrences(of: "\r\n", with: "\n").utf8)
        let after = try TaskEdits.completing(before, uid: "9710D97C-49D1-4395-90DB-14EE17E0B77A", at: Self.now, zones: Self.zones)
        #expect(!after.contains(0x0D))
    }

    @Test func anotherUIDIsNotFound() throws {
        #expect(throws: TaskProblem.self) { try TaskEdits.completing(Array(Self.apple.utf8), uid: "other", at: Self.now, zones: Self.zones) }
    }

    /// A new task carries its place in both forms, folded at 75 bytes, and reads back as one
    /// place with its trigger.
    @Test(arguments: [Trigger.arrive, .leave, .both])
    func aNewTaskReadsBackWithItsPlace(trigger: Trigger) throws {
        let place = TaskPlace(coordinate: Coordinate(latitude: 38.7105, longitude: -9.1366), radius: 40, name: "Padaria \"Central\", Lisboa")
        let bytes = TaskEdits.newTask(
            TaskEdits.NewTask(uid: "A-1", title: "Buy bread; a loaf", notes: "Two, please\nand milk", location: .place(place, trigger)), at: Self.now)
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.components(separatedBy: "\r\n") { #expect(line.utf8.count <= 75, "\(line)") }
        #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "every line ends in CRLF")
        let calendar = try ICalendarReader.read(bytes)
        let task = try TaskObject(try #require(calendar.components("VTODO").first))
        #expect(task.uid == "A-1" && task.summary == "Buy bread; a loaf" && task.description == "Two, please\nand milk")
        #expect(task.location == "Padaria \"Central\", Lisboa", "the place's name, for the apps that show words")
        let triggers = task.alarms.compactMap { alarm -> Trigger? in
            guard case .place(let trigger, let places) = alarm.kind, places == [place] else { return nil }
            return trigger
        }
        #expect(triggers == (trigger == .both ? [.arrive, .leave] : [trigger]), "one place each, both forms read as one")
        let alarm = try #require(calendar.components("VTODO").first?.components("VALARM").first)
        #expect(alarm.property("X-APPLE-STRUCTURED-LOCATION")?.value == "geo:38.710500\\,-9.136600")
        #expect(alarm.property("X-APPLE-STRUCTURED-LOCATION")?.parameter("X-APPLE-RADIUS") == "40")
        #expect(alarm.components("VLOCATION").first?.property("URL")?.value == "geo:38.710500,-9.136600;u=40")
    }

    /// A new task placed by words alone (a collection's name) says them as its LOCATION, with no
    /// location alarm: a list with `location_tasks` reads it at the collection's places.
    @Test func aNewTaskByWordsIsItsLocationAlone() throws {
        let bytes = TaskEdits.newTask(TaskEdits.NewTask(uid: "W-1", title: "Buy milk", notes: nil, location: .words("Supermarkets")), at: Self.now)
        let todo = try #require(try ICalendarReader.read(bytes).components("VTODO").first)
        let task = try TaskObject(todo)
        #expect(task.location == "Supermarkets" && task.alarms.isEmpty && todo.components("VALARM").isEmpty)
        var settings = TaskListSettings(name: "Errands", folder: "/l")
        settings.locationTasks = .arrive
        let shops = ReminderCollection(
            id: "supermarkets", template: Reminder(id: "", title: "", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 1)),
            places: [CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.71, longitude: -9.14), radius: 30))])
        let defaults = TaskLists.Defaults(
            template: shops.template, radius: 100, zones: .utc, collections: [shops])
        let load = TaskLists.read([("/l/w.ics", bytes)], settings: settings, defaults: defaults)
        #expect(load.collections.map(\.places) == [shops.places] && load.reminders.isEmpty)
    }

    /// Whatever the object (properties of any length and characters, folded anywhere, CRLF or
    /// LF), an edit changes the lines it names and no other byte; a long line is folded within
    /// 75 bytes, never inside a character.
    @Test func anEditChangesItsLinesAndNoOtherByte() async throws {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            let end = random.bool() ? "\r\n" : "\n"
            let pieces = ["a", "é", "東", "🍞", ",", ";", ":", "\\", " ", "x"]
            func word(_ length: Int) -> String { (0..<length).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined() }
            var properties: [String] = ["UID:u-\(seed)"]
            for number in 0..<Int(random.next() % 8) {
                var line = "X-P\(number):" + word(Int(random.next() % 120))
                // Folded at random places, between characters, as writers fold.
                var folded = ""
                for character in line {
                    folded.append(character)
                    if random.next() % 30 == 0 { folded += end + (random.bool() ? " " : "\t") }
                }
                line = folded
                properties.append(line)
            }
            let text = (["BEGIN:VCALENDAR", "BEGIN:VTODO"] + properties + ["END:VTODO", "END:VCALENDAR"]).joined(separator: end) + end
            let bytes = Array(text.utf8)
            guard let calendar = try? ICalendarReader.read(bytes), let todo = calendar.components("VTODO").first else {
                Issue.record("seed \(seed): not read")
                return
            }
            var edit = ICalendarEdit(bytes, component: todo)
            let long = "DESCRIPTION:" + word(Int(random.next() % 300))
            edit.set("DESCRIPTION", long)
            edit.set("UID", "UID:u-\(seed)")
            let after = edit.result
            guard let edited = try? ICalendarReader.read(after), let newTodo = edited.components("VTODO").first else {
                Issue.record("seed \(seed): the edit made an object that does not read")
                return
            }
            #expect(newTodo.property("DESCRIPTION")?.value == String(long.dropFirst("DESCRIPTION:".count)), "seed \(seed)")
            for property in todo.properties where property.name != "UID" {
                #expect(newTodo.property(property.name).map { Array(after[$0.range]) } == Array(bytes[property.range]), "seed \(seed)")
            }
            let written = newTodo.property("DESCRIPTION").map { String(decoding: after[$0.range], as: UTF8.self) } ?? ""
            #expect(written.components(separatedBy: end).allSatisfy { $0.utf8.count <= 75 }, "seed \(seed): \(written.debugDescription)")
            #expect(String(validating: after, as: UTF8.self) != nil)
        }
    }
}
