import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmTasks
import Testing

/// `[[tasklist]]`: a vdir, or a CalDAV collection with its credentials; every mistake named
/// with its line.
struct TaskListConfigTests {
    static func load(_ table: String) throws -> Config {
        try ConfigLoader.parse("[[tasklist]]\nname = \"Errands\"\n" + table, path: "/home/ana/.config/geoalarm/config.toml")
    }

    /// The problems of `table`, one per line.
    static func problems(_ table: String) -> String {
        do {
            _ = try load(table)
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func aServersListWithItsSettings() throws {
        let config = try Self.load("""
            url = "https://cloud.example.org/remote.php/dav/calendars/ana/tasks/"
            username = "ana"
            password_command = ["secret-tool", "lookup", "service", "nextcloud"]
            poll = "5m"
            """)
        let list = try #require(config.taskListSettings.first)
        guard case .server(let server) = list.source else { Issue.record("\(list.source)"); return }
        #expect(server.url == "https://cloud.example.org/remote.php/dav/calendars/ana/tasks/" && server.username == "ana")
        #expect(server.passwordCommand == ["secret-tool", "lookup", "service", "nextcloud"] && server.poll == 300)
        #expect(config.hasPasswordCommands && config.serverTaskLists.count == 1 && list.folder == nil)
        let plain = try Self.load("url = \"http://127.0.0.1:5232/ana/tasks/\"\n")
        guard case .server(let defaults) = plain.taskListSettings.first?.source else { Issue.record("no server"); return }
        #expect(defaults.poll == ServerSettings.defaultPoll && defaults.username == nil && !plain.hasPasswordCommands)
    }

    @Test func aPasswordFileIsTheUsersOwnAndBesideTheConfig() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-pw-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "secret\n".write(toFile: folder + "/pw", atomically: true, encoding: .utf8)
        chmod(folder + "/pw", 0o644)
        let table = "[[tasklist]]\nname = \"E\"\nurl = \"https://dav.example/t/\"\nusername = \"ana\"\npassword_file = \"pw\"\n"
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(table, path: folder + "/config.toml") }
        do {
            _ = try ConfigLoader.parse(table, path: folder + "/config.toml")
        } catch {
            #expect("\(error)".contains("config.toml:5") && "\(error)".contains("chmod 600"), "\(error)")
        }
        chmod(folder + "/pw", 0o600)
        let config = try ConfigLoader.parse(table, path: folder + "/config.toml")
        guard case .server(let server) = config.taskListSettings.first?.source else { Issue.record("no server"); return }
        #expect(server.passwordFile == folder + "/pw")
        // A file not there yet (it is read at each use) is no mistake of the config.
        try FileManager.default.removeItem(atPath: folder + "/pw")
        #expect(throws: Never.self) { try ConfigLoader.parse(table, path: folder + "/config.toml") }
    }

    @Test(arguments: [
        ("url = \"ftp://dav.example/t/\"", "url", "https://"),
        ("url = \"https://ana:s3cr3t@dav.example/t/\"", "url", "https://ana:…@dav.example/t/ must not hold credentials"),
        ("url = \"https:///t/\"", "url", "no host"),
        ("url = \"https://dav.example/my tasks/\"", "url", "%20"),
        ("url = \"https://dav.example/t/\"\nvdir = \"/tmp\"", "url", "not both"),
        ("url = \"https://dav.example/t/\"\npassword = \"x\"", "password", "not written in the config"),
        ("url = \"https://dav.example/t/\"\npassword_command = \"pass nextcloud\"", "password_command", "array of strings"),
        ("url = \"https://dav.example/t/\"\npassword_command = [\"pass\"]", "username", "needs a username"),
        ("url = \"https://dav.example/t/\"\nusername = \"a\"\npassword_command = [\"pass\"]\npassword_file = \"pw\"", "password_command", "not both"),
        ("url = \"https://dav.example/t/\"\npoll = \"2s\"", "poll", "at least 10s"),
        ("url = \"http://dav.example/t/\"\ncafile = \"/etc/hostname\"", "cafile", "https://"),
        ("url = \"https://dav.example/t/\"\ncafile = \"/nowhere/ca.crt\"", "cafile", "no such file"),
        ("vdir = \"/tmp\"\nusername = \"ana\"", "username", "only applies to a list on a server"),
        ("geo_tasks = \"arrive\"", "vdir", "or its CalDAV collection (url)"),
        ("vdir = \"/tmp\"\nlocation_tasks = \"near\"", "location_tasks", "unknown value \"near\" (use \"arrive\", \"leave\" or \"both\")"),
    ])
    func eachMistakeIsNamed(table: String, key: String, said: String) {
        let problems = Self.problems(table)
        #expect(problems.contains("\(key): ") && problems.contains(said), "\(table): \(problems)")
        #expect(problems.hasPrefix("/home/ana/.config/geoalarm/config.toml:"), "\(problems)")
        #expect(!problems.contains("s3cr3t"), "a password in a url is not repeated: \(problems)")
    }

