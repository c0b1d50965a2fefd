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
}
