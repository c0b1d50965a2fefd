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
/// The format is told from the stream's first line that is not blank or a comment (as
/// ``TrackFormat/detect(_:)`` does), as soon as it has arrived. GPX is XML, read whole once the
/// stream ends, up to ``maximumGPX``.
public struct TrackStream {
    /// The longest line a track may have.
    public static let maximumLine = 1 << 20
    /// The largest GPX track read.
    public static let maximumGPX = 1 << 30

    private let descriptor: Int32
    private let startDay: Int?
    /// The most bytes a read asks for; each call to ``next()`` reads once.
    private static let chunk = 1 << 16
    /// `buffer[..<filled]` holds the bytes read but not yet decoded: a partial line, the start
    /// before the format is known, or a GPX file. Each read lands right after them, in place: a
    /// chunk read elsewhere and appended was a copy of every byte (about 200 instructions a gpsd
    /// JSON line, 3% of its decoding). The buffer grows only for a line or a GPX file longer
    /// than it.
    private var buffer = [UInt8](repeating: 0, count: 2 * Self.chunk)
    private var filled = 0
    // One of the two line decoders, once the format is known (mutated in place: a copy per line
    // would copy the fixes decoded so far).
    private var nmea: NMEAReader?
    private var json: GPSDJSONReader?
    private var gpx: TrackReport?
    private var isGPX = false
    private var linesBefore = 0
    private var atEnd = false
    private var skippedMark = false

    /// Reads `descriptor` (not closed here); `startDay` dates an NMEA log that carries no date
    /// (days since 1970-01-01, see ``NMEAReader/init(startDay:)``).
    public init(descriptor: Int32, startDay: Int? = nil) {
        self.descriptor = descriptor
        self.startDay = startDay
    }

    /// What the track held so far: its format, the lines skipped, the epochs without a fix (its
    /// `fixes` are those not yet taken: none between calls to ``next()``).
    public var report: TrackReport {
        nmea?.report ?? json?.report ?? gpx ?? TrackReport(format: .nmea)
    }

    /// Reads one chunk and returns the fixes it completed (maybe none); nil once the track has ended.
    public mutating func next() throws(TrackReadError) -> [Fix]? {
        guard !atEnd else { return nil }
        if buffer.count - filled < Self.chunk {
            // Doubled, up to the largest GPX track and a chunk past it (to tell a larger one).
            buffer += repeatElement(0, count: min(buffer.count, Self.maximumGPX + Self.chunk - buffer.count))
        }
        let count: Int
        do {
            count = try System.read(descriptor, into: &buffer, at: filled, limit: Self.chunk)
        } catch {
            throw .system(error)
        }
        atEnd = count == 0
        filled += count
        if !skippedMark, filled >= 3 || atEnd {
            if buffer[..<filled].starts(with: [0xEF, 0xBB, 0xBF]) { consume(3) }
            skippedMark = true
        }
        if nmea == nil, json == nil, !isGPX {
            guard let format = TrackFormat.detect(buffer[..<filled], complete: atEnd) else {
                // Comment lines before any data: bounded like any other line.
                if filled > Self.maximumLine { throw .lineTooLong(line: 1) }
                return []
            }
            switch format {
            case .gpx: isGPX = true
            case .gpsdJSON: json = GPSDJSONReader()
            case .nmea: nmea = NMEAReader(startDay: startDay)
            }
        }
        if isGPX {
            guard filled <= Self.maximumGPX else { throw .gpxTooLarge }
            guard atEnd else { return [] }
            var report = GPXReader.read(buffer[..<filled])
            (buffer, filled) = ([], 0)
            let fixes = report.takeFixes()
            gpx = report
            return fixes
        }
        // Every complete line; at the end, the last one without its newline too.
        let end = atEnd ? filled : (buffer[..<filled].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0)
        var tooLong: Int?
        var lines = linesBefore
        // The lines are read in place through a pointer: a slice of the array for each line would
        // retain and release it.
        buffer.withUnsafeBufferPointer { bytes in
            forEachLine(bytes[..<end], linesBefore: linesBefore) { line, number in
                lines = number
                guard tooLong == nil else { return }
                guard line.count <= Self.maximumLine else { return tooLong = number }
                nmea?.feed(line, lineNumber: number)
                json?.feed(line, lineNumber: number)
            }
        }
        linesBefore = lines
        if let tooLong { throw .lineTooLong(line: tooLong) }
        consume(end)
        if filled > Self.maximumLine { throw .lineTooLong(line: linesBefore + 1) }
        if atEnd { nmea?.finish() }
        return nmea?.report.takeFixes() ?? json?.report.takeFixes() ?? []
    }

    /// Drops the first `count` bytes read, moving the rest (a partial line, mostly) to the front.
    private mutating func consume(_ count: Int) {
        let kept = filled - count
        buffer.withUnsafeMutableBufferPointer { bytes in
            // The two ranges may overlap: `update(from:count:)` copies in the order that allows it.
            bytes.baseAddress!.update(from: bytes.baseAddress! + count, count: kept)
        }
        filled = kept
    }
}
