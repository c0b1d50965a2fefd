import GeoAlarmSystem
import Synchronization

/// Writes lines to a file descriptor (stdout by default) through a buffer, with the system-call
/// layer; safe to share between tasks.
///
/// A write that fails (the reader of a pipe gone, a full disk) is remembered as ``failure``,
/// reported once through `onFailure`, and everything after it is dropped: what to do about it
/// is the caller's (a one-shot command ends with an error, the agent goes on without stdout).
public final class LineWriter: Sendable {
    private let descriptor: Int32
    private let flushEachLine: Bool
    private let onFailure: @Sendable (SystemError) -> Void
    private let state = Mutex<(buffer: [UInt8], failure: SystemError?)>(([], nil))

    /// With `flushEachLine`, every line is written out at once (live use); otherwise the buffer is
    /// written when it fills and on `flush()` (replay as fast as possible).
    public init(descriptor: Int32 = 1, flushEachLine: Bool, onFailure: @escaping @Sendable (SystemError) -> Void = { _ in }) {
        self.descriptor = descriptor
        self.flushEachLine = flushEachLine
        self.onFailure = onFailure
    }

    /// The error that stopped the output, if one did.
    public var failure: SystemError? { state.withLock { $0.failure } }

    public func write(_ line: String) {
        let full = state.withLock { state -> Bool in
            guard state.failure == nil else { return false }
            state.buffer.append(contentsOf: line.utf8)
            state.buffer.append(UInt8(ascii: "\n"))
            return flushEachLine || state.buffer.count >= 1 << 16
        }
        if full { flush() }
    }

    public func flush() {
        let failed = state.withLock { state -> SystemError? in
            guard !state.buffer.isEmpty, state.failure == nil else { return nil }
            defer { state.buffer.removeAll(keepingCapacity: true) }
            state.failure = Self.write(state.buffer, to: descriptor)
            return state.failure
        }
        if let failed { onFailure(failed) }
    }

    /// Why `bytes` could not all be written, or nil.
    private static func write(_ bytes: [UInt8], to descriptor: Int32) -> SystemError? {
        do throws(SystemError) {
            try System.writeAll(descriptor, bytes)
            return nil
        } catch {
            return error
        }
    }
}
