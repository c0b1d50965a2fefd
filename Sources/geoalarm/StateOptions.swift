import ArgumentParser
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmStore
import GeoAlarmSystem

/// The `--state` option shared by every command that uses the state file.
struct StateOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The state file (default: $XDG_STATE_HOME/geoalarm/state.sqlite, else ~/.local/state/geoalarm/state.sqlite).",
        valueName: "path"))
    var state: String?

    func validate() throws {
        if state?.isEmpty == true { throw ValidationError.emptyPath("--state") }
    }

    var path: String { state ?? StateStore.defaultPath(environment: ProcessInfo.processInfo.environment) }

    /// The store, opened (and created when needed); a failure is explained and exits 1.
    func open() throws -> StateStore {
        do {
            return try StateStore(path: path)
        } catch {
            Diagnostics.error(error.description)
            throw ExitCode.failure
        }
    }

    /// The store opened read-only (it may belong to a system service, or sit on a read-only
    /// mount); nil when there is no state file yet. A failure is explained and exits 1.
    func openForReading() throws -> StateStore? {
        do {
            return try StateStore(readingFrom: path)
        } catch {
            Diagnostics.error(error.description)
            throw ExitCode.failure
        }
    }
}

extension StateOptions {
    /// The state file as the agent needs it: private, writable, with a schema this build reads;
    /// or, when there is none yet, a folder it can be created in.
    func inspect() -> Finding {
        guard let status = (try? System.fileStatus(path)) ?? nil else {
            var folder = PathParts.split(path).folder
            while !folder.isEmpty, folder != "/", !System.exists(folder) {
                folder = PathParts.split(folder).folder
            }
            guard System.isWritable(folder.isEmpty ? "." : folder) else {
                return Finding(.fail, "state", "\(path) does not exist and \(folder) is not writable",
                               advice: "give --state a path you can write, or make \(folder) yours")
            }
            return Finding(.ok, "state", "\(path) does not exist yet; the agent creates it (0600) at its first fix")
        }
        let mode = String(status.st_mode & 0o777, radix: 8)
        guard System.isWritable(path) else {
            return Finding(.fail, "state", "\(path) (mode \(mode)) is not writable: the agent could not record anything",
                           advice: "chown it to the user the agent runs as, or chmod u+w \(path)")
        }
        let applied: Int
        do {
            guard let store = try StateStore(readingFrom: path) else { return Finding(.fail, "state", "\(path) vanished") }
            applied = store.schemaVersion()
        } catch {
            return Finding(.fail, "state", "state file \(error.path): \(error.reason)", advice: error.advice.text)
        }
        let version = "schema \(applied) of \(StateStore.knownSchemaVersion)"
        if status.st_mode & 0o077 != 0 {
            return Finding(.fail, "state", "\(path) (mode \(mode), \(version)) is readable by others: it holds where you have been",
                           advice: "chmod 600 \(path)")
        }
        let migration = applied < StateStore.knownSchemaVersion ? " (brought up to date when next opened)" : ""
        return Finding(.ok, "state", "\(path): mode \(mode), writable, \(version)\(migration)")
    }
}

extension Fix {
    /// How old the fix is now, for a line that uses a recorded one ("2 h old").
    var age: String { time.map { "\(Span.describe(Date().timeIntervalSince($0))) old" } ?? "of unknown age" }
}

extension ValidationError {
    /// An option given an empty path (a shell variable never set), refused as such rather than
    /// taken for a file named "" that is not there.
    static func emptyPath(_ option: String) -> ValidationError {
        ValidationError("\(option): an empty path names no file.")
    }
}
