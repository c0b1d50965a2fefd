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
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(description: String(cString: strerror(errno)))
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
