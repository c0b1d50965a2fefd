import ArgumentParser
import FoundationEssentials
import GeoAlarmSystem
import Glibc

/// Runs the command line on one thread: every task on ``EventLoop/main``, which `main` runs.
@main
enum Entry {
    static func main() {
        // A write to a pipe whose reader has gone fails with EPIPE, handled where it is seen,
        // instead of killing the process.
        System.ignoreBrokenPipes()
        Task(executorPreference: EventLoop.main) {
            await GeoAlarm.main()
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
}

extension ProcessInfo {
    /// This machine's name up to its first dot (`pi` for `pi.local`), for MQTT client ids and topics.
    var shortHostName: String { hostName.split(separator: ".").first.map(String.init) ?? "localhost" }
}
