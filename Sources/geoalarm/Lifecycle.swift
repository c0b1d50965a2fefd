import ArgumentParser
import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmICalendar
import GeoAlarmListCache
import GeoAlarmStore
import GeoAlarmSystem
import GeoAlarmTasks

/// The reminder named on the command line, checked against the config.
struct ReminderArgument: ParsableArguments {
    @OptionGroup var options: ConfigOptions
    @OptionGroup var stateOptions: StateOptions

    @Argument(help: ArgumentHelp(
        "The reminder's id (see geoalarm list), or COLLECTION/N for place N of a collection.", valueName: "id"))
    var id: String

    /// The reminder's (time alarm's, collection place's, task's) id and title, where it lives when
    /// it is a task of a task list, or a message listing the ids there are and exit 1; and the
    /// config's task lists on servers, as fetched.
    ///
    /// A task's id that named another task until its list changed (another member's task came
    /// whose UID begins the same, and the ids were made anew) is refused, with both ids as they
    /// are now: what is typed may have been read before the change. The state file then follows
    /// the new ids, so that the same id given again names the task it names now.
    func reminder() async throws -> (id: String, title: String, task: TaskOrigin?, lists: FetchedTaskLists, config: Config) {
        let (config, lists) = try await options.load(fetchingInto: stateOptions.path)
        let found = try lookUp(id, in: config)
        let task = config.taskOrigin(of: found.id)
        if task != nil, let store = try? StateStore(path: stateOptions.path),
           let movedTo = try? store.follow(taskKeys: config.taskKeys)[found.id] {
            let other = (try? config.lookUp(movedTo).get().title).map { " (\"\(DisplayText.escaped($0))\")" } ?? ""
            Diagnostics.error("""
                \(found.id) is ambiguous: it was the id of another task of list \(task?.list ?? "") until the list changed, now \
                \(movedTo)\(other), and it is now \"\(DisplayText.escaped(found.title))\"'s: give \(movedTo) for that one, or \
                \(found.id) again for this one
                """)
            throw ExitCode.failure
        }
        return (found.id, found.title, task, lists, config)
    }
}

/// Writes a task's change to its task list (a server's: into the copy and the queue of `lists`,
/// then sent), or explains why not and exits 1; where the change stands (", on the server",
/// "; it waits for the server..."), for the command's line.
func changeTask(
    _ origin: TaskOrigin, config: Config, lists: FetchedTaskLists, _ change: (TaskOrigin, any TaskListCache) throws(TaskProblem) -> Void
) async throws -> String {
    do {
        try change(origin, lists.servers.cache)
    } catch {
        Diagnostics.error("task \(DisplayText.escaped(origin.title)) of list \(origin.list) (\(origin.path)): \(error)")
        throw ExitCode.failure
    }
    guard origin.isOnServer, let list = config.taskListSettings.first(where: { $0.name == origin.list }) else { return "" }
    let standing = await lists.send(list)
    if standing.isLost {
        Diagnostics.error("task \(DisplayText.escaped(origin.title)) of list \(origin.list)\(standing.words)")
        throw ExitCode.failure
    }
    return standing.words
}

/// What `id` names in `config` (a reminder, a time alarm or a collection's place) and its title,
/// or a message listing the ids there are and exit 1.
@discardableResult
func lookUp(_ id: String, in config: Config) throws -> (id: String, title: String) {
    switch config.lookUp(id) {
    case .success(let found):
        return found
    case .failure(let unknown):
        Diagnostics.error(unknown.description)
        throw ExitCode.failure
    }
}

