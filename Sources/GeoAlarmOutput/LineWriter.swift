import Foundation
import Synchronization

/// Writes lines to a file descriptor (stdout by default) through a buffer; safe to share between tasks.
public final class LineWriter: Sendable {
    private let handle: FileHandle
    private let buffer = Mutex<[UInt8]>([])
    private let flushEachLine: Bool

    /// With `flushEachLine`, every line is written out at once (live use); otherwise the buffer is
    /// written when it fills and on `flush()` (replay as fast as possible).
    public init(handle: FileHandle = .standardOutput, flushEachLine: Bool) {
        self.handle = handle
        self.flushEachLine = flushEachLine
    }

    public func write(_ line: String) {
        let full = buffer.withLock { bytes -> Bool in
            bytes.append(contentsOf: line.utf8)
            bytes.append(UInt8(ascii: "\n"))
            return flushEachLine || bytes.count >= 1 << 16
        }
        if full { flush() }
    }

    public func flush() {
        let pending = buffer.withLock { bytes -> [UInt8] in
            defer { bytes.removeAll(keepingCapacity: true) }
            return bytes
        }
        guard !pending.isEmpty else { return }
        handle.write(Data(pending))
    }
}
