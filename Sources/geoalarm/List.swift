import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmOutput
import GeoAlarmSystem

/// `geoalarm list`: the reminders of a config, one per line.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the reminders with where, radius and when.")

    @OptionGroup var options: ConfigOptions
    @OptionGroup var stateOptions: StateOptions

    @Flag(help: "Show completed reminders too (hidden by default).")
    var all = false

    @Option(help: ArgumentHelp(
        "Sort by title (case-insensitive), distance (from --from, else the last fix the agent recorded), radius or due date (undated last).",
        valueName: "sort"))
    var sort: ReminderListing.SortKey = .title

    @Option(parsing: .unconditional, help: ArgumentHelp("Show distances from this point.", valueName: "lat,lon"))
    var from: String?

    @Flag(help: "Print one JSON object per line (keys in the man page) instead of a table.")
    var json = false

    func validate() throws {
        if let from, case .failure(let error) = ReminderRules.parseLocation(from) {
            throw ValidationError("--from: \(error.description)")
        }
    }

    func run() async throws {
        let (config, _) = try await options.load(fetchingInto: stateOptions.path)
        let origin = try from.flatMap { try? ReminderRules.parseLocation($0).get() } ?? lastFixForDistances()
        let listing = ReminderListing(
            reminders: config.reminders,
            collections: config.collections.map { collection in
                .init(collection: collection, file: config.placesFile(of: collection.id) ?? "?")
            },
            alarms: config.alarms, completed: try completedIDs(), showsCompleted: all, sort: sort,
            origin: origin, timeZone: SystemTimeZone())
        for line in json ? listing.jsonLines() : listing.tableLines() { try Console.line(line) }
    }

    /// For `--sort distance` without `--from`: the last fix the agent recorded, said on stderr
    /// with its age; with none, exits 64 asking for `--from`.
    private func lastFixForDistances() throws -> Coordinate? {
        guard sort == .distance else { return nil }
        let store = try stateOptions.openForReading()
        let recorded: Fix?
        do {
            recorded = try store?.sides.lastFix()
        } catch {
            Diagnostics.error(error.description)
            throw ExitCode.failure
        }
        guard let fix = recorded else {
            Diagnostics.error("--sort distance: \(stateOptions.path) holds no fix to measure from; give --from LAT,LON")
            throw ExitCode.validationFailure
        }
        let age = fix.age
        Diagnostics.logger.info("distances from the last fix recorded in \(stateOptions.path): \(fix.coordinate), \(age)")
        return fix.coordinate
    }

    /// Ids of completed reminders, from the state file when there is one.
    private func completedIDs() throws -> Set<String> {
        guard System.exists(stateOptions.path) else { return [] }
        return Set(try stateOptions.open().lifecycles.all().filter { $0.value.completedAt != nil }.keys)
    }
}

extension ReminderListing.SortKey: ExpressibleByArgument {}
