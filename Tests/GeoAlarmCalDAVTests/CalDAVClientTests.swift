import Foundation
@testable import GeoAlarmCalDAV
import GeoAlarmListCache
import GeoAlarmWebDAV
import GeoAlarmSystem
@testable import GeoAlarmTasks
import GeoAlarmTestSupport
import Testing

/// The CalDAV client on its own event loop: against Radicale over TLS with a password (the calls
/// geoalarm makes, a list kept in step with few requests, writes that keep another device's
/// edit), and against servers that misbehave (each ends in a clear problem, in bounded time,
/// while the loop goes on serving other requests).
@Suite(.serialized)
struct CalDAVClientTests {
    static let loop: EventLoop = {
        do {
            return try EventLoop.startOnNewThread()
        } catch {
            fatalError("no event loop: \(error)")
        }
    }()

    static let client = CurlClient(loop: loop)

    /// A task at the bakery, as a phone would store it.
    static func task(_ uid: String, _ title: String) -> [UInt8] {
        Array("""
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            PRODID:-//geoalarm tests//EN\r
            BEGIN:VTODO\r
            UID:\(uid)\r
            SUMMARY:\(title)\r
            GEO:38.7105;-9.1366\r
            END:VTODO\r
            END:VCALENDAR\r

            """.utf8)
    }

    static func collection(_ server: Radicale, password: String? = "secret", caFile: Bool = true) -> CalDAVCollection {
        CalDAVCollection(
            client: client, url: server.tasksURL,
            settings: WebSettings(username: server.user, password: password, caFile: caFile ? server.certificates?.authority : nil))
    }

