import ArgumentParser
import GeoAlarmCore
import GeoAlarmOutput
import GeoAlarmSystem
import Glibc

/// A one-shot command's standard output, through the system-call layer: a line that cannot be
/// written ends the command. A full disk (or any other failure) is said on stderr, with status
/// 1; a pipe whose reader has gone (`geoalarm history | head`) ends it quietly with status 0,
/// as the reader has what it wanted.
enum Console {
    static let output = LineWriter(flushEachLine: true)

    /// Writes `text` and a line end, its control characters escaped: a title or a file name
    /// from a synced task list can neither move the cursor nor start a line of its own.
    /// `failed`: as for ``check(_:failed:)``.
    static func line(_ text: String, failed: Bool = false) throws {
        output.write(DisplayText.escaped(text))
        try check(output, failed: failed)
    }

    /// Ends the command when `writer` could not write; `failed`: the command has already found
    /// what makes it exit 1 (a failed check, an unreadable track), which a reader gone leaves so.
    static func check(_ writer: LineWriter, failed: Bool = false) throws {
        guard let failure = writer.failure else { return }
        if failure.code == EPIPE { throw failed ? ExitCode.failure : ExitCode.success }
        Diagnostics.error("cannot write to standard output: \(failure.reason)")
        throw ExitCode.failure
    }
}
