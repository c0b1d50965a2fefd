import Foundation
@testable import GeoAlarmCalDAV
import GeoAlarmICalendar
import GeoAlarmListCache
@testable import GeoAlarmTasks
import GeoAlarmTestSupport
import Testing

/// A server's answer names where its objects are: geoalarm takes only the members of the list's
/// collection, on its server, and its credentials go to that server alone, whatever an href, a
/// redirect or a challenge asks.
struct HostileHrefsTests {
    /// A server whose answers name objects outside its collection and on another server (which
    /// asks for Basic, and logs whether it got the password), looked at once.
    @Test func hrefsOutsideTheCollectionAreNeitherKeptNorWrittenTo() async throws {
        let (other, otherURL) = try HostileDAV.start("basic:ana:secret")
        defer { other.stop() }
        let stolen = otherURL + "steal.ics"
        let (server, url) = try HostileDAV.start("foreign-hrefs:\(stolen)")
        defer { server.stop() }
        var settings = WebSettings(username: "ana", password: "secret")
        settings.timeout = .seconds(10)
        let collection = CalDAVCollection(client: CalDAVClientTests.client, url: url, settings: settings)
        let cache = MemoryTaskListCache()
        let sync = TaskListSync(name: "L", collection: collection, cache: cache)
        _ = try await sync.refresh().get()
        #expect(cache.cachedList("L")?.objects.keys.sorted() == ["/tasks/task-1.ics"])
        // Asked for directly, each is refused before anything is sent.
        for href in ["/tasks/../other/x.ics", "/tasks/%2e%2e/%2e%2e/etc/x.ics", stolen] {
            #expect(await collection.put(Array("x".utf8), at: href, ifMatch: "\"1\"") == .failure(.notAMember(href)))
            #expect(await collection.delete(href, ifMatch: nil).map { true } == .failure(.notAMember(href)))
        }
        // A write that waits under such an href (a copy kept before this check) is dropped, with why.
        cache.enqueue(TaskListWrite(list: "L", kind: .complete, uid: "task-4", href: stolen, time: 1_800_000_000))
        let (sent, problem) = await sync.sendWrites()
        #expect(problem == nil && sent.dropped.count == 1 && sent.dropped[0].contains("is no object of the list's collection"), "\(sent)")
        #expect(!server.stderrLines.contains { $0.hasPrefix("PUT") || $0.hasPrefix("DELETE") }, "\(server.stderrLines)")
        #expect(other.stderrLines.isEmpty, "the other server was asked: \(other.stderrLines)")
    }

    /// A request to another server than the settings' goes without the credentials, even when
    /// that server asks for Basic: a server that names another origin collects nothing.
    @Test func theCredentialsGoToTheConfiguredServerAlone() async throws {
        let (other, otherURL) = try HostileDAV.start("basic:ana:secret")
        defer { other.stop() }
        var settings = WebSettings(username: "ana", password: "secret")
        settings.credentialsServer = "http://127.0.0.1:1"
        let answer = await CalDAVClientTests.client.perform(
            WebRequest(method: "PUT", url: otherURL + "task-1.ics", body: Array("x".utf8)), settings: settings)
        guard case .response(let status, _, _) = answer else { Issue.record("\(answer)"); return }
        #expect(status == 401)
        #expect(other.stderrLines.filter { $0.hasPrefix("auth") } == ["auth none"], "\(other.stderrLines)")
        // To its own server they go.
        settings.credentialsServer = ServerAddress.server(of: otherURL)
        _ = await CalDAVClientTests.client.perform(WebRequest(method: "PUT", url: otherURL + "task-1.ics", body: Array("x".utf8)), settings: settings)
        #expect(other.stderrLines.filter { $0.hasPrefix("auth") }.last == "auth basic ok", "\(other.stderrLines)")
    }

