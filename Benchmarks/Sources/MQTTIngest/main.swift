// How fast a burst of OwnTracks locations is taken in: 10,000 messages published at once, at
// QoS 1, from 100 devices (100 each) and from 10,000 devices (one each), to a mosquitto with its
// default settings (1,000 messages queued a client, 20 in flight), read by `geoalarm run --source
// owntracks` (a release build) and, in the same run on the same broker, by the OwnTracks Recorder
// (C, built from owntracks/recorder: give its binary as RECORDER=...; it is in no Debian package).
// Each subscriber runs alone on core 1 (taskset), the broker and the publisher on core 0. The
// rate is the messages taken over the time from the first publish to the subscriber having
// taken a sentinel device's fixes published after the burst (the broker keeps one publisher's
// order); the loss is the messages not taken (the agent's count of fixes, the Recorder's lines).
// Goals: at least the Recorder's rate, and no message lost.
// Usage: MQTTIngest GEOALARM [RECORDER]
import Foundation
import GeoAlarmMQTT
import GeoAlarmSystem
import GeoAlarmTestSupport
import Synchronization
import Workload

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: MQTTIngest GEOALARM [RECORDER]\n".utf8))
    exit(2)
}
let geoalarm = arguments[1]
let recorder = arguments.count > 2 && !arguments[2].isEmpty ? arguments[2] : nil
let total = 10_000
let start = 1_763_900_000

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("MQTTIngest: \(message)\n".utf8))
    exit(1)
}

/// A location `metres` north of 47°N 8°E.
func location(north metres: Double, at time: Int) -> String {
    #"{"_type":"location","lat":\#(47.0 + metres / 111_195),"lon":8.0,"tst":\#(time),"acc":10,"tid":"xx"}"#
}

/// The sentinel's fixes, at a walker's pace: twice outside the spot only it visits (its side
/// confirmed), then twice inside (an arrival).
let sentinel = "owntracks/zz/sentinel"
let sentinelFixes = [
    location(north: -41_000, at: start), location(north: -40_900, at: start + 60),
    location(north: -40_000, at: start + 600), location(north: -40_000, at: start + 610),
]

// Subscriptions logged too, so that a run starts once its subscriber has subscribed.
let mosquitto = try Mosquitto(options: ["log_type error", "log_type warning", "log_type notice", "log_type information", "log_type subscribe"])
let broker = MQTTSettings(host: "127.0.0.1", port: mosquitto.port, clientID: "ingest-bench")
let loop = try EventLoop.startOnNewThread()
let connected = DispatchSemaphore(value: 0)
let acknowledged = Mutex(0)
let publisher = MQTTClient(settings: broker, clientID: "ingest-publisher", loop: loop) { event in
    switch event {
    case .connected: connected.signal()
    case .acknowledged: acknowledged.withLock { $0 += 1 }
    default: break
    }
}
publisher.start()
guard connected.wait(timeout: .now() + 30) == .success else { fail("the publisher could not connect") }

/// Publishes `messages` as fast as the client takes them, on its loop; when the first went.
func publish(_ messages: [(String, String)]) -> ContinuousClock.Instant {
    let first = Mutex<ContinuousClock.Instant?>(nil)
    let done = DispatchSemaphore(value: 0)
    loop.execute {
        first.withLock { $0 = .now }
        for (topic, text) in messages { publisher.publish(MQTTMessage(topic: topic, text: text)) }
        done.signal()
    }
    done.wait()
    return first.withLock { $0! }
}

/// The burst for `devices` devices, `total` messages in all, each device walking south.
func burst(devices: Int) -> [(String, String)] {
    let each = total / devices
    return (0..<each).flatMap { step in
        (0..<devices).map { device in ("owntracks/bench/d\(device)", location(north: 5000 - Double(step) * 10, at: start + step)) }
    }
}

struct Result {
    var rate: Double
    var taken: Int
}

/// The agent's config for a run: a client id of its own, so that no run's persistent session
/// holds messages published while another ran.
func config(devices: Int) throws -> String {
    try writeWorkFile("ingest-\(devices).toml", """
        [[reminder]]
        id = "spot"
        title = "Only the sentinel comes here"
        lat = \(47.0 - 40_000 / 111_195.0)
        lon = 8.0
        radius = 100

        [mqtt]
        url = "\(broker.url)"
        client_id = "ingest-agent-\(devices)"
        max_devices = 20000

        """)
}

