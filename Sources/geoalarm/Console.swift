import ArgumentParser
import GeoAlarmCore
import GeoAlarmOutput
import GeoAlarmSystem

/// A one-shot command's standard output, through the system-call layer: a line that cannot be
/// written (the reader of a pipe gone, a full disk) ends the command with the reason on stderr
/// and a non-zero status.
enum Console {
    static let output = LineWriter(flushEachLine: true)

    /// Writes `text` and a line end, its control characters escaped: a title or a file name
    /// from a synced task list can neither move the cursor nor start a line of its own.
    static func line(_ text: String) throws {
        output.write(DisplayText.escaped(text))
        try check(output)
    }

    /// Ends the command when `writer` could not write.
    static func check(_ writer: LineWriter) throws {
        guard let failure = writer.failure else { return }
        Diagnostics.error("cannot write to standard output: \(failure.reason)")
        throw ExitCode.failure
    }
}
