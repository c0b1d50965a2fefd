import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmOutput
import GeoAlarmPipeline
import GeoAlarmReplay
import GeoAlarmStore
import GeoAlarmSystem

/// `geoalarm replay`: runs recorded tracks through the reminders as fast as possible.
struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay recorded tracks (NMEA 0183, gpsd JSON, GPX) and print every arrival and departure.",
        discussion: "Tracks are replayed in the order given, as one journey, through the same pipeline as "
            + "`run`. Events go to stdout; a summary of each track goes to stderr. State is kept in memory "
            + "unless --state names a file.")

    @OptionGroup var options: ConfigOptions

    @Flag(help: "Print each event as a JSON object on one line.")
    var json = false

    @Option(help: ArgumentHelp("Keep the state in this file, as the agent does (default: in memory only).", valueName: "path"))
    var state: String?

    @Option(help: ArgumentHelp(
        "The date of the first fix, for NMEA logs that never carry one (GGA only; ZDA without a date): "
            + "later days follow midnight rollovers. A date in the log wins.",
        valueName: "YYYY-MM-DD"))
    var date: CalendarDay?

    @Argument(help: ArgumentHelp("Track files to replay; - reads standard input.", valueName: "track"))
    var tracks: [String]

    func validate() throws {
        guard !tracks.isEmpty else { throw ValidationError("Give at least one track file (or - for stdin).") }
        if state?.isEmpty == true { throw ValidationError.emptyPath("--state") }
    }

    func run() async throws {
        // A server's task list comes from the copy the agent keeps (in the default state file
        // without --state), fetched first.
        let statePath = state ?? StateStore.defaultPath(environment: ProcessInfo.processInfo.environment)
        let (config, _) = try await options.load(fetchingInto: statePath)
        let log = Diagnostics.logger
        let writer = LineWriter(flushEachLine: false)
        let pipeline = FixPipeline(
            watching: config.reminderSet, state: StateKeeper(path: state, logger: log),
            sinks: [EventLog(format: json ? .json : .text, writer: writer, journal: Diagnostics.journalOnStdout)], timeZone: SystemTimeZone())
        var failed = false
        for track in tracks {
            let source = TrackSource(path: track, startDay: date?.daysSince1970)
            var summary = FixTally()
            try await pipeline.drive(source, counting: &summary) { report in
                switch report {
                case .fixes:
                    // Nobody reads what is left to print.
                    try Console.check(writer, failed: failed)
                case .failed(let reason):
                    writer.flush()
                    log.error("\(source.name): \(reason)")
                    failed = true
                case .connected, .unavailable, .ignored, .warning, .switched:
                    break
                }
            }
            writer.flush()
            try Console.check(writer, failed: failed)
            let report = source.report
            guard summary.fixes > 0 || report.problemCount > 0 || !failed else { continue }
            if report.problemCount > 0 {
                let examples = report.problems.map { DisplayText.escaped($0.description) }.joined(separator: "; ")
                log.warning("\(source.name): skipped \(DisplayText.counted(report.problemCount, "bad line")) (\(examples))")
            }
            var counts = summary.describe()
            if report.epochsWithoutFix > 0 { counts += ", \(DisplayText.counted(report.epochsWithoutFix, "epoch")) without a fix" }
            log.info("\(source.name): \(report.format.rawValue), \(counts)")
        }
        if failed { throw ExitCode.failure }
    }
}

/// A calendar day given on the command line (`2026-11-21`), as days since 1970-01-01.
struct CalendarDay: ExpressibleByArgument {
    let daysSince1970: Int

    init?(argument: String) {
        guard let date = LocalDate(parsing: argument), date.minuteOfDay == nil else { return nil }
        let days = LocalTime.daysSince1970(year: date.year, month: date.month, day: date.day)
        // 2026-02-30 would roll over into March: refused.
        guard LocalTime(Date(timeIntervalSince1970: Double(days * 86_400)), in: FixedOffset.utc).day == date.day else { return nil }
        daysSince1970 = days
    }
}
