import Glibc

/// A secret kept in a file of its own (`[mqtt] password_file`, `secret_file`), never in the config.
public enum PasswordFile {
    /// Why a password file cannot be used.
    public struct Problem: Error, Sendable {
        public var message: String
        /// Whether it is the file's owner or mode (others could read or change it), rather than
        /// its absence or contents.
        public var isAboutRights = false
    }

    /// The file's first line, when the file is a regular file of this user's that nobody else
    /// can read or write.
    public static func read(_ path: String) -> Result<String, Problem> {
        let status: Glibc.stat?
        do {
            status = try System.fileStatus(path)
        } catch {
            return .failure(Problem(message: "cannot read: \(error.reason)"))
        }
        guard let status else { return .failure(Problem(message: "no such file")) }
        if let problem = FileSafety.notRegularFileProblem(mode: status.st_mode) { return .failure(Problem(message: problem, isAboutRights: true)) }
        guard status.st_uid == geteuid() else { return .failure(Problem(message: "belongs to another user", isAboutRights: true)) }
        guard status.st_mode & 0o077 == 0 else {
            return .failure(Problem(message: "others can read it (mode \(String(status.st_mode & 0o777, radix: 8))): chmod 600 it", isAboutRights: true))
        }
        let bytes: [UInt8]
        do {
            bytes = try UserFile.contents(of: path, limit: 64 << 10)
        } catch {
            return .failure(Problem(message: "cannot read: \(error)"))
        }
        let line = bytes.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        guard !line.isEmpty else { return .failure(Problem(message: "is empty")) }
        guard let text = String(validating: line, as: UTF8.self), !text.contains("\u{0}") else {
            return .failure(Problem(message: "is not UTF-8 text"))
        }
        return .success(text)
    }
}
