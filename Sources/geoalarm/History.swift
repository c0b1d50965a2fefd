import ArgumentParser
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmStore

/// `geoalarm history`: past events from the state file.
struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print past events, oldest first, as the agent printed them.")

    @OptionGroup var options: ConfigOptions
    @OptionGroup var stateOptions: StateOptions

    // Unconditional: "-2h" is the value, as journalctl takes it, not an option.
    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Only events since then: a duration back from now (\"2h\", also \"-2h\" or \"2h ago\" as journalctl takes them; \"7d\") or a date (\"2026-11-20\", \"2026-11-20T08:00:00Z\").",
        valueName: "when"))
    var since: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Only events before then, in the same forms (\"2026-11-21\": up to its midnight UTC; \"1h\": until an hour ago).",
        valueName: "when"))
    var until: String?

    @Option(help: ArgumentHelp("Only this reminder's events.", valueName: "id"))
    var reminder: String?

    @Flag(help: "Print each event as a JSON object on one line.")
    var json = false

    func validate() throws {
        let now = Date()
        for (option, text) in [("--since", since), ("--until", until)] {
            if let text, Self.moment(text, now: now) == nil {
                throw ValidationError("\(option) \(text): expected a duration such as 2h or 7d, or a date such as 2026-11-20.")
            }
        }
        if let start = since.flatMap({ Self.moment($0, now: now) }), let end = until.flatMap({ Self.moment($0, now: now) }), end <= start {
            throw ValidationError("--until \(until ?? "") is not after --since \(since ?? ""): no event could be shown.")
        }
    }

    /// The moment `text` names: now minus a duration (written as it is, after a minus sign or
    /// before "ago", as systemd.time(7) writes a time past), or a date (midnight UTC) or date-time.
    static func moment(_ text: String, now: Date) -> Date? {
        var back = Substring(text)
        if back.hasPrefix("-") {
            back = back.dropFirst()
        } else if back.hasSuffix(" ago") {
            back = back.dropLast(4)
        }
        if let span = try? Span.parse(String(back)) { return now.addingTimeInterval(-span) }
        if text.count == 10, let date = LocalDate(parsing: text) {
            return date.start(in: FixedOffset.utc)
        }
        return try? Date(text, strategy: .iso8601)
    }

    func run() async throws {
        // With a config (given, or found where commands look), an unknown --reminder is named.
        if let reminder, options.config != nil || (try? options.resolvedPathQuietly()) != nil {
            let (config, _) = try await options.load(fetchingInto: stateOptions.path)
            try lookUp(reminder, in: config)
        }
        guard let store = try stateOptions.openForReading() else {
            Diagnostics.error("state file \(stateOptions.path) does not exist yet: no event has been recorded (or pass --state)")
            throw ExitCode.failure
        }
        let entries: [EventHistory.Entry]
        do {
            let now = Date()
            entries = try store.history.entries(
                since: since.flatMap { Self.moment($0, now: now) }, until: until.flatMap { Self.moment($0, now: now) }, reminder: reminder)
        } catch {
            Diagnostics.error(error.description)
            throw ExitCode.failure
        }
        let format: EventFormat = json ? .json : .text
        for entry in entries {
            try Console.line(format.line(for: EventRecord(
                time: entry.time, kind: entry.kind, reminderID: entry.reminderID, title: entry.title,
                coordinate: entry.coordinate, distance: entry.distance, device: entry.device)))
        }
    }
}
