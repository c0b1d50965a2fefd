// geoalarm as a fleet tracker: `run --source owntracks` with 100 reminders, fed by 1, 1,000 and
// 10,000 devices publishing OwnTracks locations through a private mosquitto. For each fleet:
// a paced minute at one message per device every 10 s (the issue's load; one device sends one a
// second, for enough samples), then a burst as fast as the broker takes it.
// Measured: latency from a location's publish to its transition arriving on the device's event
// topic (p50/p99/max), the agent's CPU share while paced, messages per second end to end in the
// burst, and resident memory per device. The agent runs alone on CPU 1 (`taskset`); the broker
// and this program share CPU 0 when started under `taskset -c 0` (as `make bench` does).
// Every transition expected (from the same fixes run through the pipeline in-process) must
// arrive, or the run fails.
// Each device stays `dwell` messages (10 by default) on each side of its reminder, so that one
// message in ten or so brings a transition; `--dwell 2` makes every other one do so.
// Usage: MQTTScale GEOALARM [--seconds S] [--devices 1,1000,10000] [--dwell D]
import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmMQTT
import GeoAlarmPipeline
import GeoAlarmStore
import GeoAlarmSystem
import GeoAlarmTestSupport
import Logging
import Synchronization
import Workload

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: MQTTScale GEOALARM [--seconds S] [--devices 1,1000,10000] [--dwell D]\n".utf8))
    exit(2)
}
let geoalarm = arguments[1]
let pacedSeconds = arguments.firstIndex(of: "--seconds").flatMap { Double(arguments[$0 + 1]) } ?? 60
let fleets = arguments.firstIndex(of: "--devices").map { arguments[$0 + 1].split(separator: ",").compactMap { Int($0) } }
    ?? [1, 1_000, 10_000]
let dwell = max(2, arguments.firstIndex(of: "--dwell").flatMap { Int(arguments[$0 + 1]) } ?? 10)

/// Nanoseconds on the monotonic clock.
@Sendable func now() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Sleeps until `deadline` (monotonic nanoseconds).
func sleep(until deadline: UInt64) {
    let current = now()
    guard deadline > current else { return }
    let wait = deadline - current
    var spec = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
    var left = timespec()
    while nanosleep(&spec, &left) == -1 && errno == EINTR { spec = left }
}

let reminders = try hundredReminders()
/// Far north of every reminder (they lie within 38.703-38.717 N).
let away = Coordinate(latitude: 38.74, longitude: -9.136)
/// Location times: message k of a device is `firstTime + 10 k` seconds; well in the past, so
/// that even the longest burst stays short of the clock.
let firstTime = Int(Date().timeIntervalSince1970) - 10 * 86_400

/// Where message `k` of a device of class `kind` (its number modulo 100) puts it: away twice (its
/// first side), in the centre of reminder `kind` twice (its first arrival: the reminders need 2
/// confirmations), then out and in, `dwell` messages each, starting `kind` messages into that
/// round, so that the devices' transitions are spread over time.
func position(_ k: Int, kind: Int) -> Coordinate {
    let inside = k < 4 ? k >= 2 : (k - 4 + dwell + kind) / dwell % 2 == 0
    return inside ? reminders[kind].center : away
}

/// How many transitions each message announces, per class of device, from the same fixes run
/// through the pipeline in-process. After the first arrival and one round the pattern repeats
/// every `2 dwell` messages; the run stops if it does not.
struct Expectation {
    let settled = 4 + 2 * dwell
    let period = 2 * dwell
    private var counts: [[Int]] = []

    init(config: Config) {
        for kind in reminders.indices {
            let pipeline = FixPipeline(
                watching: config.reminderSet, state: StateKeeper(path: nil, logger: Logger(label: "reference")), sinks: [],
                timeZone: FixedOffset.utc)
            let announced = (0..<(settled + 3 * period)).map { k in
                let fix = Fix(
                    time: Date(timeIntervalSince1970: Double(firstTime + 10 * k)),
                    coordinate: position(k, kind: kind), horizontalError: 5)
                return pipeline.process(fix, receivedAt: Date(), undatedUsable: false).announced.count
            }
            let rounds = stride(from: settled, to: announced.count, by: period).map { Array(announced[$0..<$0 + period]) }
            guard Set(rounds).count == 1, rounds[0].reduce(0, +) > 0, announced[3] > 0 else {
                fail("class \(kind): no arrival at the 4th message, or no repeat every \(period): \(announced)")
            }
            counts.append(announced)
        }
    }