    /// Over plain http, a `/.well-known/caldav` that points at another server is asked there
    /// without the credentials: anyone on the way could have named it.
    @Test func discoveryOverPlainHTTPTakesNoCredentialsElsewhere() async throws {
        let (other, otherURL) = try HostileDAV.start("basic:ana:secret")
        defer { other.stop() }
        let (provider, url) = try HostileDAV.start("elsewhere:\(otherURL)")
        defer { provider.stop() }
        let collection = CalDAVCollection(
            client: CalDAVClientTests.client, url: String(url.dropLast("tasks/".count)), settings: WebSettings(username: "ana", password: "secret"))
        _ = await collection.discover()
        #expect(provider.stderrLines.contains("PROPFIND /.well-known/caldav"), "\(provider.stderrLines)")
        #expect(!other.stderrLines.contains { $0.hasPrefix("auth basic") }, "\(other.stderrLines)")
    }

    /// A list shared read-only refuses the Done (403): the write is dropped, said as no right to
    /// write (the same credentials read it), and the copy holds the task as the server has it,
    /// open, so that it is still listed and fires here as it does everywhere else.
    @Test func aDoneAReadOnlyListRefusesLeavesTheTaskOpen() async throws {
        let (server, sync, cache) = try await CalDAVClientTests.hostileList("read-only")
        defer { server.stop() }
        let origin = TaskOrigin(list: "L", path: "/tasks/task-1.ics", isOnServer: true, uid: "task-1", title: "Buy bread", isClosed: false)
        try TaskWriter.complete(origin, at: Date(timeIntervalSince1970: 1_800_000_000), cache: cache)
        #expect(try TaskEdits.isClosed(cache.cachedList("L")?.objects["/tasks/task-1.ics"]?.bytes ?? [], uid: "task-1"))
        let (sent, problem) = await sync.sendWrites()
        #expect(problem == nil && sent.made == 0 && sent.dropped.count == 1, "\(sent) \(String(describing: problem))")
        let said = sent.dropped.first ?? ""
        #expect(said.contains("does not let this account") && said.contains("the task stays as the server has it") && !said.contains("credentials"), "\(said)")
        #expect(try !TaskEdits.isClosed(cache.cachedList("L")?.objects["/tasks/task-1.ics"]?.bytes ?? [], uid: "task-1"))
        #expect(cache.waitingWrites().isEmpty)
    }

    /// A server that gives no ETags: the Done is not sent over "nothing there" (If-None-Match: *,
    /// refused as 412 again and again), nor over whatever is there; it is dropped with why, and
    /// the task stays as the server has it.
    @Test func aServerWithoutETagsGetsNoUnsafeWrite() async throws {
        let (server, sync, cache) = try await CalDAVClientTests.hostileList("no-etags")
        defer { server.stop() }
        let origin = TaskOrigin(list: "L", path: "/tasks/task-1.ics", isOnServer: true, uid: "task-1", title: "Buy bread", isClosed: false)
        try TaskWriter.complete(origin, at: Date(timeIntervalSince1970: 1_800_000_000), cache: cache)
        let (sent, problem) = await sync.sendWrites()
        #expect(problem == nil && sent.dropped.count == 1 && sent.dropped[0].contains("gives the task no ETag"), "\(sent) \(String(describing: problem))")
        #expect(!server.stderrLines.contains { $0.hasPrefix("PUT") }, "\(server.stderrLines)")
        #expect(try !TaskEdits.isClosed(cache.cachedList("L")?.objects["/tasks/task-1.ics"]?.bytes ?? [], uid: "task-1"))
    }

    /// An object over the bound (1 MiB) is left out of the copy, and named with its size: it is
    /// not dropped without a word.
    @Test func anObjectOverItsBoundIsNamed() async throws {
        let (server, url) = try HostileDAV.start("huge-object")
        defer { server.stop() }
        let cache = MemoryTaskListCache()
        let sync = TaskListSync(name: "L", collection: CalDAVCollection(client: CalDAVClientTests.client, url: url, settings: WebSettings()), cache: cache)
        let look = try await sync.refresh().get()
        #expect(cache.cachedList("L")?.objects.keys.sorted() == ["/tasks/task-1.ics"])
        #expect(look.passedOver.count == 1 && look.passedOver[0].hasPrefix("/tasks/task-2.ics: an object of 2.2 MiB, over 1 MiB: passed over"),
                "\(look.passedOver)")
    }
}
