import FoundationEssentials
import GeoAlarmCore
import GeoAlarmICalendar
import GeoAlarmListCache
import GeoAlarmSystem
import Synchronization

/// Writes what geoalarm does to a task back where the task lives, in its vdir: a completion, its
/// undoing, a deletion, a new task.
///
/// Each change is made on the bytes the file holds now and written only over those bytes: when
/// another program (vdirsyncer, bringing an edit from the server) changed the file between the
/// read and the write, the file is read again and the change made again, so that its edit
/// survives. A task whose file was renamed since it was read (a sync) is found again by its UID.
public enum TaskWriter {
    /// How often a change is tried on a file that keeps changing under it.
    static let tries = 5

    /// Marks the task completed at `time` (``TaskEdits/completing(_:uid:at:zones:)``): in its
    /// file, or, for a server's task, in `cache`'s copy and its queue of writes (see
    /// ``queue(_:in:)``). A repeating task is moved on instead: when it comes next, nil for a task
    /// completed.
    @discardableResult
    public static func complete(_ origin: TaskOrigin, at time: Date, cache: (any TaskListCache)? = nil) throws(TaskProblem) -> ICalendarTime? {
        if origin.isOnServer {
            try queue(TaskListWrite(list: origin.list, kind: .complete, uid: origin.uid, href: origin.path, time: time.timeIntervalSince1970), in: cache)
            let copy = try? cache?.cachedList(origin.list)?.objects[origin.path]
            return copy.flatMap { TaskEdits.nextOccurrence(of: origin.uid, in: $0.bytes) }
        }
        var made: [UInt8] = []
        try change(origin) { (bytes) throws(TaskProblem) in
            made = try TaskEdits.completing(bytes, uid: origin.uid, at: time, zones: .system)
            return made
        }
        return TaskEdits.nextOccurrence(of: origin.uid, in: made)
    }

    /// Marks the task not completed (``TaskEdits/uncompleting(_:uid:at:)``).
    public static func uncomplete(_ origin: TaskOrigin, at time: Date, cache: (any TaskListCache)? = nil) throws(TaskProblem) {
        if origin.isOnServer {
            return try queue(TaskListWrite(list: origin.list, kind: .uncomplete, uid: origin.uid, href: origin.path, time: time.timeIntervalSince1970), in: cache)
        }
        try change(origin) { (bytes) throws(TaskProblem) in try TaskEdits.uncompleting(bytes, uid: origin.uid, at: time) }
    }

    /// A server's task changed: the change made on the copy at once (the task is silent, or back,
    /// from now on), and queued for the server, where it goes out in order, once, across restarts.
    public static func queue(_ write: TaskListWrite, in cache: (any TaskListCache)?) throws(TaskProblem) {
        guard let cache else { throw TaskProblem("its list is on a server, and there is no state file to keep the change in") }
        do {
            var update: CachedList.Update?
            if let cached = try cache.cachedList(write.list) {
                let before = cached.objects[write.href]
                var change = CachedList.Update(url: cached.url, ctag: cached.ctag, syncToken: cached.syncToken)
                if let made = try before.map({ (object) throws(TaskProblem) in try write.applied(to: object.bytes) }) ?? write.applied(to: []) {
                    // So already (completed twice): nothing to send.
                    if made == before?.bytes { return }
                    change.put[write.href] = CachedList.Object(etag: before?.etag, bytes: made)
                } else {
                    change.removed = [write.href]
                }
                update = change
            }
            try cache.enqueue(write, updating: update)
        } catch let problem as TaskProblem {
            throw problem
        } catch {
            throw TaskProblem("the state file: \(error)")
        }
    }

    /// Deletes the task's file (a server's task: in the copy, and queued).
    public static func delete(_ origin: TaskOrigin, cache: (any TaskListCache)? = nil) throws(TaskProblem) {
        if origin.isOnServer {
            return try queue(TaskListWrite(list: origin.list, kind: .delete, uid: origin.uid, href: origin.path, time: 0), in: cache)
        }
        let vdir = Vdir(folder: PathParts.split(origin.path).folder)
        for _ in 0..<tries {
            let (path, bytes) = try current(origin, in: vdir)
            do throws(Vdir.WriteProblem) {
                try vdir.delete(path, expected: bytes)
                return
            } catch {
                guard case .failed(let reason) = error else { continue }
                throw TaskProblem("cannot delete it: \(reason)")
            }
        }
        throw TaskProblem("\(origin.path) kept changing while geoalarm deleted it: try again")
    }

