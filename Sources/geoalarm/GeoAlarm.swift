import ArgumentParser
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import Glibc

/// Runs the command line on one thread: every task on ``EventLoop/main``, which `main` runs.
@main
enum Entry {
    static func main() {
        // A write to a pipe whose reader has gone fails with EPIPE, handled where it is seen,
        // instead of killing the process.
        System.ignoreBrokenPipes()
        let arguments = Array(CommandLine.arguments.dropFirst())
        Task(executorPreference: EventLoop.main) {
            if let word = GeoAlarm.readAsHelp(arguments) {
                Diagnostics.error(
                    "\(DisplayText.escaped(word)) would be read as the options \(word.dropFirst().map { "-\($0)" }.joined(separator: " ")), "
                        + "the help among them: a duration is never negative, and a word meant to start with a dash goes after --")
                exit(ExitCode.validationFailure.rawValue)
            }
            await GeoAlarm.main(arguments)
            exit(0)
        }
        EventLoop.main.run()
    }
}

/// The `geoalarm` command: location reminders for Linux.
struct GeoAlarm: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geoalarm",
        abstract: "Location reminders: tells you when you arrive at or leave the places you care about.",
        version: "0.2.0",
        subcommands: [
            Run.self, Check.self, Doctor.self, Replay.self, List.self, Status.self, History.self, Add.self, Remove.self,
            Complete.self,
            Uncomplete.self,
            Snooze.self,
            Map.self,
        ]
    )

    /// A word that the argument parser took for a group of short options with `-h` among them,
    /// so that it would print the help and exit 0 where a value was meant: `snooze bread -1h`
    /// (a dash and a digit; geoalarm has no option of a digit). Nil when the help is asked for in
    /// its own words, or the word is an option's value (`--title "-20h sale"`).
    static func readAsHelp(_ arguments: [String]) -> String? {
        let options = arguments.prefix { $0 != "--" }
        guard !options.contains(where: { $0 == "-h" || $0 == "--help" }) else { return nil }
        let word = options.first { word in
            let letters = word.utf8.dropFirst()
            return word.utf8.first == UInt8(ascii: "-") && letters.first.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } == true
                && letters.contains(UInt8(ascii: "h"))
        }
        guard let word else { return nil }
        // The help comes back as a command of the parser's own (its help command), not one of these.
        let parsed = try? parseAsRoot(arguments)
        let ours = ([Self.self] + configuration.subcommands).map(ObjectIdentifier.init)
        return parsed.map { ours.contains(ObjectIdentifier(type(of: $0))) } == false ? word : nil
    }
}

extension ProcessInfo {
    /// This machine's name up to its first dot (`pi` for `pi.local`), for MQTT client ids and topics.
    var shortHostName: String { hostName.split(separator: ".").first.map(String.init) ?? "localhost" }
}
