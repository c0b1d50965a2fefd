import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmICalendar
import GeoAlarmSystem
import GeoAlarmTasks
import Logging
import ServiceLifecycle
import Synchronization

/// The agent's task lists: writes a task's Done where the task lives, and keeps the lists on
/// servers in step.
///
/// A Done (``complete(_:at:for:id:)``) is written off the loop, in a child task of its own on
/// Swift's global executor (a folder on a slow disk holds nothing up), and its outcome goes back to the agent as
/// ``AgentInput/taskCompleted``; one for a server is queued in the state file and sent at once.
/// The service stops only once the writes under way are made.
///
/// Each server's list is looked at every `poll` seconds (and at once when a write waits), its
/// waiting writes sent, and the agent told when a copy changed (``AgentInput/tasksChanged``),
/// which reads its reminders again. Between looks nothing runs: one timer on the loop for the
/// next list due. A server away, or refusing the credentials, is said once (and its return), and
/// the list's copy in the state file goes on serving its reminders.
public final class TaskListService: Service {
    private let servers: ServerTaskLists
    private let channel: AgentChannel
    private let loop: EventLoop
    private let logger: Logger
    private let lists: Mutex<[TaskListSettings]>
    private let wakes: AsyncStream<Wake>
    private let wakeUp: AsyncStream<Wake>.Continuation

    /// Why the service wakes.
    private enum Wake: Sendable {
        /// A list's time came.
        case due
        /// A write waits, or the lists changed: every list now.
        case now
        /// A look at a list ended.
        case looked(TaskListSettings, ServerTaskLists.Outcome)
        /// A task's Done to write.
        case complete(Completion)
    }

    /// A Done pressed on a task's reminder, to write in its list.
    private struct Completion: Sendable {
        let task: TaskOrigin
        let time: Date
        let action: ReminderAction
        let id: String
    }

    /// Keeps `lists` (each a server's) in step through `servers`.
    public init(servers: ServerTaskLists, lists: [TaskListSettings], channel: AgentChannel, loop: EventLoop, logger: Logger) {
        self.servers = servers
        self.channel = channel
        self.loop = loop
        self.logger = logger
        self.lists = Mutex(lists)
        (wakes, wakeUp) = AsyncStream.makeStream(of: Wake.self)
    }

    /// Follows the lists of a reloaded config: a new one, or one whose server changed, is looked at now.
    public func follow(_ lists: [TaskListSettings]) {
        let changed = self.lists.withLock { current in
            defer { current = lists }
            return current != lists
        }
        if changed { wakeUp.yield(.now) }
    }

    /// A write waits for a server (a command left it): every list is looked at now.
    public func writeWaits() {
        wakeUp.yield(.now)
    }

    /// Writes `action`'s Done at `time` on `task`, the reminder `id`, where the task lives; the
    /// agent hears how it went (``AgentInput/taskCompleted``). Returns false when the service is
    /// stopping and no longer writes.
    public func complete(_ task: TaskOrigin, at time: Date, for action: ReminderAction, id: String) -> Bool {
        if case .enqueued = wakeUp.yield(.complete(Completion(task: task, time: time, action: action, id: id))) { return true }
        return false
    }

    /// Each list is looked at on its own (a server that is slow to answer, or a password command
    /// that takes its time, holds no other list up); a list asked for while a look at it is under
    /// way is looked at again once that one ends.
    public func run() async {
        wakeUp.yield(.now)
        var due: [String: ContinuousClock.Instant] = [:]
        var troubles: [String: String] = [:]
        var timer: EventLoop.Timer?
        var looking: Set<String> = []
        var askedAgain: Set<String> = []
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                /// Starts a look at `list`, unless one is under way (then it comes again after it).
                func look(at list: TaskListSettings) {
                    guard looking.insert(list.name).inserted else {
                        askedAgain.insert(list.name)
                        return
                    }
                    group.addTask { [servers, wakeUp] in wakeUp.yield(.looked(list, await servers.sync(list))) }
                }
                /// Writes `done` in its list; one for a server is sent at once. The write blocks in
                /// its file system calls, so it runs on Swift's global executor, not on the loop
                /// (whose preference child tasks inherit), and the service still waits for it.
                func write(_ done: Completion) {
                    group.addTask(executorPreference: globalConcurrentExecutor) { [cache = servers.cache, channel, wakeUp] in
                        let written = Result { () throws(TaskProblem) in try TaskWriter.complete(done.task, at: done.time, cache: cache) }
                        channel.continuation.yield(.taskCompleted(done.action, id: done.id, task: done.task, written))
                        if done.task.isOnServer, case .success = written { wakeUp.yield(.now) }
                    }
                }
                for await wake in wakes {
                    if let timer { loop.cancel(timer) }
                    timer = nil
                    let current = lists.withLock { $0 }
                    due = due.filter { name, _ in current.contains { $0.name == name } }
                    switch wake {
                    case .complete(let done):
                        write(done)
                    case .looked(let list, let outcome):
                        looking.remove(list.name)
                        // A look the stop ended says nothing.
                        if Task.isShuttingDownGracefully { continue }
                        due[list.name] = .now + .milliseconds(Int64(list.pollSeconds * 1000))
                        report(outcome, of: list, troubles: &troubles)
                        if outcome.changed { channel.continuation.yield(.tasksChanged) }
                        if askedAgain.remove(list.name) != nil, let now = current.first(where: { $0.name == list.name }) { look(at: now) }
                    case .due, .now:
                        for list in current {
                            guard case .server = list.source else { continue }
                            // Due: a list being looked at is not due again, whatever its time.
                            if case .due = wake, looking.contains(list.name) || due[list.name].map({ $0 > .now }) == true { continue }
                            look(at: list)
                        }
                    }
                    if let next = due.filter({ !looking.contains($0.key) }).values.min() {
                        timer = loop.schedule(at: next) { [wakeUp] in wakeUp.yield(.due) }
                    }
                }
            }
        } onGracefulShutdown: { [wakeUp, servers] in
            wakeUp.finish()
            servers.stop()
        }
        if let timer { loop.cancel(timer) }
    }

    /// Says what a look did: writes sent or dropped, and a trouble once (its end too).
    private func report(_ outcome: ServerTaskLists.Outcome, of list: TaskListSettings, troubles: inout [String: String]) {
        let name = "task list \(list.name) (\(list.location))"
        if outcome.sent > 0 { logger.info("\(name): \(outcome.sent) change\(outcome.sent == 1 ? "" : "s") sent to the server") }
        for dropped in outcome.dropped { logger.error("\(name): a change cannot be made and is dropped: \(dropped)") }
        for passed in outcome.passedOver { logger.warning("\(name): \(passed)") }
        if let problem = outcome.problem {
            if troubles[list.name] != problem.description {
                let copy = ((try? servers.cache.cachedList(list.name)) ?? nil) != nil
                    ? "its last copy serves its reminders, and changes wait for the server"
                    : "it was never fetched, so none of its tasks fires until the server answers"
                logger.warning("\(name): \(problem); \(copy) (tried every \(Span.describe(list.pollSeconds)))")
            }
            troubles[list.name] = problem.description
        } else if troubles.removeValue(forKey: list.name) != nil {
            logger.info("\(name): the server answers again")
        }
    }
}

extension TaskListSettings {
    /// Seconds between looks at a server's list (0 for a vdir).
    var pollSeconds: Double {
        if case .server(let server) = source { server.poll } else { 0 }
    }
}
