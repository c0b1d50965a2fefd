import Foundation
import GeoAlarmCore
@testable import GeoAlarmICalendar
@testable import GeoAlarmTasks
import GeoAlarmTestSupport
import PropertyBased
import Testing

/// The iCalendar reader: content lines, folding, parameters, components, and what it refuses.
struct ICalendarTests {
    static func read(_ text: String) throws -> Component {
        try ICalendarReader.read(Array(text.utf8))
    }

    @Test func foldedLinesParametersAndComponentsAreRead() throws {
        let text = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:a\r\nSUMMARY:Buy\r\n  bread\\, milk\r\n"
            + "X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-TITLE=\"a: b; c\";X-ADDRESS=x^'y^n:geo:1\\,2\r\n"
            + "ATTENDEE;MEMBER=\"a\",\"b\":mailto:x\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
        let calendar = try Self.read(text)
        #expect(calendar.name == "VCALENDAR" && calendar.range == 0..<text.utf8.count)
        let todo = try #require(calendar.components("VTODO").first)
        #expect(todo.property("SUMMARY")?.value == "Buy bread\\, milk", "a continuation's first blank is dropped")
        #expect(todo.property("SUMMARY")?.text == "Buy bread, milk")
        let location = try #require(todo.property("X-APPLE-STRUCTURED-LOCATION"))
        #expect(location.parameter("X-TITLE") == "a: b; c" && location.parameter("X-ADDRESS") == "x\"y\n" && location.value == "geo:1\\,2")
        #expect(todo.property("ATTENDEE")?.parameters.first?.values == ["a", "b"])
        // Each property knows its own bytes: the folded SUMMARY is its two physical lines.
        let summary = try #require(todo.property("SUMMARY"))
        #expect(String(decoding: Array(text.utf8)[summary.range], as: UTF8.self) == "SUMMARY:Buy\r\n  bread\\, milk\r\n")
        #expect(summary.line == 5)
    }

    @Test func linesEndingInLFAloneAreReadToo() throws {
        let calendar = try Self.read("BEGIN:VCALENDAR\nBEGIN:VTODO\nUID:a\nEND:VTODO\nEND:VCALENDAR\n")
        #expect(calendar.components("VTODO").first?.property("UID")?.value == "a")
    }

    @Test(arguments: [
        ("", "no BEGIN:VCALENDAR"),
        ("BEGIN:VTODO\r\nEND:VTODO\r\n", "line 1: the object begins with VTODO, not VCALENDAR"),
        ("BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nEND:VCALENDAR\r\n", "line 3: END:VCALENDAR closes VTODO"),
        ("BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\n", "VTODO is never closed (END:VTODO)"),
        ("BEGIN:VCALENDAR\r\nSUMMARY\r\nEND:VCALENDAR\r\n", "line 2: SUMMARY: no \":\" before its value"),
        ("BEGIN:VCALENDAR\r\nX;A=\"b:c\r\nEND:VCALENDAR\r\n", "line 2: X: a parameter's quoted value is never closed"),
        ("BEGIN:VCALENDAR\r\nX;=b:c\r\nEND:VCALENDAR\r\n", "line 2: X: a parameter without \"NAME=\""),
        ("BEGIN:VCALENDAR\r\n:c\r\nEND:VCALENDAR\r\n", "line 2: a content line without a name"),
        ("BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\nBEGIN:VCALENDAR\r\n", "line 3: more after the end of the calendar"),
        ("SUMMARY:x\r\n", "line 1: a property before BEGIN:VCALENDAR"),
        ("BEGIN:VCALENDAR\r\nEND:VTODO\r\n", "line 2: END:VTODO closes VCALENDAR"),
    ])
    func brokenObjectsAreRefusedWithTheirLine(text: String, message: String) {
        #expect(throws: ICalendarError.self) { try Self.read(text) }
        do {
            _ = try Self.read(text)
        } catch {
            #expect((error as? ICalendarError)?.description == message, "\(text.debugDescription)")
        }
    }

    /// Invalid UTF-8, a NUL byte, a line folded without end, components nested without end:
    /// refused, bounded, never a crash.
    @Test func hostileBytesAreRefusedAndBounded() {
        var bytes = Array("BEGIN:VCALENDAR\r\nSUMMARY:caf".utf8) + [0xC3, 0x28] + Array("\r\nEND:VCALENDAR\r\n".utf8)
        #expect(throws: ICalendarError(line: 2, message: "not UTF-8 text")) { try ICalendarReader.read(bytes) }
        bytes = Array("BEGIN:VCALENDAR\r\nSUMMARY:a\u{0}b\r\nEND:VCALENDAR\r\n".utf8)
        #expect(throws: ICalendarError(line: 2, message: "a NUL byte")) { try ICalendarReader.read(bytes) }
        let endless = "BEGIN:VCALENDAR\r\nDESCRIPTION:x\r\n" + String(repeating: " 0123456789abcdef\r\n", count: 20_000) + "END:VCALENDAR\r\n"
        #expect(throws: ICalendarError(line: 2, message: "a content line longer than 262144 bytes")) { try Self.read(endless) }
        let deep = "BEGIN:VCALENDAR\r\n" + String(repeating: "BEGIN:X\r\n", count: 100) + String(repeating: "END:X\r\n", count: 100) + "END:VCALENDAR\r\n"
        #expect(throws: ICalendarError(line: 9, message: "components nested deeper than 8")) { try Self.read(deep) }
    }

