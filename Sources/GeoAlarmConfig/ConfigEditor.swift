import Glibc
import GeoAlarmCore
import GeoAlarmSystem
import GeoAlarmTOML

/// Edits the reminders file by the TOML parser's own spans, so that every byte the user wrote
/// (comments, order, spacing) outside the edited reminder stays as it was.
///
/// ``ConfigEditor/edit(path:creating:_:)`` runs a whole edit under an exclusive lock (a lock
/// file beside the file, so concurrent `add`s and `remove`s take turns), validates the result,
/// and writes it atomically to the file a symbolic link points at, keeping its mode and owner.
public enum ConfigEditor {
    /// Why an edit cannot be made.
    public struct EditError: Error, Sendable, CustomStringConvertible {
        public var description: String

        public init(_ description: String) {
            self.description = description
        }
    }

    /// `bytes` with a `[[reminder]]` table of `fields` (key and TOML value text, in order) appended.
    public static func appendingReminder(_ fields: [(String, String)], to bytes: [UInt8]) -> [UInt8] {
        appendingTable("[[reminder]]", fields, to: bytes)
    }

    /// `bytes` with a new reminder titled `title` appended (its other `fields` after the title),
    /// and the id it takes: `id` when given (its `id` line always written), else the title's
    /// slug, numbered past every id the file holds (milk at two shops: `buy-milk-2`), written as
    /// an `id` line only where it is not the slug. Called within ``edit(path:creating:_:)``, the
    /// choice is made under the file's lock. A file that does not load keeps the slug: the check
    /// after the edit reports the file's own problems.
    public static func appendingReminder(
        titled title: String, id given: String? = nil, _ fields: [(String, String)], to bytes: [UInt8], path: String
    ) -> (bytes: [UInt8], id: String) {
        if let given { return (appendingReminder([("id", quote(given)), ("title", quote(title))] + fields, to: bytes), given) }
        let slug = Reminder.slug(title)
        guard let taken = try? ConfigLoader.takenIDs(bytes, path: path) else {
            return (appendingReminder([("title", quote(title))] + fields, to: bytes), slug)
        }
        let id = Reminder.newID(titled: title, taken: taken)
        let named = id == slug ? [] : [("id", quote(id))]
        return (appendingReminder(named + [("title", quote(title))] + fields, to: bytes), id)
    }

    /// `bytes` with a table (`header`, then a `key = value` line per field) at the end, a blank
    /// line before it.
    private static func appendingTable(_ header: String, _ fields: [(String, String)], to bytes: [UInt8]) -> [UInt8] {
        let end = lineEnd(of: bytes)
        var result = bytes
        if !result.isEmpty, result.last != UInt8(ascii: "\n") { result += end.utf8 }
        if !result.isEmpty { result += end.utf8 }
        result += Array((header + end + fields.map { "\($0.0) = \($0.1)\(end)" }.joined()).utf8)
        return result
    }

