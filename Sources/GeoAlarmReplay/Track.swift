import GeoAlarmCore
import Glibc

/// The recorded-track formats `replay` understands.
public enum TrackFormat: String, Sendable {
    case nmea = "NMEA 0183"
    case gpsdJSON = "gpsd JSON"
    case gpx = "GPX"

    /// Tells the format from the lines that are neither blank nor `#` comments (gpsd's regression
    /// logs quote gpsd's JSON in their comment headers): GPX (XML) when the first starts with `<`,
    /// gpsd JSON when one of the first 20 starts with `{` (`gpspipe -w`, also mixed with raw NMEA
    /// as `gpspipe -w -r` writes it), NMEA otherwise.
    public static func detect(_ bytes: ArraySlice<UInt8>) -> TrackFormat {
        detect(bytes, complete: true) ?? .nmea
    }

    /// How many lines of data are looked at for a JSON object before a stream counts as NMEA.
    static let linesLookedAt = 20

    /// As ``detect(_:)``, but nil while the start of a stream that goes on (unless `complete`)
    /// does not tell yet.
    static func detect(_ bytes: ArraySlice<UInt8>, complete: Bool) -> TrackFormat? {
        var index = bytes.startIndex
        var dataLines = 0
        while index < bytes.endIndex, index - bytes.startIndex < 65_536 {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A {
                index += 1
                continue
            }
            if dataLines == 0, byte == UInt8(ascii: "<") { return .gpx }
            if byte == UInt8(ascii: "{") { return .gpsdJSON }
            guard let end = bytes[index...].firstIndex(of: 0x0A) else { return complete ? .nmea : nil }
            if byte != UInt8(ascii: "#") {
                dataLines += 1
                if dataLines == linesLookedAt { return .nmea }
            }
            index = end + 1
        }
        return complete || index - bytes.startIndex >= 65_536 ? .nmea : nil
    }
}

/// A line (or place) of a track that could not be used, and why.
public struct TrackProblem: Sendable, Equatable, CustomStringConvertible {
    /// 1-based line number.
    public var line: Int
    public var reason: String

    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { "line \(line): \(reason)" }
}

/// The fixes read from one track, with what had to be skipped.
public struct TrackReport: Sendable {
    public var format: TrackFormat
    public var fixes: [Fix]
    /// How many lines or points were skipped as bad.
    public var problemCount: Int = 0
    /// The first few problems, for the summary.
    public var problems: [TrackProblem] = []
    /// NMEA reporting epochs in which the receiver had no position.
    public var epochsWithoutFix = 0

    public init(format: TrackFormat, fixes: [Fix] = []) {
        self.format = format
        self.fixes = fixes
    }

    /// How many problems are kept for the summary.
    static let keptProblems = 5

    /// The fixes decoded so far, leaving none: for a stream read a batch at a time.
    mutating func takeFixes() -> [Fix] {
        let taken = fixes
        fixes.removeAll(keepingCapacity: true)
        return taken
    }

    mutating func record(_ problem: TrackProblem) {
        problemCount += 1
        if problems.count < Self.keptProblems { problems.append(problem) }
    }
}

/// Reads a whole track, whatever its format.
public enum TrackReader {
    /// Detects the format of `bytes` and decodes every fix in it, in file order.
    public static func read(_ bytes: [UInt8]) -> TrackReport {
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        switch TrackFormat.detect(body) {
        case .gpx: return GPXReader.read(body)
        case .gpsdJSON: return GPSDJSONReader.read(body)
        case .nmea: return NMEAReader.read(body)
        }
    }
}

/// Calls `body` with each line of `bytes` (without its line end, however many CRs it has) and
/// its 1-based number, counting on from `linesBefore`.
func forEachLine<Bytes: BidirectionalCollection<UInt8>>(
    _ bytes: Bytes, linesBefore: Int = 0, _ body: (Bytes.SubSequence, Int) -> Void
) where Bytes.Index == Int {
    var number = linesBefore
    var start = bytes.startIndex
    while start < bytes.endIndex {
        let end = lineEnd(in: bytes, from: start)
        var line = bytes[start..<end]
        while let last = line.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") { line = line.dropLast() }
        number += 1
        body(line, number)
        start = end == bytes.endIndex ? end : end + 1
    }
}

/// Where the line of `bytes` that starts at `start` ends: its line feed, or the end. memchr
/// compares many bytes at a time; a loop over a slice took a twentieth of a replay's time.
private func lineEnd<Bytes: Collection<UInt8>>(in bytes: Bytes, from start: Int) -> Int where Bytes.Index == Int {
    let found = bytes.withContiguousStorageIfAvailable { buffer -> Int in
        let offset = start - bytes.startIndex
        guard let base = buffer.baseAddress,
              let found = memchr(base + offset, Int32(UInt8(ascii: "\n")), buffer.count - offset)
        else { return bytes.endIndex }
        return start + (UnsafeRawPointer(found) - UnsafeRawPointer(base + offset))
    }
    return found ?? bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
}
