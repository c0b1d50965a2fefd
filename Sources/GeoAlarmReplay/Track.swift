import GeoAlarmCore

/// The recorded-track formats `replay` understands.
public enum TrackFormat: String, Sendable {
    case nmea = "NMEA 0183"
    case gpsdJSON = "gpsd JSON"
    case gpx = "GPX"

    /// Guesses the format from the first bytes of a file: GPX when it holds `<gpx`, gpsd JSON when a
    /// line starts with `{"class":` (as `gpspipe -w` writes), NMEA otherwise.
    public static func detect(_ bytes: ArraySlice<UInt8>) -> TrackFormat {
        let head = String(decoding: bytes.prefix(65_536), as: UTF8.self)
        if head.contains("<gpx") { return .gpx }
        if head.contains("{\"class\":") || head.hasPrefix("{") { return .gpsdJSON }
        return .nmea
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
func forEachLine(_ bytes: ArraySlice<UInt8>, linesBefore: Int = 0, _ body: (ArraySlice<UInt8>, Int) -> Void) {
    var number = linesBefore
    var start = bytes.startIndex
    while start < bytes.endIndex {
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        var line = bytes[start..<end]
        while let last = line.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") { line = line.dropLast() }
        number += 1
        body(line, number)
        start = end == bytes.endIndex ? end : end + 1
    }
}
