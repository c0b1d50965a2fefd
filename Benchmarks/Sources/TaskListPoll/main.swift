// What a task list on a CalDAV server costs: requests and bytes of one look at a list of 1,000
// tasks (Radicale on loopback, the tasks in iOS's form), the first time, while nothing changed,
// and after one task changed; against vdirsyncer syncing the same collection (the tool a vdir of
// tasks is kept with), both through the same byte-counting relay (Benchmarks/peers/dav_traffic.py).
// Then the agent's wake-ups while idle (gpsd up, no receiver) with the list configured (a look
// every minute, the default), against the same agent without it.
// Goals: an unchanged list is one small request per look; looking adds no wake-up between looks.
import Foundation
import GeoAlarmTestSupport
import Workload

let helper = repository.appendingPathComponent("Benchmarks/peers/dav_traffic.py").path
let python = URL(fileURLWithPath: "/usr/bin/python3")
let taskCount = 1000
let rounds = 5

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("TaskListPoll: \(message)\n".utf8))
    exit(1)
}

func run(_ arguments: [String], executable: String, stdin: String? = nil) throws {
    let ran = try Command.run(arguments, stdin: stdin, executable: executable)
    guard ran.status == 0 else { fail("\(executable) \(arguments.joined(separator: " ")): \(ran.stdout) \(ran.stderr)") }
}

let server = try Radicale()
try run([helper, "fill", server.tasksURL, String(taskCount)], executable: python.path)
let relay = try Background([helper, "proxy", String(server.port)], executable: python)
guard relay.waitUntil({ $0.stdout.hasPrefix("listening ") }), let relayPort = Int(relay.stdoutLines.first?.dropFirst(10) ?? "") else {
    fail("the relay did not start: \(relay.stderr)")
}
let relayedURL = "http://127.0.0.1:\(relayPort)/\(server.user)/tasks/"

/// Bytes through the relay so far, up and down.
func relayed() -> (up: Int, down: Int) {
    let before = relay.stdoutLines.count
    kill(relay.pid, SIGUSR1)
    guard relay.waitUntil({ $0.stdoutLines.count > before }), let line = relay.stdoutLines.last else { fail("the relay said nothing") }
    let fields = line.split(separator: " ")
    return (Int(fields[1]) ?? 0, Int(fields[2]) ?? 0)
}

/// Requests Radicale logged from a client whose user agent starts so.
func requests(by agent: String) -> Int {
    server.log.components(separatedBy: "\n").filter { $0.contains(" request for ") && $0.contains("using '\(agent)") }.count
}

/// What `look` cost: requests, and bytes up and down.
struct Cost {
    var requests: Double, up: Double, down: Double
    var line: String { String(format: "%.1f requests, %.0f bytes sent, %.0f bytes received", requests, up, down) }
}

func measure(_ agent: String, times: Int = 1, _ look: () throws -> Void) throws -> Cost {
    let (up, down) = relayed()
    let asked = requests(by: agent)
    for _ in 0..<times { try look() }
    let (upAfter, downAfter) = relayed()
    let count = Double(times)
    return Cost(requests: Double(requests(by: agent) - asked) / count, up: Double(upAfter - up) / count, down: Double(downAfter - down) / count)
}

// geoalarm: `geoalarm list` looks once, as every command does (the agent's look is the same one).
let passwordFile = try writeWorkFile("tasklist-password", "x\n")
chmod(passwordFile, 0o600)
let config = try writeWorkFile("tasklist-server.toml", """
    [[tasklist]]
    name = "Errands"
    url = "\(relayedURL)"
    username = "\(server.user)"
    password_file = "\(passwordFile)"

    """)
let state = "\(workDirectory)/tasklist-poll-\(UUID().uuidString).sqlite"
let oursFirst = try measure("geoalarm") { try run(["list", "-c", config, "--state", state], executable: releaseBinary.path) }
let oursUnchanged = try measure("geoalarm", times: rounds) { try run(["list", "-c", config, "--state", state], executable: releaseBinary.path) }
try run([helper, "touch", server.tasksURL, "7"], executable: python.path)
let oursChanged = try measure("geoalarm") { try run(["list", "-c", config, "--state", state], executable: releaseBinary.path) }

