import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// The structural editor `add` and `remove` use.
struct ConfigEditorTests {
    /// A reminder's sub-table may come after another table ([defaults] here): removing the
    /// reminder removes its own lines and leaves what lies between. (Found by the editor's fuzz
    /// target: the whole span went, [defaults] with it, and every other reminder changed.)
    @Test func removingAReminderKeepsATableBetweenItsHeaderAndItsSubTable() throws {
        let text = """
            [[reminder]]
            title = "Collect the dry cleaning"
            location = "38.7190,-9.1440"

            [defaults]
            radius = "55m"

            [reminder.active]
            days = ["mon", "fri"]

            [[reminder]]
            title = "Bread"
            lat = -33.86
            lon = 151.2

            """
        let bytes = Array(text.utf8)
        let before = try ConfigLoader.parse(bytes, path: "test.toml")
        let edited = try ConfigEditor.removingReminder(id: "collect-the-dry-cleaning", from: bytes, path: "test.toml")
        let after = try ConfigLoader.parse(edited, path: "test.toml")
        #expect(after.idsInFileOrder == ["bread"])
        #expect(after.reminders == before.reminders.filter { $0.id == "bread" })
        #expect(after.reminders.first?.geometry.radius == 55, "[defaults] is still there")
        let result = String(decoding: edited, as: UTF8.self)
        #expect(!result.contains("dry cleaning") && !result.contains("[reminder.active]") && !result.contains("days"))
        #expect(result.contains("[defaults]\nradius = \"55m\"\n"))
    }

    static let demo = """
        # the office
        [places]
        office = "38.7139,-9.1334"

        [[reminder]]
        title = "Water the plants"
        place = "office"   # shared with nobody
        when = "leave"

        [[reminder]]
        id = "bread"
        title = "Buy bread"
        radius = "30m"  # the door only
        lat = 38.7105
        lon = -9.1366

        """

    /// Moving a reminder that names a place: its `place` line becomes a `location` line where
    /// it stood, the place itself and every other byte stay.
    @Test func movingAReminderReplacesItsPlaceWithALocationWhereItStood() throws {
        let edited = try ConfigEditor.changingReminder(
            id: "water-the-plants", setting: [("location", ConfigEditor.quote("38.71,-9.13"))],
            removing: ["place", "location", "lat", "lon"], in: Array(Self.demo.utf8), path: "test.toml")
        let expected = Self.demo.replacingOccurrences(
            of: "place = \"office\"   # shared with nobody\n", with: "location = \"38.71,-9.13\"\n")
        #expect(String(decoding: edited, as: UTF8.self) == expected)
        let config = try ConfigLoader.parse(edited, path: "test.toml")
        #expect(config.reminders.first { $0.id == "water-the-plants" }?.geometry.center == Coordinate(latitude: 38.71, longitude: -9.13))
    }

    /// A reminder at `lat` and `lon` moved: both lines go, one `location` line takes the first's place.
    @Test func movingAReminderAtLatAndLonLeavesOneLocationLine() throws {
        let edited = try ConfigEditor.changingReminder(
            id: "bread", setting: [("location", ConfigEditor.quote("38.7,-9.1"))],
            removing: ["place", "location", "lat", "lon"], in: Array(Self.demo.utf8), path: "test.toml")
        let expected = Self.demo.replacingOccurrences(of: "lat = 38.7105\nlon = -9.1366\n", with: "location = \"38.7,-9.1\"\n")
        #expect(String(decoding: edited, as: UTF8.self) == expected)
    }

    /// A new radius replaces the value alone: the comment after it on its line stays.
    @Test func aNewRadiusReplacesTheValueAndKeepsTheCommentAfterIt() throws {
        let edited = try ConfigEditor.changingReminder(
            id: "bread", setting: [("radius", ConfigEditor.quote("45m"))], in: Array(Self.demo.utf8), path: "test.toml")
        #expect(String(decoding: edited, as: UTF8.self) == Self.demo.replacingOccurrences(of: "\"30m\"  #", with: "\"45m\"  #"))
    }

