import ArgumentParser
import Foundation
import GeoAlarmConfig

/// `geoalarm check`: validates a reminders file and explains every problem in it.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a reminders file; exits 0 when it is valid, 1 otherwise.",
        discussion: "Syntax errors are printed as FILE:LINE:COL: message, other problems as "
            + "FILE: reminder \"id\" (#N): key: message, one per line on stderr.")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let config = try options.load()
        let enabled = config.reminders.filter(\.isEnabled).count
        let alarms = config.alarms.isEmpty ? "" : ", \(config.alarms.count) time alarms"
        let places = config.collections.reduce(0) { $0 + $1.places.count }
        let collections = config.collections.isEmpty ? "" : ", \(config.collections.count) collections (\(places) places)"
        print("\(config.path): OK, \(config.reminders.count) reminders (\(enabled) enabled)\(alarms)\(collections), \(config.places.count) places")
    }
}