    /// Transitions announced by message `k` of a device of class `kind`.
    func transitions(_ k: Int, kind: Int) -> Int {
        let row = counts[kind]
        return k < settled ? row[k] : row[settled + (k - settled) % period]
    }
}

/// What the listener heard: each transition's delay after its location was published.
struct Heard {
    /// Publish instants per device, by message number.
    var published: [[UInt64]] = []
    var transitions = 0
    var delays: [Double] = []
    var unmatched = 0
    var lastArrival: UInt64 = 0
}

let mosquitto = try Mosquitto(options: [
    // The burst outruns the agent on purpose: the broker holds the backlog instead of dropping
    // QoS 1 messages past its default queue of 1,000 per client.
    "max_queued_messages 0"
])
let broker = MQTTSettings(host: "127.0.0.1", port: mosquitto.port)
/// The agent under test, while one runs.
let runningAgent = Mutex<Background?>(nil)

/// Stops the agent and the broker (neither ends with this process) and exits with `message`.
func fail(_ message: String) -> Never {
    runningAgent.withLock { $0?.stop() }
    mosquitto.stop()
    FileHandle.standardError.write(Data("MQTTScale: \(message)\n".utf8))
    exit(1)
}
let heard = Mutex(Heard())
let ready = DispatchSemaphore(value: 0)

/// The loop the benchmark's own MQTT clients run on (the agent runs its own).
let loop = try EventLoop.startOnNewThread()
let listener = MQTTClient(
    settings: broker, clientID: "bench-listener", subscriptions: ["owntracks/bench/+/event"], loop: loop
) { event in
    switch event {
    case .connected: ready.signal()
    case .received(let messages):
        let arrival = now()
        for message in messages {
            let device = message.topic.split(separator: "/")[2].dropFirst()
            guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
                  let tst = object["tst"] as? Int, let index = Int(device) else { continue }
            let k = (tst - firstTime) / 10
            heard.withLock { heard in
                heard.transitions += 1
                heard.lastArrival = arrival
                guard index < heard.published.count, k < heard.published[index].count else { return heard.unmatched += 1 }
                heard.delays.append(Double(arrival - heard.published[index][k]) / 1e6)
            }
        }
    default: break
    }
}
let publisher = MQTTClient(settings: broker, clientID: "bench-devices", loop: loop) { event in
    if case .connected = event { ready.signal() }
}

/// Publishes through the devices' client, on its loop; whether it was sent.
func publishOnLoop(_ message: MQTTMessage) -> Bool {
    let sent = Mutex<Bool?>(nil)
    let done = DispatchSemaphore(value: 0)
    loop.execute {
        let result = publisher.publish(message)
        sent.withLock { $0 = if case .sent = result { true } else { false } }
        done.signal()
    }
    done.wait()
    return sent.withLock { $0 ?? false }
}
listener.start()
publisher.start()
for client in [listener, publisher] where ready.wait(timeout: .now() + 30) == .timedOut {
    fail("\(client.clientID) could not connect to the broker at \(broker.url)")
}

let configPath = try writeWorkFile("mqtt-scale.toml", configText(reminders) + """

    [mqtt]
    url = "\(broker.url)"
    client_id = "bench-agent"
    owntracks_topic = "bench/agent"
    subscribe = "owntracks/bench/+"
    # The largest fleet and its marker device: past the default of 10,000 devices.
    max_devices = 20000

    """)
let config = try ConfigLoader.load(path: configPath)
let expectation = Expectation(config: config)

