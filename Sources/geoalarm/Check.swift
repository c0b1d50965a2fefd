import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig

/// `geoalarm check`: validates a reminders file and explains every problem in it.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a reminders file (and with --state, the state file); exits 0 when valid, 1 otherwise.",
        discussion: "Syntax errors are printed as FILE:LINE:COL: message, other problems as "
            + "FILE: reminder \"id\" (#N): key: message, one per line on stderr. Tasks of a task list that "
            + "are passed over are named with their file and why, as warnings. With --state, the state "
            + "file is checked as `doctor` checks it.")

    @OptionGroup var options: ConfigOptions

    @OptionGroup var stateOptions: StateOptions

    func run() async throws {
        let (config, _) = try await options.load(everyProblem: true, fetchingInto: stateOptions.path)
        try Console.line("\(config.path): OK, \(config.summary)")
        guard stateOptions.state != nil else { return }
        let state = stateOptions.inspect()
        try Console.line(state.line)
        if state.verdict == .fail { throw ExitCode.failure }
    }
}

extension Config {
    /// "4 reminders (4 enabled), 1 time alarms, 2 places", with collections and task lists when there are some.
    var summary: String {
        let enabled = reminders.filter(\.isEnabled).count
        let alarms = alarms.isEmpty ? "" : ", \(alarms.count) time alarms"
        let placeCount = collections.reduce(0) { $0 + $1.places.count }
        let collections = collections.isEmpty ? "" : ", \(collections.count) collections (\(placeCount) places)"
        let lists = taskLists.isEmpty ? "" : ", \(taskLists.count) task lists"
        return "\(reminders.count) reminders (\(enabled) enabled)\(alarms)\(collections)\(lists), \(places.count) places"
    }
}
