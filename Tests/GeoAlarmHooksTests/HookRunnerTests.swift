import Foundation
import GeoAlarmCore
@testable import GeoAlarmHooks
import GeoAlarmEncoding
import Logging
import GeoAlarmSystem
import GeoAlarmTestSupport
import Synchronization
import Testing

/// Hooks run for real (`/bin/sh` scripts). The tests that count threads, descriptors or zombie
/// children run in processes of their own, so the others here and in other suites run beside them.
struct HookRunnerTests {
    /// The loop the runners of these tests watch their hooks on (the agent's is its main thread).
    static let loop = try! EventLoop.startOnNewThread()

    static let event = GeofenceEvent(
        kind: .leave,
        reminder: Reminder(id: "parcel", title: "Pick up the parcel", notes: "Front desk",
                           geometry: .circle(center: Coordinate(latitude: 38.7226, longitude: -9.1094), radius: 100)),
        fix: Fix(time: Date(timeIntervalSince1970: 1_795_248_390), coordinate: Coordinate(latitude: 38.7236, longitude: -9.1094)),
        distance: 111.2)

    /// The test event, with `command` as its reminder's own hook and `notes` (the size of its JSON line).
    static func event(running command: [String], notes: String? = nil) -> GeofenceEvent {
        var event = Self.event
        event.reminder.alert.command = command
        event.reminder.notes = notes
        return event
    }

    /// A fresh directory with executable scripts `name: body`.
    static func hooks(_ scripts: [String: String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-hooks-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, body) in scripts {
            try Command.writeScript("#!/bin/sh\n" + body + "\n", to: "\(directory)/\(name)")
        }
        return directory
    }