/// `geoalarm complete ID`: the reminder stays silent until uncompleted.
struct Complete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mark a reminder completed: it is still tracked but announces nothing until uncompleted.")

    @OptionGroup var reminder: ReminderArgument

    func run() async throws {
        let found = try await reminder.reminder()
        // A task is completed where it lives, for its app and every device that syncs it.
        if let task = found.task {
            guard !task.isClosed else {
                try Console.line("\(found.id) (\"\(found.title)\") was already completed, in task list \(task.list)")
                return
            }
            var next: ICalendarTime?
            let standing = try await changeTask(task, config: found.config, lists: found.lists) { (task, cache) throws(TaskProblem) in
                next = try TaskWriter.complete(task, at: Date(), cache: cache)
            }
            if let next {
                try Console.line("\(found.id) (\"\(found.title)\") repeats: moved on in task list \(task.list) to \(next.displayText)\(standing)")
            } else {
                try Console.line("completed \(found.id) (\"\(found.title)\") in task list \(task.list)\(standing)")
            }
            return
        }
        if let earlier = try reminder.stateOptions.open().lifecycles.complete(found.id, at: Date()) {
            try Console.line("\(found.id) (\"\(found.title)\") was already completed, at \(Timestamp.iso8601(earlier, in: SystemTimeZone()))")
            return
        }
        try Console.line("completed \(found.id) (\"\(found.title)\")")
    }
}

/// `geoalarm uncomplete ID`.
struct Uncomplete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a completed reminder as not completed again.")

    @OptionGroup var reminder: ReminderArgument

    func run() async throws {
        let found = try await reminder.reminder()
        if let task = found.task {
            // Open (a repeating one moved on is too): nothing to undo.
            guard task.isClosed else {
                try Console.line("\(found.id) (\"\(found.title)\") is not completed")
                return
            }
            let standing = try await changeTask(task, config: found.config, lists: found.lists) { (task, cache) throws(TaskProblem) in
                try TaskWriter.uncomplete(task, at: Date(), cache: cache)
            }
            try Console.line("uncompleted \(found.id) (\"\(found.title)\") in task list \(task.list)\(standing)")
            return
        }
        guard try reminder.stateOptions.open().lifecycles.uncomplete(found.id) else {
            try Console.line("\(found.id) (\"\(found.title)\") is not completed")
            return
        }
        try Console.line("uncompleted \(found.id) (\"\(found.title)\")")
    }
}

/// `geoalarm snooze ID DURATION|TIME`.
struct Snooze: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Silence a reminder for a while (\"1h\", \"2d\") or until a time (\"18:00\", \"2026-12-01T08:00\"); 0 ends a snooze.")

    @OptionGroup var reminder: ReminderArgument

    @Argument(help: ArgumentHelp(
        "How long (1h, 30m, 2d) or until when, in local time (18:00: its next coming; 2026-12-01T08:00); 0 ends the snooze.",
        valueName: "duration"))
    var duration: String

    func validate() throws {
        _ = try end()
    }

    func run() async throws {
        let found = try await reminder.reminder()
        let until = try end()
        // A task at a collection's places is snoozed at all of them.
        let id = found.config.taskAtPlaces(of: found.id) ?? found.id
        let store = try reminder.stateOptions.open()
        guard let until else {
            let ended = try store.lifecycles.endSnooze(of: id)
            let whole = ended.first { $0 != id }
            try Console.line(
                ended.isEmpty ? "\(id) was not snoozed"
                    : "\(id) is no longer snoozed" + (whole.map { " (nor is any place of \($0): it was snoozed whole)" } ?? ""))
            return
        }
        try store.lifecycles.snooze(id, until: until)
        // In local time, as the time may have been typed ("18:00"), with its offset from UTC.
        try Console.line("snoozed \(id) until \(Timestamp.iso8601(until, in: SystemTimeZone()))")
    }

    /// When the snooze asked for ends, from now; nil ends a snooze.
    private func end() throws -> Date? {
        do {
            return try Lifecycle.snoozeEnd(duration, from: Date(), in: SystemTimeZone())
        } catch {
            throw ValidationError(
                "\(DisplayText.escaped(duration)): \(error.description); expected a duration such as 1h, 30m or 2d, or a time such as 18:00 or 2026-12-01T08:00.")
        }
    }
}
