import GeoAlarmCore

/// Every event as a line on stdout, written (and flushed) before any other sink sees it.
public struct EventLog: EventSink {
    private let format: EventFormat
    private let writer: LineWriter

    public init(format: EventFormat, writer: LineWriter = LineWriter(flushEachLine: true)) {
        self.format = format
        self.writer = writer
    }

    public func announce(_ announcement: Announcement) {
        writer.write(format.line(for: announcement))
    }
}
