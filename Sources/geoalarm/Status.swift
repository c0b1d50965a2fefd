import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmOutput
import GeoAlarmSystem

/// `geoalarm status`: where the agent thinks you are, reminder by reminder.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: """
            Show each reminder's state: inside/outside/unknown, distance from the last fix, direction of travel and time \
            to arrival, completed, snoozed, overdue, last fired.
            """)

    @OptionGroup var options: ConfigOptions
    @OptionGroup var stateOptions: StateOptions

    @Flag(help: "Print one JSON object per line (keys in the man page) instead of a table.")
    var json = false

    @Option(help: ArgumentHelp(
        "Show the sides of this OwnTracks device (as `run --source owntracks` tracks it) rather than this machine's.",
        valueName: "user/device"))
    var device: String?

    func run() async throws {
        let (config, _) = try await options.load(fetchingInto: stateOptions.path)
        let store = try stateOptions.openForReading()
        let saved: [String: SavedPresence]
        let lifecycles: [String: Lifecycle]
        let lastFix: Fix?
        let proximities: [String: SavedProximity]
        do {
            saved = try store?.sides.saved(device: device) ?? [:]
            // A tracked device's proximities and last fix are not kept: its sides are.
            proximities = device == nil ? try store?.sides.proximities() ?? [:] : [:]
            lifecycles = try store?.lifecycles.all() ?? [:]
            lastFix = device == nil ? try store?.sides.lastFix() : nil
        } catch {
            Diagnostics.error(error.description)
            throw ExitCode.failure
        }
        let listing = StatusListing(
            reminders: config.reminders, collections: config.collections, alarms: config.alarms, saved: saved,
            proximities: proximities, lifecycles: lifecycles, lastFix: lastFix, now: Date(), timeZone: SystemTimeZone())
        // The devices are named only where this table shows none of their sides. A file that
        // could be read above but not here names none: the hint is left out, not the table.
        let devices = { (try? store?.sides.trackedDevices()) ?? [] }
        if let device, saved.isEmpty {
            Diagnostics.logger.warning("\(Self.noSides(of: device, devices: devices()))")
        }
        if json {
            for line in listing.jsonLines() { try Console.line(line) }
            return
        }
        for line in listing.tableLines() { try Console.line(line) }
        if let device {
            try Console.line("the sides of OwnTracks device \(device) (no distance is kept for a tracked device)")
        } else if let lastFix {
            try Console.line("last fix: \(lastFix.coordinate) at \(lastFix.time.map { "\(listing.local($0)) (\(lastFix.age))" } ?? "an unknown time")")
        } else if case let devices = devices(), !devices.isEmpty {
            try Console.line("no fix of this machine recorded; --device NAME shows the sides of \(Self.listed(devices))")
        } else if !saved.isEmpty {
            // The agent keeps a fix with every side it records; `replay --state` keeps none.
            try Console.line("no fix recorded (a replay keeps none): the sides and directions are as last recorded")
        } else {
            try Console.line("no fix recorded yet (is geoalarm run running?)")
        }
    }

    /// Why a device's table is all unknown: the devices the file does hold sides of, if any
    /// (escaped where it is shown, as every line is).
    private static func noSides(of device: String, devices: [String]) -> String {
        devices.isEmpty
            ? "no side of \(device) in the state file, which holds no tracked device's"
            : "no side of \(device) in the state file; it holds those of \(listed(devices))"
    }

    /// "2 OwnTracks devices: alice/phone, bob/phone", the first ten named.
    private static func listed(_ devices: [String]) -> String {
        DisplayText.counted(devices.count, "OwnTracks device") + ": " + DisplayText.firstNamed(devices)
    }
}
