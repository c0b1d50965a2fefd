import Foundation
import GeoAlarmCore
@testable import GeoAlarmICalendar
import GeoAlarmSystem
@testable import GeoAlarmTasks
import GeoAlarmTestSupport
import Testing

/// Task lists as reminders: each writer's form, what is passed over and why, and the vdir's files.
struct TaskListTests {
    static let settings = TaskListSettings(name: "Shopping list", folder: "/nowhere")
    static let defaults = TaskLists.Defaults(
        template: Reminder(id: "", title: "", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 1), hysteresis: 25),
        radius: 100, zones: ICalendarZones(local: FixedOffset.utc, named: { NamedTimeZone($0) }))

    /// A VTODO in a VCALENDAR, CRLF.
    static func object(_ lines: [String]) -> [UInt8] {
        Array(((["BEGIN:VCALENDAR", "VERSION:2.0", "BEGIN:VTODO"] + lines + ["END:VTODO", "END:VCALENDAR"]).joined(separator: "\r\n") + "\r\n").utf8)
    }

    static func appleAlarm(_ proximity: String, _ uri: String, radius: String = "100") -> [String] {
        ["BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER;VALUE=DATE-TIME:19760401T005545Z", "X-APPLE-PROXIMITY:\(proximity)",
         "X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-APPLE-RADIUS=\(radius);X-TITLE=Bakery:\(uri)", "END:VALARM"]
    }

    @Test func everyWritersFormIsAReminder() throws {
        let objects: [(String, [UInt8])] = [
            ("/l/apple.ics", Self.object(["UID:9710D97C-49D1-4395-90DB-14EE17E0B77A", "SUMMARY:Buy bread", "DESCRIPTION:Two\\, please"]
                + Self.appleAlarm("ARRIVE", "geo:38.7105\\,-9.1366", radius: "40.5") + Self.appleAlarm("DEPART", "geo:38.7105,-9.1366", radius: "40.5"))),
            ("/l/rfc.ics", Self.object([
                "UID:rfc-9074-task", "SUMMARY:Post the letters", "DUE;VALUE=DATE:20200101", "BEGIN:VALARM", "ACTION:DISPLAY",
                "TRIGGER:-PT15M", "PROXIMITY:ARRIVE", "BEGIN:VLOCATION", "NAME:Post office", "URL:geo:38.71,-9.14;u=60", "END:VLOCATION",
                "BEGIN:VLOCATION", "URL:geo:38.72,-9.15", "END:VLOCATION", "END:VALARM",
            ])),
            ("/l/tasksorg.ics", Self.object(["UID:12345", "SUMMARY:Garden", "GEO:38.73;-9.16"])),
            ("/l/done.ics", Self.object(["UID:done-1", "SUMMARY:Done", "STATUS:COMPLETED"] + Self.appleAlarm("ARRIVE", "geo:1,2"))),
            ("/l/event.ics", Array("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:e\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n".utf8)),
        ]
        let load = TaskLists.read(objects, settings: Self.settings, defaults: Self.defaults)
        let byID = Dictionary(uniqueKeysWithValues: load.reminders.map { ($0.id, $0) })
        #expect(Set(byID.keys) == ["shopping-list/9710d97c", "shopping-list/rfc9074t", "shopping-list/rfc9074t-2"], "\(byID.keys)")
        let bread = try #require(byID["shopping-list/9710d97c"])
        #expect(bread.title == "Buy bread" && bread.notes == "Two, please" && bread.trigger == .both && bread.placeName == "Bakery")
        #expect(bread.geometry == .circle(center: Coordinate(latitude: 38.7105, longitude: -9.1366), radius: 40.5) && bread.hysteresis == 25)
        let post = try #require(byID["shopping-list/rfc9074t"])
        #expect(post.geometry == .circle(center: Coordinate(latitude: 38.71, longitude: -9.14), radius: 60) && post.placeName == "Post office")
        #expect(post.schedule.due == LocalDate(year: 2020, month: 1, day: 1) && post.schedule.fireWhenOverdue, "overdue, it still fires")
        #expect(byID["shopping-list/rfc9074t-2"]?.geometry == .circle(center: Coordinate(latitude: 38.72, longitude: -9.15), radius: 100))
        #expect(load.alarms.isEmpty, "a location alarm's TRIGGER is no time alarm")
        #expect(load.tasks["shopping-list/done1"]?.isClosed == true, "a completed task is known, and fires nothing")
        #expect(load.tasks["shopping-list/12345"]?.title == "Garden")
        #expect(load.problems.isEmpty, "\(load.problems)")
        // With geo_tasks, tasks.org's place is a reminder too.
        var withGeo = Self.settings
        withGeo.geoTasks = .leave
        let geo = TaskLists.read(objects, settings: withGeo, defaults: Self.defaults).reminders.first { $0.id == "shopping-list/12345" }
        #expect(geo?.trigger == .leave && geo?.geometry == .circle(center: Coordinate(latitude: 38.73, longitude: -9.16), radius: 100))
    }

    /// todoman, Thunderbird and Nextcloud keep a task's place as words (`LOCATION`): with
    /// `location_tasks`, words that name a place of `[places]` (its case, spacing and accents
    /// aside) or are a position make the task a reminder there; other words are said; a location
    /// alarm or a `GEO` taken by `geo_tasks` comes first.
    @Test func aLocationThatNamesAPlaceIsAReminderThere() throws {
        var settings = Self.settings
        settings.locationTasks = .arrive
        let defaults = TaskLists.Defaults(
            template: Self.defaults.template, radius: 100, zones: .utc,
            places: ["post_office": Coordinate(latitude: 38.7079, longitude: -9.1365), "bakery": Coordinate(latitude: 38.7105, longitude: -9.1366)])
        let objects: [(String, [UInt8])] = [
            ("/l/a.ics", Self.object(["UID:a", "SUMMARY:Post the letters", "LOCATION: Post Office "])),
            ("/l/b.ics", Self.object(["UID:b", "SUMMARY:Bread", "LOCATION:BAKERY"])),
            ("/l/c.ics", Self.object(["UID:c", "SUMMARY:Meeting", "LOCATION:Room 3\\, second floor"])),
            ("/l/d.ics", Self.object(["UID:d", "SUMMARY:Alarmed", "LOCATION:bakery"] + Self.appleAlarm("DEPART", "geo:1,2"))),
            ("/l/e.ics", Self.object(["UID:e", "SUMMARY:Done", "STATUS:COMPLETED", "LOCATION:nowhere"])),
            // A position pasted into Thunderbird's location field, as Google Maps copies it.
            ("/l/f.ics", Self.object(["UID:f", "SUMMARY:Pasted", #"LOCATION:38°42'37.8"N 9°08'11.8"W"#])),
        ]
        let load = TaskLists.read(objects, settings: settings, defaults: defaults)
        let byID = Dictionary(uniqueKeysWithValues: load.reminders.map { ($0.id, $0) })
        #expect(Set(byID.keys) == ["shopping-list/a", "shopping-list/b", "shopping-list/d", "shopping-list/f"], "\(byID.keys)")
        let post = try #require(byID["shopping-list/a"])
        #expect(post.geometry == .circle(center: Coordinate(latitude: 38.7079, longitude: -9.1365), radius: 100))
        #expect(post.placeName == "post_office" && post.trigger == .arrive)
        #expect(byID["shopping-list/b"]?.placeName == "bakery")
        #expect(byID["shopping-list/d"]?.geometry == .circle(center: Coordinate(latitude: 1, longitude: 2), radius: 100) && byID["shopping-list/d"]?.trigger == .leave,
                "its own alarm, not its words")
        let pasted = try #require(byID["shopping-list/f"]?.geometry.center)
        #expect(abs(pasted.latitude - 38.7105) < 1e-9 && abs(pasted.longitude + 9.136611) < 1e-6 && byID["shopping-list/f"]?.placeName == nil)
        #expect(load.problems.count == 1 && load.problems[0].contains("LOCATION \"Room 3, second floor\" is no place of [places], no [[collection]] nor a position: passed over"),
                "\(load.problems)")
        // Off by default: words are no place.
        #expect(TaskLists.read(objects, settings: Self.settings, defaults: defaults).reminders.map(\.id) == ["shopping-list/d"])
    }

    /// "At any supermarket" (tasks.org's most asked-for place): a LOCATION that names a
    /// `[[collection]]` makes the task a collection of its own, the named one's places under the
    /// task's id, title and trigger, each place its own size. A place of `[places]` of that name
    /// comes first.
    @Test func aLocationThatNamesACollectionIsAReminderAtEachOfItsPlaces() throws {
        var settings = Self.settings
        settings.locationTasks = .arrive
        var shop = Self.defaults.template
        shop.title = "Shop {name}"
        let supermarkets = ReminderCollection(id: "supermarkets", template: shop, places: [
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.71, longitude: -9.14), radius: 60), name: "Baixa"),
            CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.72, longitude: -9.15), radius: 80), name: "Rato"),
        ])
        let defaults = TaskLists.Defaults(
            template: Self.defaults.template, radius: 100, zones: .utc,
            places: ["pharmacy": Coordinate(latitude: 38.7, longitude: -9.1)],
            collections: [supermarkets, ReminderCollection(id: "pharmacy", template: shop, places: [])])
        let load = TaskLists.read([
            ("/l/m.ics", Self.object(["UID:m", "SUMMARY:Buy milk", "DESCRIPTION:skimmed", "LOCATION:Supermarkets"])),
            ("/l/p.ics", Self.object(["UID:p", "SUMMARY:Aspirin", "LOCATION:Pharmacy"])),
        ], settings: settings, defaults: defaults)
        #expect(load.reminders.map(\.id) == ["shopping-list/p"], "the place of [places] first")
        let milk = try #require(load.collections.first)
        #expect(load.collections.count == 1 && milk.id == "shopping-list/m" && milk.places == supermarkets.places)
        #expect(milk.member(1).id == "shopping-list/m/2" && milk.member(1).title == "Buy milk" && milk.member(1).placeName == "Rato")
        #expect(milk.member(1).geometry.radius == 80 && milk.member(1).trigger == .arrive && milk.member(1).notes == "skimmed")
        #expect(load.collections.first { $0.id == "shopping-list/m" }?.template.taskKey == "m")
        #expect(load.origin(of: "shopping-list/m/2")?.uid == "m", "Done at one of its places completes the task")
        #expect(load.summary.contains("1 reminder, 1 task at a collection's places from 2 tasks"), "\(load.summary)")
    }

    @Test func timeAlarmsFireFromTheirAnchor() throws {
        let load = TaskLists.read([("/l/t.ics", Self.object([
            "UID:t", "SUMMARY:Call", "DUE:20261224T160000Z", "DTSTART:20261224T100000Z",
            "BEGIN:VALARM", "TRIGGER;RELATED=END:-PT15M", "END:VALARM",
            "BEGIN:VALARM", "TRIGGER:PT1H", "END:VALARM",
            "BEGIN:VALARM", "TRIGGER;VALUE=DATE-TIME:20261224T080000Z", "END:VALARM",
        ]))], settings: Self.settings, defaults: Self.defaults)
        #expect(load.alarms.map(\.at) == [
            .instant(Date(timeIntervalSince1970: 1_798_127_100)), .instant(Date(timeIntervalSince1970: 1_798_110_000)),
            .instant(Date(timeIntervalSince1970: 1_798_099_200)),
        ])
        #expect(load.alarms.map(\.id) == ["shopping-list/t/time-1", "shopping-list/t/time-2", "shopping-list/t/time-3"])
        #expect(load.origin(of: "shopping-list/t/time-2")?.uid == "t")
    }

    /// What cannot be used is named with its file and why; the rest of the list still works.
    @Test func badTasksAreNamedAndTheRestWork() {
        let good = Self.object(["UID:good", "SUMMARY:Good"] + Self.appleAlarm("ARRIVE", "geo:1,2"))
        let load = TaskLists.read([
            ("/l/a.ics", good),
            ("/l/b.ics", Self.object(["UID:good", "SUMMARY:Twin"] + Self.appleAlarm("ARRIVE", "geo:3,4"))),
            ("/l/c.ics", Self.object(["UID:cut", "SUMMARY:Cut"] + Self.appleAlarm("ARRIVE", "geo:46.141813"))),
            ("/l/d.ics", Self.object(["UID:wide", "SUMMARY:Wide"] + Self.appleAlarm("ARRIVE", "geo:1,2", radius: "1000000000000"))),
            ("/l/e.ics", Array("BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nSUMMARY:no end\r\n".utf8)),
            ("/l/f.ics", Self.object(["SUMMARY:No UID"])),
            ("/l/g.ics", Self.object(["UID:far", "SUMMARY:Far", "GEO:95;0"])),
            // Apple's "when getting into / out of the car": a vehicle's link, no place; said only
            // while the task is open. An unknown word is said whatever the task's state.
            ("/l/h.ics", Self.object(["UID:car", "SUMMARY:Car"] + Self.appleAlarm("CONNECT", "geo:1,2") + Self.appleAlarm("disconnect", "geo:1,2"))),
            ("/l/i.ics", Self.object(["UID:car-done", "SUMMARY:Car", "STATUS:COMPLETED"] + Self.appleAlarm("CONNECT", "geo:1,2"))),
            ("/l/j.ics", Self.object(["UID:odd", "SUMMARY:Odd", "BEGIN:VALARM", "PROXIMITY:X-NEAR", "END:VALARM"])),
        ], settings: Self.settings, defaults: Self.defaults)
        #expect(load.reminders.map(\.id) == ["shopping-list/good"])
        #expect(load.problems == [
            "/l/b.ics: the task good is in /l/a.ics already: passed over",
            "/l/c.ics: line 10: X-APPLE-STRUCTURED-LOCATION: a geo: URI without a longitude (a server cut it at its comma)",
            "/l/c.ics: an ARRIVE alarm without a usable place",
            "/l/d.ics: task wide: a radius of 1000000000000 m: passed over",
            "/l/e.ics: VTODO is never closed (END:VTODO)",
            "/l/f.ics: a task without a UID",
            "/l/g.ics: line 6: GEO \"95;0\" is not LAT;LON",
            "/l/h.ics: task car: line 9: a CONNECT alarm is for getting into a car, not a place: passed over",
            "/l/h.ics: task car: line 15: a DISCONNECT alarm is for getting out of a car, not a place: passed over",
            "/l/j.ics: line 7: PROXIMITY \"X-NEAR\" is neither ARRIVE nor DEPART: passed over",
        ], "\(load.problems)")
    }

    @Test func idsAreTheListsAndTheUIDsAndStayApart() {
        let ids = TaskLists.taskIDs(["ABCDEFGH-1", "ABCDEFGH-2", "x", "", "a-b", "a_b"], list: "l")
        #expect(ids["ABCDEFGH-1"] == "l/abcdefgh1" && ids["ABCDEFGH-2"] == "l/abcdefgh2" && ids["x"] == "l/x" && ids[""] == "l/task")
        #expect(Set([ids["a-b"], ids["a_b"]]) == ["l/ab", "l/ab-2"])
    }

    /// The vdir's files: only `.ics` regular files (or links to them in the folder) within the
    /// bound; a named pipe is named, not opened (it would wait for ever); a link to nothing is named as one.
    @Test func theVdirReadsOnlyWhatItMay() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vdir-\(UUID().uuidString)").path
        let outside = folder + "-outside"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        defer { for path in [folder, outside] { try? FileManager.default.removeItem(atPath: path) } }
        let task = Self.object(["UID:a", "SUMMARY:A"])
        try Data(task).write(to: URL(fileURLWithPath: folder + "/a.ics"))
        try Data(task).write(to: URL(fileURLWithPath: outside + "/secret.ics"))
        try Data(task).write(to: URL(fileURLWithPath: folder + "/.hidden.ics"))
        try Data(task).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        try Data(repeating: 0x41, count: Vdir.largestObject + 1).write(to: URL(fileURLWithPath: folder + "/huge.ics"))
        #expect(mkfifo(folder + "/pipe.ics", 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: folder + "/out.ics", withDestinationPath: outside + "/secret.ics")
        try FileManager.default.createSymbolicLink(atPath: folder + "/in.ics", withDestinationPath: folder + "/notes.txt")
        try FileManager.default.createSymbolicLink(atPath: folder + "/gone.ics", withDestinationPath: folder + "/deleted.ics")
        try FileManager.default.createSymbolicLink(atPath: folder + "/loop.ics", withDestinationPath: folder + "/loop.ics")
        let contents = try Vdir(folder: folder).read()
        #expect(contents.objects.map { URL(fileURLWithPath: $0.path).lastPathComponent } == ["a.ics", "in.ics"])
        let problems = Dictionary(uniqueKeysWithValues: contents.problems.map { (URL(fileURLWithPath: $0.path).lastPathComponent, $0.reason) })
        #expect(problems == [
            "huge.ics": "larger than 1 MiB: not read", "out.ics": "a link out of the folder: not read",
            "pipe.ics": "is a named pipe, not a regular file",
            "gone.ics": "a link to nothing (its target is missing, or the links loop): not read",
            "loop.ics": "a link to nothing (its target is missing, or the links loop): not read",
        ])
        #expect(throws: SystemError.self) { try Vdir(folder: folder + "/none").read() }
    }

    /// A file read through a link in the folder is written and deleted where the link leads: the
    /// link stays, and the two never become two objects of one UID (one completed, one open).
    /// Where the target is an object of the folder too, the folder holds it once, under the
    /// target's name; a link to a file that is not (another ending) is read as an object.
    @Test func aLinkIsWrittenAndDeletedWhereItLeads() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vdir-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let open = Self.object(["UID:a", "SUMMARY:A"]), done = Self.object(["UID:a", "SUMMARY:A", "STATUS:COMPLETED"])
        try Data(open).write(to: URL(fileURLWithPath: folder + "/a.ics"))
        #expect(chmod(folder + "/a.ics", 0o640) == 0)
        try FileManager.default.createSymbolicLink(atPath: folder + "/0.ics", withDestinationPath: "a.ics")
        let vdir = Vdir(folder: folder)
        #expect(throws: Vdir.WriteProblem.self) { try vdir.write(done, to: folder + "/0.ics", replacing: done) }
        try vdir.write(done, to: folder + "/0.ics", replacing: open)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder + "/0.ics") == "a.ics")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: folder + "/a.ics"))) == done)
        #expect(try FileManager.default.attributesOfItem(atPath: folder + "/a.ics")[.posixPermissions] as? Int == 0o640)
        let other = Self.object(["UID:b", "SUMMARY:B"])
        try Data(other).write(to: URL(fileURLWithPath: folder + "/b.txt"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/b.ics", withDestinationPath: "b.txt")
        // A link to a task file of the folder that cannot be read: the file is named, once.
        try Data(count: Vdir.largestObject + 1).write(to: URL(fileURLWithPath: folder + "/c.ics"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/1.ics", withDestinationPath: "c.ics")
        let contents = try vdir.read()
        #expect(contents.objects.map(\.path) == [folder + "/a.ics", folder + "/b.ics"])
        #expect(contents.objects.map(\.bytes) == [done, other])
        #expect(contents.problems.map(\.path) == [folder + "/c.ics"], "\(contents.problems)")
        try FileManager.default.removeItem(atPath: folder + "/1.ics")
        try FileManager.default.removeItem(atPath: folder + "/c.ics")
        try vdir.delete(folder + "/0.ics", expected: done)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["b.ics", "b.txt"])
    }

    /// Ten thousand tasks: all read, each its own reminder.
    @Test func tenThousandTasksAreRead() {
        let objects = (0..<10_000).map { number in
            ("/l/\(number).ics", Self.object(["UID:task-\(number)", "SUMMARY:Task \(number)"]
                + Self.appleAlarm("ARRIVE", "geo:\(Double(number % 100) * 0.01 + 38),\(Double(number / 100) * 0.01 - 9)")))
        }
        let load = TaskLists.read(objects, settings: Self.settings, defaults: Self.defaults)
        #expect(load.reminders.count == 10_000 && Set(load.reminders.map(\.id)).count == 10_000 && load.problems.isEmpty)
    }
}

/// Named zones from the system's database, against Foundation's own reading of it.
struct NamedTimeZoneTests {
    @Test(arguments: ["Europe/Zurich", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Apia", "UTC", "Europe/Lisbon"])
    func offsetsAreFoundations(name: String) throws {
        let zone = try #require(NamedTimeZone(name))
        let foundation = try #require(TimeZone(identifier: name))
        var random = SplitMix(seed: 7)
        for _ in 0..<5000 {
            // 1970 to 2100: past the files' last change, the footer's rule answers.
            let moment = Date(timeIntervalSince1970: random.double(in: 0...4_102_444_800))
            #expect(zone.secondsAheadOfUTC(at: moment) == foundation.secondsFromGMT(for: moment), "\(name) at \(moment)")
        }
    }

    @Test func namesOutsideTheDatabaseAreRefused() {
        for name in ["", "/etc/passwd", "../../etc/passwd", "Europe/../../x", "No/Such_Zone", String(repeating: "a", count: 100)] {
            #expect(NamedTimeZone(name) == nil, "\(name)")
        }
    }
}

/// The parts of a server's address, and where a redirect leads.
struct ServerAddressTests {
    @Test(arguments: [
        ("https://b.example/dav/", "https://a.example/.well-known/caldav", "https://b.example/dav/"),
        ("/dav/", "https://a.example:8443/.well-known/caldav", "https://a.example:8443/dav/"),
        ("//b.example/dav/", "https://a.example/.well-known/caldav", "https://b.example/dav/"),
        ("//b.example/dav/", "http://a.example/", "http://b.example/dav/"),
        ("dav/", "https://a.example/.well-known/caldav", "https://a.example/.well-known/dav/"),
        ("dav/", "https://a.example/remote.php/dav/calendars/", "https://a.example/remote.php/dav/calendars/dav/"),
        ("dav/", "https://a.example", "https://a.example/dav/"),
        ("dav/", "https://a.example/x?from=/y/z", "https://a.example/dav/"),
        ("./a:b/", "https://a.example/dav/", "https://a.example/dav/./a:b/"),
        ("ftp://b.example/dav/", "https://a.example/", nil),
        ("file:/etc/passwd", "https://a.example/", nil),
        ("HTTPS://b.example/Dav/", "https://a.example/", "https://b.example/Dav/"),
    ])
    func aRedirectLeadsWhereRFC3986ReadsItsLocation(location: String, url: String, leads: String?) {
        #expect(ServerAddress.redirect(location, from: url) == leads)
    }

    /// An href read from a server's answer: a path, one below the collection, or a whole URL,
    /// its scheme written in any case (RFC 3986 3.1) and given back in lower case.
    @Test(arguments: [
        ("/dav/ana/tasks/a.ics", "https://a.example:8443/dav/ana/tasks/", "https://a.example:8443/dav/ana/tasks/a.ics"),
        ("a.ics", "https://a.example/dav/ana/tasks/", "https://a.example/dav/ana/tasks/a.ics"),
        ("https://b.example/x/a.ics", "https://a.example/dav/", "https://b.example/x/a.ics"),
        ("HTTPS://b.example/X/a.ics", "https://a.example/dav/", "https://b.example/X/a.ics"),
        ("Http://b.example/a.ics", "http://a.example/", "http://b.example/a.ics"),
    ])
    func anHrefIsReadAgainstTheAddressItCameFrom(href: String, url: String, address: String) {
        #expect(ServerAddress.resolve(href, against: url) == address)
    }

    /// A server's href names a member of the list's collection, written one way, or nothing: a
    /// write never goes outside the collection, to another server, or to the collection itself.
    @Test(arguments: [
        ("/dav/ana/tasks/a.ics", "/dav/ana/tasks/a.ics"),
        ("a.ics", "/dav/ana/tasks/a.ics"),
        ("https://A.example/dav/ana/tasks/a.ics", "/dav/ana/tasks/a.ics"),
        ("https://a.example:443/dav/ana/tasks/a.ics", "/dav/ana/tasks/a.ics"),
        ("//a.example/dav/ana/tasks/a.ics", "/dav/ana/tasks/a.ics"),
        ("/dav/ana/tasks/b%20c%40d.ics", "/dav/ana/tasks/b%20c@d.ics"),
        ("/dav/ana/%74asks/a.ics", "/dav/ana/tasks/a.ics"),
        ("/dav/ana/tasks/./a.ics", "/dav/ana/tasks/a.ics"),
        ("/dav/ana/other/../tasks/a.ics", "/dav/ana/tasks/a.ics"),
        ("/dav/ana/tasks/caf%C3%A9.ics", "/dav/ana/tasks/caf%C3%A9.ics"),
        ("/dav/ana/tasks/../other/x.ics", nil),
        ("../other/x.ics", nil),
        ("/dav/ana/tasks/%2e%2e/%2e%2e/etc/x.ics", nil),
        ("/dav/ana/tasks/%2E%2E%2Fother%2Fx.ics", nil),
        ("https://evil.example/dav/ana/tasks/a.ics", nil),
        ("https://a.example:8443/dav/ana/tasks/a.ics", nil),
        ("http://a.example/dav/ana/tasks/a.ics", nil),
        ("//evil.example/dav/ana/tasks/a.ics", nil),
        ("/dav/ana/tasks/", nil),
        ("/dav/ana/tasks", nil),
        ("/dav/ana/tasks/sub/a.ics", nil),
        ("/dav/ana/tasks//a.ics", nil),
        ("/dav/ana/tasks/a.ics?x=1", nil),
        ("/dav/ana/tasks/a%00.ics", nil),
        ("/dav/ana/tasks/a%0a.ics", nil),
        ("/dav/ana/tasks/a%zz.ics", nil),
        ("/dav/ana/tasks/a%+f.ics", nil),
        ("mailto:a.ics", nil),
        ("/dav/ana/tasks/a%C3.ics", nil),
        ("/etc/passwd", nil),
    ] as [(String, String?)])
    func anHrefIsAMemberOfTheCollectionOrNothing(href: String, member: String?) {
        #expect(ServerAddress.member(href, of: "https://a.example/dav/ana/tasks/") == member)
    }

    /// Credentials over plain http to another machine are said (by `doctor`); not over https, not
    /// to this machine, not without a user.
    @Test(arguments: [
        ("http://dav.home.example:5232/ana/tasks/", "ana", true),
        ("http://192.168.1.20/dav/", "ana", true),
        ("http://[fd00::20]:5232/", "ana", true),
        ("https://dav.home.example/ana/tasks/", "ana", false),
        ("http://localhost:5232/ana/tasks/", "ana", false),
        ("http://LocalHost/", "ana", false),
        ("http://127.0.0.1:5232/", "ana", false),
        ("http://[::1]:5232/", "ana", false),
        ("http://dav.home.example/public/", nil, false),
    ])
    func credentialsOverPlainHTTPToAnotherMachineAreKnown(url: String, username: String?, unencrypted: Bool) {
        #expect(ServerSettings(url: url, username: username).sendsCredentialsUnencrypted == unencrypted)
    }

    @Test(arguments: [
        ("https://cloud.example.org/dav/", "https://cloud.example.org/other/", true),
        ("https://Cloud.Example.org:443/dav/", "https://cloud.example.org/", true),
        ("http://cloud.example.org:80/", "http://cloud.example.org/dav/", true),
        ("https://cloud.example.org/", "http://cloud.example.org/", false),
        ("https://cloud.example.org:8443/", "https://cloud.example.org/", false),
        ("http://cloud.example.org:443/", "http://cloud.example.org/", false),
        ("https://caldav.example.org/", "https://p42-caldav.example.org/", false),
    ])
    func twoAddressesAreOnOneServerWhenTheirSchemeHostAndPortAre(one: String, other: String, same: Bool) {
        #expect(ServerAddress.isSameServer(one, other) == same)
    }

    @Test func anOriginIsTheSchemeHostAndPort() {
        #expect(ServerAddress.origin(of: "https://cloud.example.org:8443/dav/ana/tasks/") == "https://cloud.example.org:8443")
        #expect(ServerAddress.path(of: "https://cloud.example.org:8443/dav/ana/tasks") == "/dav/ana/tasks/")
        #expect(ServerAddress.path(of: "https://cloud.example.org") == "/")
        #expect(ServerAddress.server(of: "https://Cloud.Example.org:443/dav/") == "https://cloud.example.org")
        #expect(ServerAddress.server(of: "http://cloud.example.org:8080/") == "http://cloud.example.org:8080")
    }
}
