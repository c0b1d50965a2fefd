import Foundation
import GeoAlarmCore
import GeoAlarmSystem
import Synchronization

/// A recorded track (NMEA 0183, gpsd JSON or GPX; a file, or standard input for "-") as a
/// ``FixSource``, read as fast as it goes: each step reads one chunk on a queue of its own and
/// hands on the fixes it completed, so a slow consumer slows the reading (nothing piles up).
public final class TrackSource: FixSource, Sendable {
    public let path: String
    private let startDay: Int?
    /// The reader's state, touched only on `queue`.
    private let reader = Mutex<Reader>(Reader())
    private let queue = DispatchQueue(label: "track reader")

    private struct Reader {
        var descriptor: Int32?
        var stream: TrackStream?
        var ended = false
    }

    /// `path` "-" reads standard input; `startDay` dates an NMEA log that carries no date (days
    /// since 1970-01-01).
    public init(path: String, startDay: Int? = nil) {
        self.path = path
        self.startDay = startDay
    }

    public var name: String { path == "-" ? "<stdin>" : DisplayText.escaped(path) }

    /// Only GPX points are recorded without a time on purpose (a route drawn by hand).
    public var usesUndatedFixes: Bool { report.format == .gpx }

    /// What the track held so far (format, lines skipped, epochs without a fix).
    public var report: TrackReport {
        reader.withLock { $0.stream?.report } ?? TrackReport(format: .nmea)
    }

    public func reports() -> Reports { Reports(source: self) }

    public func stop() {}

    /// The track's reports: fixes a chunk at a time, or why it could not be read on.
    public struct Reports: AsyncSequence, Sendable {
        let source: TrackSource

        public func makeAsyncIterator() -> Iterator { Iterator(source: source) }

        public struct Iterator: AsyncIteratorProtocol {
            let source: TrackSource

            public mutating func next() async -> SourceReport? {
                let source = source
                return await withCheckedContinuation { continuation in
                    source.queue.async { continuation.resume(returning: source.step()) }
                }
            }
        }
    }

    /// Reads until a chunk completes some fixes, the track ends (nil) or fails (once).
    private func step() -> SourceReport? {
        reader.withLock { reader -> SourceReport? in
            guard !reader.ended else { return nil }
            if reader.stream == nil {
                do {
                    let descriptor = path == "-" ? STDIN_FILENO : try System.open(path, O_RDONLY)
                    reader.descriptor = descriptor
                    reader.stream = TrackStream(descriptor: descriptor, startDay: startDay)
                } catch let error as SystemError {
                    reader.ended = true
                    return .failed("cannot read: \(error.reason)")
                } catch {
                    reader.ended = true
                    return .failed("cannot read: \(error)")
                }
            }
            do {
                while let fixes = try reader.stream!.next() {
                    if !fixes.isEmpty { return .fixes(fixes, readAt: .now) }
                }
            } catch {
                finish(&reader)
                return .failed("\(error)")
            }
            finish(&reader)
            return nil
        }
    }

    private func finish(_ reader: inout Reader) {
        reader.ended = true
        if let descriptor = reader.descriptor, descriptor != STDIN_FILENO { System.close(descriptor) }
        reader.descriptor = nil
    }
}
