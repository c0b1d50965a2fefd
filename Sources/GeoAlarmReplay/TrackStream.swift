import GeoAlarmCore
import GeoAlarmSystem

/// Why a track could not be read to its end.
public enum TrackReadError: Error, Sendable, CustomStringConvertible {
    case system(SystemError)
    /// A line longer than ``TrackStream/maximumLine``: not a track (or `/dev/zero`).
    case lineTooLong(line: Int)
    /// A GPX track, which is read whole, larger than ``TrackStream/maximumGPX``.
    case gpxTooLarge

    public var description: String {
        switch self {
        case .system(let error): "cannot read: \(error.reason)"
        case .lineTooLong(let line): "line \(line) is longer than 1 MB: not a track"
        case .gpxTooLarge: "a GPX track is read whole, and this one is larger than 1 GB"
        }
    }
}

/// Reads a track from a file or a pipe a chunk at a time, handing on its fixes as they are
/// decoded: NMEA and gpsd JSON in constant memory, however long the stream.
///
/// The format is told from the start of the stream (as ``TrackFormat/detect(_:)`` does), as soon
/// as it is certain: a `<gpx` or `{"class":` marker, 64 KB, or the end of the stream. GPX is
/// XML, read whole once the stream ends, up to ``maximumGPX``.
public enum TrackStream {
    /// The longest line a track may have.
    public static let maximumLine = 1 << 20
    /// The largest GPX track read.
    public static let maximumGPX = 1 << 30
    /// How much of the stream's start is looked at to tell its format.
    static let detectionWindow = 1 << 16

    /// Reads `descriptor` to its end, calling `deliver` with each batch of fixes in order;
    /// returns the track's summary (format, problems, counts; its `fixes` are empty).
    public static func read(_ descriptor: Int32, deliver: ([Fix]) -> Void) throws(TrackReadError) -> TrackReport {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        // One of the two line decoders, once the format is known (mutated in place: a copy per
        // line would copy the fixes decoded so far).
        var nmea: NMEAReader?
        var json: GPSDJSONReader?
        var isGPX = false
        var linesBefore = 0
        var atEnd = false
        var skippedMark = false
        while !atEnd {
            let count: Int
            do {
                count = try System.read(descriptor, into: &chunk)
            } catch {
                throw .system(error)
            }
            atEnd = count == 0
            pending.append(contentsOf: chunk[..<count])
            if !skippedMark, pending.count >= 3 || atEnd {
                if pending.starts(with: [0xEF, 0xBB, 0xBF]) { pending.removeFirst(3) }
                skippedMark = true
            }
            if nmea == nil, json == nil, !isGPX {
                guard let format = detect(pending, atEnd: atEnd) else { continue }
                switch format {
                case .gpx: isGPX = true
                case .gpsdJSON: json = GPSDJSONReader()
                case .nmea: nmea = NMEAReader()
                }
            }
            if isGPX {
                guard pending.count <= maximumGPX else { throw .gpxTooLarge }
                continue
            }
            // Every complete line; at the end, the last one without its newline too.
            let end = atEnd ? pending.endIndex : (pending.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0)
            var tooLong: Int?
            forEachLine(pending[..<end], linesBefore: linesBefore) { line, number in
                linesBefore = number
                guard tooLong == nil else { return }
                guard line.count <= maximumLine else { return tooLong = number }
                nmea?.feed(line, lineNumber: number)
                json?.feed(line, lineNumber: number)
            }
            if let tooLong { throw .lineTooLong(line: tooLong) }
            pending.removeFirst(end)
            if pending.count > maximumLine { throw .lineTooLong(line: linesBefore + 1) }
            if atEnd { nmea?.finish() }
            if let fixes = nmea?.report.takeFixes() ?? json?.report.takeFixes(), !fixes.isEmpty { deliver(fixes) }
        }
        if let report = nmea?.report ?? json?.report { return report }
        var report = GPXReader.read(pending[...])
        deliver(report.takeFixes())
        return report
    }

    /// The format of a stream that starts with `head`, once it is certain.
    private static func detect(_ head: [UInt8], atEnd: Bool) -> TrackFormat? {
        let window = head.prefix(detectionWindow)
        let format = TrackFormat.detect(window)
        if format != .nmea || atEnd || head.count >= detectionWindow { return format }
        return nil
    }
}
