import ArgumentParser

/// The `geoalarm` command: location reminders for Linux.
@main
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
        ]
    )
}
