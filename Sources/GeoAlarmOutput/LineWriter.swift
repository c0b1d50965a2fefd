import Foundation

/// Writes lines to a file descriptor (stdout by default) through a buffer.
public final class LineWriter {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private let flushEachLine: Bool

    /// With `flushEachLine`, every line is written out at once (live use); otherwise the buffer is
    /// written when it fills and on `flush()` (replay as fast as possible).
    public init(handle: FileHandle = .standardOutput, flushEachLine: Bool) {
        self.handle = handle
        self.flushEachLine = flushEachLine
        buffer.reserveCapacity(1 << 16)
    }

    public func write(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if flushEachLine || buffer.count >= 1 << 16 { flush() }
    }

    public func flush() {
        guard !buffer.isEmpty else { return }
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}
