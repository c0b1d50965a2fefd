import Glibc

/// Refuses files that others could change to make geoalarm run their commands or send the
/// user's credentials where they like, as ssh refuses a writable `authorized_keys` and sudo a
/// writable `sudoers`: a config holding `exec` hooks, a `password_command`, or credentials for a
/// server (a `password_file` with the `url` it goes to) must be writable only by its owner (the
/// user, or root), and so must the folder it sits in; a hooks folder must not be writable by others.
public enum FileSafety {
    /// Why a config at `path` that `holds` what others must not change ("exec hooks", "a
    /// password_command", "credentials for a server") cannot be trusted, with what to do; nil
    /// when it can.
    public static func configProblem(_ path: String, holds: String) -> String? {
        guard let target = try? System.realPath(path) else { return nil }
        if let problem = problem(target, kind: "it holds \(holds), and the file", allowGroup: false) { return problem }
        let folder = target.lastIndex(of: "/").map { String(target[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        return problem(folder, kind: "it holds \(holds), and its folder", allowGroup: false)
    }

    /// Why the hooks in `folder` cannot be trusted, with what to do; nil when they can (or when
    /// there is no such folder).
    public static func hooksFolderProblem(_ folder: String) -> String? {
        problem(folder, kind: "the hooks folder", allowGroup: true)
    }

    /// Why `path` cannot be used as a file of data (the state file, a CA file, a password file):
    /// anything but a regular file, or a link to one, is refused without being opened, since
    /// opening a named pipe waits for a writer and a device node is not ours to change. Nil when
    /// it is a regular file, or when nothing is there.
    public static func notRegularFileProblem(_ path: String) -> String? {
        guard let status = try? System.fileStatus(path) else { return nil }
        return notRegularFileProblem(mode: status.st_mode)
    }

    /// Why a file of `mode` (from `stat` or `fstat`) is not one of data: "is a folder, not a
    /// regular file" and the like; nil for a regular file.
    public static func notRegularFileProblem(mode: mode_t) -> String? {
        let kind: String
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: kind = "a folder"
        case S_IFIFO: kind = "a named pipe"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a file"
        }
        return "is \(kind), not a regular file"
    }

    private static func problem(_ path: String, kind: String, allowGroup: Bool) -> String? {
        guard let status = try? System.fileStatus(path) else { return nil }
        let user = geteuid()
        guard status.st_uid == user || status.st_uid == 0 else {
            return "\(kind) \(path) belongs to user \(status.st_uid), neither you nor root: chown it to yourself"
        }
        let isFolder = status.st_mode & S_IFMT == S_IFDIR
        // A sticky folder (/tmp) lets others add files but not replace this one.
        if isFolder, status.st_mode & S_ISVTX != 0 { return nil }
        let unsafeBits: mode_t = allowGroup ? 0o002 : 0o022
        guard status.st_mode & unsafeBits != 0 else { return nil }
        let who = allowGroup ? "o-w" : "go-w"
        return "\(kind) \(path) is writable by \(allowGroup ? "others" : "group or others"): run chmod \(who) \(path)"
    }
}
