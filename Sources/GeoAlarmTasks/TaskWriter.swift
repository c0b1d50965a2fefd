import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem

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

    /// Marks the task completed at `time` (``TaskEdits/completing(_:uid:at:)``).
    public static func complete(_ origin: TaskOrigin, at time: Date) throws(TaskProblem) {
        try change(origin) { (bytes) throws(TaskProblem) in try TaskEdits.completing(bytes, uid: origin.uid, at: time) }
    }

    /// Marks the task not completed (``TaskEdits/uncompleting(_:uid:at:)``).
    public static func uncomplete(_ origin: TaskOrigin, at time: Date) throws(TaskProblem) {
        try change(origin) { (bytes) throws(TaskProblem) in try TaskEdits.uncompleting(bytes, uid: origin.uid, at: time) }
    }

    /// Deletes the task's file.
    public static func delete(_ origin: TaskOrigin) throws(TaskProblem) {
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

    /// Writes a new task into the list's folder, as `UID.ics`; its path.
    @discardableResult
    public static func create(_ task: TaskEdits.NewTask, in settings: TaskListSettings, at time: Date) throws(TaskProblem) -> String {
        let vdir = Vdir(folder: settings.folder)
        let name = task.uid.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }
            ? task.uid : "geoalarm-\(String(StableHash.of(task.uid), radix: 16))"
        let path = "\(settings.folder)/\(name)\(Vdir.fileExtension)"
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
