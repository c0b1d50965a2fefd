import FoundationEssentials
import GeoAlarmCalDAV
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmListCache
import GeoAlarmSystem
import GeoAlarmTasks
import Logging
import Synchronization

/// The task lists that live on CalDAV servers, as the agent and the commands keep them: each
/// list's copy and the writes waiting for its server (in a ``TaskListCache``: the state file), and
/// how to reach each server (its address, credentials and authority).
///
/// One look at a list (``sync(_:)``) sends the writes waiting for it, in order, then brings its
/// copy up to date; a server away or refusing leaves the copy as it was, and the reminders come
/// from it all the same.
public final class ServerTaskLists: Sendable {
    /// Where the copies and the waiting writes are kept.
    public let cache: any TaskListCache
    private let client: CurlClient
    private let loop: EventLoop
    /// The password each `password_command` printed last: asked again only after a refusal.
    private let commandPasswords = Mutex<[String: String]>([:])

    public init(cache: any TaskListCache, loop: EventLoop) {
        self.cache = cache
        self.loop = loop
        client = CurlClient(loop: loop)
    }

    /// Ends the looks under way (the agent stops).
    public func stop() {
        client.cancelAll("the agent is stopping")
    }

    /// What one look at a list came to.
    public struct Outcome: Sendable {
        /// Whether the copy changed (its reminders are to be read again).
        public var changed = false
        /// Writes the server took.
        public var sent = 0
        /// Writes that can never be made, dropped, with why.
        public var dropped: [String] = []
        /// Why the server could not be used (the copy stays as it was); nil when it was.
        public var problem: Trouble?
        /// How many requests the look made.
        public var requests = 0
        /// The tasks of the server's the look left out, each with why (an object over its bound).
        public var passedOver: [String] = []
    }

    /// Sends `list`'s waiting writes and brings its copy up to date.
    public func sync(_ list: TaskListSettings) async -> Outcome {
        guard case .server(let server) = list.source else { return Outcome() }
        var outcome = Outcome()
        let settings: WebSettings
        switch await webSettings(for: server) {
        case .failure(let problem):
            outcome.problem = .password(problem.description)
            return outcome
        case .success(let found): settings = found
        }
        let sync = TaskListSync(name: list.name, collection: CalDAVCollection(client: client, url: server.url, settings: settings), cache: cache)
        let (sent, stopped) = await sync.sendWrites()
        outcome.sent = sent.made
        outcome.dropped = sent.dropped
        outcome.changed = sent.made > 0
        if let stopped {
            forgetPassword(on: stopped, of: server)
            outcome.problem = .server(stopped)
            return outcome
        }
        switch await sync.refresh() {
        case .success(let refresh):
            outcome.changed = outcome.changed || refresh.changed
            outcome.requests = refresh.requests
            outcome.passedOver = refresh.passedOver
        case .failure(let problem):
            forgetPassword(on: problem, of: server)
            outcome.problem = .server(problem)
        }
        return outcome
    }

    /// Why a list's server could not be used.
    public enum Trouble: Sendable, Equatable, CustomStringConvertible {
        /// Its password cannot be had (the file, the command).
        case password(String)
        /// The server's answer, or its silence.
        case server(CalDAVProblem)

        public var description: String {
            switch self {
            case .password(let reason): reason
            case .server(let problem): problem.description
            }
        }
    }

    /// Why a server cannot be asked: its credentials cannot be had.
    struct Problem: Error, Sendable, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Credentials

    /// How to reach `server`: its credentials (the password file read now, so that a fixed file
    /// takes at once; the command's password as printed last) and its authority.
    private func webSettings(for server: ServerSettings) async -> Result<WebSettings, Problem> {
        var settings = WebSettings(username: server.username, caFile: server.caFile)
        if let path = server.passwordFile {
            switch PasswordFile.read(path) {
            case .success(let password): settings.password = password
            case .failure(let problem): return .failure(Problem("password_file \(path): \(problem.message)"))
            }
        } else if let command = server.passwordCommand {
            switch await password(from: command) {
            case .success(let password): settings.password = password
            case .failure(let problem): return .failure(problem)
            }
        }
        return .success(settings)
    }

    /// The password `command` prints (its first line), run on a thread of its own when not known yet.
    private func password(from command: [String]) async -> Result<String, Problem> {
        let key = command.joined(separator: "\u{0}")
        if let known = commandPasswords.withLock({ $0[key] }) { return .success(known) }
        let environment = ProcessInfo.processInfo.environment
        let shown = DisplayText.escaped(command.joined(separator: " "))
        let result: Result<String, Problem> = await withCheckedContinuation { continuation in
            do {
                try loop.runOnThread(named: "password command", {
                    Result { () throws(ChildProcess.SpawnError) in
                        try ChildProcess.run(command, environment: environment, limit: Self.commandOutputLimit, timeout: Self.commandTimeout)
                    }
                }, then: { ran in
                    switch ran {
                    case .failure(let error): continuation.resume(returning: .failure(Problem("password_command: \(error)")))
                    case .success(let output):
                        let line = output.stdout.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
                        if output.timedOut {
                            continuation.resume(returning: .failure(Problem("""
                                password_command \(shown) did not end within \(Span.describe(Self.commandTimeout / .seconds(1))) \
                                and was stopped (a keyring that waits to be unlocked, or a helper that stays running: it must print \
                                the password and exit)
                                """)))
                        } else if output.stdoutCut {
                            continuation.resume(returning: .failure(Problem(
                                "password_command \(shown) printed more than \(DisplayText.size(Self.commandOutputLimit)): no password is that long")))
                        } else if output.status != 0 {
                            let said = DisplayText.excerpt(output.stderr.trimmingTrailingBlanks, limit: 200)
                            continuation.resume(returning: .failure(Problem("password_command \(shown) failed with exit status \(output.status)\(said.isEmpty ? "" : ": \(said)")")))
                        } else if line.isEmpty {
                            continuation.resume(returning: .failure(Problem("password_command \(shown) printed no password")))
                        } else {
                            continuation.resume(returning: .success(String(decoding: line, as: UTF8.self)))
                        }
                    }
                })
            } catch {
                continuation.resume(returning: .failure(Problem("password_command: cannot start a thread: \(error)")))
            }
        }
        if case .success(let password) = result { commandPasswords.withLock { $0[key] = password } }
        return result
    }

    /// How long a password command may run, and how much it may print.
    static let commandTimeout: Duration = .seconds(30)
    static let commandOutputLimit = 64 << 10

    /// A refusal sends the next look back to the password command (the keyring may hold a new one).
    private func forgetPassword(on problem: CalDAVProblem, of server: ServerSettings) {
        guard case .refused = problem, let command = server.passwordCommand else { return }
        _ = commandPasswords.withLock { $0.removeValue(forKey: command.joined(separator: "\u{0}")) }
    }
}

extension [UInt8] {
    /// Without the blanks and line ends at its end (a command's last newline).
    fileprivate var trimmingTrailingBlanks: ArraySlice<UInt8> {
        var end = endIndex
        while end > startIndex, [0x20, 0x09, 0x0A, 0x0D].contains(self[end - 1]) { end -= 1 }
        return self[..<end]
    }
}
