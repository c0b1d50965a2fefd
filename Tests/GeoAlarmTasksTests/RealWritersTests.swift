import Foundation
import GeoAlarmCore
@testable import GeoAlarmICalendar
@testable import GeoAlarmTasks
import Testing

/// Objects as real writers make them, which a strict reading refused or misread: a byte order
/// mark, a fold inside a character, long durations, Apple's radii; and what is refused, with why.
struct RealWritersTests {
    static func read(_ lines: [String]) -> TaskListLoad {
        TaskLists.read([("/l/a.ics", TaskListTests.object(lines))], settings: TaskListTests.settings, defaults: TaskListTests.defaults)
    }

    @Test func aByteOrderMarkIsNoPartOfTheObject() throws {
        let bytes = ICalendarReader.byteOrderMark + TaskListTests.object(["UID:bom", "SUMMARY:Buy bread", "GEO:38.7;-9.1"])
        let calendar = try ICalendarReader.read(bytes)
        #expect(calendar.components("VTODO").first?.property("SUMMARY")?.text == "Buy bread")
        // Its bytes stay the file's: an edit keeps the mark where it is.
        #expect(calendar.range.lowerBound == 3)
        let done = try TaskEdits.completing(bytes, uid: "bom", at: Date(timeIntervalSince1970: 1_800_000_000), zones: .utc)
        #expect(Array(done.prefix(3)) == ICalendarReader.byteOrderMark && String(decoding: done, as: UTF8.self).contains("STATUS:COMPLETED"))
    }

    @Test func aFoldInsideACharacterIsJoinedBeforeItIsDecoded() throws {
        // "Café": C3 A9 folded between its two bytes, as a writer counting bytes may.
        let bytes = Array("BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:a\r\nSUMMARY:Caf".utf8) + [0xC3] + Array("\r\n ".utf8) + [0xA9]
            + Array("\r\nEND:VTODO\r\nEND:VCALENDAR\r\n".utf8)
        let calendar = try ICalendarReader.read(bytes)
        #expect(calendar.components("VTODO").first?.property("SUMMARY")?.text == "Café")
        // Bytes that are no UTF-8 once joined are still refused, with their line.
        let broken = Array("BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nSUMMARY:Caf".utf8) + [0xC3, 0x28] + Array("\r\nEND:VTODO\r\nEND:VCALENDAR\r\n".utf8)
        #expect(throws: ICalendarError(line: 3, message: "not UTF-8 text")) { try ICalendarReader.read(broken) }
    }

    @Test func lineEndsOfACarriageReturnAloneAreSaidForWhatTheyAre() {
        let bytes = Array("BEGIN:VCALENDAR\rBEGIN:VTODO\rUID:a\rEND:VTODO\rEND:VCALENDAR\r".utf8)
        do {
            _ = try ICalendarReader.read(bytes)
            Issue.record("read")
        } catch {
            #expect(error.line == 1 && error.message.contains("CR alone"), "\(error)")
        }
    }

    static let longDurations: [(String, Double)] = [("-P10DT12H30M15S", -909_015), ("PT123456789S", 123_456_789), ("-PT15M", -900)]

    @Test(arguments: longDurations)
    func aLongDurationIsADuration(trigger: String, seconds: Double) throws {
        let load = Self.read(["UID:a", "SUMMARY:x", "DTSTART:20261210T120000Z", "BEGIN:VALARM", "TRIGGER:\(trigger)", "END:VALARM"])
        #expect(load.problems.isEmpty, "\(load.problems)")
        let start = try #require(ICalendarTime(value: "20261210T120000Z", zone: nil)).moment(in: .utc)
        #expect(load.alarms.first?.at == .instant(start.addingTimeInterval(seconds)), "\(load.alarms)")
    }

    @Test func appleRadiiAreDecimalMetresAndAnythingElseIsSaid() throws {
        func radius(_ written: String) -> (Double?, [String]) {
            let load = Self.read(["UID:a", "SUMMARY:x"] + TaskListTests.appleAlarm("ARRIVE", "geo:38.7,-9.1", radius: written))
            guard case .circle(_, let radius) = load.reminders.first?.geometry else { return (nil, load.problems) }
            return (radius, load.problems)
        }
        #expect(radius("70.58730101326454").0 == 70.58730101326454)
        #expect(radius("100").0 == 100)
        for written in ["1e-300", "1e12", "0x10", "abc", "100m", "", "0", "-5", "nan", "inf", "0.2"] {
            let (taken, problems) = radius(written)
            #expect(taken == nil, "\(written.debugDescription) was taken as \(taken ?? 0) m")
            #expect(problems.contains { $0.contains("line 10: X-APPLE-RADIUS") && $0.contains("is no radius of 1 m or more") }, "\(problems)")
        }
    }

    /// A task's title is its writer's words: at a collection's places, `{name}` in it is text,
    /// not the collection's template (a `[[collection]]`'s own title still names each place).
    @Test func aTasksTitleIsNoTemplate() throws {
        let place = CollectionPlace(geometry: .circle(center: Coordinate(latitude: 46.0, longitude: 8.95), radius: 40), name: "Lidl, Via Cantonale")
        var template = TaskListTests.defaults.template
        template.title = "Milk at {name}"
        let shops = ReminderCollection(id: "shops", template: template, places: [place])
        let defaults = TaskLists.Defaults(
            template: TaskListTests.defaults.template, radius: 100, zones: .utc, collections: [shops])
        var settings = TaskListTests.settings
        settings.locationTasks = .arrive
        let load = TaskLists.read(
            [("/l/a.ics", TaskListTests.object(["UID:milk", "SUMMARY:Buy milk at {name}", "LOCATION:shops"]))], settings: settings, defaults: defaults)
        let task = try #require(load.collections.first)
        #expect(task.member(0).title == "Buy milk at {name}" && task.member(0).placeName == "Lidl, Via Cantonale")
        #expect(shops.member(0).title == "Milk at Lidl, Via Cantonale")
    }

    /// A task is found by an id the list gave (its reminders', its time alarms', its places'),
    /// never by one that only begins with its id: another member's task may come to have that one.
    @Test func aTaskIsFoundByTheIdsItHasOnly() throws {
        let load = Self.read(["UID:ab", "SUMMARY:Post", "DTSTART:20261210T120000Z", "BEGIN:VALARM", "TRIGGER:-PT15M", "END:VALARM"]
            + TaskListTests.appleAlarm("ARRIVE", "geo:38.7,-9.1") + TaskListTests.appleAlarm("ARRIVE", "geo:38.8,-9.2"))
        #expect(load.reminders.map(\.id) == ["shopping-list/ab", "shopping-list/ab-2"], "\(load.reminders.map(\.id))")
        for id in ["shopping-list/ab", "shopping-list/ab-2", "shopping-list/ab/time-1"] { #expect(load.origin(of: id)?.uid == "ab", "\(id)") }
        for id in ["shopping-list/ab-3", "shopping-list/ab-x", "shopping-list/ab/time-2", "shopping-list/ab/1"] {
            #expect(load.origin(of: id) == nil, "\(id) names no task")
        }
    }
}
