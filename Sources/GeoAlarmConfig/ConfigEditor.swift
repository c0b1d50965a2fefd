import Foundation
import GeoAlarmCore

/// Edits the reminders file as text, so that every byte the user wrote (comments, order,
/// spacing) outside the edited reminder stays as it was. Callers validate the result with
/// ``ConfigLoader/parse(_:path:)`` before writing it with ``ConfigEditor/write(_:to:)``.
public enum ConfigEditor {
    /// Why an edit cannot be made.
    public struct EditError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// `text` with a `[[reminder]]` table of `fields` (key and TOML value text, in order) appended.
    public static func appendingReminder(_ fields: [(String, String)], to text: String) -> String {
        var result = text
        if !result.isEmpty, !result.hasSuffix("\n") { result += "\n" }
        if !result.isEmpty { result += "\n" }
        result += "[[reminder]]\n" + fields.map { "\($0.0) = \($0.1)\n" }.joined()
        return result
    }

    /// `text` without its `number`-th `[[reminder]]` table (1-based, in file order): from its
    /// header to the next table, leaving the comments and blank lines just above the next table.
    public static func removingReminder(number: Int, from text: String) throws(EditError) -> String {
        var lines: [Substring] = []
        var start = text.startIndex
        while start < text.endIndex {
            let end = text[start...].firstIndex(of: "\n").map { text.index(after: $0) } ?? text.endIndex
            lines.append(text[start..<end])
            start = end
        }
        func trimmed(_ line: Substring) -> Substring { line.drop(while: { $0 == " " || $0 == "\t" }) }
        let headers = lines.indices.filter { trimmed(lines[$0]).hasPrefix("[[reminder]]") }
        guard number >= 1, number <= headers.count else {
            throw EditError(description: "reminder #\(number) is not written as a [[reminder]] table; edit the file by hand")
        }
        var first = headers[number - 1]
        var last = lines[(first + 1)...].firstIndex { trimmed($0).hasPrefix("[") } ?? lines.count
        func isQuiet(_ line: Substring) -> Bool {
            let content = trimmed(line)
            return content.isEmpty || content == "\n" || content.hasPrefix("#")
        }
        while last > first + 1, isQuiet(lines[last - 1]) { last -= 1 }
        if last == lines.count, first > 0, trimmed(lines[first - 1]).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            first -= 1
        }
        return (lines[..<first] + lines[last...]).joined()
    }

    /// A TOML basic string holding `text`.
    public static func quote(_ text: String) -> String {
        QuotedString.quote(text)
    }

    /// Replaces the file at `path` with `text` atomically (a new file beside it, synced, keeping
    /// the old one's permissions, renamed over it), so a crash leaves the old or the new file whole.
    public static func write(_ text: String, to path: String) throws(EditError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
        var info = stat()
        let mode = stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o644
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw EditError(description: "\(temporary): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw EditError(description: "\(path): cannot write: \(reason)")
        }
    }
}