    @Test func theCallsGeoalarmMakesOfRadicaleOverTLS() async throws {
        let server = try Radicale(password: "secret", tls: true)
        _ = try server.client(["make-list"])
        let tasks = Self.collection(server)
        let own = try await tasks.describe().get()
        #expect(own.isCalendar && own.components == ["VTODO"] && own.syncToken != nil, "\(own)")
        #expect(try await tasks.etags().get().isEmpty)
        // Made only where nothing is: a second creation is refused as a change.
        let href = "/ana/tasks/bread.ics"
        let etag = try await tasks.put(Self.task("bread", "Buy bread"), at: href, ifMatch: nil).get()
        #expect(await tasks.put(Self.task("bread", "Buy bread"), at: href, ifMatch: nil) == .failure(.changed))
        // Only over its ETag.
        #expect(await tasks.put(Self.task("bread", "Buy rye bread"), at: href, ifMatch: "\"not-it\"") == .failure(.changed))
        let fetched = try await tasks.objects([href]).get().objects
        let text = String(decoding: fetched[href]?.bytes ?? [], as: UTF8.self)
        #expect(text.contains("SUMMARY:Buy bread"), "\(fetched)")
        if let etag { #expect(fetched[href]?.etag == etag) }
        let changes = try await tasks.changes(since: try #require(own.syncToken)).get()
        #expect(changes.changed.map(\.0) == [href] && changes.removed.isEmpty && changes.token != own.syncToken)
        #expect(await tasks.delete(href, ifMatch: "\"not-it\"").map { "deleted" } == .failure(.changed))
        #expect(await tasks.delete(href, ifMatch: fetched[href]?.etag).map { "deleted" } == .success("deleted"))
        #expect(await tasks.object(href).map(\.etag) == .failure(.notFound))
        // From the server's root, discovery finds the collection.
        let root = CalDAVCollection(client: Self.client, url: server.url, settings: tasks.settings)
        #expect(try await root.discover().get().map(\.url) == [server.tasksURL])
    }

    /// The copy follows the server: the first look fetches everything, an unchanged list costs
    /// one request, a change costs the sync report and the changed objects only.
    @Test func aListIsKeptInStepWithFewRequests() async throws {
        let server = try Radicale(password: "secret", tls: true)
        _ = try server.client(["make-list"])
        for number in 1...3 { _ = try await Self.collection(server).put(Self.task("t\(number)", "Task \(number)"), at: "/ana/tasks/t\(number).ics", ifMatch: nil).get() }
        let cache = MemoryTaskListCache()
        let sync = TaskListSync(name: "Errands", collection: Self.collection(server), cache: cache)
        let first = try await sync.refresh().get()
        #expect(first.changed && cache.cachedList("Errands")?.objects.count == 3)
        let before = Self.client.traffic
        let unchanged = try await sync.refresh().get()
        let cost = Self.client.traffic
        #expect(!unchanged.changed && unchanged.requests == 1 && cost.requests - before.requests == 1, "\(before) \(cost)")
        #expect(cost.received - before.received < 2048, "one small answer: \(cost.received - before.received) bytes")
        _ = try server.client(["complete", "t2"])
        _ = try await Self.collection(server).delete("/ana/tasks/t3.ics", ifMatch: nil).get()
        let changed = try await sync.refresh().get()
        #expect(changed.changed && changed.requests == 3, "describe, sync-collection, one multiget: \(changed)")
        let copy = try #require(cache.cachedList("Errands"))
        #expect(copy.objects.keys.sorted() == ["/ana/tasks/t1.ics", "/ana/tasks/t2.ics"])
        let completed = String(decoding: copy.objects["/ana/tasks/t2.ics"]?.bytes ?? [], as: UTF8.self)
        #expect(completed.contains("STATUS:COMPLETED"))
    }

    /// Another device edits the task after the copy was taken: the completion, sent over the old
    /// ETag, is refused (412), made again on the task as the server has it, and both changes stay.
    @Test func aCompletionKeepsAnotherDevicesEdit() async throws {
        let server = try Radicale(password: "secret", tls: true)
        _ = try server.client(["make-list"])
        _ = try server.client(["add-rfc", "post", "Post the letters", "38.7079", "-9.1365", "40"])
        let cache = MemoryTaskListCache()
        let sync = TaskListSync(name: "Errands", collection: Self.collection(server), cache: cache)
        _ = try await sync.refresh().get()
        let href = try #require(cache.cachedList("Errands")?.objects.keys.first)
        _ = try server.client(["describe", "post", "Stamps are in the drawer"])
        try TaskWriter.queue(TaskListWrite(list: "Errands", kind: .complete, uid: "post", href: href, time: 1_795_000_000), in: cache)
        let (sent, problem) = await sync.sendWrites()
        #expect(problem == nil && sent.made == 1 && cache.waitingWrites().isEmpty)
        let after = try server.client(["get", "post"]).stdout
        #expect(after.contains("STATUS:COMPLETED") && after.contains("Stamps are in the drawer"), "\(after)")
        #expect(server.requests("PUT", for: href) == 2, "the first over the old ETag, refused; the second made: \(server.log)")
        // Completed again, it is so already: nothing waits, nothing is sent.
        try TaskWriter.queue(TaskListWrite(list: "Errands", kind: .complete, uid: "post", href: href, time: 1_795_000_100), in: cache)
        #expect(cache.waitingWrites().isEmpty)
        // Queued by another process that had not heard, it is found made on the server: made once.
        cache.enqueue(TaskListWrite(list: "Errands", kind: .complete, uid: "post", href: href, time: 1_795_000_200))
        var stale = try #require(cache.cachedList("Errands"))
        stale.objects[href]?.etag = "\"an-old-one\""
        cache.updateCachedList("Errands", CachedList.Update(url: stale.url, ctag: stale.ctag, syncToken: stale.syncToken, put: stale.objects))
        #expect(await sync.sendWrites().0.made == 1)
        #expect(server.requests("PUT", for: href) == 3, "one more, refused over the old ETag; none after")
        #expect(try server.client(["get", "post"]).stdout == after)
    }

    /// A repeating task done on a server's list is moved on, in the copy at once (which says when
    /// it comes next) and on the server, where it stays open.
    @Test func aRepeatingTaskDoneMovesOnOnTheServer() async throws {
        let server = try Radicale(password: "secret", tls: true)
        _ = try server.client(["make-list"])
        let weekly = try Command.temporaryFile([
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//geoalarm tests//EN", "BEGIN:VTODO", "UID:weekly", "DTSTAMP:20261101T080000Z",
            "SUMMARY:Water the plants", "DTSTART;VALUE=DATE:20261102", "RRULE:FREQ=WEEKLY;COUNT=20", "GEO:38.7079;-9.1365", "END:VTODO",
            "END:VCALENDAR", "",
        ].joined(separator: "\r\n"))
        _ = try server.client(["put", weekly])
        let cache = MemoryTaskListCache()
        let sync = TaskListSync(name: "Errands", collection: Self.collection(server), cache: cache)
        _ = try await sync.refresh().get()
        let href = try #require(cache.cachedList("Errands")?.objects.keys.first)
        let origin = TaskOrigin(list: "Errands", path: href, isOnServer: true, uid: "weekly", title: "Water the plants", isClosed: false)
        // Wednesday 2026-11-18: the Mondays before are passed over, the next is the 23rd.
        let next = try TaskWriter.complete(origin, at: Date(timeIntervalSince1970: 1_795_000_000), cache: cache)
        #expect(next == .date(year: 2026, month: 11, day: 23))
        let (sent, problem) = await sync.sendWrites()
        #expect(problem == nil && sent.made == 1 && cache.waitingWrites().isEmpty)
        let after = try server.client(["get", "weekly"]).stdout
        #expect(after.contains("DTSTART;VALUE=DATE:20261123") && after.contains("RRULE:FREQ=WEEKLY;COUNT=17") && !after.contains("COMPLETED"),
                "\(after)")
    }

    /// Credentials refused, an authority not given, a certificate for another name: each is said.
    @Test func refusalsAndCertificatesAreSaid() async throws {
        let server = try Radicale(password: "secret", tls: true)
        _ = try server.client(["make-list"])
        #expect(await Self.collection(server, password: "wrong").describe().map(\.href) == .failure(.refused(401)))
        let unknownAuthority = await Self.collection(server, caFile: false).describe().map(\.href)
        guard case .failure(.unreachable(let reason)) = unknownAuthority else { Issue.record("\(unknownAuthority)"); return }
        #expect(reason.contains("certificate"), "\(reason)")
        let elsewhere = try Radicale(password: "secret", tls: true, certificateNames: "DNS:other.example")
        let mismatch = await Self.collection(elsewhere).describe().map(\.href)
        guard case .failure(.unreachable(let why)) = mismatch else { Issue.record("\(mismatch)"); return }
        #expect(why.contains("localhost") || why.contains("name"), "\(why)")
    }

    /// A server that takes only Digest (Baikal's default, and older SabreDAV's): over https the
    /// first request's Basic is refused and made again with Digest; over plain http the first
    /// request offers Digest, and the password never goes as it is. From then on the client
    /// sends Digest to that server, however its address is written; a completion goes with its
    /// whole body; a wrong password is said as refused credentials.
    @Test(arguments: [false, true])
    func aServerThatTakesOnlyDigestIsAnsweredWithDigest(overTLS: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-digest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificates = overTLS ? try TestCertificates(in: folder.path) : nil
        let (server, url) = try HostileDAV.start("digest:ana:secret", certificates: certificates)
        defer { server.stop() }
        let client = CurlClient(loop: Self.loop)
        func settings(_ password: String) -> WebSettings {
            WebSettings(username: "ana", password: password, caFile: certificates?.authority)
        }
        func list(at url: String) async throws -> (sync: TaskListSync, cache: MemoryTaskListCache) {
            let cache = MemoryTaskListCache()
            let collection = CalDAVCollection(client: client, url: url, settings: settings("secret"))
            let sync = TaskListSync(name: "L", collection: collection, cache: cache)
            _ = try await sync.refresh().get()
            return (sync, cache)
        }
        let local = url.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        #expect(try await list(at: local).cache.cachedList("L")?.objects.keys.sorted() == ["/tasks/task-1.ics"])
        let (sync, cache) = try await list(at: local.replacingOccurrences(of: "localhost", with: "LocalHost"))
        try TaskWriter.queue(TaskListWrite(list: "L", kind: .complete, uid: "task-1", href: "/tasks/task-1.ics", time: 1_795_000_000), in: cache)
        let (sent, problem) = await sync.sendWrites()
        #expect(sent.made == 1 && problem == nil, "\(String(describing: problem))")
        let completed = try #require(cache.cachedList("L")?.objects["/tasks/task-1.ics"]?.bytes)
        #expect(server.stderrLines.contains("PUT of \(completed.count) bytes over \"1\""), "\(server.stderrLines)")
        let wrong = CalDAVCollection(client: client, url: local, settings: settings("wrong"))
        #expect(await wrong.describe().map(\.href) == .failure(.refused(401)))
        let answers = server.stderrLines.filter { $0.hasPrefix("auth ") }
        #expect(answers.filter { $0 == "auth basic" }.count == (overTLS ? 1 : 0), "Basic once over TLS, then Digest: \(answers)")
        #expect(answers.filter { $0 == "auth digest ok" }.count >= 4 && answers.last == "auth digest wrong", "\(answers)")
        // The challenge is taken once and answered at once from then on: a request goes without
        // credentials only at the first Digest one (and over http before it, to learn the
        // scheme), and for the wrong password, made again on a new handle after its refusal on
        // the kept one.
        #expect(answers.filter { $0 == "auth none" }.count == (overTLS ? 2 : 3), "\(answers)")
    }

    /// A server that takes only Basic, over plain http: the first request goes without
    /// credentials, is refused with Basic's challenge (whose realm names Digest), and is made
    /// again with Basic, its body whole; from then on Basic goes at once. A wrong password is
    /// refused once.
    @Test func aServerThatTakesOnlyBasicOverHTTPIsAskedFirst() async throws {
        let (server, url) = try HostileDAV.start("basic:ana:secret")
        defer { server.stop() }
        let client = CurlClient(loop: Self.loop)
        let task = url + "task-1.ics"
        let put = WebRequest(method: "PUT", url: task, headers: [("If-Match", "\"1\"")], body: Array("BEGIN:VCALENDAR".utf8))
        for request in [WebRequest(method: "GET", url: task), put, WebRequest(method: "GET", url: task)] {
            let answer = await client.perform(request, settings: WebSettings(username: "ana", password: "secret", for: url))
            guard case .response(let status, _, _) = answer else { Issue.record("\(request.method): \(answer)"); return }
            #expect(status == (request.method == "PUT" ? 204 : 200), "\(request.method): \(status)")
        }
        let refused = await client.perform(WebRequest(method: "GET", url: task), settings: WebSettings(username: "ana", password: "wrong", for: url))
        guard case .response(let status, _, _) = refused else { Issue.record("\(refused)"); return }
        #expect(status == 401)
        let answers = server.stderrLines.filter { $0.hasPrefix("auth ") }
        #expect(answers == ["auth none", "auth basic ok", "auth basic ok", "auth basic ok", "auth basic wrong"], "\(answers)")
        #expect(server.stderrLines.contains("PUT of 15 bytes over \"1\""), "\(server.stderrLines)")
    }

    /// A server over plain http that answers whoever is anonymous with 403 or 404, with no
    /// challenge, says no scheme: the request is made again with Basic, as before it was asked,
    /// and Basic goes at once from then on.
    @Test(arguments: [403, 404])
    func aServerThatRefusesTheQuestionWithoutAChallengeGetsBasic(status: Int) async throws {
        let (server, url) = try HostileDAV.start("basic:ana:secret:\(status)")
        defer { server.stop() }
        let client = CurlClient(loop: Self.loop)
        for _ in 1...2 {
            let answer = await client.perform(WebRequest(method: "GET", url: url + "task-1.ics"), settings: WebSettings(username: "ana", password: "secret", for: url))
            guard case .response(let got, _, _) = answer else { Issue.record("\(answer)"); return }
            #expect(got == 200)
        }
        #expect(server.stderrLines.filter { $0.hasPrefix("auth ") } == ["auth none", "auth basic ok", "auth basic ok"], "\(server.stderrLines)")
    }

    /// A request on a handle kept from a Digest request sends its own body only (a GET after a
    /// PUT sends none), and a server whose nonces serve one request each is still answered: the
    /// refusal on the kept handle is followed by the request on a new one, with a new challenge.
    @Test(arguments: [false, true])
    func aKeptDigestChallengeServesTheNextRequest(noncesServeOnce: Bool) async throws {
        let (server, url) = try HostileDAV.start("digest:ana:secret" + (noncesServeOnce ? ":once" : ""))
        defer { server.stop() }
        let client = CurlClient(loop: Self.loop)
        let settings = WebSettings(username: "ana", password: "secret", for: url)
        let task = url + "task-1.ics"
        let put = WebRequest(method: "PUT", url: task, headers: [("If-Match", "\"1\"")], body: Array("BEGIN:VCALENDAR".utf8))
        for request in [WebRequest(method: "GET", url: task), put, WebRequest(method: "GET", url: task)] {
            let answer = await client.perform(request, settings: settings)
            guard case .response(let status, _, _) = answer else { Issue.record("\(request.method): \(answer)"); return }
            #expect(status == (request.method == "PUT" ? 204 : 200), "\(request.method): \(status)")
        }
        let answers = server.stderrLines.filter { $0.hasPrefix("auth ") }
        let retaken = noncesServeOnce ? ["auth digest used", "auth none", "auth digest ok"] : ["auth digest ok"]
        #expect(answers == ["auth none", "auth none", "auth digest ok"] + retaken + retaken, "over http, the scheme learnt first: \(answers)")
        let gets = server.stderrLines.filter { $0.hasPrefix("GET with") }
        #expect(gets.count == (noncesServeOnce ? 6 : 4) && gets.allSatisfy { $0 == "GET with 0 bytes" }, "\(server.stderrLines)")
        #expect(server.stderrLines.contains("PUT of 15 bytes over \"1\""), "\(server.stderrLines)")
    }

    // MARK: Hostile servers

    /// The collection at `url` (a server of `hostile_dav.py`), read within small bounds: 1 MiB, 4 s.
    static func bounded(_ url: String) -> CalDAVCollection {
        var settings = WebSettings()
        settings.largestBody = 1 << 20
        settings.timeout = .seconds(4)
        return CalDAVCollection(client: client, url: url, settings: settings)
    }

    /// A list on a server of `hostile_dav.py` in `mode`, looked at once; the caller stops the server.
    static func hostileList(_ mode: String) async throws -> (server: Background, sync: TaskListSync, cache: MemoryTaskListCache) {
        let (server, url) = try HostileDAV.start(mode)
        let cache = MemoryTaskListCache()
        let sync = TaskListSync(name: "L", collection: bounded(url), cache: cache)
        do {
            _ = try await sync.refresh().get()
        } catch {
            server.stop()
            throw error
        }
        return (server, sync, cache)
    }

    /// Each misbehaviour ends in its problem.
    @Test(arguments: [
        ("redirect-loop", "redirect"), ("status:401", "credentials"), ("status:403", "does not let this account"), ("status:503", "503"),
        ("huge:3000000", "larger than 1 MiB"), ("endless-xml", "larger than 1 MiB"), ("trickle", "time"), ("malformed", "line"),
        ("not-xml", "no WebDAV multistatus (its root element is <html>"), ("gzip-bomb:200000000", "larger than 1 MiB"),
        ("huge-header:2000000", "a header larger than libcurl takes"), ("many-headers:200", "headers are larger than 64 KiB"),
    ])
    func aMisbehavingServerEndsInAProblem(mode: String, said: String) async throws {
        let (server, url) = try HostileDAV.start(mode)
        defer { server.stop() }
        let result = await Self.bounded(url).describe()
        guard case .failure(let problem) = result else { Issue.record("\(mode): \(result)"); return }
        #expect(problem.description.lowercased().contains(said.lowercased()), "\(mode): \(problem)")
        if mode == "redirect-loop" { #expect(server.stderrLines.filter { $0.hasPrefix("PROPFIND") }.count <= 6) }
    }

    /// Answers compressed on the way (a proxy's gzip) are read as their text: the list, its task.
    @Test func compressedAnswersAreReadAsTheirText() async throws {
        let (server, _, cache) = try await Self.hostileList("gzip")
        defer { server.stop() }
        let task = try #require(cache.cachedList("L")?.objects["/tasks/task-1.ics"])
        #expect(String(decoding: task.bytes, as: UTF8.self).contains("SUMMARY:Buy bread\r\nGEO:38.7105;-9.1366") && task.etag == "\"1\"")
    }

    /// A task read again from a server that cannot be read (an answer that trickles past the
    /// timeout) is asked once: no GET waits out the same timeout after the multiget.
    @Test func aTaskOfAServerNotReachedIsAskedOnce() async throws {
        let (server, url) = try HostileDAV.start("trickle")
        defer { server.stop() }
        let result = await Self.bounded(url).object("/tasks/task-1.ics")
        guard case .failure(.unreachable) = result else { Issue.record("\(result)"); return }
        let requests = server.stderrLines.filter { !$0.hasPrefix("trickled") && !$0.hasPrefix("gone") }
        #expect(requests == ["REPORT /tasks/"], "\(requests)")
    }

    /// A server in trouble (5xx) is said as it is, in one request: a look does not go looking
    /// for lists elsewhere on it, as it does where the address may be web pages.
    @Test func aServerInTroubleCostsALookOneRequest() async throws {
        let (server, url) = try HostileDAV.start("status:503")
        defer { server.stop() }
        let look = await TaskListSync(name: "L", collection: Self.bounded(url), cache: MemoryTaskListCache()).refresh()
        #expect(look.map(\.changed) == .failure(.status(503)))
        #expect(server.stderrLines == ["PROPFIND /tasks/"])
    }

    /// A collection that lists more tasks than a list may hold is refused before any is fetched.
    @Test func thousandsUponThousandsOfTasksAreRefused() async throws {
        let (server, url) = try HostileDAV.start("many:\(Vdir.mostObjects + 1)")
        defer { server.stop() }
        var collection = Self.bounded(url)
        collection.settings.largestBody = 64 << 20
        let result = await TaskListSync(name: "L", collection: collection, cache: MemoryTaskListCache()).refresh()
        #expect(result.map(\.changed) == .failure(.malformed("more than \(Vdir.mostObjects) tasks")))
        #expect(!server.stderr.contains("calendar-multiget"))
    }

    /// An ETag that never matches: the write is tried a bounded number of times, then said.
    @Test func anETagThatNeverMatchesEndsTheWrite() async throws {
        let (server, sync, cache) = try await Self.hostileList("etag-never-matches")
        defer { server.stop() }
        try TaskWriter.queue(TaskListWrite(list: "L", kind: .complete, uid: "task-1", href: "/tasks/task-1.ics", time: 1_795_000_000), in: cache)
        let (sent, problem) = await sync.sendWrites()
        #expect(sent.made == 0 && problem == .status(412), "\(String(describing: problem))")
        #expect(cache.waitingWrites().count == 1, "it waits for the next look")
        #expect(server.stderrLines.filter { $0.hasPrefix("PUT") }.count == TaskListSync.tries)
    }

    /// A server that gives its changes a part at a time (RFC 6578's 507): one look follows every
    /// part, and an object changed in one part and removed or changed again in a later one ends
    /// as the last part says.
    @Test func changesGivenInPartsAreAllTaken() async throws {
        let (server, sync, cache) = try await Self.hostileList("sync-parts:3")
        defer { server.stop() }
        #expect(cache.cachedList("L")?.objects.keys.sorted() == ["/tasks/task-0.ics"])
        let look = try await sync.refresh().get()
        #expect(look.changed && look.requests == 5, "describe, three parts, one multiget: \(look)")
        let copy = try #require(cache.cachedList("L"))
        #expect(copy.objects.keys.sorted() == ["/tasks/task-1.ics", "/tasks/task-2.ics"])
        #expect(copy.syncToken == "t3")
        let syncs = server.stderrLines.filter { $0.hasPrefix("REPORT") }.count
        #expect(syncs == 1 + 1 + 3 + 1, "calendar-query, multiget, three parts, multiget")
    }

    /// A server whose parts never end: a look reads a bounded number of them, keeps what they
    /// gave with the token reached, and the next look goes on from there.
    @Test func partsWithoutEndAreReadABoundedNumberALook() async throws {
        let (server, sync, cache) = try await Self.hostileList("sync-parts:1000")
        defer { server.stop() }
        let parts = TaskListSync.mostSyncParts
        let look = try await sync.refresh().get()
        #expect(look.requests == 1 + parts + 1, "describe, \(parts) parts, one multiget: \(look)")
        #expect(cache.cachedList("L")?.syncToken == "t\(parts)")
        #expect(cache.cachedList("L")?.objects.count == 1 + parts)
        _ = try await sync.refresh().get()
        #expect(cache.cachedList("L")?.syncToken == "t\(2 * parts)")
        #expect(cache.cachedList("L")?.objects.count == 1 + 2 * parts)
    }

    /// A task changed elsewhere behind a proxy that makes a GET's ETag weak: the change refused
    /// over the copy's ETag is made again over the server's own (the multiget's), not over the
    /// weak one that no `If-Match` matches; the weak ETag of the answer is not kept.
    @Test func aWeakETagIsNotWrittenOver() async throws {
        let (server, sync, cache) = try await Self.hostileList("weak-etag")
        defer { server.stop() }
        try TaskWriter.queue(TaskListWrite(list: "L", kind: .complete, uid: "task-1", href: "/tasks/task-1.ics", time: 1_795_000_000), in: cache)
        let (sent, problem) = await sync.sendWrites()
        #expect(sent.made == 1 && problem == nil, "\(String(describing: problem)) \(server.stderr)")
        let requests = server.stderrLines
        #expect(requests.filter { $0.hasPrefix("PUT /") }.count == 2 && requests.contains("PUT made over \"2\""), "\(requests)")
        #expect(cache.cachedList("L")?.objects["/tasks/task-1.ics"].map { $0.etag == nil } == true)
    }

    /// A collection moved (a 301, 307 or 308): reads follow it with their bodies, so the
    /// list is read where it now is, and a write follows it too, with its body and condition
    /// (libcurl would send a PUT on without its body); to a path, or to a whole address on the
    /// same server whose scheme is in capitals (schemes are case-insensitive).
    @Test(arguments: [(301, ""), (308, ""), (308, ":absolute")])
    func readsAndWritesFollowAMovedCollection(status: Int, location: String) async throws {
        let (server, sync, cache) = try await Self.hostileList("moved:\(status)\(location)")
        defer { server.stop() }
        // Kept as the member of the list's collection: its writes go there, and follow it.
        #expect(cache.cachedList("L")?.objects.keys.sorted() == ["/tasks/task-1.ics"], "\(server.stderr)")
        // A change to the task where it was.
        cache.enqueue(TaskListWrite(list: "L", kind: .complete, uid: "task-1", href: "/tasks/task-1.ics", time: 1_795_000_000))
        let (sent, problem) = await sync.sendWrites()
        #expect(sent.made == 1 && problem == nil, "\(String(describing: problem))")
        #expect(await sync.collection.delete("/tasks/task-1.ics", ifMatch: "\"1\"").map { "deleted" } == .success("deleted"))
        let requests = server.stderrLines
        let put = try #require(requests.first { $0.hasPrefix("PUT /moved/task-1.ics: body of ") }, "\(requests)")
        #expect(put != "PUT /moved/task-1.ics: body of 0 bytes")
        #expect(requests.contains("DELETE /moved/task-1.ics: body of 0 bytes"), "\(requests)")
    }

    /// A 302 or 303 sends a write where a login page or a portal is, or says it is done and
    /// points elsewhere: a write does not follow it (a DELETE must not go there, and a page that
    /// refuses a PUT would drop the change for good), the change waits, and the problem says why.
    @Test(arguments: [302, 303])
    func aWriteDoesNotFollowA302Or303(status: Int) async throws {
        let (server, sync, cache) = try await Self.hostileList("moved:\(status)")
        defer { server.stop() }
        cache.enqueue(TaskListWrite(list: "L", kind: .complete, uid: "task-1", href: "/tasks/task-1.ics", time: 1_795_000_000))
        let (sent, problem) = await sync.sendWrites()
        #expect(sent.made == 0 && problem == .status(status), "\(String(describing: problem))")
        #expect(problem?.description.contains("redirect") == true)
        #expect(cache.waitingWrites().count == 1, "it waits")
        #expect(await sync.collection.delete("/tasks/task-1.ics", ifMatch: "\"1\"").map { "deleted" } == .failure(.status(status)))
        let requests = server.stderrLines
        #expect(requests.contains("PUT /tasks/task-1.ics") && !requests.contains { $0.contains("body of") }, "\(requests)")
    }

    /// A server whose root is its web pages (as a Nextcloud's is) and whose CalDAV is elsewhere:
    /// discovery asks its `/.well-known/caldav` (followed, with its request, to where it points),
    /// and a list given the root's address names the task list found there.
    @Test func aServersRootFindsItsTaskListsThroughTheWellKnownAddress() async throws {
        let (server, url) = try HostileDAV.start("web-root")
        defer { server.stop() }
        let root = String(url.dropLast("tasks/".count))
        let errands = root + "dav/calendars/ana/errands/"
        #expect(try await Self.bounded(root).discover().get() == [CalDAVCollection.Found(url: errands, name: "errands")])
        let look = await TaskListSync(name: "L", collection: Self.bounded(root), cache: MemoryTaskListCache()).refresh()
        #expect(look.map(\.changed) == .failure(.notACollection([errands])))
    }

    /// A provider's address whose `/.well-known/caldav` points to its CalDAV on another server
    /// (RFC 6764): discovery follows it there with the credentials, which that server needs,
    /// and names the task list by its whole address there.
    @Test func aWellKnownAddressOnAnotherServerIsFollowedWithTheCredentials() async throws {
        let (server, provider, found) = try await Self.discoveryBeside { "elsewhere:\($0.url)" }
        defer { provider.stop() }
        #expect(found == .success([server.tasksURL]))
        #expect(provider.stderrLines.contains("PROPFIND /.well-known/caldav"), "\(provider.stderrLines)")
    }

    /// A principal whose calendar home is on another server, as iCloud's are (the principal on
    /// `caldav.icloud.com`, the home on a `pNN-caldav.icloud.com`): the collections the home lists
    /// are on the home's server.
    @Test func aCalendarHomeOnAnotherServerNamesItsCollectionsThere() async throws {
        let (server, principal, found) = try await Self.discoveryBeside { "home-at:\($0.url)\($0.user)/" }
        defer { principal.stop() }
        #expect(found == .success([server.tasksURL]))
        #expect(principal.stderrLines == ["PROPFIND /", "PROPFIND /principal/"])
    }

    /// Radicale over TLS with ana's task list; beside it, over TLS too, a server of `hostile_dav.py` in the
    /// mode `mode` names (which the caller stops); and the addresses discovery finds from that
    /// server's root with ana's credentials.
    static func discoveryBeside(
        _ mode: (Radicale) -> String
    ) async throws -> (server: Radicale, other: Background, found: Result<[String], CalDAVProblem>) {
        let server = try Radicale(password: "secret", tls: true)
        _ = try server.client(["make-list"])
        // Over TLS, as the credentials cross to another server only where both are https.
        let (other, url) = try HostileDAV.start(mode(server), certificates: server.certificates)
        let root = String(url.dropLast("tasks/".count))
        let found = await CalDAVCollection(client: Self.client, url: root, settings: Self.collection(server).settings).discover()
        return (server, other, found.map { $0.map(\.url) })
    }

    /// The credentials never travel in clear: a `/.well-known/caldav` of an https server that
    /// points to an http one is not followed, and discovery says what the server named answered.
    @Test func aWellKnownAddressIsNotFollowedFromHTTPSToHTTP() async throws {
        let (plain, plainURL) = try HostileDAV.start("web-root")
        defer { plain.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificates = try TestCertificates(in: folder.path)
        let (provider, url) = try HostileDAV.start("elsewhere:\(plainURL.dropLast("tasks/".count))", certificates: certificates)
        defer { provider.stop() }
        let settings = WebSettings(username: "ana", password: "secret", caFile: certificates.authority)
        let found = await CalDAVCollection(client: Self.client, url: String(url.dropLast("tasks/".count)), settings: settings).discover()
        #expect(found.map { $0.map(\.url) } == .failure(.status(200)))
        #expect(provider.stderrLines.contains("PROPFIND /.well-known/caldav"), "\(provider.stderrLines)")
        #expect(plain.stderrLines.isEmpty, "\(plain.stderrLines)")
    }

    /// A collection moved to another server: the read follows it there, without the credentials
    /// (libcurl's rule), and the refusal there is said as that, with the address to give, not
    /// as credentials to check.
    @Test func aReadRedirectedToAnotherServerSaysWhyItWasRefusedThere() async throws {
        let server = try Radicale(password: "secret", tls: true)
        _ = try server.client(["make-list"])
        let (mover, url) = try HostileDAV.start("moved-to:\(server.tasksURL)")
        defer { mover.stop() }
        let settings = Self.collection(server).settings
        let answer = await CalDAVCollection(client: Self.client, url: url, settings: settings).describe()
        #expect(answer.map(\.href) == .failure(.refusedElsewhere(server.tasksURL)))
        let said = CalDAVProblem.refusedElsewhere(server.tasksURL).description
        #expect(said.contains("redirected to \(server.tasksURL), another server") && said.contains("give url"), "\(said)")
        // Given that address, the same credentials read it.
        #expect((try? await Self.collection(server).describe().get())?.isCalendar == true)
    }

    /// While one server trickles, another request on the same loop is answered at once.
    @Test func aSlowServerHoldsNothingElseUp() async throws {
        let (slow, url) = try HostileDAV.start("trickle")
        defer { slow.stop() }
        let server = try Radicale(password: "secret", tls: true)
        _ = try server.client(["make-list"])
        async let stalled = Self.bounded(url).describe()
        #expect(await EventWait.onOwnThread { slow.waitUntil { $0.stderr.contains("PROPFIND") } })
        let quick = await Self.collection(server).describe()
        #expect((try? quick.get())?.isCalendar == true)
        // The trickle is still going when the quick one is answered.
        #expect(slow.isRunning)
        _ = await stalled
    }
}
