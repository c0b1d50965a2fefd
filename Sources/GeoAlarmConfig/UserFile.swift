import Foundation

/// Reads files the user named (configs, tracks), failing with the system's own reason.
public enum UserFile {
    /// Why a file could not be read: the system's words for the error (`No such file or directory`).
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The whole file, or standard input for "-".
    public static func contents(of path: String) throws(ReadError) -> [UInt8] {
        let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReadError(description: String(cString: strerror(errno))) }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        // A regular file is read straight into an array of its size; growing one chunk at a
        // time copied a large track over and over. Standard input, a pipe or a file that grew
        // meanwhile goes on in chunks.
        var status = stat()
        let size = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG ? Int(status.st_size) : 0
        var failure: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            adviseHugePages(buffer)
            while initialized < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + initialized, buffer.count - initialized)
                if count == 0 { return }
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                initialized += count
            }
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while failure == 0 {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno != EINTR { failure = errno }
                continue
            }
            bytes.append(contentsOf: chunk[..<count])
        }
        throw ReadError(description: String(cString: strerror(failure)))
    }

    /// Asks for transparent huge pages under a large buffer (where the system leaves them to
    /// `madvise`): reading a 150 MB track into 4 KB pages spent a tenth of a replay on page faults.
    private static func adviseHugePages(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        let hugePage = 2 << 20
        guard buffer.count >= 4 * hugePage, let base = buffer.baseAddress else { return }
        let start = (Int(bitPattern: base) + hugePage - 1) & ~(hugePage - 1)
        let end = (Int(bitPattern: base) + buffer.count) & ~(hugePage - 1)
        guard end > start else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, MADV_HUGEPAGE)
    }
}