    /// The line end the file uses: CRLF when its first line ends so, else LF.
    static func lineEnd(of bytes: [UInt8]) -> String {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")), newline > 0, bytes[newline - 1] == UInt8(ascii: "\r") else {
            return "\n"
        }
        return "\r\n"
    }

    /// `bytes` with the place `name` at `location` ("LAT,LON") added to `[places]`: as the first
    /// key under its header, or in a new `[places]` table at the end. A place of that name
    /// already there, or a `[places]` not written as a header table, is an error.
    public static func definingPlace(_ name: String, at location: String, in bytes: [UInt8], path: String) throws(EditError) -> [UInt8] {
        let document: TOMLDocument
        do {
            document = try ConfigLoader.document(bytes, path: path)
        } catch {
            throw EditError(error.description)
        }
        let field = (TOML.isBareKey(name) ? name : quote(name), quote(location))
        guard let places = document.root["places"] else { return appendingTable("[places]", [field], to: bytes) }
        guard let table = places.table, table.extent.lowerBound < table.extent.upperBound else {
            throw EditError("\(path): [places] is not written as a [places] table; add the place by hand")
        }
        if table[name] != nil {
            throw EditError("\(path): there is a place \"\(name)\" already; give --place alone to use it")
        }
        // Right after the header line: a key there belongs to [places], whatever sub-tables follow.
        let headerEnd = bytes[table.extent].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? table.extent.upperBound
        let end = lineEnd(of: bytes)
        let prefix = headerEnd == bytes.count && bytes.last != UInt8(ascii: "\n") ? Array(end.utf8) : []
        return Array(bytes[..<headerEnd]) + prefix + Array("\(field.0) = \(field.1)\(end)".utf8) + Array(bytes[headerEnd...])
    }

    /// The `[[reminder]]` table whose id is `id` in `bytes`, parsed.
    private static func reminderTable(id: String, in bytes: [UInt8], path: String) throws(EditError) -> TOMLTable {
        let document: TOMLDocument
        do {
            document = try ConfigLoader.document(bytes, path: path)
        } catch {
            throw EditError(error.description)
        }
        guard let value = document.root["reminder"], let elements = value.array else {
            throw EditError("\(path): there is no [[reminder]] table")
        }
        guard case .array(let array) = value.content, array.isTableArray else {
            throw EditError("\(path): reminders are written as an inline array; edit the file by hand")
        }
        let match = elements.compactMap(\.table).first { table in
            (table["id"]?.string ?? table["title"]?.string.map(Reminder.slug)) == id
        }
        guard let table = match else { throw EditError("\(path): no [[reminder]] table with id \"\(id)\"") }
        return table
    }

    /// `bytes` with keys of the `[[reminder]]` table whose id is `id` changed: each of `setting`
    /// (key and TOML value text) replaces the value written for that key, or is added as a line
    /// of its own; each of `removing` loses its line. An added key takes the place of the first
    /// removed one (a `place` becomes a `location` where it stood), else comes right after the
    /// header. Everything else, comments on other lines among them, stays as it was. A key
    /// written other than as `key = value` on the table's own lines (a dotted key, a sub-table)
    /// is an error: such a file is edited by hand. A new title for a reminder whose id comes
    /// from its title adds that id, so that its state and history stay its own.
    public static func changingReminder(
        id: String, setting: [(String, String)], removing: Set<String> = [], in bytes: [UInt8], path: String
    ) throws(EditError) -> [UInt8] {
        let table = try reminderTable(id: id, in: bytes, path: path)
        var setting = setting
        if table["id"] == nil, setting.contains(where: { $0.0 == "title" }), !setting.contains(where: { $0.0 == "id" }) {
            setting.insert(("id", quote(id)), at: 0)
        }
        guard let header = table.sections.first else { throw EditError("\(path): reminder \"\(id)\" is not a [[reminder]] table") }
        var edits: [(range: Range<Int>, text: [UInt8])] = []
        var removedLines: [Range<Int>] = []
        for key in removing.sorted() where !setting.contains(where: { $0.0 == key }) {
            guard let value = table[key] else { continue }
            guard let written = value.valueRange else { throw EditError("\(path): reminder \"\(id)\": \(key) is not a plain key; edit it by hand") }
            let line = lineSpan(from: value.keyOffset, through: written.upperBound, in: bytes)
            removedLines.append(line)
            edits.append((line, []))
        }
        let end = lineEnd(of: bytes)
        var added: [UInt8] = []
        for (key, text) in setting {
            if let value = table[key] {
                guard let written = value.valueRange else { throw EditError("\(path): reminder \"\(id)\": \(key) is not a plain key; edit it by hand") }
                edits.append((written, Array(text.utf8)))
            } else {
                added += Array("\(key) = \(text)\(end)".utf8)
            }
        }
        if !added.isEmpty {
            if let first = removedLines.min(by: { $0.lowerBound < $1.lowerBound }),
                let index = edits.firstIndex(where: { $0.range == first }) {
                edits[index].text = added
            } else {
                let headerEnd = bytes[header].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? header.upperBound
                let newline: [UInt8] = headerEnd == bytes.count && bytes.last != UInt8(ascii: "\n") ? Array(end.utf8) : []
                edits.append((headerEnd..<headerEnd, newline + added))
            }
        }
        var edited = bytes
        for edit in edits.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            edited.replaceSubrange(edit.range, with: edit.text)
        }
        return edited
    }

    /// The whole lines from the one holding `start` to the one holding `end`, with its newline.
    private static func lineSpan(from start: Int, through end: Int, in bytes: [UInt8]) -> Range<Int> {
        let lineStart = bytes[..<start].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let lineEnd = bytes[end...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count
        return lineStart..<lineEnd
    }

    /// `bytes` without the `[[reminder]]` table whose id is `id` (its header, keys and
    /// sub-tables, as the parser spans them). The comments around it stay; of the blank lines
    /// around it, one goes with it, so that no gap is left twice as wide.
    public static func removingReminder(id: String, from bytes: [UInt8], path: String) throws(EditError) -> [UInt8] {
        let table = try reminderTable(id: id, in: bytes, path: path)
        // Its header's lines and those of its sub-tables, which another table may separate
        // (`[reminder.active]` after `[defaults]`): each run goes, and what lies between stays.
        var edited = bytes
        for section in table.sections.reversed() {
            var start = section.lowerBound
            var end = section.upperBound
            let blankAfter = blankLine(startingAt: end, in: edited) ?? (edited[end...].allSatisfy(isBlank) ? end..<end : nil)
            if let before = blankLine(endingAt: start, in: edited), blankAfter != nil {
                start = before.lowerBound
            } else if start == 0, let after = blankAfter {
                end = after.upperBound
            }
            edited.removeSubrange(start..<end)
        }
        return edited
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// The blank line (blanks, then its newline) that starts at `offset`, if that line is blank.
    private static func blankLine(startingAt offset: Int, in bytes: [UInt8]) -> Range<Int>? {
        var end = offset
        while end < bytes.count, bytes[end] == 0x20 || bytes[end] == 0x09 || bytes[end] == 0x0D { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\n") else { return nil }
        return offset..<(end + 1)
    }

    /// The blank line that ends (with its newline) just before `offset`, if there is one.
    private static func blankLine(endingAt offset: Int, in bytes: [UInt8]) -> Range<Int>? {
        guard offset >= 1, bytes[offset - 1] == UInt8(ascii: "\n") else { return nil }
        var start = offset - 1
        while start > 0, bytes[start - 1] == 0x20 || bytes[start - 1] == 0x09 || bytes[start - 1] == 0x0D { start -= 1 }
        guard start == 0 || bytes[start - 1] == UInt8(ascii: "\n") else { return nil }
        return start..<offset
    }

    /// Writes a new file at `path` (it must not exist), with `existing`'s mode and owner, and syncs it.
    private static func writeNewFile(_ path: String, _ bytes: [UInt8], like existing: stat?) throws(SystemError) {
        let descriptor = try System.open(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        defer { System.close(descriptor) }
        try System.writeAll(descriptor, bytes)
        if let existing {
            try System.fchmod(descriptor, existing.st_mode & 0o7777)
            if existing.st_uid != geteuid() || existing.st_gid != getegid() {
                try System.fchown(descriptor, existing.st_uid, existing.st_gid)
            }
        }
        try System.fsync(descriptor)
    }

    /// A TOML basic string holding `text`.
    public static func quote(_ text: String) -> String {
        QuotedString.quote(text)
    }

    /// Runs `change` on the current bytes of the file at `path` while holding its lock, checks the
    /// result with ``ConfigLoader``, and replaces the file with it. `creating` is the text of a
    /// file that does not exist yet (nil: a missing file is an error). Returns the config the
    /// file now holds (its ``Config/warnings`` for the caller to say).
    @discardableResult
    public static func edit(
        path: String, creating: String? = nil, _ change: ([UInt8]) throws(EditError) -> [UInt8]
    ) throws(EditError) -> Config {
        let target = try resolveTarget(path, mayBeMissing: creating != nil)
        let lock: Int32
        do {
            lock = try System.open(target + ".lock", O_RDWR | O_CREAT, mode: 0o600)
            try System.lockExclusive(lock)
        } catch {
            throw EditError("\(target).lock: cannot lock: \(error.reason)")
        }
        defer { System.close(lock) }
        let current: [UInt8]
        let existing: stat?
        do {
            existing = try System.fileStatus(target)
            if existing == nil, let creating {
                current = Array(creating.utf8)
            } else {
                current = try UserFile.contents(of: target, limit: UserFile.configLimit)
            }
        } catch {
            throw EditError("\(target): cannot read: \(error)")
        }
        let changed = try change(current)
        let config: Config
        do {
            config = try ConfigLoader.parse(changed, path: path)
        } catch {
            throw EditError("not changed, the result would be invalid:\n\(error.description)")
        }
        try replace(target, with: changed, like: existing)
        return config
    }

    /// The file a (possibly linked) config path stands for; a missing file resolves through its folder.
    private static func resolveTarget(_ path: String, mayBeMissing: Bool) throws(EditError) -> String {
        do {
            return try System.realPath(path)
        } catch where error.code == ENOENT && mayBeMissing {
            let (folder, name) = PathParts.split(path)
            guard let resolved = try? System.realPath(folder) else { return path }
            return resolved + "/" + name
        } catch {
            throw EditError("\(path): \(error.reason)")
        }
    }


    /// Writes `bytes` to a new file beside `target`, with the mode and owner of the file it
    /// replaces (0600 for a new one), synced, then renamed over it: a crash leaves the old or the
    /// new file whole.
    private static func replace(_ target: String, with bytes: [UInt8], like existing: stat?) throws(EditError) {
        let (folder, name) = PathParts.split(target)
        let temporary = "\(folder)/.\(name).\(getpid()).tmp"
        do {
            try writeNewFile(temporary, bytes, like: existing)
            try System.rename(temporary, target)
        } catch {
            System.unlink(temporary)
            throw EditError("\(target): cannot write: \(error.reason) (\(error.call))")
        }
        if let directory = try? System.open(folder, O_RDONLY | O_DIRECTORY) {
            try? System.fsync(directory)
            System.close(directory)
        }
    }
}