    @Test func theEventArrivesInTheEnvironmentAndOnStdin() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hook-\(UUID().uuidString)").path
        let directory = try Self.hooks([
            "record": "env | grep '^GEOALARM_' | LC_ALL=C sort > \(out).env; cat > \(out).stdin; echo done >> \(out).env",
        ])
        let outcomes = Outcomes()
        let runner = Self.runner(timeout: 10, log: CapturingLog(), outcomes: outcomes, directory: directory)
        runner.announce(.crossing(Self.event))
        #expect(outcomes.wait(for: 1) == [.succeeded])
        let environment = try String(contentsOfFile: "\(out).env", encoding: .utf8)
        let event = [
            "GEOALARM_DISTANCE_M=111.2", "GEOALARM_ETA_S=", "GEOALARM_EVENT=leave", "GEOALARM_LAT=38.7236", "GEOALARM_LON=-9.1094",
            "GEOALARM_NOTES=Front desk", "GEOALARM_REMINDER=parcel", "GEOALARM_TIME=2026-11-21T08:06:30Z",
            "GEOALARM_TITLE=Pick up the parcel",
        ]
        // The hook also inherits what the test run itself sets (GEOALARM_TESTDATA, say), where
        // the event does not set the same name.
        let eventNames = Set(event.map { $0.prefix { $0 != "=" } })
        let inherited = ProcessInfo.processInfo.environment
            .filter { $0.key.hasPrefix("GEOALARM_") && !eventNames.contains(Substring($0.key)) }
            .map { "\($0.key)=\($0.value)" }
        #expect(environment == (event + inherited).sorted().joined(separator: "\n") + "\ndone\n")
        let stdin = try String(contentsOfFile: "\(out).stdin", encoding: .utf8)
        #expect(stdin == #"{"time":"2026-11-21T08:06:30Z","event":"leave","reminder":"parcel","title":"Pick up the parcel","lat":38.7236,"lon":-9.1094,"distance_m":111.2,"notes":"Front desk"}"# + "\n")
    }

    /// A hook gets its three streams and no other descriptor of the agent: a file this process
    /// holds open without close-on-exec is not open in the hook.
    @Test func aHookInheritsNoDescriptorButItsStreams() throws {
        let held = FileManager.default.temporaryDirectory.appendingPathComponent("held-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: held, contents: Data()))
        let descriptor = open(held, O_RDONLY)
        #expect(descriptor > 2)
        defer { close(descriptor) }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hook-fd-\(UUID().uuidString)").path
        let outcomes = Outcomes()
        let runner = Self.runner(timeout: 10, log: CapturingLog(), outcomes: outcomes)
        let script = "readlink /proc/$$/fd/\(descriptor) > \(out).tmp; mv \(out).tmp \(out)"
        runner.announce(.crossing(Self.event(running: ["/bin/sh", "-c", script])))
        #expect(outcomes.wait(for: 1) == [.succeeded])
        let seen = try String(contentsOfFile: out, encoding: .utf8)
        #expect(!seen.contains(held), "the hook held \(held) open: \(seen)")
    }

    /// An approach's hook gets its kind, its distance to the edge and its seconds to arrival.
    @Test func anApproachsHookHasItsTimeToArrival() {
        var event = Self.event
        event.kind = .approach
        event.distance = 2000
        event.proximity = Proximity(distance: 2000, direction: .towards, closingSpeed: 13.9, eta: 143.88)
        let variables = HookRunner.variables(for: .crossing(event))
        #expect(variables["GEOALARM_EVENT"] == "approach" && variables["GEOALARM_ETA_S"] == "144")
        #expect(variables["GEOALARM_DISTANCE_M"] == "2000")
    }

    /// A time alarm has no place: its hooks get empty position and distance, and null in the JSON line.
    @Test func aTimeAlarmsHookHasATimeAndNoPlace() throws {
        let alarm = TimeAlarm(id: "call", title: "Call mum", at: .local(try #require(LocalDate(parsing: "2026-12-24T16:00"))))
        let firing = Announcement.alarm(AlarmFiring(alarm: alarm, time: Date(timeIntervalSince1970: 1_798_128_000)))
        let variables = HookRunner.variables(for: firing)
        #expect(variables["GEOALARM_EVENT"] == "alarm" && variables["GEOALARM_REMINDER"] == "call")
        #expect(variables["GEOALARM_TIME"] == "2026-12-24T16:00:00Z")
        #expect(variables["GEOALARM_LAT"] == "" && variables["GEOALARM_LON"] == "" && variables["GEOALARM_DISTANCE_M"] == "")
        #expect(variables["GEOALARM_DEVICE"] == nil)
        #expect(EventFormat.json.line(for: firing)
            == #"{"time":"2026-12-24T16:00:00Z","event":"alarm","reminder":"call","title":"Call mum","lat":null,"lon":null,"distance_m":null}"#)
        #expect(EventFormat.text.line(for: firing) == #"2026-12-24T16:00:00Z  alarm  call  "Call mum"  -"#)
    }

    @Test func theRemindersOwnCommandRunsFirstAndOnlyExecutablesFromTheDirectory() throws {
        let directory = try Self.hooks(["b-hook": "true", "a-hook": "true"])
        try Data("not executable".utf8).write(to: URL(fileURLWithPath: "\(directory)/readme.txt"))
        try FileManager.default.createDirectory(atPath: "\(directory)/subdir", withIntermediateDirectories: true)
        var event = Self.event
        event.reminder.alert.command = ["/usr/bin/paplay", "bell.oga"]
        let runner = HookRunner(directory: directory, timeout: 10, loop: Self.loop, logger: CapturingLog().logger)
        #expect(runner.commands(for: .crossing(event)) == [["/usr/bin/paplay", "bell.oga"], ["\(directory)/a-hook"], ["\(directory)/b-hook"]])
        #expect(HookRunner(directory: "/nonexistent", timeout: 1, loop: Self.loop, logger: CapturingLog().logger).commands(for: .crossing(Self.event)).isEmpty)
    }

    /// Collects how each hook run ended, for a test to wait on: each outcome wakes the waiter.
    final class Outcomes: @unchecked Sendable {
        private let condition = NSCondition()
        private var list: [HookOutcome] = []

        func record(_ command: [String], _ outcome: HookOutcome) {
            condition.lock()
            list.append(outcome)
            condition.broadcast()
            condition.unlock()
        }

        var all: [HookOutcome] {
            condition.lock()
            defer { condition.unlock() }
            return list
        }

        /// Waits until `count` runs have ended (the deadline bounds a failure; it is no speed test).
        func wait(for count: Int, seconds: Double = Deadline.failure) -> [HookOutcome] {
            let end = Date().addingTimeInterval(seconds)
            condition.lock()
            defer { condition.unlock() }
            while list.count < count, condition.wait(until: end) {}
            return list
        }
    }

    /// Waits until process `pid` (not a child of ours) has ended; false when it still runs after
    /// `seconds` (a bound on a failure: the processes tested would run for a minute).
    static func ended(_ pid: pid_t, seconds: Double = 30) -> Bool {
        /// Ended: no longer in /proc, or a zombie there.
        func gone() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return true }
            return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
        }
        guard let descriptor = try? System.processDescriptor(pid) else { return true }  // gone already
        defer { System.close(descriptor) }
        return EventWait(folders: [], processes: [descriptor]).until(seconds: seconds, gone)
    }

    /// The process id a hook wrote to `path` (`echo $! > path` after starting a child).
    static func pid(in path: String) -> pid_t? {
        EventWait.forFile(path) { $0.hasSuffix("\n") }.flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    static func runner(timeout: Double, log: CapturingLog, outcomes: Outcomes, directory: String? = nil) -> HookRunner {
        HookRunner(directory: directory, timeout: timeout, loop: Self.loop, logger: log.logger) { outcomes.record($0, $1) }
    }

    /// Anyone could drop a program into a hooks folder that others can write: its hooks are not
    /// run, and the log says how to fix it; the reminder's own command still runs.
    @Test func aHooksFolderOthersCanWriteIsNotUsed() throws {
        let directory = try Self.hooks(["a-hook": "true"])
        chmod(directory, 0o777)
        var event = Self.event
        event.reminder.alert.command = ["/bin/true"]
        let log = CapturingLog()
        let runner = HookRunner(directory: directory, timeout: 10, loop: Self.loop, logger: log.logger)
        #expect(runner.commands(for: .crossing(event)) == [["/bin/true"]])
        #expect(log.messages == ["warning: hooks not run: the hooks folder \(directory) is writable by others: run chmod o-w \(directory)"])
        chmod(directory, 0o775)
        #expect(runner.commands(for: .crossing(event)) == [["/bin/true"], ["\(directory)/a-hook"]])
    }

    @Test func aFailingHookIsLoggedWithItsStatusAndStderr() throws {
        let log = CapturingLog()
        let outcomes = Outcomes()
        let runner = Self.runner(timeout: 10, log: log, outcomes: outcomes)
        runner.announce(.crossing(Self.event(running: ["/bin/sh", "-c", "echo 'no speaker' >&2; exit 3"])))
        #expect(outcomes.wait(for: 1) == [.failed(status: 3)])
        #expect(log.messages == ["warning: hook /bin/sh -c echo 'no speaker' >&2; exit 3 failed with exit status 3: no speaker"])
        runner.announce(.crossing(Self.event(running: ["/nonexistent/hook"])))
        #expect(outcomes.wait(for: 2).last == .notRun("cannot start /nonexistent/hook: No such file or directory"))
        #expect(log.messages.last == "warning: hook /nonexistent/hook not run: cannot start /nonexistent/hook: No such file or directory")
        runner.announce(.crossing(Self.event(running: ["/bin/true"])))
        #expect(outcomes.wait(for: 3).last == .succeeded)
        #expect(log.messages.last == "debug: hook /bin/true done")
        runner.announce(.crossing(Self.event(running: ["/bin/sh", "-c", "printf 'bad\\033[31m red\\n' >&2; exit 1"])))
        _ = outcomes.wait(for: 4)
        #expect(log.messages.last == "warning: hook /bin/sh -c printf 'bad\\033[31m red\\n' >&2; exit 1 failed with exit status 1: bad\\u{1B}[31m red",
                "a hook's stderr is logged with its control characters escaped")
    }

    @Test func aHookPastItsTimeoutIsKilledWithItsChildren() throws {
        let log = CapturingLog()
        let outcomes = Outcomes()
        let childPID = FileManager.default.temporaryDirectory.appendingPathComponent("hook-child-\(UUID().uuidString)").path
        let runner = Self.runner(timeout: 0.5, log: log, outcomes: outcomes)
        // The child would run for a minute; the hook writes its pid, then waits.
        let script = "sleep 60 & echo $! > \(childPID).tmp && mv \(childPID).tmp \(childPID); sleep 30"
        runner.announce(.crossing(Self.event(running: ["/bin/sh", "-c", script])))
        #expect(outcomes.wait(for: 1) == [.timedOut])
        #expect(log.messages == ["warning: hook /bin/sh -c \(script) still running after 0.5 s; stopped it"])
        if let child = Self.pid(in: childPID) {
            #expect(Self.ended(child), "the hook's own child was stopped too")
        }
    }

    /// The timeout counts from the start, whatever the hook does with its pipes: one that closes
    /// its stderr, one that never reads a large event on its stdin, one that ignores SIGTERM.
    @Test(arguments: [
        "exec 2>&-; sleep 30",
        "sleep 30",
        "trap '' TERM; exec 2>&-; sleep 30",
    ])
    func aHookThatHoldsOnIsStoppedAtItsTimeout(script: String) throws {
        let outcomes = Outcomes()
        let runner = Self.runner(timeout: 0.3, log: CapturingLog(), outcomes: outcomes)
        runner.announce(.crossing(Self.event(running: ["/bin/sh", "-c", script], notes: String(repeating: "x", count: 1 << 20))))
        #expect(outcomes.wait(for: 1) == [.timedOut])
    }

    @Test func aHookThatIgnoresStdinDoesNotHurt() throws {
        let outcomes = Outcomes()
        let runner = Self.runner(timeout: 10, log: CapturingLog(), outcomes: outcomes)
        runner.announce(.crossing(Self.event(running: ["/bin/true"], notes: String(repeating: "x", count: 200_000))))
        #expect(outcomes.wait(for: 1) == [.succeeded])
    }

    /// A hook that ends while a child it left behind still holds its pipes has ended: it is not
    /// reported as timed out.
    @Test func aHookIsDoneWhenItEndsEvenWithADetachedChildHoldingItsPipes() throws {
        let outcomes = Outcomes()
        let runner = Self.runner(timeout: 2, log: CapturingLog(), outcomes: outcomes)
        runner.announce(.crossing(Self.event(running: ["/bin/sh", "-c", "setsid sleep 5 & exit 0"])))
        #expect(outcomes.wait(for: 1) == [.succeeded])
    }

    @Test func hooksStillRunningAtShutdownAreStoppedAndReaped() async throws {
        await #expect(processExitsWith: .success) {
            let outcomes = Outcomes()
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hook-left-\(UUID().uuidString)").path
            let runner = Self.runner(timeout: 60, log: CapturingLog(), outcomes: outcomes)
            // Each hook says when it runs (the first with its child's pid), then waits.
            runner.announce(.crossing(Self.event(running: ["/bin/sh", "-c", "sleep 60 & echo $! > \(scratch).1.tmp && mv \(scratch).1.tmp \(scratch).1; sleep 30"])))
            runner.announce(.crossing(Self.event(running: ["/bin/sh", "-c", "trap '' TERM; echo $$ > \(scratch).2.tmp && mv \(scratch).2.tmp \(scratch).2; sleep 30"])))
            let child = try #require(Self.pid(in: "\(scratch).1"))
            #expect(Self.pid(in: "\(scratch).2") != nil)
            await runner.shutdown()
            #expect(outcomes.all == [.stoppedAtShutdown, .stoppedAtShutdown])
            #expect(Self.ended(child), "the hook's child was stopped with it")
            #expect(Self.zombies().isEmpty, "\(Self.zombies())")
        }
    }

    /// Our zombie children: processes whose parent is this one and that have ended unreaped.
    static func zombies() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { entry in
            guard Int(entry) != nil, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && fields[0] == "Z" && Int32(fields[1]) == getpid()
        }
    }

    /// Hundreds of events with hooks that hang: threads and descriptors stay bounded, the excess
    /// is dropped and logged, and every child is reaped.
    ///
    /// In a process of its own (an exit test), as are the other tests that count zombies: no
    /// other test starts threads, opens descriptors or leaves a child unreaped there while it
    /// counts. A thread per running hook (16) would pass the bound on threads.
    @Test func aBurstOfHangingHooksGrowsNeitherThreadsNorDescriptors() async throws {
        await #expect(processExitsWith: .success) {
            let log = CapturingLog()
            let outcomes = Outcomes()
            let started = FileManager.default.temporaryDirectory.appendingPathComponent("hook-started-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: started, withIntermediateDirectories: true)
            let directory = try Self.hooks(["hang": "touch \(started)/$GEOALARM_REMINDER; exec 2>&-; sleep 30"])
            let runner = Self.runner(timeout: 5, log: log, outcomes: outcomes, directory: directory)
            let threadsBefore = Self.count("/proc/self/task")
            let descriptorsBefore = Self.count("/proc/self/fd")
            for index in 0..<400 {
                var event = Self.event
                event.reminder.id = "r\(index)"
                runner.announce(.crossing(event))
            }
            // Once the excess is dropped and the first hooks all run:
            let dropped = 400 - HookRunner.maximumQueued - HookRunner.maximumRunning
            _ = outcomes.wait(for: dropped)
            #expect(EventWait(folders: [started]).until { Self.count(started) >= HookRunner.maximumRunning })
            #expect(Self.count("/proc/self/task") < threadsBefore + HookRunner.maximumRunning / 2, "threads: \(threadsBefore), then \(Self.count("/proc/self/task"))")
            #expect(Self.count("/proc/self/fd") <= descriptorsBefore + 3 * HookRunner.maximumRunning + 4,
                    "descriptors: \(descriptorsBefore), then \(Self.count("/proc/self/fd"))")
            #expect(outcomes.all.filter { if case .notRun = $0 { true } else { false } }.count == dropped)
            await runner.shutdown()
            #expect(outcomes.all.count == 400)
            #expect(Self.zombies().isEmpty, "\(Self.zombies())")
        }
    }

    static func count(_ folder: String) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).count
    }

    @Test func aBurstOfEventsRunsEveryHookAndReapsThemAll() async throws {
        await #expect(processExitsWith: .success) {
            let out = FileManager.default.temporaryDirectory.appendingPathComponent("burst-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            // One slow hook must not hold up the fast ones.
            let directory = try Self.hooks([
                "fast": "cat > \(out)/$GEOALARM_REMINDER.$$",
                "slow": "sleep 2",
            ])
            let outcomes = Outcomes()
            let runner = Self.runner(timeout: 10, log: CapturingLog(), outcomes: outcomes, directory: directory)
            for index in 0..<50 {
                var event = Self.event
                event.reminder.id = "r\(index)"
                runner.announce(.crossing(event))
            }
            #expect(outcomes.wait(for: 100).allSatisfy { $0 == .succeeded })
            let files = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
            #expect(files.count == 50)
            #expect(Set(files.map { $0.split(separator: ".")[0] }).count == 50)
            // Every child reaped: no process whose parent is us is left as a zombie.
            #expect(Self.zombies().isEmpty, "\(Self.zombies())")
        }
    }
}