    @Test func textValuesAreUnescapedAndEscapedBack() async {
        #expect(ICalendarText.unescaped("a\\nb\\Nc\\,d\\;e\\\\f\\x") == "a\nb\nc,d;e\\f\\x")
        let alphabet: [Character] = ["\\", ",", ";", "\n", "a", "N", "n", "é", " "]
        await propertyCheck(input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var random = SplitMix(seed: UInt64(seed))
            let text = String((0..<Int(random.next() % 20)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            #expect(ICalendarText.unescaped(ICalendarText.escaped(text)) == text, "\(text.debugDescription)")
        }
    }

    @Test func timesAndDurationsAreRead() throws {
        func line(_ text: String) throws -> ContentLine {
            try #require(try Self.read("BEGIN:VCALENDAR\r\n\(text)\r\nEND:VCALENDAR\r\n").properties.first)
        }
        #expect(ICalendarTime(try line("DUE;VALUE=DATE:20260710")) == .date(year: 2026, month: 7, day: 10))
        #expect(ICalendarTime(try line("DUE:20260710T045638Z")) == .utc(Date(timeIntervalSince1970: 1_783_659_398)))
        #expect(ICalendarTime(try line("DUE:20260710T090000")) == .floating(year: 2026, month: 7, day: 10, secondOfDay: 32400))
        #expect(ICalendarTime(try line("DUE;TZID=Europe/Zurich:20260710T090000"))
            == .zoned(year: 2026, month: 7, day: 10, secondOfDay: 32400, zone: "Europe/Zurich"))
        for bad in ["DUE:2026071", "DUE:20261310", "DUE:20260230", "DUE:20260710T250000", "DUE:20260710X090000", "DUE:20260710T090000Y"] {
            #expect(ICalendarTime(try line(bad)) == nil, "\(bad)")
        }
        #expect(ICalendarTime.utcText(Date(timeIntervalSince1970: 1_783_659_398)) == "20260710T045638Z")
        #expect(ICalendarDuration.seconds("-PT15M") == -900 && ICalendarDuration.seconds("PT0S") == 0)
        #expect(ICalendarDuration.seconds("P1DT2H") == 93_600 && ICalendarDuration.seconds("P2W") == 1_209_600)
        for bad in ["", "P", "PT", "P1H", "PT1D", "P1DT", "-P-1D", "P9999999999D", "PT1.5H"] { #expect(ICalendarDuration.seconds(bad) == nil, "\(bad)") }
    }
}

/// Real objects as Apple Reminders and tasks.org wrote them (../shared/testdata/ical).
@Suite(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"))
struct RealTaskTests {
    static func task(_ name: String) throws -> (bytes: [UInt8], task: TaskObject) {
        let bytes = try TestData.bytes("ical/\(name)")
        let calendar = try ICalendarReader.read(bytes)
        return (bytes, try TaskObject(try #require(calendar.components("VTODO").first)))
    }

    @Test func iOS14sArriveAlarmIsAPlace() throws {
        let (_, task) = try Self.task("apple-ios14-arrive.ics")
        #expect(task.uid == "9710D97C-49D1-4395-90DB-14EE17E0B77A" && task.summary == "Location Alert" && !task.isClosed)
        #expect(task.alarms == [TaskAlarm(kind: .place(.arrive, [TaskPlace(
            coordinate: Coordinate(latitude: 46.141813, longitude: 8.917549), radius: 100,
            name: "Via Monte Ceneri 1 6802 Rivera Switzerland")]))])
        #expect(task.problems.isEmpty)
    }

    @Test func iOS26sCompletedTaskIsClosed() throws {
        let (_, task) = try Self.task("apple-ios26-completed.ics")
        #expect(task.isClosed && task.completed == .utc(Date(timeIntervalSince1970: 1_783_659_398)))
        #expect(task.due == .date(year: 2026, month: 7, day: 10) && task.summary == "日付のみの期限")
    }

    @Test func tasksOrgsAlarmIsATimeFromItsDueDay() throws {
        let (_, task) = try Self.task("tasks-org-time-alarm.ics")
        #expect(task.alarms == [TaskAlarm(kind: .time(.fromDue(0)))])
        #expect(task.due == .date(year: 2025, month: 9, day: 5))
    }
}