/// The time of the newest write to a file under `folder`.
func newestWrite(under folder: String) -> Date {
    let files = (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []
    return files.compactMap { try? FileManager.default.attributesOfItem(atPath: "\(folder)/\($0)")[.modificationDate] as? Date }.max()
        ?? .distantPast
}

/// How long a subscriber that lost the sentinel (the broker dropped it with the burst) is given
/// to take it all the same: then its rate is what it took over the time to its last write.
let sentinelBound: Double = 120

func geoalarmRun(devices: Int) throws -> Result {
    let folder = "\(workDirectory)/ingest-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let agent = try Background(
        ["-c", "1", geoalarm, "run", "--headless", "--source", "owntracks", "-c", try config(devices: devices), "--state", "\(folder)/state.sqlite"],
        executable: URL(fileURLWithPath: "/usr/bin/taskset"))
    // This run's agent's subscription: the broker's log holds the earlier runs' too.
    guard mosquitto.waitUntilSubscribed("ingest-agent-\(devices)-source", to: "owntracks/+/+") else { fail("the agent did not subscribe: \(agent.stderr)") }
    let first = publish(burst(devices: devices) + sentinelFixes.map { (sentinel, $0) })
    let firstDate = Date()
    let tookSentinel = agent.waitUntil(seconds: sentinelBound) { $0.stdout.contains("arrive  spot") }
    let elapsed = tookSentinel ? seconds(ContinuousClock.now - first) : newestWrite(under: folder).timeIntervalSince(firstDate)
    agent.signal(SIGTERM)
    _ = agent.exitStatus()
    let summary = agent.stderr.components(separatedBy: "devices tracked: ").last ?? ""
    let fixes = Int(summary.prefix { $0.isNumber }) ?? 0
    return Result(rate: Double(fixes) / elapsed, taken: fixes - (tookSentinel ? sentinelFixes.count : 0))
}

func recorderRun(_ recorder: String, devices: Int) throws -> Result {
    let store = "\(workDirectory)/recorder-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
    _ = try Command.run(["--initialize", "--storage", store], executable: recorder)
    // The sentinel's folder made beforehand (the Recorder makes it when missing), to be watched.
    let sentinelFolder = "\(store)/rec/zz/sentinel"
    try FileManager.default.createDirectory(atPath: sentinelFolder, withIntermediateDirectories: true)
    let running = try Background(
        ["-c", "1", recorder, "--storage", store, "--norevgeo", "--quiet", "--host", "127.0.0.1", "--port", String(mosquitto.port),
         "--clientid", "ingest-recorder-\(devices)", "owntracks/#"],
        executable: URL(fileURLWithPath: "/usr/bin/taskset"))
    guard mosquitto.waitUntilSubscribed("ingest-recorder-\(devices)", to: "owntracks/#") else { fail("the Recorder did not subscribe: \(mosquitto.log)") }
    let first = publish(burst(devices: devices) + sentinelFixes.map { (sentinel, $0) })
    let firstDate = Date()
    func lines(in folder: String) -> Int {
        let files = (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []
        return files.filter { $0.hasSuffix(".rec") }.reduce(0) { count, file in
            count + ((try? String(contentsOfFile: "\(folder)/\(file)", encoding: .utf8))?.split(separator: "\n").count ?? 0)
        }
    }
    let tookSentinel = EventWait(folders: [sentinelFolder], processes: []).until(seconds: sentinelBound) {
        lines(in: sentinelFolder) >= sentinelFixes.count
    }
    let elapsed = tookSentinel ? seconds(ContinuousClock.now - first) : newestWrite(under: "\(store)/rec").timeIntervalSince(firstDate)
    running.signal(SIGTERM)
    _ = running.exitStatus()
    let taken = lines(in: "\(store)/rec/bench")
    return Result(rate: Double(taken + (tookSentinel ? sentinelFixes.count : 0)) / elapsed, taken: taken)
}

print("a burst of \(total) OwnTracks locations at QoS 1 through mosquitto (default settings), taken on one core")
print("| devices | geoalarm msg/s | geoalarm lost | Recorder msg/s | Recorder lost | geoalarm / Recorder |")
print("| ---: | ---: | ---: | ---: | ---: | ---: |")
for devices in [100, 10_000] {
    let ours = try geoalarmRun(devices: devices)
    let theirs = try recorder.map { try recorderRun($0, devices: devices) }
    let recorderText = theirs.map { String(format: "%.0f | %d", $0.rate, total - $0.taken) } ?? "not run (give RECORDER) | -"
    let ratio = theirs.map { String(format: "%.2f", ours.rate / $0.rate) } ?? "-"
    print(String(format: "| %d | %.0f | %d | %@ | %@ |", devices, ours.rate, total - ours.taken, recorderText, ratio))
    print("goal for \(devices) devices, no message lost: \(ours.taken == total ? "met" : "NOT met")"
          + (theirs.map { ", at least the Recorder's rate: \(ours.rate >= $0.rate ? "met" : "NOT met")" } ?? ""))
}
mosquitto.stop()
