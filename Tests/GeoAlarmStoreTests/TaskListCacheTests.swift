import Foundation
import GeoAlarmICalendar
import GeoAlarmListCache
import GeoAlarmStore
@testable import GeoAlarmTasks
import GeoAlarmTestSupport
import Testing

/// The copies of servers' task lists and the writes waiting for them: the state file keeps them
/// across restarts, and behaves as the cache in memory does.
struct TaskListCacheTests {
    /// The same changes, made on `cache`: what it holds after each.
    static func exercise(_ cache: any TaskListCache) throws {
        let url = "https://dav.example/ana/tasks/"
        #expect(try cache.cachedList("Errands") == nil)
        try cache.updateCachedList("Errands", CachedList.Update(url: url, ctag: "1", syncToken: "t1", put: [
            "/ana/tasks/a.ics": .init(etag: "\"a1\"", bytes: Array("A".utf8)), "/ana/tasks/b.ics": .init(etag: nil, bytes: [0, 1, 2]),
        ], replacing: true))
        try cache.updateCachedList("Errands", CachedList.Update(url: url, ctag: "2", syncToken: "t2", put: [
            "/ana/tasks/c.ics": .init(etag: "\"c1\"", bytes: Array("C".utf8)),
        ], removed: ["/ana/tasks/a.ics"]))
        let copy = try #require(try cache.cachedList("Errands"))
        #expect(copy.url == url && copy.ctag == "2" && copy.syncToken == "t2")
        #expect(copy.objects == ["/ana/tasks/b.ics": .init(etag: nil, bytes: [0, 1, 2]), "/ana/tasks/c.ics": .init(etag: "\"c1\"", bytes: Array("C".utf8))])
        // Replacing: what is not put goes.
        try cache.updateCachedList("Errands", CachedList.Update(url: url, ctag: "3", syncToken: nil, put: [:], replacing: true))
        #expect(try cache.cachedList("Errands")?.objects.isEmpty == true)
        #expect(try cache.cachedList("Other") == nil)
        // Writes wait in order, each whole (a new task's bytes with NULs and all), and go one by one.
        let first = try cache.enqueue(TaskListWrite(list: "Errands", kind: .complete, uid: "a", href: "/ana/tasks/a.ics", time: 1_795_000_000.5))
        let second = try cache.enqueue(TaskListWrite(list: "Other", kind: .create, uid: "n", href: "/x/n.ics", time: 2, bytes: [0x42, 0, 0x43]))
        let waiting = try cache.waitingWrites()
        #expect(waiting == [
            TaskListWrite(number: first, list: "Errands", kind: .complete, uid: "a", href: "/ana/tasks/a.ics", time: 1_795_000_000.5),
            TaskListWrite(number: second, list: "Other", kind: .create, uid: "n", href: "/x/n.ics", time: 2, bytes: [0x42, 0, 0x43]),
        ])
        try cache.dropWrite(first)
        #expect(try cache.waitingWrites().map(\.uid) == ["n"])
    }

    @Test func theStateFileKeepsWhatMemoryKeeps() throws {
        try Self.exercise(MemoryTaskListCache())
        try Self.exercise(try StateStore(path: Command.scratchState()).taskLists)
    }

    /// The copy and the queue outlast the process that wrote them.
    @Test func theCopyAndTheQueueOutlastARestart() throws {
        let path = Command.scratchState()
        do {
            let store = try StateStore(path: path)
            try store.taskLists.updateCachedList("Errands", CachedList.Update(url: "https://dav.example/t/", ctag: "7", syncToken: nil, put: [
                "/t/a.ics": .init(etag: "\"1\"", bytes: Array("BEGIN:VCALENDAR".utf8)),
            ]))
            try store.taskLists.enqueue(TaskListWrite(list: "Errands", kind: .delete, uid: "a", href: "/t/a.ics", time: 0))
        }
        let again = try StateStore(path: path)
        #expect(try again.taskLists.cachedList("Errands")?.objects["/t/a.ics"]?.bytes == Array("BEGIN:VCALENDAR".utf8))
        #expect(try again.taskLists.waitingWrites().map(\.kind) == [.delete])
        let reader = try #require(try StateStore(readingFrom: path))
        #expect(try reader.taskLists.cachedList("Errands")?.ctag == "7")
    }

    /// A Done on a server's task changes the copy and queues the write in one transaction: a
    /// queue that cannot take it (here a trigger that refuses every insert, as a full disk
    /// would) leaves the copy as it was, the task still open and firing, and says why.
    @Test func aCompletionIsCopiedAndQueuedWhollyOrNotAtAll() throws {
        let path = Command.scratchState()
        let task = "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:a\r\nSUMMARY:Buy bread\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
        do {
            let store = try StateStore(path: path)
            try store.taskLists.updateCachedList("Errands", CachedList.Update(url: "https://dav.example/t/", ctag: "7", syncToken: nil, put: [
                "/t/a.ics": .init(etag: "\"1\"", bytes: Array(task.utf8)),
            ]))
        }
        let refuse = try Command.run(
            [path, "CREATE TRIGGER full BEFORE INSERT ON queue BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;"],
            executable: "/usr/bin/sqlite3")
        #expect(refuse.status == 0, "\(refuse.stderr)")
        let store = try StateStore(path: path)
        let origin = TaskOrigin(list: "Errands", path: "/t/a.ics", isOnServer: true, uid: "a", title: "Buy bread", isClosed: false)
        #expect(throws: TaskProblem.self) { try TaskWriter.complete(origin, at: Date(timeIntervalSince1970: 1_800_000_000), cache: store.taskLists) }
        #expect(try store.taskLists.cachedList("Errands")?.objects["/t/a.ics"]?.bytes == Array(task.utf8), "the copy holds a Done never sent")
        #expect(try store.taskLists.waitingWrites().isEmpty)
        _ = try Command.run([path, "DROP TRIGGER full;"], executable: "/usr/bin/sqlite3")
        try TaskWriter.complete(origin, at: Date(timeIntervalSince1970: 1_800_000_000), cache: store.taskLists)
        #expect(try store.taskLists.waitingWrites().map(\.kind) == [.complete])
        #expect(String(decoding: try store.taskLists.cachedList("Errands")?.objects["/t/a.ics"]?.bytes ?? [], as: UTF8.self).contains("STATUS:COMPLETED"))
    }
}
