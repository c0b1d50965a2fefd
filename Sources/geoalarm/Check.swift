import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore

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
        if config.locationSource == .geoclue {
            let small = config.remindersSmaller(than: Config.wifiAccuracy)
            if !small.isEmpty {
                Diagnostics.logger.warning("""
                    \(config.path): [location] source = "geoclue": \(DisplayText.counted(small.count, "reminder")) smaller than \
                    Wi-Fi positioning's accuracy (about \(Int(Config.wifiAccuracy)) m), whose sides only a GPS receiver (a \
                    phone's) tells apart: \(DisplayText.firstNamed(small))
                    """)
            }
        }
        guard stateOptions.state != nil else { return }
        let state = stateOptions.inspect()
        try Console.line(state.line, failed: state.verdict == .fail)
        if state.verdict == .fail { throw ExitCode.failure }
    }
}

extension Config {
    /// "4 reminders (4 enabled), 1 time alarm, 2 places", with collections and task lists when
    /// there are some (a task at a collection's places is its list's, not a collection of the file).
    var summary: String {
        let enabled = reminders.filter(\.isEnabled).count
        let alarms = alarms.isEmpty ? "" : ", " + DisplayText.counted(alarms.count, "time alarm")
        let ownCollections = collections.filter { !isTaskCollection($0.id) }
        let placeCount = ownCollections.reduce(0) { $0 + $1.places.count }
        let collections = ownCollections.isEmpty
            ? "" : ", \(DisplayText.counted(ownCollections.count, "collection")) (\(DisplayText.counted(placeCount, "place")))"
        let lists = taskLists.isEmpty ? "" : ", " + DisplayText.counted(taskLists.count, "task list")
        return "\(DisplayText.counted(reminders.count, "reminder")) (\(enabled) enabled)\(alarms)\(collections)\(lists), "
            + DisplayText.counted(places.count, "place")
    }
}
