// Replay throughput in fixes per second, parse and engine, for a large NMEA file and a large
// gpsd JSON file (the same million-second walk) with the hundred reminders around it. The
// baseline of the same run is parsing alone; the ratio says what the engine adds. gpsd's own
// decoder (libgps, as the live agent uses it) on the same JSON lines is the peer of the parse.
import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmPipeline
import GeoAlarmReplay
import GeoAlarmStore
import Logging
import Workload

let fixCount = 1_000_000
let fixes = walk(fixCount)
let reminders = try hundredReminders()
let files = [
    ("NMEA 0183", try writeWorkFile("walk-1m.nmea", nmeaText(fixes))),
    ("gpsd JSON", try writeWorkFile("walk-1m.json", gpsdJSONText(fixes))),
]
try writeWorkFile("reminders-100.toml", configText(reminders))
// Shorter copies for the Python peers (Benchmarks/peers), which would take minutes on a million.
try writeWorkFile("walk-100k.nmea", nmeaText(Array(fixes.prefix(100_000))))
try writeWorkFile("walk-100k.json", gpsdJSONText(Array(fixes.prefix(100_000))))

/// Reads the file as `replay` does (a ``TrackSource``) and (unless `parseOnly`) runs every fix
/// through `replay`'s pipeline, state in memory; returns the seconds taken, the dated fixes (the
/// NMEA reader also gives the first epoch's GGA, before any RMC has said the date, undated; the
/// pipeline holds that one back) and the events announced.
func replay(_ path: String, parseOnly: Bool) async -> (seconds: Double, fixes: Int, events: Int) {
    let start = ContinuousClock.now
    let counter = EventCounter()
    let config = Config(path: "benchmark", settings: EngineSettings(), places: [:], reminders: reminders)
    let pipeline = FixPipeline(
        watching: config.reminderSet, state: StateKeeper(path: nil, logger: Logger(label: "bench")), sinks: [counter],
        timeZone: FixedOffset.utc)
    let source = TrackSource(path: path)
    var count = 0
    if parseOnly {
        for await report in source.reports() {
            if case .fixes(let fixes, _) = report { count += fixes.count { $0.time != nil } }
        }
    } else {
        // As `replay` drives it, the product's rule for undated fixes included.
        var tally = FixTally()
        await pipeline.drive(source, counting: &tally) { _ in }
        count = tally.fixes - tally.rejections(.noDate)
    }
    let elapsed = ContinuousClock.now - start
    return (seconds(elapsed), count, counter.count.withLock { $0 })
}

print("replay throughput, \(fixCount) fixes, 100 reminders; fixes per second, median of 3 runs (low-high)")
print("| file | size | parse only (baseline) | parse + engine | engine share of time | events |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
/// Each file's parse-only rate, as the table gives it: the JSON one is set against libgps below.
var parseOnly: [String: (median: Double, low: Double, high: Double)] = [:]
for (name, path) in files {
    var parse: [Double] = [], full: [Double] = [], events = 0
    for _ in 0..<3 {
        let alone = await replay(path, parseOnly: true)
        let both = await replay(path, parseOnly: false)
        guard alone.fixes == fixCount, both.fixes == fixCount else {
            FileHandle.standardError.write(Data("\(path): decoded \(both.fixes) fixes, expected \(fixCount)\n".utf8))
            exit(1)
        }
        parse.append(Double(fixCount) / alone.seconds)
        full.append(Double(fixCount) / both.seconds)
        events = both.events
    }
    let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    let (p, pLow, pHigh) = spread(parse)
    parseOnly[path] = (p, pLow, pHigh)
    let (f, fLow, fHigh) = spread(full)
    print(String(
        format: "| %@ | %d MB | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %.0f%% | %d |", name, size / 1_000_000,
        p, pLow, pHigh, f, fLow, fHigh, (1 - f / p) * 100, events))
}

/// Fixes per second of libgps's `gps_unpack` on each line of `path` and the conversion of its
/// TPV into a ``Fix`` (``TPVDecoder``, which copies each line into a C string first), decoding
/// alone (the lines read into memory first, not timed).
func libgpsDecoding(_ path: String) throws -> Double {
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    let decoder = TPVDecoder()
    let start = ContinuousClock.now
    let decoded = lines.count { decoder.decode($0) != nil }
    let elapsed = seconds(ContinuousClock.now - start)
    guard decoded == fixCount else {
        FileHandle.standardError.write(Data("\(path): libgps decoded \(decoded) fixes, expected \(fixCount)\n".utf8))
        exit(1)
    }
    return Double(decoded) / elapsed
}

let jsonPath = files[1].1
let libgps = spread(try (0..<3).map { _ in try libgpsDecoding(jsonPath) })
let own = parseOnly[jsonPath]!
print("")
print("| gpsd JSON, decoding alone | fixes per second | against libgps |")
print("| --- | ---: | ---: |")
print(String(format: "| libgps `gps_unpack` (gpsd's own C decoder, as `run` uses it) and the `Fix` made of it | %.0f (%.0f-%.0f) | 1x |", libgps.median, libgps.low, libgps.high))
print(String(format: "| geoalarm's reader (`replay`, parse only) | %.0f (%.0f-%.0f) | %.1fx |", own.median, own.low, own.high, own.median / libgps.median))
print("goal: NMEA replay at 1,000,000 fixes per second (parse + engine)")
