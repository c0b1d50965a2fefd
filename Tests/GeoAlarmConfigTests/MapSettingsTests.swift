import GeoAlarmConfig
import Testing

/// `[map]`: the tiles under the reminders.
struct MapSettingsTests {
    static func load(_ map: String) throws -> Config {
        try ConfigLoader.parse("[[reminder]]\ntitle = \"a\"\nlocation = \"1,2\"\n\n[map]\n" + map, path: "test.toml")
    }

    @Test func theDefaultIsOpenStreetMapWithItsCredit() throws {
        let config = try ConfigLoader.parse("[[reminder]]\ntitle = \"a\"\nlocation = \"1,2\"\n", path: "test.toml")
        #expect(config.map == .openStreetMap)
        #expect(config.map.tileOrigin == "https://tile.openstreetmap.org")
    }

    @Test func otherTilesComeWithoutOpenStreetMapsCreditUnlessGiven() throws {
        let other = try Self.load("tiles = \"https://{s}.tiles.example/{z}/{x}/{y}.png\"\n")
        #expect(other.map.tiles == "https://{s}.tiles.example/{z}/{x}/{y}.png" && other.map.attribution.isEmpty)
        #expect(other.map.tileOrigin == "https://*.tiles.example")
        let credited = try Self.load("tiles = \"http://tiles.lan:8080/{z}/{x}/{y}.png\"\nattribution = \"Mine\"\n")
        #expect(credited.map.attribution == "Mine" && credited.map.tileOrigin == "http://tiles.lan:8080")
        #expect(try Self.load("tiles = \"\"\n").map.tiles == nil, "none: a plain background")
    }

    @Test func aTemplateThatIsNotOneIsNamedWithItsLine() {
        for (tiles, said) in [
            ("tiles.example/{z}/{x}/{y}.png", "http:// or https://"), ("https://tiles.example/{z}/{x}.png", "lacks {y}"),
            ("https://tiles.example/{z}/{x}/{y}.png'; script-src *", "cannot hold"), ("javascript:{z}{x}{y}", "http:// or https://"),
        ] {
            #expect(throws: ConfigError.self, "\(tiles)") { try Self.load("tiles = \"\(tiles)\"\n") }
            do {
                _ = try Self.load("tiles = \"\(tiles)\"\n")
            } catch {
                #expect("\(error)".contains("test.toml:6") && "\(error)".contains(said), "\(error)")
            }
        }
        #expect(throws: ConfigError.self) { try Self.load("colour = \"red\"\n") }
    }
}
