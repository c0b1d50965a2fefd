// How long a task list of 10,000 tasks takes to read: `geoalarm check` (a release build) on a
// config with a [[tasklist]] whose folder holds 10,000 tasks in Apple's form (each a file, as
// vdirsyncer keeps them), against the same command on a config without the list (what starting
// the program costs), and against todoman listing the same folder (Debian's todoman, the tool
// people read a vdir of tasks with; its first run builds its cache, the next ones read it).
// Goal: under 1 s for the 10,000.
import Foundation
import GeoAlarmTestSupport
import Workload

let rounds = 5

/// A vdir of `count` tasks around Lisbon, each with an arrive alarm as iOS writes it.
func taskFolder(_ count: Int) throws -> String {
    let folder = "\(workDirectory)/tasks-\(count)"
    if FileManager.default.fileExists(atPath: folder) { return folder }
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    var random = SplitMix(seed: 39)
    for number in 0..<count {
        let latitude = (Double.random(in: 38.6...38.8, using: &random) * 1e6).rounded() / 1e6
        let longitude = (Double.random(in: -9.3 ... -9.0, using: &random) * 1e6).rounded() / 1e6
        let uid = String(format: "%08X-49D1-4395-90DB-%012X", number, number * 7919)
        let text = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Apple Inc.//iOS 18.1//EN", "BEGIN:VTODO", "CREATED:20261101T080000Z",
            "DTSTAMP:20261101T080000Z", "LAST-MODIFIED:20261101T080000Z", "STATUS:NEEDS-ACTION", "SUMMARY:Errand \(number)", "UID:\(uid)",
            "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER;VALUE=DATE-TIME:19760401T005545Z", "UID:\(uid)-A",
            "X-APPLE-PROXIMITY:ARRIVE",
            "X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-APPLE-RADIUS=\(50 + number % 200);X-APPLE-REFERENCEFRAME=1;X-TITLE=Place \(number)",
            " :geo:\(latitude)\\,\(longitude)", "END:VALARM", "END:VTODO", "END:VCALENDAR",
        ].joined(separator: "\r\n") + "\r\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: "\(folder)/\(uid).ics"))
    }
    return folder
}

/// The median seconds of `rounds` runs of `arguments` (the first run not counted: files cached).
func medianSeconds(_ executable: URL, _ arguments: [String]) throws -> Double {
    let times = try (0...rounds).map { _ in try secondsToRun(executable, arguments) }.dropFirst().sorted()
    return times[times.count / 2]
}

let folder = try taskFolder(10_000)
let withList = try writeWorkFile("tasklist-10k.toml", "[[tasklist]]\nname = \"Errands\"\nvdir = \"\(folder)\"\n")
let without = try writeWorkFile("tasklist-none.toml", "[[reminder]]\ntitle = \"One\"\nlocation = \"38.7,-9.1\"\n")
let todomanConfig = try writeWorkFile("todoman-10k.py", """
    path = "\(folder)*"
    date_format = "%Y-%m-%d"
    time_format = "%H:%M"
    cache_path = "\(workDirectory)/todoman-10k.sqlite"

    """)
try? FileManager.default.removeItem(atPath: "\(workDirectory)/todoman-10k.sqlite")

let ours = try medianSeconds(releaseBinary, ["check", "-c", withList])
let baseline = try medianSeconds(releaseBinary, ["check", "-c", without])
let todoman = URL(fileURLWithPath: "/usr/bin/todoman")
let todomanArguments = ["--config", todomanConfig, "--porcelain", "list"]
let todomanCold = try secondsToRun(todoman, todomanArguments)
let todomanWarm = try medianSeconds(todoman, todomanArguments)
print(String(format: "task list of 10,000 tasks: geoalarm check %.3f s (goal < 1 s; %@); without the list %.3f s; the list alone %.3f s",
             ours, ours < 1 ? "met" : "NOT met", baseline, ours - baseline))
print(String(format: "todoman listing the same folder: %.3f s the first time (building its cache), %.3f s after; ratio geoalarm / todoman %.2f (first), %.2f (after)",
             todomanCold, todomanWarm, ours / todomanCold, ours / todomanWarm))
