import GeoAlarmOutput
import Testing

struct TextTableTests {
    /// A table's columns line up on a terminal whatever the titles' script: a wide character
    /// takes two columns of the padding.
    @Test func tableColumnsLineUpWithWideTitles() {
        let lines = TextTable.lines([["ID", "TITLE", "RADIUS"], ["bread", "🍞 Bread", "30 m"], ["milk", "買牛奶", "100 m"], ["x", "Café", "5 m"]])
        #expect(lines == [
            "ID     TITLE     RADIUS",
            "bread  🍞 Bread  30 m",
            "milk   買牛奶    100 m",
            "x      Café      5 m",
        ])
    }
}
