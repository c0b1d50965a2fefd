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
        // At the default priority: a task made from the main thread would take its priority
        // from the thread's, and libdispatch would then ask for a raised priority (a nice value
        // below 0) for each worker thread that runs its children, which a service without
        // CAP_SYS_NICE is refused, logged at every such thread.
        Task(executorPreference: EventLoop.main, priority: .medium) {
            if let (word, asHelp) = GeoAlarm.misreadWord(arguments) {
                Diagnostics.error(
                    "\(DisplayText.escaped(word)) would be read as the options \(word.dropFirst().map { "-\($0)" }.joined(separator: " "))"
                        + (asHelp ? ", the help among them" : "")
                        + ": a duration is never negative, and a word meant to start with a dash goes after --")
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

    /// A word before `--` of a dash and a digit (`-1h`, `-30m`; geoalarm has no option of a digit)
    /// that the argument parser took for a group of short options where a value was meant, and
    /// whether the parser would have printed the help for it and exited 0 (`snooze bread -1h`:
    /// `-1 -h`) rather than said a value is missing (`snooze bread -30m`). Nil when there is none,
    /// when the help is asked for in its own words, when such a word is an option's value
    /// (`--title "-20h sale"`), or when the line fails for another reason.
    static func misreadWord(_ arguments: [String]) -> (word: String, asHelp: Bool)? {
        let options = arguments.prefix { $0 != "--" }
        guard !options.contains(where: { $0 == "-h" || $0 == "--help" }) else { return nil }
        // Where a value stands alone: not after an option, whose value it may be (`--since -2h`).
        let misread = options.indices.filter { isDashAndDigit(options[$0]) && ($0 == 0 || !options[$0 - 1].hasPrefix("-")) }
        guard let first = misread.first else { return nil }
        switch parseOutcome(arguments) {
        case .command:
            return nil
        case .help:
            return misread.first { options[$0].contains("h") }.map { (options[$0], true) }
        case .failure:
            // Those words were the fault when the line parses with plain values in their place.
            let plain = arguments.indices.map { misread.contains($0) ? "0" : arguments[$0] }
            return parseOutcome(plain) == .command ? (options[first], false) : nil
        }
    }

    private static func isDashAndDigit(_ word: String) -> Bool {
        let bytes = Array(word.utf8.prefix(2))
        return bytes.count == 2 && bytes[0] == UInt8(ascii: "-") && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[1])
    }

    /// What the argument parser makes of `arguments`: one of these commands, its help (a command
    /// of its own), or a failure.
    private static func parseOutcome(_ arguments: [String]) -> ParseOutcome {
        guard let parsed = try? parseAsRoot(arguments) else { return .failure }
        let ours = ([Self.self] + configuration.subcommands).map(ObjectIdentifier.init)
        return ours.contains(ObjectIdentifier(type(of: parsed))) ? .command : .help
    }

    private enum ParseOutcome { case command, help, failure }
}

extension ProcessInfo {
    /// This machine's name up to its first dot (`pi` for `pi.local`), for MQTT client ids and topics.
    var shortHostName: String { hostName.split(separator: ".").first.map(String.init) ?? "localhost" }
}
