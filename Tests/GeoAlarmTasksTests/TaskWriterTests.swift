import Foundation
import GeoAlarmCore
@testable import GeoAlarmTasks
import Testing

/// Writes into a task's own file in its folder.
struct TaskWriterTests {
    /// A task completed already is completed again: its file is not touched (a sync would take a
    /// new modification time for a change to send).
    @Test func aTaskCompletedAlreadyLeavesItsFileUntouched() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-writer-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/done.ics"
        let done = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:done\r\nSUMMARY:Post it\r\nSTATUS:COMPLETED\r\nCOMPLETED:20261101T080000Z\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
        try done.write(toFile: path, atomically: true, encoding: .utf8)
        let long = Date(timeIntervalSince1970: 1_700_000_000)
        try FileManager.default.setAttributes([.modificationDate: long], ofItemAtPath: path)
        let origin = TaskOrigin(list: "Errands", path: path, uid: "done", title: "Post it", isClosed: true)
        #expect(try TaskWriter.complete(origin, at: Date(timeIntervalSince1970: 1_800_000_000)) == nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == done)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == long, "not written again")
        // Reopened, then completed: written, at the new time.
        try TaskWriter.uncomplete(origin, at: Date(timeIntervalSince1970: 1_800_000_000))
        try TaskWriter.complete(origin, at: Date(timeIntervalSince1970: 1_800_000_060))
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("COMPLETED:20270115T080100Z\r\n"))
    }
}