    /// Writes a new task into the list, as `UID.ics`: in its folder, or in the copy of its server's
    /// list and the queue of writes; its path (or address).
    @discardableResult
    public static func create(
        _ task: TaskEdits.NewTask, in settings: TaskListSettings, at time: Date, cache: (any TaskListCache)? = nil
    ) throws(TaskProblem) -> String {
        let name = task.uid.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }
            ? task.uid : "geoalarm-\(String(StableHash.of(task.uid), radix: 16))"
        guard let folder = settings.folder else {
            guard case .server(let server) = settings.source else { throw TaskProblem("no place to write it") }
            let href = ServerAddress.path(of: server.url) + name + Vdir.fileExtension
            try queue(TaskListWrite(list: settings.name, kind: .create, uid: task.uid, href: href, time: time.timeIntervalSince1970,
                                    bytes: TaskEdits.newTask(task, at: time)), in: cache)
            return href
        }
        let vdir = Vdir(folder: folder)
        let path = "\(folder)/\(name)\(Vdir.fileExtension)"
        do throws(Vdir.WriteProblem) {
            try vdir.write(TaskEdits.newTask(task, at: time), to: path, replacing: nil)
        } catch {
            guard case .failed(let reason) = error else { throw TaskProblem("\(path) exists already") }
            throw TaskProblem("cannot write it: \(reason)")
        }
        return path
    }

    /// A random UID for a new task, as iOS makes them (an upper-case UUID).
    public static func newUID() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789ABCDEF")
        let hex = String((0..<32).map { _ in digits[Int.random(in: 0..<16, using: &generator)] })
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

    /// Makes `edit` of the task's file over the bytes it holds when the write is made.
    private static func change(_ origin: TaskOrigin, _ edit: ([UInt8]) throws(TaskProblem) -> [UInt8]) throws(TaskProblem) {
        let vdir = Vdir(folder: PathParts.split(origin.path).folder)
        for _ in 0..<tries {
            let (path, bytes) = try current(origin, in: vdir)
            let edited = try edit(bytes)
            // So already: the file is not touched (a sync would take a new time for a change).
            if edited == bytes { return }
            do throws(Vdir.WriteProblem) {
                try vdir.write(edited, to: path, replacing: bytes)
                return
            } catch {
                guard case .failed(let reason) = error else { continue }
                throw TaskProblem("cannot write it: \(reason)")
            }
        }
        throw TaskProblem("\(origin.path) kept changing while geoalarm wrote it: try again")
    }

    /// The file that holds the task now, and its bytes: the one it was read from, else the file
    /// of the folder with its UID.
    private static func current(_ origin: TaskOrigin, in vdir: Vdir) throws(TaskProblem) -> (path: String, bytes: [UInt8]) {
        if case .success(let bytes) = vdir.readObject(origin.path), holds(origin.uid, bytes) { return (origin.path, bytes) }
        guard let contents = try? vdir.read() else { throw TaskProblem("its folder \(vdir.folder) cannot be read") }
        guard let found = contents.objects.first(where: { holds(origin.uid, $0.bytes) }) else {
            throw TaskProblem("it is no longer in \(vdir.folder) (deleted, or moved to another list)")
        }
        return (found.path, found.bytes)
    }

    private static func holds(_ uid: String, _ bytes: [UInt8]) -> Bool {
        guard let calendar = try? ICalendarReader.read(bytes) else { return false }
        return calendar.components("VTODO").contains { $0.property("UID")?.text == uid }
    }
}

extension ICalendarZones {
    /// The system's: its own zone for floating times, its zone files for a `TZID`, each file
    /// read once for the value made here (a task's thousands of `EXDATE`s in one zone read it once).
    public static var system: ICalendarZones {
        let files = ZoneFiles()
        return ICalendarZones(local: SystemTimeZone(), named: { files.zone($0) })
    }
}

/// Zone files read, by name: each read once.
private final class ZoneFiles: Sendable {
    private let read = Mutex<[String: NamedTimeZone?]>([:])

    func zone(_ name: String) -> NamedTimeZone? {
        if let known = read.withLock({ $0[name] }) { return known }
        let zone = NamedTimeZone(name)
        read.withLock { $0[name] = zone }
        return zone
    }
}
