// The delay from gpsd's report being read (gps_read returning) to the event lines for that
// fix being written, through the real live path: GPSDSource's thread, the agent's loop, the
// engine and a line writer. gpsfake plays the demo walk into a private gpsd twice: once with
// no reminders (the baseline: plumbing only) and once with 100. Figures are per fix.
import Foundation
import GeoAlarmAgent
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmOutput
import GeoAlarmStore
import GeoAlarmSystem
import GeoAlarmTestSupport
import Logging
import Synchronization
import Workload

let walk = repository.appendingPathComponent("config/demo/walk.nmea").path

/// Plays the walk into a new gpsd and runs the agent on it; returns each fix's delay and the events written.
func measure(reminders: [Reminder]) async throws -> (delays: [Duration], events: Int) {
    let gpsd = try GPSFake()
    try gpsd.play(walk, pace: 0.002)

    let delays = Mutex<[Duration]>([])
    let sink = LineWriter(descriptor: open("/dev/null", O_WRONLY | O_CLOEXEC), flushEachLine: true)
    var logger = Logger(label: "bench")
    logger.logLevel = .error
    let config = Config(path: "benchmark", settings: EngineSettings(), places: [:], reminders: reminders)
    let counter = EventCounter()
    let loop = try EventLoop.startOnNewThread()
    defer { loop.stop() }
    let source = GPSDSource(endpoint: GPSDEndpoint(host: "127.0.0.1", port: gpsd.port), loop: loop)
    let channel = AgentChannel()
    let keeper = StateKeeper(path: nil, logger: logger)
    let taskLists = TaskListService(
        servers: ServerTaskLists(cache: keeper.taskListCache, loop: loop), lists: [], channel: channel, loop: loop, logger: logger)
    let agent = AlarmAgent(
        source: source, channel: channel, loop: loop, config: config, state: keeper,
        sinks: [EventLog(format: .text, writer: sink), counter], taskLists: taskLists, logger: logger,
        latency: { delay in delays.withLock { $0.append(delay) } })
    let feeding = Task { for await report in source.reports() { channel.continuation.yield(.source(report)) } }
    let running = Task { try await agent.run() }
    while gpsd.fake?.isRunning == true { try await Task.sleep(for: .milliseconds(50)) }
    source.stop()
    await feeding.value
    running.cancel()
    try? await running.value
    return (delays.withLock { $0 }, counter.count.withLock { $0 })
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

let baseline = try await measure(reminders: [])
let hundred = try await measure(reminders: try hundredReminders())
let base = baseline.delays.map { seconds($0) * 1e6 }.sorted()
let full = hundred.delays.map { seconds($0) * 1e6 }.sorted()
guard !base.isEmpty, !full.isEmpty else {
    FileHandle.standardError.write(Data("no fixes were measured: is gpsfake installed?\n".utf8))
    exit(1)
}
func row(_ name: String, _ values: [Double], _ events: Int) -> String {
    let cells = [0.5, 0.9, 0.99].map { String(format: "%8.1f", percentile(values, $0)) }
    return "| \(name) | \(values.count) | \(events) | " + cells.joined(separator: " | ")
        + String(format: " | %8.1f |", values.last!)
}
print("live path delay, gps_read returned -> event lines written, in microseconds per TPV report")
print("| run | reports | events | p50 | p90 | p99 | max |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
print(row("baseline: 0 reminders", base, baseline.events))
print(row("100 reminders", full, hundred.events))
print(String(format: "ratio 100 reminders / baseline: p50 %.2fx, p99 %.2fx; goal p99 < 5000 us: %@",
             percentile(full, 0.5) / percentile(base, 0.5), percentile(full, 0.99) / percentile(base, 0.99),
             percentile(full, 0.99) < 5000 ? "met" : "NOT met"))
