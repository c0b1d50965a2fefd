import Glibc
import GeoAlarmCore

/// Reads files the user named (the config, collection files), failing with the system's own
/// reason. Only regular files are read, up to a size given by the caller, so that a config or
/// collection naming `/dev/zero` or a FIFO is an error rather than a hang; a regular file is
/// read to its end, also where that lies beyond the size it says (procfs says 0).
public enum UserFile {
    /// Why a file could not be read: the system's words for the error (`No such file or directory`).
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        public var description: String
        /// Whether the file is over the caller's limit (rather than unreadable).
        public var isOverLimit = false
    }

    /// The largest config file read: 16 MB.
    public static let configLimit = 16 << 20
    /// The largest collection file read: 1 GB.
    public static let collectionLimit = 1 << 30

    /// The whole regular file at `path`, at most `limit` bytes. Without `followingLinks`, a link
    /// there is refused by the open itself, so that a check made on the path before cannot be
    /// undone by a link put in its place meanwhile.
    public static func contents(of path: String, limit: Int, followingLinks: Bool = true) throws(ReadError) -> [UInt8] {
        let descriptor: Int32
        do {
            descriptor = try System.open(path, O_RDONLY | O_NONBLOCK | (followingLinks ? 0 : O_NOFOLLOW))
        } catch {
            throw ReadError(description: error.reason)
        }
        defer { System.close(descriptor) }
        let size: Int
        do {
            let status = try System.fstat(descriptor)
            if let problem = FileSafety.notRegularFileProblem(mode: status.st_mode) { throw ReadError(description: problem) }
            size = Int(status.st_size)
        } catch let error as ReadError {
            throw error
        } catch {
            throw ReadError(description: "\(error)")
        }
        guard size <= limit else { throw tooLarge(limit) }
        // Read straight into an array of the file's size, then whatever follows it (below).
        var failure: SystemError?
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            adviseHugePages(buffer)
            while initialized < buffer.count {
                do {
                    let count = try System.read(
                        descriptor, to: buffer.baseAddress! + initialized, count: buffer.count - initialized)
                    if count == 0 { return }
                    initialized += count
                } catch let error as SystemError {
                    failure = error
                    return
                } catch {
                    return
                }
            }
        }
        if let failure { throw ReadError(description: failure.reason) }
        // Past the size said, the rest if any: procfs and sysfs say 0, and a file may have grown
        // since (one that shrank ended the read early).
        guard bytes.count == size else { return bytes }
        var rest = [UInt8](repeating: 0, count: 4096)
        while true {
            let count: Int
            do {
                count = try System.read(descriptor, into: &rest)
            } catch {
                throw ReadError(description: error.reason)
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else { throw tooLarge(limit) }
            bytes.append(contentsOf: rest[..<count])
        }
    }

    private static func tooLarge(_ limit: Int) -> ReadError {
        ReadError(description: "larger than \(DisplayText.size(limit))", isOverLimit: true)
    }

    /// Asks for transparent huge pages under a large buffer (where the system leaves them to
    /// `madvise`): reading a 150 MB file into 4 KB pages spent a tenth of the time on page faults.
    private static func adviseHugePages(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        let hugePage = 2 << 20
        guard buffer.count >= 4 * hugePage, let base = buffer.baseAddress else { return }
        let start = (Int(bitPattern: base) + hugePage - 1) & ~(hugePage - 1)
        let end = (Int(bitPattern: base) + buffer.count) & ~(hugePage - 1)
        guard end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { return }
        System.adviseHugePages(address, end - start)
    }
}