    /// `location_tasks` reads a task's words against `[places]`: without that table only a
    /// position can match, which is said.
    @Test func locationTasksNeedPlaces() throws {
        let config = try ConfigLoader.parse(
            "[places]\nbakery = \"38.7105,-9.1366\"\n[[tasklist]]\nname = \"Errands\"\nvdir = \"/tmp\"\nlocation_tasks = \"both\"\n", path: "/c.toml")
        #expect(config.taskListSettings.first?.locationTasks == .both && config.warnings.isEmpty, "\(config.warnings)")
        let alone = try Self.load("vdir = \"/tmp\"\nlocation_tasks = \"arrive\"\n")
        #expect(alone.warnings.map(\.description) == [
            "/home/ana/.config/geoalarm/config.toml:4: tasklist (#1): location_tasks: there is no [places] table nor [[collection]]: only a task whose LOCATION is a position is a reminder",
        ])
    }

    /// Tasks at a collection's places watch each place as a fence of its own: past a million in
    /// all, a further task is passed over and said, so that a list cannot make the agent watch
    /// millions of fences.
    @Test func tasksAtCollectionsPlacesHaveALimit() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-limit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for uid in ["a", "b", "c"] {
            try "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:\(uid)\r\nSUMMARY:Task \(uid)\r\nLOCATION:Cameras\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
                .write(toFile: "\(folder)/\(uid).ics", atomically: true, encoding: .utf8)
        }
        var config = try ConfigLoader.parse(
            "[[tasklist]]\nname = \"Errands\"\nvdir = \"\(folder)\"\nlocation_tasks = \"arrive\"\n", path: "/c.toml")
        let place = CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.7, longitude: -9.1), radius: 30))
        config.collections = [ReminderCollection(
            id: "cameras", template: config.taskDefaults.template,
            places: Array(repeating: place, count: TaskLists.maximumTaskPlaces / 2))]
        config.loadTaskLists()
        #expect(config.collections.map(\.id) == ["cameras", "errands/a", "errands/b"])
        #expect(config.taskLists.first?.problems == [
            "errands/c: its 500000 places would take the tasks at collections' places past 1000000 in all: its task is passed over",
        ])
    }

    /// A password command runs as a hook does: a config that others could change is refused.
    @Test func aPasswordCommandInAConfigOthersCanChangeIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-\(UUID().uuidString).toml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "[[tasklist]]\nname = \"E\"\nurl = \"https://dav.example/t/\"\nusername = \"a\"\npassword_command = [\"pass\"]\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o666)
        #expect(throws: ConfigError.self) { try ConfigLoader.read(path: path) }
        #expect(Self.refusal(path)?.contains("refused: it holds a password_command and credentials for a server") == true, "\(Self.refusal(path) ?? "")")
        chmod(path, 0o600)
        #expect(try ConfigLoader.read(path: path).hasPasswordCommands)
    }

    /// Credentials go to the config's `url`: whoever rewrites a config others can write (or one
    /// in a folder they can write) receives the password. Refused as for a command; a list
    /// without a user sends nothing secret and is not.
    @Test(arguments: [
        ("[[tasklist]]\nname = \"E\"\nurl = \"https://dav.example/t/\"\nusername = \"a\"\npassword_file = \"/p\"\n", true),
        ("[[tasklist]]\nname = \"E\"\nurl = \"https://dav.example/t/\"\n", false),
    ])
    func credentialsInAConfigOthersCanChangeAreRefused(text: String, refused: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/config.toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        for (fileMode, folderMode, what) in [(0o666, 0o755, "the file"), (0o644, 0o777, "its folder")] as [(mode_t, mode_t, String)] {
            chmod(path, fileMode)
            chmod(folder, folderMode)
            let refusal = Self.refusal(path)
            if refused {
                #expect(refusal?.contains("refused: it holds credentials for a server (its url and password_file), and \(what)") == true,
                        "\(refusal ?? "taken")")
            } else {
                #expect(refusal == nil, "\(refusal ?? "")")
            }
        }
        chmod(folder, 0o700)
    }

    /// Why `ConfigLoader.read` refuses the file at `path`; nil when it reads it.
    static func refusal(_ path: String) -> String? {
        do {
            _ = try ConfigLoader.read(path: path)
            return nil
        } catch {
            return error.diagnostics.map(\.description).joined(separator: "\n")
        }
    }
}
