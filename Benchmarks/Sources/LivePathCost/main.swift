// The live path without the socket and the thread hop, for callgrind to count: each line of a
// gpsd JSON file is decoded by libgps (gps_unpack), turned into a fix, run through the engine
// and the announcer, and its events are written as text lines to /dev/null.
// Usage: LivePathCost FILE FIXES REMINDERS (REMINDERS is 0 or 100).
import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmGPSD
import GeoAlarmOutput
import GeoAlarmPipeline
import GeoAlarmStore
import GeoAlarmSystem
import Logging
import Workload

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[2]), let reminderCount = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: LivePathCost FILE FIXES REMINDERS\n".utf8))
    exit(2)
}
let text = String(decoding: try UserFile.contents(of: arguments[1], limit: UserFile.collectionLimit), as: UTF8.self)
let lines = text.split(separator: "\n").prefix(count).map(String.init)
let reminders = reminderCount == 0 ? [] : Array(try hundredReminders().prefix(reminderCount))
let log = EventLog(format: .text, writer: LineWriter(descriptor: open("/dev/null", O_WRONLY | O_CLOEXEC), flushEachLine: true))
let pipeline = FixPipeline(
    watching: ReminderSet(reminders: reminders),
    state: StateKeeper(path: nil, logger: Logger(label: "bench")), sinks: [log], timeZone: FixedOffset.utc)
let decoder = TPVDecoder()
var events = 0
let now = Date()
for line in lines {
    guard let fix = decoder.decode(line) else { continue }
    events += pipeline.process(fix, receivedAt: now, undatedUsable: false).announced.count
}
print("\(lines.count) lines, \(events) events")