// vdirsyncer on the same collection, into a vdir.
let vdir = "\(workDirectory)/tasklist-vdir-\(UUID().uuidString)"
let vdirsyncerConfig = try writeWorkFile(
    "vdirsyncer-poll.conf", Radicale.vdirsyncerConfig(status: "\(vdir)-status", vdir: vdir, url: relayedURL, user: server.user))
try FileManager.default.createDirectory(atPath: vdir, withIntermediateDirectories: true)
let vdirsyncer = "/usr/bin/vdirsyncer"
// Its first step, not counted: finding the collection.
try run(["-c", vdirsyncerConfig, "discover"], executable: vdirsyncer, stdin: "y\n")
let theirsFirst = try measure("vdirsyncer") { try run(["-c", vdirsyncerConfig, "sync"], executable: vdirsyncer) }
let theirsUnchanged = try measure("vdirsyncer", times: rounds) { try run(["-c", vdirsyncerConfig, "sync"], executable: vdirsyncer) }
try run([helper, "touch", server.tasksURL, "8"], executable: python.path)
let theirsChanged = try measure("vdirsyncer") { try run(["-c", vdirsyncerConfig, "sync"], executable: vdirsyncer) }

print("a look at a task list of \(taskCount) tasks on Radicale (loopback, through a byte-counting relay): geoalarm against vdirsyncer")
print("| look | geoalarm | vdirsyncer | ratio of bytes |")
print("| --- | --- | --- | --- |")
for (name, ours, theirs) in [("first", oursFirst, theirsFirst), ("unchanged", oursUnchanged, theirsUnchanged), ("one task changed", oursChanged, theirsChanged)] {
    print(String(format: "| %@ | %@ | %@ | %.3f |", name, ours.line, theirs.line, (ours.up + ours.down) / (theirs.up + theirs.down)))
}
let small = oursUnchanged.requests == 1 && oursUnchanged.down < 2048
print(String(format: "goal, an unchanged list is one small request per look: %@ (%.1f requests, %.0f bytes received)",
             small ? "met" : "NOT met", oursUnchanged.requests, oursUnchanged.down))

// Idle wake-ups: gpsd up with no receiver, the agent with the list (a look every 60 s) and without.
let idlePort = try GPSFake().port
let control = FileManager.default.temporaryDirectory.appendingPathComponent("gpsd-\(UUID().uuidString).sock").path
let gpsd = try Background(["-N", "-S", String(idlePort), "-F", control], executable: URL(fileURLWithPath: "/usr/sbin/gpsd"))
Thread.sleep(forTimeInterval: 1)
let without = try writeWorkFile("tasklist-none-idle.toml", "[[reminder]]\ntitle = \"One\"\nlocation = \"38.7,-9.1\"\n")
let agents = try [config, without].map { file in
    try Measured(releaseBinary, [
        "run", "--headless", "-c", file, "--state", "\(workDirectory)/idle-\(UUID().uuidString).sqlite", "--gpsd", "localhost:\(idlePort)",
    ])
}
let settle = 5.0, window = 180.0
Thread.sleep(forTimeInterval: settle + window + 0.7)
for agent in agents { agent.stop() }
// A global is never deinitialised: Radicale would outlive the benchmark.
server.stop()
gpsd.signal(SIGTERM)
_ = gpsd.exitStatus(within: 5)
gpsd.stop()
let (withList, withListCPU) = agents[0].counts(from: settle, to: settle + window)
let (withoutList, withoutListCPU) = agents[1].counts(from: settle, to: settle + window)
let minutes = window / 60
print(String(format: "idle (gpsd up, no receiver), %.0f s: with the list %.1f wake-ups per minute (%.3f CPU s per hour), without %.1f (%.3f); "
             + "each look costs %.1f wake-ups", window, withList / minutes, withListCPU * 3600 / window, withoutList / minutes,
             withoutListCPU * 3600 / window, (withList - withoutList) / minutes))
