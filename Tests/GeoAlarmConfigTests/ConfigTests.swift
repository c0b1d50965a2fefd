import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmTestSupport
import GeoAlarmTOML
import Testing

struct ConfigTests {
    /// The problems `text` has, as `geoalarm check` prints them.
    func problems(_ text: String) -> [String] {
        do {
            _ = try ConfigLoader.parse(text, path: "r.toml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func aFullValidFile() throws {
        let config = try ConfigLoader.parse("""
            [defaults]
            radius = "100m"
            hysteresis = "25m"
            max_error = "50m"
            dwell = "30s"
            confirmations = 3
            announce_initial = true

            [places]
            office = { lat = 38.7226, lon = -9.1094 }
            bakery = "geo:38.7105,-9.1366"

            [[reminder]]
            id = "parcel"
            title = "Pick up the parcel"
            notes = "At the front desk"
            place = "office"
            radius = "150m"
            when = "leave"

            [[reminder]]
            title = "Buy bread"
            location = "38.7105,-9.1366"
            radius = 0
            when = "enter"
            dwell = "2m"

            [[reminder]]
            title = "Far away"
            lat = -33
            lon = 151.5
            radius = "0.5mi"
            hysteresis = 10
            enabled = false
            """, path: "r.toml")
        #expect(config.settings == EngineSettings(maxError: 50, confirmations: 3, announceInitial: true))
        #expect(config.places["bakery"] == Coordinate(latitude: 38.7105, longitude: -9.1366))
        #expect(config.reminders.map(\.id) == ["parcel", "buy-bread", "far-away"])
        let parcel = config.reminders[0]
        #expect(parcel.placeName == "office")
        #expect(parcel.center == Coordinate(latitude: 38.7226, longitude: -9.1094))
        #expect(parcel.geometry.radius == 150 && parcel.hysteresis == 25 && parcel.dwell == 30)
        #expect(parcel.trigger == .leave && parcel.notes == "At the front desk")
        let bread = config.reminders[1]
        #expect(bread.geometry.radius == 100, "radius 0 takes the default")
        #expect(bread.trigger == .arrive && bread.dwell == 120 && bread.placeName == nil)
        let far = config.reminders[2]
        #expect(abs((far.geometry.radius ?? 0) - 804.672) < 1e-9 && far.hysteresis == 10 && !far.isEnabled)
    }

    /// `place` names a `[places]` entry by its key or by words that differ only in case, spacing
    /// and accents, as a task's LOCATION does; the reminder carries the key.
    @Test func aPlaceIsNamedByItsKeyOrInWords() throws {
        let config = try ConfigLoader.parse("""
            [places]
            post_office = { lat = 38.7139, lon = -9.1334 }

            [[reminder]]
            title = "Stamps"
            place = "Post Office"
            """, path: "r.toml")
        #expect(config.reminders.first?.placeName == "post_office")
        #expect(config.reminders.first?.center == Coordinate(latitude: 38.7139, longitude: -9.1334))
    }

    /// A table another module reads, as the MQTT module reads `[mqtt]`: `[probe] level` (0-9)
    /// and `user`.
    struct Probe: ConfigSection, Equatable {
        static let tableName = "probe"
        var level: Int
        var user: String?

        static func read(_ table: TOMLTable, file: String, reader: inout some TableReading) -> Probe? {
            reader.checkKeys(of: table, allowed: ["level", "user"], context: tableName)
            guard let level = reader.typed(table, "level", context: tableName, expected: "a number", { $0.int }) else { return nil }
            guard (0...9).contains(level) else {
                reader.report(in: table, tableName, "level", "\(level) is not 0-9")
                return nil
            }
            return Probe(level: level, user: reader.string(table, "user", context: tableName))
        }

        func changedKeys(in other: Probe) -> [String] {
            (level != other.level ? ["level"] : []) + (user != other.user ? ["user"] : [])
        }

        var sendsCredentials: Bool { user != nil }
    }

    /// The config's reader hands another module's table to its reader, its problems in the same
    /// list; a reader not handed it passes over the tables other modules read (`[mqtt]`), and
    /// refuses one it does not know.
    @Test func aTableOfAnotherModuleIsHandedToItsReader() throws {
        let text = "[probe]\nlevel = 3\n[mqtt]\nurl = \"mqtt://x\"\n"
        let config = try ConfigLoader.parse(text, path: "c.toml", sections: [Probe.self])
        #expect(config.section(Probe.self) == Probe(level: 3))
        #expect(config.sections.count == 1 && !config.sendsCredentials)
        #expect(problems("[mqtt]\nurl = \"mqtt://x\"\nnonsense = 1\n").isEmpty)
        #expect(problems("[probe]\nlevel = 3\n").count == 1)
        do {
            _ = try ConfigLoader.parse("[probe]\nlevel = 12\nlevle = 1\n[defaults]\nradius = \"x\"\n", path: "c.toml", sections: [Probe.self])
            Issue.record("an invalid probe table was taken")
        } catch {
            let found = error.diagnostics.map(\.description)
            #expect(found.count == 3 && found.contains("c.toml:2: probe: level: 12 is not 0-9"), "\(found)")
        }
        #expect(try ConfigLoader.parse("[probe]\nlevel = 1\nuser = \"u\"\n", path: "c.toml", sections: [Probe.self]).sendsCredentials)
    }

    /// What a reload cannot take (read only at start) is named: other modules' tables key by
    /// key (secrets by their key alone).
    @Test func aReloadNamesTheSettingsReadOnlyAtStart() throws {
        let reminder = "[[reminder]]\ntitle = \"Bread\"\nlat = 1\nlon = 1\n"
        func config(_ text: String) throws -> Config { try ConfigLoader.parse(reminder + text, path: "c.toml", sections: [Probe.self]) }
        let before = try config("[gpsd]\nhost = \"a\"\n[probe]\nlevel = 1\n")
        #expect(before.restartOnlyChanges(in: before).isEmpty)
        let after = try config("[gpsd]\nhost = \"b\"\n[output]\nnotify = false\nsnooze = \"20m\"\n[probe]\nlevel = 2\nuser = \"u\"\n")
        #expect(before.restartOnlyChanges(in: after) == ["[gpsd]", "[output] notify", "[output] snooze", "[probe] level", "[probe] user"])
        #expect(before.restartOnlyChanges(in: try config("")) == ["[gpsd]", "[probe] (removed)"])
        #expect(try config("").restartOnlyChanges(in: before) == ["[gpsd]", "[probe] (added)"])
    }

    @Test func locationSourceIsOneItNamesOrRefusedWithTheNames() throws {
        #expect(try ConfigLoader.parse("[location]\nsource = \"geoclue\"\n", path: "c.toml").locationSource == .geoclue)
        #expect(try ConfigLoader.parse("", path: "c.toml").locationSource == nil, "run then takes auto")
        do {
            _ = try ConfigLoader.parse("[location]\nsource = \"gps\"\n", path: "c.toml")
            Issue.record("an unknown source was taken")
        } catch {
            let said = error.diagnostics.map(\.description).joined()
            #expect(said.contains("c.toml:2") && said.contains("\"gps\" is not one of \"auto\", \"gpsd\", \"geoclue\", \"owntracks\""), "\(said)")
        }
        let before = try ConfigLoader.parse("[location]\nsource = \"gpsd\"\n", path: "c.toml")
        #expect(before.restartOnlyChanges(in: try ConfigLoader.parse("", path: "c.toml")) == ["[location] source"])
    }

    @Test func defaultsWhenNothingIsSaid() throws {
        let config = try ConfigLoader.parse("[[reminder]]\ntitle = \"X\"\nlat = 1\nlon = 2\n", path: "r.toml")
        #expect(config.settings == EngineSettings(maxError: 100, confirmations: 2, announceInitial: false))
        let reminder = try #require(config.reminders.first)
        #expect(reminder.geometry.radius == 100 && reminder.hysteresis == 25 && reminder.dwell == 0 && reminder.trigger == .arrive)
        #expect(try ConfigLoader.parse("", path: "r.toml").reminders.isEmpty)
    }

    @Test func syntaxErrorsGiveLineAndColumn() {
        let found = problems("[defaults]\nradius = \"100m\"\nhysteresis = \n")
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("r.toml:3:") == true, "\(found)")
        #expect(problems("[[reminder]\n").first?.hasPrefix("r.toml:1:") == true)
    }

    @Test func everyProblemIsReportedWithItsReminderAndKey() {
        let found = problems("""
            [places]
            office = { lat = 38.7226, lon = -9.1094 }

            [[reminder]]
            title = "Pick up the parcel"
            place = "ofice"
            raduis = "150m"
            when = "sometimes"

            [[reminder]]
            id = "bad"
            title = "Bad numbers"
            lat = 91
            lon = "west"
            radius = "-5m"

            [[reminder]]
            id = "bad"
            lat = 1
            lon = 2
            radius = "5 furlongs"
            dwell = "soon"
            """)
        #expect(found == [
            "r.toml:7: reminder \"pick-up-the-parcel\" (#1): raduis: unknown key (did you mean \"radius\"?)",
            "r.toml:6: reminder \"pick-up-the-parcel\" (#1): place: unknown place \"ofice\" (did you mean \"office\"?)",
            "r.toml:8: reminder \"pick-up-the-parcel\" (#1): when: unknown value \"sometimes\" (use \"arrive\", \"leave\" or \"both\")",
            "r.toml:14: reminder \"bad\" (#2): lon: must be a number, not a string",
            "r.toml:13: reminder \"bad\" (#2): lat: 91 is out of range (-90 to 90)",
            "r.toml:15: reminder \"bad\" (#2): radius: \"-5m\" is negative",
            "r.toml:17: reminder \"bad\" (#3): title: missing (every reminder needs a title)",
            "r.toml:18: reminder \"bad\" (#3): id: duplicate id \"bad\" (first used by reminder #2)",
            "r.toml:21: reminder \"bad\" (#3): radius: unknown unit \"furlongs\" (use m, km, ft, mi)",
            "r.toml:22: reminder \"bad\" (#3): dwell: \"soon\" is not a number with a unit",
        ])
    }

    @Test func locationProblems() {
        #expect(problems("[[reminder]]\ntitle = \"A\"\n") == [
            "r.toml:1: reminder \"a\" (#1): location: missing: give lat and lon, place, location, area or polygon",
        ])
        #expect(problems("[[reminder]]\ntitle = \"A\"\nlat = 1\n") == ["r.toml:1: reminder \"a\" (#1): lon: missing"])
        #expect(problems("[[reminder]]\ntitle = \"A\"\nlat = 1\nlon = 2\nplace = \"x\"\n") == [
            "r.toml:1: reminder \"a\" (#1): lat/lon, place: give only one of lat/lon, place, location, area or polygon",
        ])
        #expect(problems("[[reminder]]\ntitle = \"A\"\nlocation = \"north\"\n") == [
            #"r.toml:3: reminder "a" (#1): location: "north" is not a position: LAT,LON (38.7105,-9.1366), a geo: URI, a link from OpenStreetMap, Google Maps, Apple Maps or OsmAnd, or degrees with N/S and E/W (38°42'37.8"N 9°08'11.8"W)"#,
        ])
        #expect(problems("[[reminder]]\ntitle = \"A\"\nlocation = \"10,200\"\n") == [
            "r.toml:3: reminder \"a\" (#1): location: longitude 200 is out of range (-180 to 180)",
        ])
        #expect(problems("[[reminder]]\ntitle = \"A\"\nplace = \"home\"\n") == [
            "r.toml:3: reminder \"a\" (#1): place: unknown place \"home\" (there is no [places] table)",
        ])
    }

    /// A key or id as long as the file is named in its problem by its first 60 characters, and
    /// a key far longer than any known one is given no "did you mean".
    @Test func longNamesAreCutInProblems() {
        let long = String(repeating: "x", count: 100_000)
        let cut = String(repeating: "x", count: 60) + "…"
        #expect(problems("\(long)z = 1\n[[reminder]]\nid = \"\(long)\"\ntitle = \"T\"\nlat = 1\n") == [
            "r.toml:1: top level: \(cut): unknown key",
            "r.toml:2: reminder \"\(cut)\" (#1): lon: missing",
        ])
        #expect(problems("reminderz = 1\n") == ["r.toml:1: top level: reminderz: unknown key (did you mean \"reminder\"?)"])
    }

    @Test func sectionProblems() {
        #expect(problems("""
            reminders = 1
            [defaults]
            radius = 0
            max_eror = "5m"
            confirmations = 0
            announce_initial = "yes"
            [places]
            home = { lat = 100, lon = 0, elevation = 3 }
            """) == [
                "r.toml:1: top level: reminders: unknown key (did you mean \"reminder\"?)",
                "r.toml:4: defaults: max_eror: unknown key (did you mean \"max_error\"?)",
                "r.toml:3: defaults: radius: must be above 0",
                "r.toml:5: defaults: confirmations: must be a whole number from 1 to 100",
                "r.toml:6: defaults: announce_initial: must be true or false, not a string",
                "r.toml:8: place \"home\": elevation: unknown key",
                "r.toml:8: place \"home\": lat: 100 is out of range (-90 to 90)",
            ])
        #expect(problems("[[reminder]]\ntitle = \"A\"\nlocation = \"1,2\"\nstarts = \"2026-12-24\"\ndue = \"2026-12-01\"\n") == [
            "r.toml:4: reminder \"a\" (#1): starts: 2026-12-24 is not before due (2026-12-01): the reminder would never speak "
                + "(unless fire_when_overdue = true)",
        ])
        #expect(problems("[[reminder]]\ntitle = \"A\"\nlocation = \"1,2\"\nstarts = \"2026-12-01\"\ndue = \"2026-12-01\"\n").isEmpty,
                "a day's errand: from its start to its end")
        #expect(problems("[[reminder]]\ntitle = \"A\"\nlocation = \"1,2\"\nstarts = \"2026-12-24\"\ndue = \"2026-12-01\"\nfire_when_overdue = true\n").isEmpty)
        #expect(problems("[defaults]\nmax_error = \"0m\"\n") == [
            "r.toml:2: defaults: max_error: must be above 0 (0 would ignore every fix with an error estimate; no limit is \"20000km\")",
        ])
        #expect(problems("reminder = 3\n") == [
            "r.toml:1: top level: reminder: must be an array of tables: write each one as [[reminder]]",
        ])
        // Each array of tables is read alike: the value, and each element that is not a table.
        #expect(problems("collection = \"shops.csv\"\ntasklist = [\n  1,\n  { name = \"Errands\", vdir = \"tasks\" },\n  \"x\",\n]\n") == [
            "r.toml:1: top level: collection: must be an array of tables: write each one as [[collection]]",
            "r.toml:3: tasklist (#1): must be a table ([[tasklist]])",
            "r.toml:5: tasklist (#3): must be a table ([[tasklist]])",
        ])
        #expect(problems("[[reminder]]\ntitle = \"!!!\"\nlat = 1\nlon = 2\n") == [
            "r.toml:1: reminder \"\" (#1): id: cannot be made from this title; give it an id",
        ])
        #expect(problems("[[reminder]]\nid = \"a b\"\ntitle = \"T\"\nlat = 1\nlon = 2\nenabled = 1\n") == [
            "r.toml:2: reminder \"a b\" (#1): id: \"a b\" may only hold letters, digits, '-', '_' and '.'",
            "r.toml:6: reminder \"a b\" (#1): enabled: must be true or false, not an integer",
        ])
    }

    /// A title in any script makes the reminder's id without an `id` key, as a Latin one does;
    /// what no id can hold is still refused.
    @Test func titlesInAnyScriptMakeTheirOwnIds() throws {
        let config = try ConfigLoader.parse("""
            [[reminder]]
            title = "Купить хлеб"
            location = "55.7558,37.6173"

            [[reminder]]
            title = "Ψωμί"
            location = "37.9838,23.7275"

            [[reminder]]
            title = "買牛奶"
            location = "25.0330,121.5654"

            [[reminder]]
            id = "café"
            title = "Coffee"
            location = "38.7,-9.1"

            """, path: "r.toml")
        #expect(config.reminders.map(\.id) == ["купить-хлеб", "ψωμι", "買牛奶", "café"])
        #expect(problems("[[reminder]]\nid = \"хлеб 🍞\"\ntitle = \"T\"\nlat = 1\nlon = 2\n") == [
            "r.toml:2: reminder \"хлеб 🍞\" (#1): id: \"хлеб 🍞\" may only hold letters, digits, '-', '_' and '.'",
        ])
        #expect(problems("[[reminder]]\nid = \"a\u{202E}b\"\ntitle = \"T\"\nlat = 1\nlon = 2\n").count == 1, "a bidi control is no letter")
    }

    /// An id with a Cyrillic а in a Latin word loads, with a warning at its line; a command
    /// given the Latin id is told the two differ, and in which letter.
    @Test func anIdOfMixedScriptsIsWarnedAboutAndToldApart() throws {
        let config = try ConfigLoader.parse("""
            [[reminder]]
            title = "Купить iPhone"
            location = "55.7558,37.6173"

            [[reminder]]
            id = "bre\u{430}d"
            title = "Bread"
            location = "38.7,-9.1"

            """, path: "r.toml")
        #expect(config.reminders.map(\.id) == ["купить-iphone", "bre\u{430}d"])
        #expect(config.warnings.map(\.description) == [
            "r.toml:6: reminder \"bre\u{430}d\" (#2): id: \"bre\u{430}d\" has Cyrillic \u{430} (U+0430) among Latin letters in one word: "
                + "it is not the id it looks like (a keyboard layout switched halfway?)",
        ])
        guard case .failure(let unknown) = config.lookUp("bread") else {
            Issue.record("the Latin id is not the reminder's")
            return
        }
        #expect(unknown.description == "no reminder \"bread\" in r.toml; \"bre\u{430}d\" looks the same but is written with other letters: "
            + "Latin a (U+0061) given, Cyrillic \u{430} (U+0430) in the file")
    }

    /// An id that names nothing: a title is told its id (never acted on: titles repeat), a typo
    /// the id it is near, and the ids listed are the first thirty.
    @Test func anUnknownIdIsToldWhatItMayHaveMeant() throws {
        var text = """
            [[reminder]]
            id = "bread"
            title = "Buy bread"
            location = "38.7,-9.1"

            [[reminder]]
            id = "rolls"
            title = "Buy bread"
            location = "38.7,-9.1"

            [[reminder]]
            title = "Post the letter"
            location = "38.7,-9.1"

            """
        func unknown(_ id: String, in config: Config) -> String? {
            guard case .failure(let unknown) = config.lookUp(id) else { return nil }
            return unknown.description
        }
        let config = try ConfigLoader.parse(text, path: "r.toml")
        #expect(unknown("post THE letter ", in: config) == "no reminder \"post THE letter \" in r.toml; it is the title of post-the-letter: give the id")
        #expect(unknown("Buy bread", in: config) == "no reminder \"Buy bread\" in r.toml; it is the title of bread, rolls: give the id")
        #expect(unknown("bred", in: config)
                == "no reminder \"bred\" in r.toml (did you mean \"bread\"?); there are: bread, rolls, post-the-letter")
        #expect(unknown("parcel", in: config) == "no reminder \"parcel\" in r.toml; there are: bread, rolls, post-the-letter")
        for number in 1...40 { text += "[[reminder]]\nid = \"place-\(number)\"\ntitle = \"T\"\nlocation = \"1,2\"\n" }
        let many = try ConfigLoader.parse(text, path: "r.toml")
        #expect(unknown("parcel", in: many)?.hasSuffix("place-26, place-27, and 13 more (geoalarm list)") == true, "\(unknown("parcel", in: many) ?? "")")
    }

    @Test func unreadableFileNamesTheCause() {
        #expect(throws: ConfigError.self) { try ConfigLoader.load(path: "/nonexistent/geoalarm.toml") }
        do {
            _ = try ConfigLoader.load(path: "/nonexistent/geoalarm.toml")
        } catch {
            #expect(error.description == "/nonexistent/geoalarm.toml: cannot read: No such file or directory")
        }
    }

    @Test func searchOrder() throws {
        let environment = ["XDG_CONFIG_HOME": "/x", "HOME": "/home/u"]
        #expect(ConfigLocation.searchPaths(environment: environment) == [
            "/x/geoalarm/config.toml", "/home/u/.config/geoalarm/config.toml", "/etc/geoalarm/config.toml",
        ])
        #expect(ConfigLocation.searchPaths(environment: ["HOME": "/h"]) == [
            "/h/.config/geoalarm/config.toml", "/etc/geoalarm/config.toml",
        ])
        let found = try ConfigLocation.resolve(explicit: nil, environment: environment) { $0.hasPrefix("/home") }
        #expect(found == "/home/u/.config/geoalarm/config.toml")
        #expect(try ConfigLocation.resolve(explicit: "my.toml", environment: environment) { _ in false } == "my.toml")
        #expect(throws: ConfigNotFound.self) {
            try ConfigLocation.resolve(explicit: nil, environment: environment) { _ in false }
        }
        let message = ConfigNotFound(tried: ["/a", "/b"]).description
        #expect(message.contains("tried /a, /b"))
    }

    @Test func theBundledConfigsAreValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for name in ["config/example.toml", "config/demo.toml"] {
            let config = try ConfigLoader.load(path: root.appendingPathComponent(name).path)
            #expect(!config.reminders.isEmpty, "\(name)")
            #expect(config.warnings.isEmpty, "\(name): \(config.warnings)")
        }
    }
}

struct DaemonSectionTests {
    @Test func gpsdAndOutputSections() throws {
        let config = try ConfigLoader.parse("[gpsd]\nhost = \"pi.local\"\nport = 2948\n[output]\nnotify = false\n", path: "r.toml")
        #expect(config.gpsdHost == "pi.local" && config.gpsdPort == 2948 && !config.notify)
        let plain = try ConfigLoader.parse("", path: "r.toml")
        #expect(plain.gpsdHost == nil && plain.gpsdPort == nil && plain.notify)
    }

    /// `[gpsd] host` is read as --gpsd reads its value: with a port after it, an IPv6 address
    /// in brackets or without; a port given twice, or none that is one, is refused.
    @Test(arguments: [
        ("host = \"pi.local:2948\"", "pi.local", 2948), ("host = \"[::1]\"", "::1", nil), ("host = \"[::1]:3000\"", "::1", 3000),
        ("host = \"::1\"\nport = 3001", "::1", 3001),
    ] as [(String, String, Int?)])
    func gpsdHostTakesAPort(table: String, host: String, port: Int?) throws {
        let config = try ConfigLoader.parse("[gpsd]\n" + table + "\n", path: "r.toml")
        #expect(config.gpsdHost == host && config.gpsdPort == port)
    }

    @Test func gpsdHostProblems() {
        func problems(_ table: String) -> [String] {
            do {
                _ = try ConfigLoader.parse("[gpsd]\n" + table + "\n", path: "r.toml")
                return []
            } catch {
                return error.diagnostics.map(\.description)
            }
        }
        #expect(problems("host = \"pi:2947\"\nport = 2948") == ["r.toml:2: gpsd: host: pi:2947 gives a port, and so does port: give it once"])
        #expect(problems("host = \"pi:http\"") == ["r.toml:2: gpsd: host: pi:http: port \"http\" is not 1-65535"])
        #expect(problems("host = \"[::1\"") == ["r.toml:2: gpsd: host: [::1 has an unclosed ["])
        #expect(problems("host = \" \"") == ["r.toml:2: gpsd: host: \" \" is no host name or address"])
    }

    @Test func badDaemonSections() {
        do {
            _ = try ConfigLoader.parse("[gpsd]\nport = 70000\nhots = \"x\"\n[output]\nnotify = \"no\"\n", path: "r.toml")
            Issue.record("accepted a bad config")
        } catch {
            #expect(error.diagnostics.map(\.description) == [
                "r.toml:3: gpsd: hots: unknown key (did you mean \"host\"?)",
                "r.toml:2: gpsd: port: 70000 is not 1-65535",
                "r.toml:5: output: notify: must be true or false, not a string",
            ])
        }
    }
}

struct AlertConfigTests {
    @Test func alertsComeFromTheReminderElseFromDefaults() throws {
        let config = try ConfigLoader.parse("""
            [defaults]
            urgency = "low"
            icon = "starred"
            exec = ["/usr/bin/paplay", "/usr/share/sounds/freedesktop/stereo/bell.oga"]
            [output]
            hook_timeout = "3s"
            snooze = "1h30m"
            [[reminder]]
            title = "Plain"
            lat = 1
            lon = 2
            [[reminder]]
            title = "Loud"
            lat = 1
            lon = 2
            urgency = "CRITICAL"
            timeout = "20s"
            icon = ""
            exec = ["notify-me"]
            """, path: "r.toml")
        #expect(config.reminders[0].alert == ReminderAlert(
            urgency: .low, icon: "starred", timeout: nil,
            command: ["/usr/bin/paplay", "/usr/share/sounds/freedesktop/stereo/bell.oga"]))
        #expect(config.reminders[1].alert == ReminderAlert(urgency: .critical, icon: nil, timeout: 20, command: ["notify-me"]))
        #expect(config.hookTimeout == 3)
        #expect(config.snooze == 5400)
        #expect(try ConfigLoader.parse("", path: "r.toml").snooze == 3600, "an hour unless the file says otherwise")
        #expect(try ConfigLoader.parse("[history]\nkeep = \"90d\"\n", path: "r.toml").historyKeep == 90 * 86400)
        // keep = 90, meant as days, would prune all but a minute and a half of history: refused.
        for bare in ["90", "\"90\"", "\" 90.5 \""] {
            #expect(throws: ConfigError.self) { try ConfigLoader.parse("[history]\nkeep = \(bare)\n", path: "r.toml") }
            do {
                _ = try ConfigLoader.parse("[history]\nkeep = \(bare)\n", path: "r.toml")
            } catch {
                #expect(error.diagnostics.map(\.description) == [
                    "r.toml:2: history: keep: a number alone would be seconds, and the history older pruned: give its unit (\"90d\")",
                ])
            }
        }
        #expect(try ConfigLoader.parse("", path: "r.toml").historyKeep == nil)
        #expect(try ConfigLoader.parse("", path: "r.toml").hookTimeout == 10)
    }

    @Test func badAlerts() {
        do {
            _ = try ConfigLoader.parse("""
                [output]
                hook_timeout = "0s"
                snooze = "30s"
                [[reminder]]
                id = "x"
                title = "X"
                lat = 1
                lon = 2
                urgency = "urgent"
                exec = "paplay bell.oga"
                [[reminder]]
                id = "y"
                title = "Y"
                lat = 1
                lon = 2
                exec = []
                timeout = "soon"
                """, path: "r.toml")
            Issue.record("accepted a bad config")
        } catch {
            let hint = "must be a non-empty array of strings: the program and its arguments, e.g. [\"/usr/bin/paplay\", \"bell.oga\"]"
            #expect(error.diagnostics.map(\.description) == [
                "r.toml:9: reminder \"x\" (#1): urgency: unknown value \"urgent\" (use \"low\", \"normal\" or \"critical\")",
                "r.toml:10: reminder \"x\" (#1): exec: \(hint)",
                "r.toml:17: reminder \"y\" (#2): timeout: \"soon\" is not a number with a unit",
                "r.toml:16: reminder \"y\" (#2): exec: \(hint)",
                "r.toml:2: output: hook_timeout: must be above 0",
                "r.toml:3: output: snooze: must be at least a minute",
            ])
        }
    }
}

struct ScheduleConfigTests {
    @Test func scheduleKeys() throws {
        let config = try ConfigLoader.parse("""
            [defaults]
            repeat = "12h"
            [[reminder]]
            title = "Office hours"
            lat = 1
            lon = 2
            active = { days = ["mon", "Tuesday", "wed-fri"], from = "08:00", to = "18:00" }
            due = "2026-12-24"
            starts = "2026-12-01T09:30"
            fire_when_overdue = true
            [[reminder]]
            title = "Night"
            lat = 1
            lon = 2
            repeat = "once"
            active = { from = "22:00", to = "02:00" }
            """, path: "r.toml")
        let office = config.reminders[0].schedule
        #expect(office.repetition == .cooldown(43200))
        #expect(office.active == ActiveWindow(weekdays: [2, 3, 4, 5, 6], fromMinute: 480, toMinute: 1080))
        #expect(office.due == LocalDate(parsing: "2026-12-24") && office.starts == LocalDate(parsing: "2026-12-01T09:30"))
        #expect(office.fireWhenOverdue)
        let night = config.reminders[1].schedule
        #expect(night.repetition == .once)
        #expect(night.active == ActiveWindow(weekdays: Set(1...7), fromMinute: 1320, toMinute: 120))
        #expect(try ConfigLoader.parse("[[reminder]]\ntitle = \"A\"\nlat = 1\nlon = 2\n", path: "r.toml").reminders[0].schedule == ReminderSchedule())
    }

    @Test func badScheduleKeys() {
        do {
            _ = try ConfigLoader.parse("""
                [[reminder]]
                id = "x"
                title = "X"
                lat = 1
                lon = 2
                repeat = "twice"
                due = "Christmas"
                active = { days = ["funday"], form = "08:00" }
                [[reminder]]
                id = "y"
                title = "Y"
                lat = 1
                lon = 2
                active = { from = "25:00" }
                starts = 2026-12-01
                """, path: "r.toml")
            Issue.record("accepted a bad config")
        } catch {
            #expect(error.diagnostics.map(\.description) == [
                "r.toml:6: reminder \"x\" (#1): repeat: \"twice\" is not \"always\", \"once\" or a period such as \"12h\" or \"daily\"",
                "r.toml:7: reminder \"x\" (#1): due: \"Christmas\" is not a date such as \"2026-12-24\" or \"2026-12-24T16:00\"",
                "r.toml:8: reminder \"x\" (#1): form: unknown key (did you mean \"from\"?)",
                "r.toml:8: reminder \"x\" (#1): active.days: \"funday\" is not a day: sun, mon, tue, wed, thu, fri, sat (or spelt out), "
                    + "a range such as mon-fri, weekdays or weekend",
                "r.toml:15: reminder \"y\" (#2): starts: must be a date string such as \"2026-12-24\" or \"2026-12-24T16:00\", not a date or time",
                "r.toml:14: reminder \"y\" (#2): active.from: \"25:00\" is not a time of day such as \"08:00\"",
            ])
        }
    }

    @Test func approachKeysComeFromTheReminderElseFromDefaults() throws {
        let config = try ConfigLoader.parse("""
            [defaults]
            approach_eta = "10m"
            [[reminder]]
            title = "Home"
            lat = 1
            lon = 2
            approach_within = "2km"
            [[reminder]]
            title = "Station"
            lat = 1
            lon = 2
            approach_eta = "90s"
            """, path: "r.toml")
        // "10m" is ten minutes as approach_eta, a duration; "2km" a length.
        #expect(config.reminders[0].approach == ApproachRule(within: 2000, eta: 600))
        #expect(config.reminders[1].approach == ApproachRule(within: nil, eta: 90))
        #expect(try ConfigLoader.parse("[[reminder]]\ntitle = \"A\"\nlat = 1\nlon = 2\n", path: "r.toml").reminders[0].approach.isEmpty)
    }

    @Test func badApproachKeys() {
        #expect(ConfigTests().problems("""
            [[reminder]]
            id = "x"
            title = "X"
            lat = 1
            lon = 2
            approach_within = "0m"
            approach_eta = "soon"
            [[reminder]]
            id = "y"
            title = "Y"
            at = "2026-12-24T09:00"
            approach_eta = "5m"
            """) == [
            "r.toml:6: reminder \"x\" (#1): approach_within: must be above 0",
            "r.toml:7: reminder \"x\" (#1): approach_eta: \"soon\" is not a number with a unit",
            "r.toml:12: reminder \"y\" (#2): approach_eta: only reminders with a place have this; a time alarm fires once at its time",
        ])
    }
}

struct TimeAlarmConfigTests {
    @Test func aReminderWithAnAtTimeAndNoPlaceIsATimeAlarm() throws {
        let config = try ConfigLoader.parse("""
            [[reminder]]
            title = "Call mum"
            notes = "Her birthday"
            at = "2026-12-24T16:00"
            urgency = "critical"
            """, path: "r.toml")
        #expect(config.reminders.isEmpty)
        #expect(config.alarms == [TimeAlarm(
            id: "call-mum", title: "Call mum", notes: "Her birthday", at: .local(LocalDate(parsing: "2026-12-24T16:00")!),
            alert: ReminderAlert(urgency: .critical))])
    }

    /// A circle smaller than a receiver's error loads, with a warning at its line ("radius = 1"
    /// meant as a kilometre); the defaults' too; 10 m and more, and 0 (the default), say nothing.
    @Test func aCircleSmallerThanAFixsErrorIsWarnedAbout() throws {
        let config = try ConfigLoader.parse("""
            [defaults]
            radius = "5 ft"
            [[reminder]]
            title = "A"
            location = "1,2"
            radius = 1
            [[reminder]]
            title = "B"
            location = "1,2"
            radius = 10
            [[reminder]]
            title = "C"
            location = "1,2"
            radius = 0
            """, path: "r.toml")
        let said = "is less than a GPS fix's usual error: the place may never count as reached (a length with its unit: \"1km\")"
        #expect(config.warnings.map(\.description) == ["r.toml:2: defaults: radius: 2 m \(said)", "r.toml:6: reminder \"a\" (#1): radius: 1 m \(said)"])
        #expect(config.reminders.map(\.geometry.radius) == [1, 10, 1.524])
        // An approach a few metres or seconds ahead is the arrival itself: "2" meant as kilometres.
        let approaches = try ConfigLoader.parse("""
            [[reminder]]
            title = "A"
            location = "1,2"
            approach_within = 2
            approach_eta = 10
            [[reminder]]
            title = "B"
            location = "1,2"
            approach_within = "2km"
            approach_eta = "10m"
            """, path: "r.toml")
        #expect(approaches.warnings.map(\.description) == [
            "r.toml:4: reminder \"a\" (#1): approach_within: 2 m ahead of the edge is the arrival itself (a length with its unit: \"2km\")",
            "r.toml:5: reminder \"a\" (#1): approach_eta: 10 s ahead is the arrival itself (\"10m\" is ten minutes)",
        ])
    }

    /// An icon file named relative to the config is found beside it (the notification server
    /// would look "bakery.png" up as a themed name); one not there is warned about and the
    /// default shows; a themed name stays a name.
    @Test func anIconFileIsFoundBesideTheConfig() throws {
        let path = try configFolder("", ["icons/bakery.png": ""])
        let folder = (path as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = try ConfigLoader.parse("""
            [[reminder]]
            title = "A"
            location = "1,2"
            icon = "icons/bakery.png"
            [[reminder]]
            title = "B"
            location = "1,2"
            icon = "nope.SVG"
            [[reminder]]
            title = "C"
            location = "1,2"
            icon = "starred"
            """, path: path)
        #expect(config.reminders.map(\.alert.icon) == [folder + "/icons/bakery.png", nil, "starred"])
        #expect(config.warnings.map(\.description) == [
            "\(folder)/config.toml:8: reminder \"b\" (#2): icon: \(folder)/nope.SVG does not exist: the default icon shows",
        ])
    }

    @Test func aTimeAlarmHasNoPlaceOrPlaceOnlyKeys() {
        do {
            _ = try ConfigLoader.parse("""
                [[reminder]]
                id = "x"
                title = "X"
                at = "soon"
                lat = 1
                lon = 2
                radius = "5m"
                """, path: "r.toml")
            Issue.record("accepted a bad config")
        } catch {
            #expect(error.diagnostics.map(\.description) == [
                "r.toml:5: reminder \"x\" (#1): lat: a reminder has a place or an at time, not both",
                "r.toml:6: reminder \"x\" (#1): lon: a reminder has a place or an at time, not both",
                "r.toml:7: reminder \"x\" (#1): radius: only reminders with a place have this; a time alarm fires once at its time",
                "r.toml:4: reminder \"x\" (#1): at: \"soon\" is not a time such as \"2026-12-24T16:00\"",
            ])
        }
    }
}