    /// A reminder whose id comes from its title keeps that id when its title changes, and a key
    /// it lacks is added under its header.
    @Test func aNewTitleKeepsTheIdTheOldOneGave() throws {
        let edited = try ConfigEditor.changingReminder(
            id: "water-the-plants", setting: [("title", ConfigEditor.quote("Water the ferns")), ("radius", "40")],
            in: Array(Self.demo.utf8), path: "test.toml")
        let config = try ConfigLoader.parse(edited, path: "test.toml")
        let reminder = try #require(config.reminders.first)
        #expect(reminder.id == "water-the-plants" && reminder.title == "Water the ferns" && reminder.geometry.radius == 40)
        #expect(String(decoding: edited, as: UTF8.self).contains("[[reminder]]\nid = \"water-the-plants\"\nradius = 40\ntitle = \"Water the ferns\"\n"))
    }

    /// Keys written on a sub-table's header or as dotted keys are the user's to edit by hand.
    @Test func aKeyThatIsNotPlainIsRefused() throws {
        let text = "[[reminder]]\ntitle = \"Bread\"\nlocation = \"1,2\"\nactive.days = [\"mon\"]\n"
        #expect(throws: ConfigEditor.EditError.self) {
            try ConfigEditor.changingReminder(id: "bread", setting: [("active", "{}")], in: Array(text.utf8), path: "test.toml")
        }
        #expect(throws: ConfigEditor.EditError.self) {
            try ConfigEditor.changingReminder(id: "nope", setting: [("radius", "5")], in: Array(text.utf8), path: "test.toml")
        }
    }

    /// A file written with CRLF line ends (on Windows, or by an editor set so) keeps them: every
    /// line an edit adds or changes ends as the file's lines do.
    @Test func editsToACRLFFileAddCRLFLines() throws {
        let text = "[places]\r\nhome = \"38.7,-9.1\"\r\n\r\n[[reminder]]\r\nid = \"bread\"\r\ntitle = \"Bread\"\r\nplace = \"home\"\r\n"
        var bytes = Array(text.utf8)
        bytes = ConfigEditor.appendingReminder([("title", "\"Stamps\""), ("location", "\"38.7,-9.1\"")], to: bytes)
        bytes = try ConfigEditor.definingPlace("office", at: "38.71,-9.12", in: bytes, path: "t.toml")
        bytes = try ConfigEditor.changingReminder(
            id: "bread", setting: [("location", "\"38.6,-9.2\""), ("radius", "\"40m\"")], removing: ["place"], in: bytes, path: "t.toml")
        let result = String(decoding: bytes, as: UTF8.self)
        let lonely = result.utf8.enumerated().filter { offset, byte in
            byte == UInt8(ascii: "\n") && (offset == 0 || Array(result.utf8)[offset - 1] != UInt8(ascii: "\r"))
        }
        #expect(lonely.isEmpty, "LF-only lines in: \(result.debugDescription)")
        let config = try ConfigLoader.parse(bytes, path: "t.toml")
        #expect(config.idsInFileOrder == ["bread", "stamps"])
        #expect(result.contains("office = \"38.71,-9.12\"\r\n") && result.contains("radius = \"40m\"\r\n"))
    }

    /// A file that starts with a byte-order mark (as Windows editors save UTF-8) reads as
    /// without it, and keeps it through an edit, with the rest byte for byte.
    @Test func aByteOrderMarkIsPassedOverAndKept() throws {
        let text = "\u{FEFF}[[reminder]]\nid = \"bread\"\ntitle = \"Bread\"\nlocation = \"38.7,-9.1\"\n"
        let config = try ConfigLoader.parse(Array(text.utf8), path: "t.toml")
        #expect(config.idsInFileOrder == ["bread"])
        let edited = ConfigEditor.appendingReminder([("title", "\"Stamps\""), ("location", "\"38.7,-9.1\"")], to: Array(text.utf8))
        #expect(edited.starts(with: Array(text.utf8)))
        #expect(try ConfigLoader.parse(edited, path: "t.toml").idsInFileOrder == ["bread", "stamps"])
        #expect(TOMLTests.error("\u{FEFF}a = 1\nb = \n") == "2:5: expected a value, found the end of the line")
    }
}
