import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// Task lists with the real programs on the other side: vdirs that vdirsyncer syncs with a real
/// CalDAV server (Radicale, on loopback), tasks written by the `caldav` library as iOS and RFC 9074
/// clients write them, todoman reading the same folder, the demo walk through gpsd.
@Suite(.serialized)
struct TaskListLiveTests {
    /// Where the demo's places are: its walk arrives at each.
    static let bakery = "38.71050", bakeryLon = "-9.13660"
    static let postOffice = ("38.70790", "-9.13650")
    static let ferry = ("38.70620", "-9.13560")

    /// A config of `lists` (name, folder, extra TOML lines), with the demo's defaults and, when
    /// asked, its post office in `[places]`.
    static func config(_ lists: [(String, String, String)], withPostOffice: Bool = false) throws -> String {
        var text = "[defaults]\nradius = \"50m\"\nhysteresis = \"20m\"\nmax_error = \"60m\"\n"
        if withPostOffice { text += "\n[places]\npost_office = \"\(Self.postOffice.0),\(Self.postOffice.1)\"\n" }
        for (name, folder, extra) in lists { text += "\n[[tasklist]]\nname = \"\(name)\"\nvdir = \"\(folder)\"\n\(extra)" }
        return try Command.temporaryFile(text)
    }

    /// A new empty folder for a vdir (the caller removes it).
    static func newFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-vdir-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A task object (CRLF) with `lines` in its VTODO.
    static func object(_ lines: [String]) -> String {
        (["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//geoalarm tests//EN", "BEGIN:VTODO"] + lines + ["END:VTODO", "END:VCALENDAR"])
            .joined(separator: "\r\n") + "\r\n"
    }

