import GeoAlarmCore
import GeoAlarmICalendar
import GeoAlarmSystem
import Glibc

/// A vdir: a folder of `.ics` files, one object each, as vdirsyncer, todoman and khal keep a
/// collection (vdirsyncer writes each file whole under a temporary name and renames it).
///
/// Read bounded: only regular files (a named pipe would hang the reader), or links to regular
/// files inside the folder; at most ``largestObject`` bytes a file and ``mostObjects`` files.
/// Written atomically (a temporary file in the folder, synced, renamed over), and only over the
/// bytes that were read: when the file changed since, the caller reads it again and applies its
/// change again, so that an edit another program made meanwhile survives. A file read through a
/// link is written and deleted where the link leads, so that the link and its target stay one object.
public struct Vdir: Sendable {
    public let folder: String

    /// The largest object read: 1 MiB.
    public static let largestObject = 1 << 20
    /// The most files read: 100,000.
    public static let mostObjects = 100_000
    /// The name ending of the objects.
    public static let fileExtension = ".ics"

    public init(folder: String) {
        self.folder = folder
    }

    /// One file's bytes.
    public struct Object: Sendable {
        /// Its path.
        public var path: String
        public var bytes: [UInt8]
    }

    /// What a folder read gives: the objects, and the files passed over with why.
    public struct Contents: Sendable {
        public var objects: [Object] = []
        public var problems: [(path: String, reason: String)] = []
    }

    /// Every object of the folder, in the order of their names; throws when the folder itself
    /// cannot be read. A link to another object of the folder is that object, read (or said
    /// unreadable) once under its own name, not twice.
    public func read() throws(SystemError) -> Contents {
        var contents = Contents()
        let names = try System.folderEntries(folder).filter { $0.hasSuffix(Self.fileExtension) && !$0.hasPrefix(".") }.sorted()
        let listed = Set(names)
        for name in names {
            let path = folder + "/" + name
            guard contents.objects.count < Self.mostObjects else {
                contents.problems.append((path, "more than \(Self.mostObjects) files in the folder: the rest are not read"))
                break
            }
            let read = readFile(path)
            if read.file != path && listed.contains(PathParts.split(read.file).name) { continue }
            switch read.bytes {
            case .success(let bytes): contents.objects.append(Object(path: path, bytes: bytes))
            case .failure(let problem): contents.problems.append((path, problem.description))
            }
        }
        return contents
    }

    /// One file's bytes, when it is a regular file (or a link to one in the folder) within the bound.
    ///
    /// What is read is what was checked: a link's target as found, and no link put in the place
    /// of either meanwhile (a link swapped to point out of the folder is not followed).
    public func readObject(_ path: String) -> Result<[UInt8], TaskProblem> {
        readFile(path).bytes
    }

    /// ``readObject(_:)``, with the file the bytes come from (or would): `path`, or the target of
    /// a link there once it is found in the folder.
    private func readFile(_ path: String) -> (file: String, bytes: Result<[UInt8], TaskProblem>) {
        guard let link = (try? System.linkStatus(path)) ?? nil else { return (path, .failure(TaskProblem("it is gone"))) }
        var checked = path
        if link.st_mode & S_IFMT == S_IFLNK {
            guard let target = try? System.realPath(path) else {
                return (path, .failure(TaskProblem("a link to nothing (its target is missing, or the links loop): not read")))
            }
            guard let folderPath = try? System.realPath(folder), PathParts.split(target).folder == folderPath
            else { return (path, .failure(TaskProblem("a link out of the folder: not read"))) }
            checked = target
        }
        if let problem = FileSafety.notRegularFileProblem(checked) { return (checked, .failure(TaskProblem(problem))) }
        do {
            return (checked, .success(try UserFile.contents(of: checked, limit: Self.largestObject, followingLinks: false)))
        } catch {
            return (checked, .failure(TaskProblem(error.isOverLimit ? "\(error): not read" : "cannot read: \(error)")))
        }
    }

    /// The file a write or a delete at `path` acts on (`path`, or the target of a link there),
    /// when it still holds `expected`, the bytes last read; ``WriteProblem/changed`` otherwise.
    private func file(at path: String, holding expected: [UInt8]) throws(WriteProblem) -> String {
        let current = readFile(path)
        guard case .success(let found) = current.bytes, found == expected else { throw .changed }
        return current.file
    }

    /// Why a write was not made.
    public enum WriteProblem: Error, Sendable {
        /// The file is not what was read any more: read it again.
        case changed
        case failed(String)
    }

    /// Puts `bytes` in place of the file at `path`, when it still holds `expected` (nil: it must
    /// not exist yet); the folder's new entry is synced.
    ///
    /// Another writer's file put in its place meanwhile (vdirsyncer renames each file it brings)
    /// is never written over: right before the rename the file there must still be the one read,
    /// the same file (device and inode, as first seen) with the same bytes. What remains is the
    /// span of one `stat` and one `rename` (microseconds): a rename of another writer's that
    /// lands in it is replaced by this one, as between any two writers that rename.
    public func write(_ bytes: [UInt8], to path: String, replacing expected: [UInt8]?) throws(WriteProblem) {
        var destination = path
        var identity: FileIdentity?
        if let expected {
            destination = try file(at: path, holding: expected)
            identity = FileIdentity(destination)
        } else if (try? System.linkStatus(path)) ?? nil != nil {
            throw .changed
        }
        let (_, name) = PathParts.split(destination)
        let temporary = "\(folder)/.\(name).geoalarm-\(getpid()).tmp"
        let mode: mode_t = ((try? System.fileStatus(destination)) ?? nil).map { $0.st_mode & 0o777 } ?? 0o600
        do {
            let descriptor = try System.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: mode)
            defer { System.close(descriptor) }
            try System.writeAll(descriptor, bytes)
            try System.fsync(descriptor)
        } catch {
            System.unlink(temporary)
            throw .failed("\(temporary): \(error.reason)")
        }
        // The last look, as close to the rename as can be: another writer's change since wins.
        // Its bytes, then the file's identity: a rename that lands after the look opened the
        // file (the look read the file it replaced) shows as another file.
        if let expected {
            guard case .success(let current) = readObject(path), current == expected, let identity, FileIdentity(destination) == identity
            else {
                System.unlink(temporary)
                throw .changed
            }
        }
        do {
            try System.rename(temporary, destination)
        } catch {
            System.unlink(temporary)
            throw .failed("\(destination): \(error.reason)")
        }
        syncFolder()
    }

    /// Which file a path names: its device and inode, and when it was last changed.
    private struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var changed: timespec

        init?(_ path: String) {
            guard let status = (try? System.linkStatus(path)) ?? nil else { return nil }
            (device, inode, changed) = (UInt64(status.st_dev), UInt64(status.st_ino), status.st_ctim)
        }

        static func == (one: Self, other: Self) -> Bool {
            one.device == other.device && one.inode == other.inode && one.changed.tv_sec == other.changed.tv_sec
                && one.changed.tv_nsec == other.changed.tv_nsec
        }
    }

    /// Deletes the file at `path`, when it still holds `expected` (a link: its target, then the link).
    public func delete(_ path: String, expected: [UInt8]) throws(WriteProblem) {
        let target = try file(at: path, holding: expected)
        do {
            try System.remove(target)
            if target != path { try System.remove(path) }
        } catch {
            throw .failed("\(path): \(error.reason)")
        }
        syncFolder()
    }

    private func syncFolder() {
        if let directory = try? System.open(folder, O_RDONLY | O_DIRECTORY) {
            try? System.fsync(directory)
            System.close(directory)
        }
    }
}