/// One fleet's run against a fresh agent and state file.
struct FleetRun {
    let devices: Int
    let agent: Background
    private(set) var next: [Int]
    private(set) var expected = 0

    init(devices: Int) throws {
        self.devices = devices
        // One more device than measured: the marker, see `drain()`.
        next = Array(repeating: 0, count: devices + 1)
        heard.withLock { $0 = Heard(published: Array(repeating: [], count: devices + 1)) }
        let state = "\(workDirectory)/mqtt-scale-\(devices).sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state + suffix) }
        agent = try Background(
            ["-c", "1", geoalarm, "run", "--source", "owntracks", "--headless", "--config", configPath, "--state", state],
            executable: URL(fileURLWithPath: "/usr/bin/taskset"))
        runningAgent.withLock { $0 = agent }
        guard agent.waitUntil(seconds: 30, { $0.stderr.contains("connected to owntracks") }) else {
            fail("the agent did not connect: \(agent.stderr)")
        }
        // Connected means subscribed a moment before: let the broker take the subscription.
        Thread.sleep(forTimeInterval: 0.5)
    }

    /// Publishes the next location of `device`.
    mutating func publishNext(_ device: Int) {
        let k = next[device]
        next[device] += 1
        let kind = device % reminders.count
        let point = position(k, kind: kind)
        let payload = """
            {"_type":"location","tid":"bn","lat":\(point.latitude),"lon":\(point.longitude),"acc":5,"tst":\(firstTime + 10 * k)}
            """
        expected += expectation.transitions(k, kind: kind)
        heard.withLock { $0.published[device].append(now()) }
        guard publishOnLoop(MQTTMessage(topic: "owntracks/bench/d\(device)", text: payload)) else {
            fail("the broker connection was lost")
        }
    }

    /// Publishes locations of the marker device (numbered `devices`) until one brings a
    /// transition, then waits for every transition expected so far; as the agent takes messages
    /// in the order the broker got them, the marker's transition comes once all before it are
    /// handled. When it came (monotonic nanoseconds), or nil after `seconds`.
    mutating func drain(seconds: Double) -> UInt64? {
        var transitions = 0
        while transitions == 0 {
            transitions = expectation.transitions(next[devices], kind: devices % reminders.count)
            publishNext(devices)
        }
        return awaitTransitions(seconds: seconds) ? heard.withLock { $0.lastArrival } : nil
    }

