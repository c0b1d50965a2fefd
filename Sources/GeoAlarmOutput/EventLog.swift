import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmSystem

/// Every event as a line on stdout, written (and flushed) before any other sink sees it.
public struct EventLog: EventSink {
    private let format: EventFormat
    private let writer: LineWriter
    /// A notice's prefix where stdout is systemd's journal: an event is filed above the log's
    /// info lines (the journal takes the prefix off); else nothing.
    private let priority: String

    /// A log in `format` on `writer`; `journal`: the writer is systemd's journal.
    public init(format: EventFormat, writer: LineWriter = LineWriter(flushEachLine: true), journal: Bool = false) {
        self.format = format
        self.writer = writer
        priority = journal ? JournalStream.Priority.notice.prefix : ""
    }

    public func announce(_ announcement: Announcement) {
        writer.write(priority + format.line(for: announcement))
    }
}
