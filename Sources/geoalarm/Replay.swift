import ArgumentParser
import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmOutput
import GeoAlarmReplay
import GeoAlarmSystem

/// `geoalarm replay`: runs recorded tracks through the reminders as fast as possible.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay recorded tracks (NMEA 0183, gpsd JSON, GPX) and print every arrival and departure.",
        discussion: "Tracks are replayed in the order given, as one journey. Events go to stdout; "
            + "a summary of each track goes to stderr.")

    @OptionGroup var options: ConfigOptions

    @Flag(help: "Print each event as a JSON object on one line.")
    var json = false

    @Argument(help: ArgumentHelp("Track files to replay; - reads standard input.", valueName: "track"))
    var tracks: [String]

    func validate() throws {
        guard !tracks.isEmpty else { throw ValidationError("Give at least one track file (or - for stdin).") }
    }

    func run() throws {
        let config = try options.load()
        let log = Diagnostics.logger
        var engine = GeofenceEngine(reminders: config.reminders, collections: config.collections, settings: config.settings)
        var announcer = Announcer(timeZone: .current)
        let format: EventFormat = json ? .json : .text
        let writer = LineWriter(flushEachLine: false)
        var failed = false
        for track in tracks {
            let name = track == "-" ? "<stdin>" : DisplayText.escaped(track)
            let descriptor: Int32
            do {
                descriptor = track == "-" ? STDIN_FILENO : try System.open(track, O_RDONLY)
            } catch {
                log.error("\(name): cannot read: \(error.reason)")
                failed = true
                continue
            }
            defer { if descriptor != STDIN_FILENO { System.close(descriptor) } }
            var summary = TrackSummary()
            let report: TrackReport
            do {
                report = try TrackStream.read(descriptor) { fixes in
                    summary.fixes += fixes.count
                    for fix in fixes {
                        let outcome = engine.process(fix, receivedAt: Date())
                        summary.count(outcome)
                        for event in outcome.events {
                            if announcer.decide(event) != nil {
                                summary.silenced += 1
                            } else {
                                summary.announced += 1
                                writer.write(format.line(for: event))
                            }
                        }
                    }
                }
            } catch {
                writer.flush()
                log.error("\(name): \(error.description)")
                failed = true
                continue
            }
            writer.flush()
            if report.problemCount > 0 {
                let examples = report.problems.map { DisplayText.escaped($0.description) }.joined(separator: "; ")
                log.warning("\(name): skipped \(report.problemCount) bad lines (\(examples))")
            }
            var counts = summary.describe()
            if report.epochsWithoutFix > 0 { counts += ", \(report.epochsWithoutFix) epochs without a fix" }
            log.info("\(name): \(report.format.rawValue), \(counts)")
        }
        if failed { throw ExitCode.failure }
    }
}

/// Counts of what the engine made of a track's fixes.
struct TrackSummary {
    /// Fixes read from the track.
    var fixes = 0
    private var accepted = 0
    private var rejected: [FixRejection: Int] = [:]
    /// Events printed, and events their reminders' schedules or lifecycles kept quiet.
    var announced = 0
    var silenced = 0

    mutating func count(_ outcome: FixOutcome) {
        switch outcome {
        case .accepted:
            accepted += 1
        case .rejected(let reason):
            rejected[reason, default: 0] += 1
        }
    }

    func describe() -> String {
        var text = "\(fixes) fixes, \(accepted) used"
        let skipped = FixRejection.allCases.compactMap { reason in
            rejected[reason].map { "\($0) \(reason.rawValue)" }
        }
        if !skipped.isEmpty { text += " (ignored: \(skipped.joined(separator: ", ")))" }
        return text + ", \(announced) events" + (silenced > 0 ? " (\(silenced) more not announced by their schedule)" : "")
    }
}
