// Instructions per fix on the live path (LivePathCost), counted by valgrind's callgrind:
// deterministic, so the figure can be tracked from run to run. Each case runs twice, with
// 2,000 and 4,000 fixes of the same walk; the difference divided by 2,000 is the cost of a
// fix without start-up. The baseline of the same run has no reminders (decode, plumbing).
import Foundation
import Workload

let file = try writeWorkFile("walk-4k.json", gpsdJSONText(walk(4_000)))
let program = "\(workDirectory)/LivePathCost-nodebug"
/// valgrind 3.19 (Debian 12) cannot read the DWARF 5 that Swift's compiler writes, so it runs a
/// copy without debug information: the instructions are the same.
func stripDebugInformation() throws {
    let built = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("LivePathCost").path
    let strip = try Process.run(URL(fileURLWithPath: "/usr/bin/strip"), arguments: ["--strip-debug", "-o", program, built])
    strip.waitUntilExit()
    guard strip.terminationStatus == 0 else {
        FileHandle.standardError.write(Data("strip --strip-debug \(built) failed\n".utf8))
        exit(1)
    }
}
try stripDebugInformation()

/// Instructions callgrind counted for one run of LivePathCost.
func instructions(fixes: Int, reminders: Int) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/valgrind")
    process.arguments = ["--tool=callgrind", "--callgrind-out-file=/dev/null", program, file, "\(fixes)", "\(reminders)"]
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0,
          let line = output.split(separator: "\n").first(where: { $0.contains("Collected :") }),
          let count = Double(line.split(separator: " ").last ?? "")
    else {
        FileHandle.standardError.write(Data("valgrind failed (is it installed?):\n\(output)\n".utf8))
        exit(1)
    }
    return count
}

print("instructions per fix on the live path (gps_unpack, engine, announcer, event line), callgrind")
print("| reminders | per fix | ratio to baseline |")
print("| ---: | ---: | ---: |")
var baseline = 0.0
for reminders in [0, 100] {
    let perFix = (try instructions(fixes: 4_000, reminders: reminders) - instructions(fixes: 2_000, reminders: reminders)) / 2_000
    if reminders == 0 { baseline = perFix }
    print(String(format: "| %d | %.0f | %.2fx |", reminders, perFix, perFix / baseline))
}
print("goal: under 20,000 instructions per fix with 100 reminders")