    /// An arrive alarm as iOS writes it: the comma of the geo URI escaped, the 1976 placeholder trigger.
    static func appleArrive(_ lat: String, _ lon: String, radius: Int) -> [String] {
        ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER;VALUE=DATE-TIME:19760401T005545Z", "X-APPLE-PROXIMITY:ARRIVE",
         "X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-APPLE-RADIUS=\(radius);X-APPLE-REFERENCEFRAME=1;X-TITLE=Here:geo:\(lat)\\,\(lon)",
         "END:VALARM"]
    }

    /// A folder with a task of each writer's form at a place of the demo walk, a completed one,
    /// and (where ../shared/testdata is) the real objects of iOS and tasks.org.
    static func everyWritersFolder() throws -> String {
        let folder = try Self.newFolder()
        let tasks = [
            "bread.ics": Self.object(["UID:APPLE-BREAD", "SUMMARY:Bread from the task list"] + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30)),
            "done.ics": Self.object(["UID:APPLE-DONE", "SUMMARY:Done already", "STATUS:COMPLETED", "COMPLETED:20261101T080000Z"]
                + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30)),
            "post.ics": Self.object([
                "UID:rfc-9074-post", "SUMMARY:Post the letters", "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:PT0S", "PROXIMITY:ARRIVE",
                "BEGIN:VLOCATION", "NAME:Post office", "URL:geo:\(Self.postOffice.0),\(Self.postOffice.1);u=50", "END:VLOCATION", "END:VALARM",
            ]),
            "ferry.ics": Self.object(["UID:1234567", "SUMMARY:Ferry times", "GEO:\(Self.ferry.0);\(Self.ferry.1)"]),
        ]
        for (name, text) in tasks { try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8) }
        if let shared = TestData.root {
            for name in ["apple-ios14-arrive.ics", "apple-ios26-completed.ics", "tasks-org-time-alarm.ics"] {
                try FileManager.default.copyItem(atPath: shared.appendingPathComponent("ical/\(name)").path, toPath: folder + "/" + name)
            }
        }
        return folder
    }

    /// Each writer's form fires where its place is, on a replay of the demo walk and live through
    /// gpsd alike; the completed task does not; iOS 14's real task (in Switzerland) is listed.
    @Test func everyWritersTaskFiresOnTheWalkReplayedAndLive() throws {
        let folder = try Self.everyWritersFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = try Self.config([("Errands", folder, "geo_tasks = \"arrive\"\n")])
        let list = try Command.run(["list", "-c", config])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdoutLines.contains { $0.hasPrefix("errands/applebre") && $0.contains("Bread from the task list") }, "\(list.stdout)")
        if TestData.root != nil {
            #expect(list.stdoutLines.contains { $0.hasPrefix("errands/9710d97c") && $0.contains("Location Alert") && $0.contains("100 m") })
        }
        #expect(!list.stdout.contains("Done already"), "a completed task fires nothing")
        let replay = try Command.run(["replay", "-c", config, "--state", Command.scratchState(), LiveAgentTests.walk])
        #expect(replay.status == 0, "\(replay.stderr)")
        let events = replay.stdoutLines.map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().prefix(2).joined(separator: " ") }
        #expect(events == ["arrive errands/applebre", "arrive errands/rfc9074p", "arrive errands/1234567"], "\(replay.stdout)")
        // Live, through gpsd: the same events.
        let gpsd = try GPSFake()
        try gpsd.load(LiveAgentTests.walk)
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        // tasks.org's time alarm (a day long past) fires live, at the start; replay plays places only.
        #expect(agent.stdoutLines.filter { !$0.contains("  alarm  ") } == replay.stdoutLines, "\(agent.stdout)")
        if TestData.root != nil {
            #expect(agent.stdoutLines.first?.hasPrefix("2025-09-05T00:00:00Z  alarm  errands/tasksorg/time-1  ") == true, "\(agent.stdout)")
        }
    }

    /// iOS 14's own task (its place in Rivera, Switzerland) fires when a drive arrives there, on
    /// a replay and live through gpsd.
    @Test(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"))
    func iOSsOwnTaskFiresWhereItsPlaceIs() throws {
        let folder = try Self.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(
            atPath: try #require(TestData.root).appendingPathComponent("ical/apple-ios14-arrive.ics").path, toPath: folder + "/task.ics")
        let config = try Self.config([("Reminders", folder, "")])
        let rivera = Coordinate(latitude: 46.141813, longitude: 8.917549)
        let drive = NMEADrive.log(
            NMEADrive.straightIn(to: rivera, from: 2000, speed: 12, seconds: 300), start: Date(timeIntervalSince1970: 1_795_000_000))
        let track = try Command.temporaryFile(drive, named: "to-rivera.nmea")
        let replay = try Command.run(["replay", "-c", config, track])
        #expect(replay.stdoutLines.count == 1 && replay.stdout.contains("arrive  reminders/9710d97c  \"Location Alert\""), "\(replay.stdout) \(replay.stderr)")
        let gpsd = try GPSFake()
        try gpsd.load(track)
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(agent.stdoutLines == replay.stdoutLines, "\(agent.stdout)")
    }

    /// A folder `errands` (in a new folder of its own, the first value) that todoman keeps as its
    /// default list, and a way to run todoman on it.
    static func todomanList() throws -> (root: String, folder: String, todoman: ([String]) throws -> Command) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-todoman-\(UUID().uuidString)").path
        let folder = root + "/errands"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let todomanConfig = root + "/todoman.py"
        try "path = \"\(root)/*\"\ndate_format = \"%Y-%m-%d\"\ntime_format = \"%H:%M\"\ndefault_list = \"errands\"\n"
            .write(toFile: todomanConfig, atomically: true, encoding: .utf8)
        return (root, folder, { arguments in try Command.run(["--config", todomanConfig] + arguments, executable: "/usr/bin/todoman") })
    }

    /// A task todoman writes with `--location "Post office"` (words, no coordinates) fires at the
    /// config's post_office with `location_tasks`, and `geoalarm complete` completes it where
    /// todoman reads it.
    @Test func todomansLocationNamesAPlaceOfTheConfig() throws {
        let (root, folder, todoman) = try Self.todomanList()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let written = try todoman(["new", "--location", "Post office", "Post the letters"])
        #expect(written.status == 0, "\(written.stderr)")
        let config = try Self.config([("Errands", folder, "location_tasks = \"arrive\"\n")], withPostOffice: true)
        let list = try Command.run(["list", "-c", config])
        let line = try #require(list.stdoutLines.first { $0.contains("Post the letters") }, "\(list.stdout) \(list.stderr)")
        #expect(line.contains("post_office (38.707900,-9.136500)"), "\(line)")
        let id = String(line.prefix { $0 != " " })
        let replay = try Command.run(["replay", "-c", config, LiveAgentTests.walk])
        #expect(replay.stdoutLines.count == 1 && replay.stdout.contains("arrive  \(id)  \"Post the letters\""), "\(replay.stdout) \(replay.stderr)")
        #expect(try Command.run(["complete", id, "-c", config, "--state", Command.scratchState()]).status == 0)
        let done = try todoman(["--porcelain", "list", "--status", "ANY"])
        let tasks = try JSONSerialization.jsonObject(with: Data(done.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(tasks.count == 1 && tasks.first?["completed"] as? Bool == true && tasks.first?["location"] as? String == "Post office",
                "\(done.stdout) \(done.stderr)")
        // The other way: a task geoalarm adds at a named place shows that name in todoman.
        let added = try Command.run(["add", "-c", config, "--list", "Errands", "--place", "post_office", "--title", "Buy stamps"])
        #expect(added.status == 0, "\(added.stderr)")
        let both = try JSONSerialization.jsonObject(with: Data(try todoman(["--porcelain", "list"]).stdout.utf8)) as? [[String: Any]] ?? []
        #expect(both.count == 1 && both.first?["summary"] as? String == "Buy stamps" && both.first?["location"] as? String == "post_office", "\(both)")
    }

    /// A weekly task, three weeks behind (todoman's folder, as tasks.org or Thunderbird leave
    /// one): `geoalarm complete` moves it on to its next week still to come, where todoman reads
    /// it open and due then; the list still has it.
    @Test func aRepeatingTaskDoneMovesOnToItsNextTime() throws {
        let (root, folder, todoman) = try Self.todomanList()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        func day(_ offset: Int) -> (value: String, shown: String) {
            let parts = utc.dateComponents([.year, .month, .day], from: Date().addingTimeInterval(Double(offset) * 86_400))
            let (year, month, day) = (parts.year!, parts.month!, parts.day!)
            return (String(format: "%04d%02d%02d", year, month, day), String(format: "%04d-%02d-%02d", year, month, day))
        }
        try Self.object([
            "UID:weekly-post", "SUMMARY:Post the weekly letter", "LOCATION:Post office", "DTSTART;VALUE=DATE:\(day(-21).value)",
            "DUE;VALUE=DATE:\(day(-21).value)", "RRULE:FREQ=WEEKLY",
        ]).write(toFile: folder + "/weekly-post.ics", atomically: true, encoding: .utf8)
        let config = try Self.config([("Errands", folder, "location_tasks = \"arrive\"\n")], withPostOffice: true)
        let inUTC = ProcessInfo.processInfo.environment.merging(["TZ": "UTC"]) { $1 }
        let id = try #require(try Command.run(["list", "-c", config]).stdoutLines.first { $0.contains("Post the weekly letter") }?.prefix { $0 != " " })
        let done = try Command.run(["complete", String(id), "-c", config, "--state", Command.scratchState()], environment: inUTC)
        #expect(done.status == 0 && done.stdout == "\(id) (\"Post the weekly letter\") repeats: moved on in task list Errands to \(day(7).shown)\n",
                "\(done.stdout) \(done.stderr)")
        let tasks = try JSONSerialization.jsonObject(with: Data(try todoman(["--porcelain", "list", "--status", "ANY"]).stdout.utf8)) as? [[String: Any]] ?? []
        #expect(tasks.count == 1 && tasks.first?["completed"] as? Bool == false, "\(tasks)")
        #expect((tasks.first?["due"] as? Double ?? 0) > Date().timeIntervalSince1970, "due in its next week: \(tasks)")
        let text = try String(contentsOfFile: folder + "/weekly-post.ics", encoding: .utf8)
        #expect(text.contains("DTSTART;VALUE=DATE:\(day(7).value)\r\n") && text.contains("RRULE:FREQ=WEEKLY\r\n"), "\(text)")
        #expect(try Command.run(["list", "-c", config]).stdout.contains("Post the weekly letter"), "still a reminder: it comes back")
        let undone = try Command.run(["uncomplete", String(id), "-c", config, "--state", Command.scratchState()])
        #expect(undone.stdout == "\(id) (\"Post the weekly letter\") is not completed\n", "open, nothing to undo: \(undone.stdout) \(undone.stderr)")
        #expect(try String(contentsOfFile: folder + "/weekly-post.ics", encoding: .utf8) == text, "and nothing written")
    }

    /// "At any post office": todoman's `--location "Post offices"` names a `[[collection]]`; the
    /// task fires at whichever of its places the walk reaches, and `complete` on that place
    /// completes the task where todoman reads it.
    @Test func todomansLocationNamesACollection() throws {
        let (root, folder, todoman) = try Self.todomanList()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(try todoman(["new", "--location", "Post offices", "Buy stamps"]).status == 0)
        let csv = root + "/post-offices.csv"
        try "name;lat;lon\nFar away;40;-8\nCentral;\(Self.postOffice.0);\(Self.postOffice.1)\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let config = try Command.temporaryFile("""
            [defaults]
            radius = "50m"
            hysteresis = "20m"
            max_error = "60m"

            [[collection]]
            id = "post-offices"
            file = "\(csv)"
            title = "Post office {name}"
            enabled = false

            [[tasklist]]
            name = "Errands"
            vdir = "\(folder)"
            location_tasks = "arrive"

            """)
        let list = try Command.run(["list", "-c", config])
        let line = try #require(list.stdoutLines.first { $0.contains("Buy stamps") }, "\(list.stdout) \(list.stderr)")
        #expect(line.contains("2 places from \(csv)"), "\(line)")
        let task = String(line.prefix { $0 != "/" }) + "/" + String(line.split(separator: "/")[1].prefix { $0 != " " })
        let replay = try Command.run(["replay", "-c", config, LiveAgentTests.walk])
        #expect(replay.stdoutLines.count == 1 && replay.stdout.contains("arrive  \(task)/2  \"Buy stamps\""), "\(replay.stdout) \(replay.stderr)")
        #expect(replay.stderr.contains("task list Errands (\(folder)): 0 reminders, 1 task at a collection's places from 1 task"))
        let state = Command.scratchState()
        let snoozed = try Command.run(["snooze", "\(task)/2", "1h", "-c", config, "--state", state])
        #expect(snoozed.status == 0 && snoozed.stdout.hasPrefix("snoozed \(task) until "), "the task, at every place: \(snoozed.stdout)")
        let status = try Command.run(["status", "-c", config, "--state", state])
        #expect(status.stdoutLines.contains { $0.hasPrefix("\(task)/*") && $0.contains("snoozed until ") }, "\(status.stdout)")
        #expect(try Command.run(["complete", "\(task)/2", "-c", config, "--state", Command.scratchState()]).status == 0)
        let done = try todoman(["--porcelain", "list", "--status", "ANY"])
        let tasks = try JSONSerialization.jsonObject(with: Data(done.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(tasks.count == 1 && tasks.first?["completed"] as? Bool == true, "\(done.stdout) \(done.stderr)")
        #expect(!(try Command.run(["list", "-c", config]).stdout.contains("Buy stamps")), "a completed task is no reminder")
    }

    /// The list renamed in the config: each task's id changes, its state follows it (still
    /// inside the bakery, nothing is announced again), and its history is under its new id.
    @Test func aRenamedListKeepsEachTasksState() throws {
        let folder = try Self.everyWritersFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let state = Command.scratchState()
        let first = try Self.config([("Errands", folder, "")])
        let start = try Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<450), named: "to-the-bakery.nmea")
        let before = try Command.run(["replay", "-c", first, "--state", state, start])
        #expect(before.stdoutLines.count == 1 && before.stdout.contains("arrive  errands/applebre"), "\(before.stdout)")
        let renamed = try Self.config([("Shopping", folder, "")])
        let stay = try Command.temporaryFile(try LiveAgentTests.walkEpochs(450..<520), named: "still-there.nmea")
        let after = try Command.run(["replay", "-c", renamed, "--state", state, stay])
        #expect(after.status == 0 && after.stdoutLines.isEmpty, "still inside: nothing new. \(after.stdout) \(after.stderr)")
        #expect(after.stderr.contains("followed"), "\(after.stderr)")
        let history = try Command.run(["history", "--state", state, "--reminder", "shopping/applebre"])
        #expect(history.stdoutLines.count == 1, "the history followed: \(history.stdout) \(history.stderr)")
        let status = try Command.run(["status", "-c", renamed, "--state", state])
        #expect(status.stdoutLines.contains { $0.hasPrefix("shopping/applebre ") && $0.contains("inside") }, "\(status.stdout)")
    }

    /// Done goes to the task's file, and from there, at the next sync, to the server, with every
    /// other line of the object as it was; an edit made on the server before is kept; todoman
    /// sees geoalarm's completion and the task geoalarm added.
    @Test func doneReachesTheServerAndAnEditThereSurvives() throws {
        let server = try Radicale()
        _ = try server.client(["make-list"])
        _ = try server.client(["add-rfc", "rfc-post", "Post the letters", Self.postOffice.0, Self.postOffice.1, "40"])
        try server.sync()
        let config = try Self.config([("Errands", server.vdir, "")])
        let added = try Command.run(["add", "-c", config, "--list", "Errands", "--title", "Buy bread", "--at", "\(Self.bakery),\(Self.bakeryLon)",
                                     "--radius", "30m"])
        #expect(added.status == 0 && added.stdout.hasPrefix("added errands/"), "\(added.stdout) \(added.stderr)")
        try server.sync()
        let before = try server.client(["get", "rfc-post"]).stdout
        // Another device edits the task; the sync brings the edit here.
        _ = try server.client(["describe", "rfc-post", "Stamps are in the drawer"])
        try server.sync()
        let complete = try Command.run(["complete", "errands/rfcpost", "-c", config, "--state", Command.scratchState()])
        #expect(complete.status == 0, "\(complete.stderr)")
        try server.sync()
        let after = try server.client(["get", "rfc-post"]).stdout
        let (gone, came) = Self.difference(before, after)
        #expect(Set(came.map(Self.name)) == ["STATUS", "COMPLETED", "PERCENT-COMPLETE", "LAST-MODIFIED", "DTSTAMP", "DESCRIPTION"], "\(came)")
        #expect(came.contains("DESCRIPTION:Stamps are in the drawer"), "the server's edit survived: \(after)")
        #expect(Set(gone.map(Self.name)).isSubset(of: ["DTSTAMP", "LAST-MODIFIED", "STATUS"]), "no other line changed: \(gone)")
        let todos = try server.todoman()
        #expect(todos.contains { $0["summary"] as? String == "Post the letters" && $0["completed"] as? Bool == true }, "\(todos)")
        #expect(todos.contains { $0["summary"] as? String == "Buy bread" && $0["completed"] as? Bool == false }, "\(todos)")
        // Completed, it is listed no more; uncompleted, it is back.
        #expect(!(try Command.run(["list", "-c", config]).stdout.contains("Post the letters")))
        let again = try Command.run(["complete", "errands/rfcpost", "-c", config, "--state", Command.scratchState()])
        #expect(again.stdout == "errands/rfcpost (\"Post the letters\") was already completed, in task list Errands\n", "\(again.stdout) \(again.stderr)")
        try server.sync()
        #expect(try server.client(["get", "rfc-post"]).stdout == after, "its completion's time stands")
        #expect(try Command.run(["uncomplete", "errands/rfcpost", "-c", config, "--state", Command.scratchState()]).status == 0)
        #expect(try Command.run(["list", "-c", config]).stdout.contains("Post the letters"))
    }

    /// The agent follows the list as it syncs: a task completed on the server is silent after the
    /// sync, a task added there fires; and the list renamed in the config keeps each task's side.
    @Test func theAgentFollowsTheServerThroughEachSync() throws {
        let server = try Radicale()
        _ = try server.client(["make-list"])
        _ = try server.client(["add-rfc", "rfc-post", "Post the letters", Self.postOffice.0, Self.postOffice.1, "40"])
        _ = try server.client(["add-rfc", "rfc-bread", "Buy bread", Self.bakery, Self.bakeryLon, "30"])
        try server.sync()
        let config = try Self.config([("Errands", server.vdir, "")])
        let gpsd = try GPSFake()
        try gpsd.load(Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<300), named: "start.nmea"))
        let agent = try Background(["run", "--headless", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"])
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stderr.contains("watching 2 reminders"), "\(agent.stderr)")
        // Another device completes the post; the ferry is added there.
        _ = try server.client(["complete", "rfc-post"])
        _ = try server.client(["add-rfc", "rfc-ferry", "Ferry times", Self.ferry.0, Self.ferry.1, "80"])
        try server.sync()
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 2 reminders") }, "\(agent.stderr)")
        try gpsd.load(Command.temporaryFile(try LiveAgentTests.walkEpochs(300...), named: "rest.nmea"))
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        let events = agent.stdoutLines.map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().prefix(2).joined(separator: " ") }
        #expect(events == ["arrive errands/rfcbread", "arrive errands/rfcferry"], "\(agent.stdout)")
    }

    /// A vdir Errands of one task, the file `file` of `lines`; a desktop whose dunst presses Done
    /// on the pop-up for `title`; gpsd playing the walk to the bakery. Each test starts the agent
    /// (``agent(under:environment:)``), plays the walk and presses; the folder goes with it.
    final class DoneAtTheBakery {
        let folder: String
        let config: String
        let desktop: DesktopSession
        let gpsd: GPSFake

        init(task lines: [String], file: String, pressingDoneOn title: String) throws {
            folder = try TaskListLiveTests.newFolder()
            try TaskListLiveTests.object(lines).write(toFile: folder + "/" + file, atomically: true, encoding: .utf8)
            desktop = try CalDAVLiveTests.desktopPressingDone(on: title)
            config = try TaskListLiveTests.config([("Errands", folder, "")])
            gpsd = try GPSFake()
            try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<500), named: "to-the-bakery.nmea"))
        }

        deinit {
            gpsd.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// `geoalarm run` on the walk (behind `wrapper`, a command that runs the rest, when given).
        func agent(under wrapper: [String] = [], environment: [String: String] = [:]) throws -> Background {
            let run = ["run", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"]
            let merged = desktop.environment.merging(environment) { $1 }
            guard let program = wrapper.first else { return try Background(run, environment: merged) }
            return try Background(Array(wrapper.dropFirst()) + [Command.binary.path] + run, executable: URL(fileURLWithPath: program), environment: merged)
        }

        /// Plays the walk to `agent` and presses Done on the one pop-up it shows.
        func walkAndPressDone(_ agent: Background) throws {
            #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
            #expect(desktop.waitUntilShown(1), "\(desktop.shown) \(agent.stderr)")
            #expect(try desktop.dunstctl(["context"]).status == 0)
        }
    }

    /// The pop-up's Done on a daily task moves it on to tomorrow in its file: the agent says so,
    /// reads the list again and keeps the task, silent until then.
    @Test func thePopUpsDoneMovesARepeatingTaskOn() throws {
        let walk = try DoneAtTheBakery(
            task: ["UID:daily-bread", "SUMMARY:Buy bread", "DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=DAILY"]
                + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30), file: "daily-bread.ics", pressingDoneOn: "Buy bread")
        let agent = try walk.agent(environment: ["TZ": "UTC"])
        try walk.walkAndPressDone(agent)
        #expect(agent.waitUntil { $0.stderr.contains("moved errands/dailybre on (it repeats) to ") }, "\(agent.stderr)")
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(walk.config): 1 reminder") }, "the list read again: \(agent.stderr)")
        let text = try String(contentsOfFile: walk.folder + "/daily-bread.ics", encoding: .utf8)
        #expect(!text.contains("DTSTART;VALUE=DATE:20260101") && !text.contains("STATUS:COMPLETED"), "\(text)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
        #expect(walk.desktop.shown.count == 1, "announced once: \(walk.desktop.shown)")
    }

    /// Another member of the shared list adds a task whose UID begins as yours does, while your
    /// pop-up is on the screen: ids are made anew (yours grows longer, theirs takes your old one),
    /// and your Done completes your task, the one the pop-up showed, never theirs.
    @Test func aDoneActsOnTheTaskItShowedWhateverCameSince() throws {
        let walk = try DoneAtTheBakery(
            task: ["UID:pickupthekids-2026", "SUMMARY:Pick up the kids"] + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30),
            file: "mine.ics", pressingDoneOn: "Pick up the kids")
        let agent = try walk.agent()
        #expect(try walk.gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdout.contains("arrive  errands/pickupth  "), "\(agent.stdout)")
        #expect(walk.desktop.waitUntilShown(1), "\(walk.desktop.shown) \(agent.stderr)")
        // Theirs, far from here: it fires nothing, and takes the id your pop-up was shown with.
        let theirs = Self.object(["UID:pickupth", "SUMMARY:Pick up the kids"] + Self.appleArrive("38.70", "-9.40", radius: 30))
        try theirs.write(toFile: walk.folder + "/theirs.ics", atomically: true, encoding: .utf8)
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(walk.config): 2 reminders") }, "\(agent.stderr)")
        #expect(try walk.desktop.dunstctl(["context"]).status == 0)
        #expect(agent.waitUntil { $0.stderr.contains("completed errands/pickupthekids2026 in task list Errands") }, "\(agent.stderr)")
        #expect(agent.stderr.contains("errands/pickupth is errands/pickupthekids2026 now"), "\(agent.stderr)")
        #expect(try String(contentsOfFile: walk.folder + "/mine.ics", encoding: .utf8).contains("STATUS:COMPLETED"))
        #expect(try String(contentsOfFile: walk.folder + "/theirs.ics", encoding: .utf8) == theirs, "theirs is as they wrote it")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }

    /// `geoalarm complete` given an id that named another task until the list changed (another
    /// member's task took it) is refused with both ids as they are now; given again, it acts on
    /// the task that has it now. Each task is as its writers left it until then.
    @Test func anIdThatNamedAnotherTaskUntilTheListChangedIsAmbiguous() throws {
        let folder = try Self.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let mine = Self.object(["UID:pickupthekids-2026", "SUMMARY:Pick up the kids"] + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30))
        try mine.write(toFile: folder + "/mine.ics", atomically: true, encoding: .utf8)
        let config = try Self.config([("Errands", folder, "")])
        let state = Command.scratchState()
        // Seen by a command first: the state file notes the ids as they are.
        let snooze = try Command.run(["snooze", "errands/pickupth", "10m", "-c", config, "--state", state])
        #expect(snooze.status == 0, "\(snooze.stderr)")
        let theirs = Self.object(["UID:pickupth", "SUMMARY:Pick up the kids at school"] + Self.appleArrive("38.70", "-9.40", radius: 30))
        try theirs.write(toFile: folder + "/theirs.ics", atomically: true, encoding: .utf8)
        let refused = try Command.run(["complete", "errands/pickupth", "-c", config, "--state", state])
        #expect(refused.status == 1 && refused.stderr.contains("errands/pickupth is ambiguous")
                && refused.stderr.contains("errands/pickupthekids2026 (\"Pick up the kids\")"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: folder + "/mine.ics", encoding: .utf8) == mine)
        #expect(try String(contentsOfFile: folder + "/theirs.ics", encoding: .utf8) == theirs)
        let again = try Command.run(["complete", "errands/pickupth", "-c", config, "--state", state])
        #expect(again.status == 0 && again.stdout.contains("Pick up the kids at school"), "\(again.stdout)\(again.stderr)")
        #expect(try String(contentsOfFile: folder + "/theirs.ics", encoding: .utf8).contains("STATUS:COMPLETED"))
        #expect(try String(contentsOfFile: folder + "/mine.ics", encoding: .utf8) == mine)
    }

    /// Another writer (vdirsyncer bringing a sync) renames its version over the task file right
    /// after `complete`'s last look has opened it, so that the look reads the file it replaces
    /// (an open held by fanotify, the rename made meanwhile): the file there is another one now,
    /// and the Done is applied to it again. The other writer's edit survives, completed.
    @Test func anEditRenamedInAtTheLastLookSurvivesTheDone() throws {
        let folder = try Self.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let task = ["UID:bread", "SUMMARY:Buy bread"] + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30)
        try Self.object(task).write(toFile: folder + "/bread.ics", atomically: true, encoding: .utf8)
        let theirs = Self.object(["UID:bread", "SUMMARY:Buy bread", "DESCRIPTION:the wholemeal one"] + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30))
        let config = try Self.config([("Errands", folder, "")])
        let gate = try OpenGate(folder)
        let complete = try Background(["complete", "errands/bread", "-c", config, "--state", Command.scratchState()])
        defer { complete.stop() }
        // Its temporary file written, the next open of the task's is the last look.
        var temporaryOpened = false, renamedIn = false
        while !renamedIn, let name = gate.nextOpen() {
            if name.hasSuffix(".tmp") {
                temporaryOpened = true
            } else if temporaryOpened, name == "bread.ics" {
                try theirs.write(toFile: folder + "/.sync-bread.tmp", atomically: false, encoding: .utf8)
                renamedIn = rename(folder + "/.sync-bread.tmp", folder + "/bread.ics") == 0
            }
            gate.allow()
        }
        let account = gate.account
        gate.close()
        #expect(renamedIn, "the last look was not seen: \(account); complete: \(complete.stderr)")
        #expect(complete.exitStatus() == 0, "\(complete.stderr)")
        let text = try String(contentsOfFile: folder + "/bread.ics", encoding: .utf8)
        #expect(text.contains("DESCRIPTION:the wholemeal one") && text.contains("STATUS:COMPLETED"), "\(text)")
    }

    /// The agent reads its lists again off its loop: a reload held inside the open of a task
    /// file (fanotify) holds up nothing else. The walk's fixes are handled and their events said
    /// meanwhile, and the reload ends once the open goes on.
    @Test func aReloadHeldUpInATaskFileHoldsUpNoFix() throws {
        let folder = try Self.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bread = ["UID:bread", "SUMMARY:Buy bread"] + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30)
        try Self.object(bread).write(toFile: folder + "/bread.ics", atomically: true, encoding: .utf8)
        let config = try Self.config([("Errands", folder, "")])
        let gpsd = try GPSFake()
        defer { gpsd.stop() }
        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<500), named: "to-the-bakery.nmea"))
        let agent = try Background(["run", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"])
        defer { agent.stop() }
        #expect(agent.waitUntil { $0.stderr.contains("watching 1 reminder") }, "\(agent.stderr)")
        let gate = try OpenGate(folder)
        defer { gate.close() }
        let far = Self.object(["UID:far", "SUMMARY:Far away"] + Self.appleArrive("38.70", "-9.40", radius: 30))
        try far.write(toFile: folder + "/far.ics", atomically: true, encoding: .utf8)
        #expect(gate.nextOpen() != nil, "the reload did not open a task file: \(gate.account) \(agent.stderr)")
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(agent.stdout.contains("arrive  errands/bread  "), "\(agent.stdout)\(agent.stderr)")
        #expect(!agent.stderr.contains("reloaded"), "\(agent.stderr)")
        gate.close()
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 2 reminders") }, "\(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
    }

    /// The pop-up's Done on a task whose folder cannot be written (mounted read-only for the
    /// agent alone, in a mount namespace of its own): never half of it. The task is neither
    /// written nor silenced, and the agent says so, with what to do; its file is as it was.
    @Test func aDoneThatCannotBeWrittenLeavesTheTaskOpen() throws {
        let task = ["UID:bread", "SUMMARY:Buy bread"] + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30)
        let walk = try DoneAtTheBakery(task: task, file: "bread.ics", pressingDoneOn: "Buy bread")
        let agent = try walk.agent(under: [
            "/usr/bin/unshare", "--user", "--map-root-user", "--mount", "/bin/sh", "-c",
            #"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@""#, walk.folder,
        ])
        defer {
            agent.signal(SIGKILL)
            _ = agent.exitStatus()
        }
        try walk.walkAndPressDone(agent)
        #expect(agent.waitUntil { $0.stderr.contains("cannot complete errands/bread in task list Errands") }, "\(agent.stderr)")
        #expect(agent.stderr.contains("it stays open, here and there (press Done again once that is mended)"), "\(agent.stderr)")
        #expect(!agent.stderr.contains("completed errands/bread"), "\(agent.stderr)")
        #expect(try String(contentsOfFile: walk.folder + "/bread.ics", encoding: .utf8) == Self.object(task))
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
    }

    /// A Done being written as SIGTERM comes (held inside the open of its task file, fanotify)
    /// is written before the agent ends: the task-list service stops only once its writes are
    /// made, and the agent, which stops after it, still hears that the task is completed.
    @Test func aDoneUnderWayAtTheStopIsWrittenBeforeTheAgentEnds() throws {
        let task = ["UID:bread", "SUMMARY:Buy bread"] + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30)
        let walk = try DoneAtTheBakery(task: task, file: "bread.ics", pressingDoneOn: "Buy bread")
        let agent = try walk.agent()
        defer { agent.stop() }
        #expect(agent.waitUntil { $0.stderr.contains("watching 1 reminder") }, "\(agent.stderr)")
        let gate = try OpenGate(walk.folder)
        defer { gate.close() }
        try walk.walkAndPressDone(agent)
        #expect(gate.nextOpen() == "bread.ics", "the Done did not open its task file: \(gate.account) \(agent.stderr)")
        agent.signal(SIGTERM)
        #expect(agent.waitUntil { $0.stderr.contains("stopping (SIGTERM)") }, "\(agent.stderr)")
        #expect(!agent.stderr.contains("completed errands/bread"), "\(agent.stderr)")
        gate.close()
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
        #expect(agent.stderr.contains("completed errands/bread in task list Errands"), "\(agent.stderr)")
        let text = try String(contentsOfFile: walk.folder + "/bread.ics", encoding: .utf8)
        #expect(text.contains("STATUS:COMPLETED"), "\(text)")
    }

    /// The same on a full disk: the folder a 64 KiB tmpfs of the agent's own (a mount namespace),
    /// the task copied onto it and the rest filled. The temporary file cannot be written: the
    /// task stays as it was, open, and the agent says so.
    @Test func aDoneOnAFullDiskLeavesTheTaskOpen() throws {
        let task = ["UID:bread", "SUMMARY:Buy bread"] + Self.appleArrive(Self.bakery, Self.bakeryLon, radius: 30)
        let walk = try DoneAtTheBakery(task: task, file: "bread.ics", pressingDoneOn: "Buy bread")
        let saved = walk.folder + ".saved.ics"
        try FileManager.default.copyItem(atPath: walk.folder + "/bread.ics", toPath: saved)
        defer { try? FileManager.default.removeItem(atPath: saved) }
        let agent = try walk.agent(under: [
            "/usr/bin/unshare", "--user", "--map-root-user", "--mount", "/bin/sh", "-c",
            #"mount -t tmpfs -o size=64k tmpfs "$0" && cp "$1" "$0/bread.ics" && { cat /dev/zero > "$0/.filler" 2>/dev/null; shift && exec "$@"; }"#,
            walk.folder, saved,
        ])
        defer {
            agent.signal(SIGKILL)
            _ = agent.exitStatus()
        }
        try walk.walkAndPressDone(agent)
        #expect(agent.waitUntil { $0.stderr.contains("cannot complete errands/bread in task list Errands") }, "\(agent.stderr)")
        #expect(agent.stderr.contains("No space left on device") && agent.stderr.contains("it stays open, here and there"), "\(agent.stderr)")
        let seen = try String(contentsOfFile: "/proc/\(agent.pid)/root" + walk.folder + "/bread.ics", encoding: .utf8)
        #expect(seen == Self.object(task), "the agent's own disk holds the task as it was: \(seen)")
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0, "\(agent.stderr)")
    }

    /// The pop-up's Done, pressed for real (dunst), completes the task in its file; the sync takes
    /// it to the server; the agent reads the list again and the task is silent from then on.
    @Test func thePopUpsDoneCompletesTheTaskWhereItLives() throws {
        let server = try Radicale()
        _ = try server.client(["make-list"])
        _ = try server.client(["add-rfc", "rfc-bread", "Buy bread", Self.bakery, Self.bakeryLon, "30"])
        try server.sync()
        let picker = try Command.temporaryScript("#!/bin/sh\ngrep -F '#Done (' | grep -m1 -F 'Buy bread'\n", named: "pick-\(UUID().uuidString)")
        let desktop = try DesktopSession(
            dunstConfig: DesktopTests.dunstrc.replacingOccurrences(of: "[global]\n", with: "[global]\n    dmenu = \(picker)\n"))
        let config = try Self.config([("Errands", server.vdir, "")])
        let gpsd = try GPSFake()
        defer { gpsd.stop() }
        try gpsd.load(try Command.temporaryFile(try LiveAgentTests.walkEpochs(0..<500), named: "to-the-bakery.nmea"))
        let agent = try Background(["run", "-c", config, "--state", Command.scratchState(), "--gpsd", "localhost:\(gpsd.port)"],
                                   environment: desktop.environment)
        #expect(try gpsd.playThrough(to: agent), "\(agent.stderr)")
        #expect(desktop.waitUntilShown(1), "\(desktop.shown) \(agent.stderr)")
        #expect(try desktop.dunstctl(["context"]).status == 0)
        #expect(agent.waitUntil { $0.stderr.contains("completed errands/rfcbread in task list Errands") }, "\(agent.stderr)")
        #expect(agent.waitUntil { $0.stderr.contains("reloaded \(config): 0 reminders") }, "the list read again: \(agent.stderr)")
        try server.sync()
        #expect(try server.client(["get", "rfc-bread"]).stdout.contains("STATUS:COMPLETED"))
        agent.signal(SIGTERM)
        #expect(agent.exitStatus() == 0)
    }

    /// An object's content lines, unfolded (a server may fold and order them its own way).
    static func lines(_ text: String) -> [String] {
        var lines: [String] = []
        for line in text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix(" ") || line.hasPrefix("\t"), !lines.isEmpty { lines[lines.count - 1] += line.dropFirst() } else { lines.append(String(line)) }
        }
        return lines
    }

    /// The lines gone from `before`, and the lines new in `after`.
    static func difference(_ before: String, _ after: String) -> (gone: [String], came: [String]) {
        let old = lines(before), new = lines(after)
        return (old.filter { !new.contains($0) }, new.filter { !old.contains($0) })
    }

    /// A content line's property name.
    static func name(_ line: String) -> String {
        String(line.prefix { $0 != ":" && $0 != ";" })
    }
}