    /// Waits until every transition expected so far has arrived; false after `seconds`.
    func awaitTransitions(seconds: Double) -> Bool {
        let end = now() + UInt64(seconds * 1e9)
        while now() < end {
            if heard.withLock({ $0.transitions }) >= expected { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// The agent's CPU seconds so far (user and system, all threads).
    var cpuSeconds: Double {
        let stat = procFile("/proc/\(agent.pid)/stat")
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }


    /// Stops the agent and returns its last words.
    func stop() -> String {
        agent.signal(SIGTERM)
        _ = agent.exitStatus(within: 60)
        agent.stop()
        return agent.stderr.split(separator: "\n").suffix(3).joined(separator: "\n")
    }
}

struct Row {
    var devices = 0
    var pacedRate = 0.0
    var pacedMessages = 0
    var pacedTransitions = 0
    var p50 = 0.0, p99 = 0.0, maxDelay = 0.0
    var cpuShare = 0.0
    var burstMessages = 0
    var burstRate = 0.0
    var resident = 0.0, privately = 0.0
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}

/// Fails a `phase` of the run of `devices` whose transitions did not all arrive, with the
/// agent's warnings (its log without the info lines, the last 20).
func missingTransitions(_ phase: String, _ devices: Int, _ run: FleetRun) -> Never {
    let warnings = run.agent.stderr.split(separator: "\n").filter { !$0.contains(": info: ") }.suffix(20)
    fail("""
        \(phase), \(devices) devices: \(run.expected) transitions expected, \(heard.withLock { $0.transitions }) arrived; \
        the agent's warnings:
        \(warnings.joined(separator: "\n"))
        """)
}

var rows: [Row] = []
for devices in fleets {
    var run = try FleetRun(devices: devices)
    var row = Row(devices: devices)
    // Each device's first side (two messages away) and first arrival, as fast as the broker takes them.
    for _ in 0..<4 { for device in 0..<devices { run.publishNext(device) } }
    guard run.drain(seconds: 120) != nil else { missingTransitions("first arrivals", devices, run) }

    // Paced: every device once per 10 s, in turn, spread evenly.
    row.pacedRate = max(Double(devices) / 10, 1)
    row.pacedMessages = Int(row.pacedRate * pacedSeconds)
    let heardBefore = heard.withLock { heard in
        defer { heard.delays = [] }
        return heard.transitions
    }
    let cpuBefore = run.cpuSeconds
    let start = now()
    for message in 0..<row.pacedMessages {
        sleep(until: start + UInt64(Double(message) / row.pacedRate * 1e9))
        run.publishNext(message % devices)
    }
    guard run.awaitTransitions(seconds: 120) else { missingTransitions("paced", devices, run) }
    // Over the whole time it took, a backlog included.
    row.cpuShare = (run.cpuSeconds - cpuBefore) / (Double(now() - start) / 1e9)
    let paced = heard.withLock { heard in (heard.delays.sorted(), heard.transitions - heardBefore, heard.unmatched) }
    guard paced.2 == 0 else { fail("\(paced.2) transitions matched no published location") }
    row.pacedTransitions = paced.1
    row.p50 = percentile(paced.0, 0.5)
    row.p99 = percentile(paced.0, 0.99)
    row.maxDelay = paced.0.last ?? .nan
    (row.resident, row.privately) = residentAndPrivateMemory(of: run.agent.pid)

    // Burst: four rounds of every device (at least 40,000 messages) as fast as they go out.
    row.burstMessages = max(4 * devices, 40_000)
    let burstStart = now()
    for message in 0..<row.burstMessages { run.publishNext(message % devices) }
    guard let burstEnd = run.drain(seconds: 600) else { missingTransitions("burst", devices, run) }
    row.burstRate = Double(row.burstMessages) / (Double(burstEnd - burstStart) / 1e9)
    let extra = heard.withLock { $0.transitions } - run.expected
    guard extra == 0 else { fail("\(extra) transitions more than expected") }
    let lastWords = run.stop()
    print("\(devices) devices: \(run.expected) transitions, all arrived; the agent's stop line:\n\(lastWords)\n")
    rows.append(row)
}
listener.stop(then: { _ in })
publisher.stop(then: { _ in })
mosquitto.stop()

func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

print("""
    | devices | paced msg/s | paced msgs | transitions | p50 ms | p99 ms | max ms | agent CPU share | burst msgs | burst msg/s | RSS MB | private MB |
    | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
    """)
for row in rows {
    print("""
        | \(row.devices) | \(format(row.pacedRate)) | \(row.pacedMessages) | \(row.pacedTransitions) | \(format(row.p50, 2)) \
        | \(format(row.p99, 2)) | \(format(row.maxDelay, 2)) | \(format(row.cpuShare * 100))% | \(row.burstMessages) \
        | \(format(row.burstRate, 0)) | \(format(row.resident)) | \(format(row.privately)) |
        """)
}
let single = rows[0]
for row in rows.dropFirst() {
    let perDevice = (row.resident - single.resident) * 1024 / Double(row.devices - single.devices)
    print("""
        \(row.devices) devices against 1: \(format(perDevice, 2)) kB resident per device; \
        p99 \(format(row.p99 / single.p99, 2))x; CPU share \(format(row.cpuShare / max(single.cpuShare, 1e-9), 1))x
        """)
}
if let largest = rows.last {
    print("""
        goal, 10,000 devices at 1 message per 10 s: p99 under 50 ms: \(largest.p99 < 50 ? "met" : "NOT met") \
        (\(format(largest.p99, 2)) ms); on one core: \(largest.cpuShare < 1 ? "met" : "NOT met") \
        (\(format(largest.cpuShare * 100))% of CPU 1)
        """)
}
