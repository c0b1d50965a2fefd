import Dispatch
import FoundationEssentials
import Glibc
import GeoAlarmCore
import GeoAlarmSystem
import Synchronization

/// A recorded track (NMEA 0183, gpsd JSON or GPX; a file, or standard input for "-") as a
/// ``FixSource``, read as fast as it goes: each step reads and decodes one chunk on a serial
/// queue of its own, up to ``Reports/Iterator/stepsAhead`` steps ahead of the consumer (so
/// decoding and the engine share the two cores, and neither waits for the other on a chunk
/// that took a little longer), and no further, so a slow consumer slows the reading and
/// nothing piles up.
public final class TrackSource: FixSource, Sendable {
    public let path: String
    private let startDay: Int?
    /// The reader's state, touched only on `queue`.
    private let reader = Mutex<Reader>(Reader())
    private let queue = DispatchQueue(label: "track reader")
    /// The format, once told: read by the consumer while the reader works ahead.
    private let format = Mutex<TrackFormat?>(nil)

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
    public var usesUndatedFixes: Bool { format.withLock { $0 } == .gpx }

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
            /// The steps started ahead of the consumer, oldest first (the queue runs them in order).
            private var ahead: [Step] = []
            /// How many chunks are read ahead at most. With one, each chunk was a handoff at
            /// which one thread often waited for the other: a replay used 1.5 of the two cores.
            static let stepsAhead = 3

            init(source: TrackSource) {
                self.source = source
            }

            public mutating func next() async -> SourceReport? {
                let step = ahead.isEmpty ? Step(source) : ahead.removeFirst()
                let report = await step.result()
                if case .fixes? = report {
                    while ahead.count < Self.stepsAhead { ahead.append(Step(source)) }
                }
                return report
            }
        }
    }

    /// One step of the reader, started at once on its queue; its result is awaited later.
    final class Step: Sendable {
        private let state = Mutex<(done: Bool, report: SourceReport?, waiting: CheckedContinuation<SourceReport?, Never>?)>(
            (false, nil, nil))

        init(_ source: TrackSource) {
            source.queue.async { [self] in
                let report = source.step()
                let waiting = state.withLock { state in
                    state.done = true
                    state.report = report
                    defer { state.waiting = nil }
                    return state.waiting
                }
                waiting?.resume(returning: report)
            }
        }

        func result() async -> SourceReport? {
            await withCheckedContinuation { continuation in
                let report = state.withLock { state -> SourceReport?? in
                    guard state.done else {
                        state.waiting = continuation
                        return nil
                    }
                    return .some(state.report)
                }
                if let report { continuation.resume(returning: report) }
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
                    if !fixes.isEmpty {
                        format.withLock { $0 = reader.stream!.report.format }
                        return .fixes(fixes, readAt: .now)
                    }
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
