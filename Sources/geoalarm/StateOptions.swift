import ArgumentParser
import Foundation
import GeoAlarmStore

/// The `--state` option shared by every command that uses the state file.
struct StateOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The state file (default: $XDG_STATE_HOME/geoalarm/state.sqlite, else ~/.local/state/geoalarm/state.sqlite).",
        valueName: "path"))
    var state: String?

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
