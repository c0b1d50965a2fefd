/// A TOML 1.0 reader written for geoalarm's config: it never traps on any input, bounds its
/// nesting, and keeps where every key, value and table was written, so that `check` can name
/// lines and `add`/`remove` can edit the file by the parser's own spans.
public enum TOML {
    /// How deep arrays, inline tables and dotted keys may nest together.
    public static let maximumDepth = 64

    /// Whether `name` can be written as a bare key (letters, digits, `_` and `-`), not quoted.
    public static func isBareKey(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(isBareKeyByte)
    }

    static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    /// Parses a whole document. NUL bytes, invalid UTF-8 and every syntax error are reported
    /// with their byte offset (``TOMLDocument/position(of:)`` turns it into a line and column).
    public static func parse(_ bytes: [UInt8]) throws(TOMLError) -> TOMLDocument {
        if let bad = UTF8Check.firstInvalidOffset(in: bytes) {
            throw TOMLError(offset: bad, message: bytes[bad] == 0 ? "NUL byte in the file" : "invalid UTF-8")
        }
        var parser = TOMLParser(bytes: bytes)
        try parser.parseDocument()
        return TOMLDocument(root: parser.root, bytes: bytes)
    }
}

/// A TOML syntax error at a byte offset of the document.
public struct TOMLError: Error, Sendable, CustomStringConvertible {
    public var offset: Int
    public var message: String

    public var description: String { message }
}

/// A parsed document: its root table and the means to turn byte offsets into lines.
public struct TOMLDocument {
    public let root: TOMLTable
    private let lineStarts: [Int]
    private let bytes: [UInt8]

    init(root: TOMLTable, bytes: [UInt8]) {
        self.root = root
        self.bytes = bytes
        self.lineStarts = TOMLDocument.lineStarts(of: bytes)
    }

    /// The 1-based line and column (in Unicode scalars) of a byte offset.
    public func position(of offset: Int) -> (line: Int, column: Int) {
        Self.position(of: offset, in: bytes, lineStarts: lineStarts)
    }

    public static func lineStarts(of bytes: [UInt8]) -> [Int] {
        var starts = [0]
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") { starts.append(offset + 1) }
        return starts
    }

    public static func position(of offset: Int, in bytes: [UInt8], lineStarts: [Int]) -> (line: Int, column: Int) {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        let start = lineStarts[low]
        let end = min(max(offset, start), bytes.count)
        let column = bytes[start..<end].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
        return (low + 1, column)
    }
}

/// A TOML table: its keys in the order written, and where it was written.
public final class TOMLTable {
    /// How the table came to be, which decides how it may be extended later.
    enum Origin {
        /// Made as the parent of a header's table (`[a]` for `[a.b]`); a header may still define it,
        /// or dotted keys extend it (it is then `dotted`).
        case implicit
        /// Defined by a `[header]`.
        case header
        /// Made by a dotted key (`a.b = 1`).
        case dotted
        /// An inline table `{ ... }`, closed once written.
        case inline
        /// An element of an array of tables (`[[header]]`).
        case arrayElement
    }

    var origin: Origin
    /// The byte offset where the table starts: its header's `[`, the `{`, or its first dotted key.
    public let start: Int
    /// For a table opened by a header line: from the start of that line to the end of the last
    /// line that belongs to it (its keys, and the headers and keys of its sub-tables).
    public internal(set) var extent: Range<Int>
    /// For a table opened by a header line: the runs of lines that belong to it, in file order.
    /// Its sub-tables' headers may come after another table's (`[[reminder]]`, `[defaults]`,
    /// `[reminder.active]`), so these runs can be apart where ``extent`` spans the gap.
    public internal(set) var sections: [Range<Int>] = []
    public private(set) var keys: [String] = []
    private var entries: [String: TOMLValue] = [:]

    init(origin: Origin, start: Int) {
        self.origin = origin
        self.start = start
        self.extent = start..<start
    }

    public subscript(key: String) -> TOMLValue? { entries[key] }

    /// Starts a run of lines of this table at `offset`, unless its last run ends there.
    func beginSection(at offset: Int) {
        if let last = sections.last, last.upperBound == offset { return }
        sections.append(offset..<offset)
    }

    /// The table's lines now reach `offset`.
    func extend(to offset: Int) {
        extent = extent.lowerBound..<offset
        if let last = sections.last { sections[sections.count - 1] = last.lowerBound..<offset }
    }

    func insert(_ key: String, _ value: TOMLValue) {
        keys.append(key)
        entries[key] = value
    }
}

/// An array: written as a value (closed once written), or made by `[[header]]` tables.
public final class TOMLArray {
    public private(set) var elements: [TOMLValue]
    /// True for an array of tables made by `[[header]]`, which later headers append to.
    public let isTableArray: Bool

    init(elements: [TOMLValue], isTableArray: Bool) {
        self.elements = elements
        self.isTableArray = isTableArray
    }

    func append(_ value: TOMLValue) { elements.append(value) }
}

/// A value and where it was written.
public struct TOMLValue {
    public enum Content {
        case string(String)
        case integer(Int)
        case float(Double)
        case boolean(Bool)
        /// An offset or local date-time, date or time, as written.
        case dateTime(String)
        case array(TOMLArray)
        case table(TOMLTable)
    }

    public var content: Content
    /// Byte offset of the key that names it (the value's own for array elements).
    public var keyOffset: Int
    /// Where the value of a `key = value` was written, from its first byte to just after its
    /// last (nil for tables made by headers or dotted keys, and for array elements): an edit
    /// replaces these bytes.
    public var valueRange: Range<Int>? = nil

    public var string: String? { if case .string(let value) = content { value } else { nil } }
    public var int: Int? { if case .integer(let value) = content { value } else { nil } }
    public var double: Double? { if case .float(let value) = content { value } else { nil } }
    public var bool: Bool? { if case .boolean(let value) = content { value } else { nil } }
    public var table: TOMLTable? { if case .table(let value) = content { value } else { nil } }
    public var array: [TOMLValue]? { if case .array(let value) = content { value.elements } else { nil } }

    /// "a string", "an integer"...: for messages about a value of the wrong type.
    public var typeDescription: String {
        switch content {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a number"
        case .boolean: "a boolean"
        case .dateTime: "a date or time"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

/// Finds the first byte of `bytes` that is a NUL or not part of well-formed UTF-8.
enum UTF8Check {
    static func firstInvalidOffset(in bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            if lead == 0 { return index }
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return index
            }
            guard index + length <= bytes.count else { return index }
            guard (low...high).contains(bytes[index + 1]) else { return index }
            for next in (index + 2)..<(index + length) where bytes[next] & 0xC0 != 0x80 { return index }
            index += length
        }
        return nil
    }
}

/// The parser's state: a cursor over the bytes and the tables built so far.
struct TOMLParser {
    let bytes: [UInt8]
    var position = 0
    let root = TOMLTable(origin: .header, start: 0)
    /// The table key/value lines go into.
    private var current: TOMLTable
    /// Tables opened by headers whose extent the current section's lines extend.
    private var owners: [TOMLTable] = []

    init(bytes: [UInt8]) {
        self.bytes = bytes
        current = root
    }

    private var atEnd: Bool { position >= bytes.count }
    private func peek(_ ahead: Int = 0) -> UInt8? {
        position + ahead < bytes.count ? bytes[position + ahead] : nil
    }

    private func fail(_ message: String, at offset: Int? = nil) -> TOMLError {
        TOMLError(offset: min(offset ?? position, bytes.count), message: message)
    }

    mutating func parseDocument() throws(TOMLError) {
        // A byte-order mark, as Windows editors write at the start of UTF-8, is not part of the
        // text: passed over, and kept where it is by edits, which work on the file's own bytes.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        while !atEnd {
            let lineStart = position
            skipBlanks()
            guard let byte = peek(), byte != UInt8(ascii: "#"), byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "\r") else {
                try endLine()
                continue
            }
            if byte == UInt8(ascii: "[") {
                try parseHeader(lineStart: lineStart)
            } else {
                try parseKeyValue(into: current, depth: 0)
            }
            try endLine()
            // Blank and comment lines extend no table: those just above a header belong to it.
            for owner in owners { owner.extend(to: position) }
        }
    }

    // MARK: Lines and headers

    private mutating func skipBlanks() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { position += 1 }
    }

    /// Blanks, an optional comment, then a newline or the end of the file.
    private mutating func endLine() throws(TOMLError) {
        skipBlanks()
        if peek() == UInt8(ascii: "#") { try skipComment() }
        guard let byte = peek() else { return }
        if byte == UInt8(ascii: "\n") {
            position += 1
        } else if byte == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
            position += 2
        } else {
            throw fail("expected the end of the line, found \(describe(byte))")
        }
    }

    private mutating func skipComment() throws(TOMLError) {
        while let byte = peek(), byte != UInt8(ascii: "\n") {
            if byte == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") { return }
            if isControl(byte) { throw fail("control character \(describe(byte)) in a comment") }
            position += 1
        }
    }

    /// Blanks, newlines and comments, as allowed inside arrays.
    private mutating func skipBlanksAndNewlines() throws(TOMLError) {
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"): position += 1
            case UInt8(ascii: "\r") where peek(1) == UInt8(ascii: "\n"): position += 2
            case UInt8(ascii: "#"): try skipComment()
            default: return
            }
        }
    }

    private mutating func parseHeader(lineStart: Int) throws(TOMLError) {
        let start = position
        let isArray = peek(1) == UInt8(ascii: "[")
        position += isArray ? 2 : 1
        skipBlanks()
        let key = try parseKey()
        skipBlanks()
        for _ in 0..<(isArray ? 2 : 1) {
            guard peek() == UInt8(ascii: "]") else { throw fail(isArray ? "expected ]] to close the header" : "expected ] to close the header") }
            position += 1
        }
        owners = []
        var table = root
        for (segment, offset) in key.dropLast() {
            if let existing = table[segment] {
                switch existing.content {
                case .table(let inner) where inner.origin != .inline:
                    table = inner
                case .array(let array) where array.isTableArray:
                    table = array.elements[array.elements.count - 1].table!
                    table.beginSection(at: lineStart)
                    owners.append(table)
                default:
                    throw fail("\(segment) is already \(existing.typeDescription) that cannot hold tables", at: offset)
                }
            } else {
                let made = TOMLTable(origin: .implicit, start: start)
                table.insert(segment, TOMLValue(content: .table(made), keyOffset: offset))
                table = made
            }
        }
        let (name, offset) = key[key.count - 1]
        let defined: TOMLTable
        if isArray {
            let element = TOMLTable(origin: .arrayElement, start: start)
            if let existing = table[name] {
                guard case .array(let array) = existing.content, array.isTableArray else {
                    throw fail("[[\(joined(key))]]: \(name) is already \(existing.typeDescription), not an array of tables", at: offset)
                }
                array.append(TOMLValue(content: .table(element), keyOffset: offset))
            } else {
                let array = TOMLArray(elements: [TOMLValue(content: .table(element), keyOffset: offset)], isTableArray: true)
                table.insert(name, TOMLValue(content: .array(array), keyOffset: offset))
            }
            defined = element
        } else if let existing = table[name] {
            guard let inner = existing.table, inner.origin == .implicit else {
                throw fail("[\(joined(key))] is defined twice (or it is already \(existing.typeDescription))", at: offset)
            }
            inner.origin = .header
            defined = inner
        } else {
            defined = TOMLTable(origin: .header, start: start)
            table.insert(name, TOMLValue(content: .table(defined), keyOffset: offset))
        }
        defined.extent = lineStart..<lineStart
        defined.beginSection(at: lineStart)
        owners.append(defined)
        current = defined
    }

    private func joined(_ key: [(String, Int)]) -> String { key.map(\.0).joined(separator: ".") }

    // MARK: Keys

    /// A dotted key: each part with the offset where it starts.
    private mutating func parseKey() throws(TOMLError) -> [(String, Int)] {
        var parts: [(String, Int)] = []
        while true {
            let start = position
            guard let byte = peek() else { throw fail("expected a key") }
            let part: String
            if byte == UInt8(ascii: "\"") {
                position += 1
                part = try parseBasicString()
            } else if byte == UInt8(ascii: "'") {
                position += 1
                part = try parseLiteralString()
            } else if isBareKeyByte(byte) {
                while let next = peek(), isBareKeyByte(next) { position += 1 }
                part = String(decoding: bytes[start..<position], as: UTF8.self)
            } else {
                throw fail("expected a key, found \(describe(byte))")
            }
            parts.append((part, start))
            guard parts.count <= TOML.maximumDepth else { throw fail("key has more than \(TOML.maximumDepth) parts", at: start) }
            skipBlanks()
            guard peek() == UInt8(ascii: ".") else { return parts }
            position += 1
            skipBlanks()
        }
    }

    private func isBareKeyByte(_ byte: UInt8) -> Bool { TOML.isBareKeyByte(byte) }

    /// `key = value` into `table`, the dotted parts of the key making (or entering) tables.
    private mutating func parseKeyValue(into table: TOMLTable, depth: Int) throws(TOMLError) {
        let key = try parseKey()
        guard depth + key.count <= TOML.maximumDepth else { throw fail("nested more than \(TOML.maximumDepth) levels deep") }
        skipBlanks()
        guard peek() == UInt8(ascii: "=") else {
            throw fail(peek().map { "expected = after the key, found \(describe($0))" } ?? "expected = after the key")
        }
        position += 1
        skipBlanks()
        var target = table
        for (segment, offset) in key.dropLast() {
            if let existing = target[segment] {
                // A table only made as a header's parent (`[a.b.c]` makes a.b) may take dotted
                // keys, after which no header may define it.
                guard let inner = existing.table, inner.origin == .dotted || inner.origin == .implicit else {
                    throw fail("\(segment) is already \(existing.typeDescription) defined elsewhere; it cannot be extended with a dotted key", at: offset)
                }
                inner.origin = .dotted
                target = inner
            } else {
                let made = TOMLTable(origin: .dotted, start: offset)
                target.insert(segment, TOMLValue(content: .table(made), keyOffset: offset))
                target = made
            }
        }
        let (name, offset) = key[key.count - 1]
        if target[name] != nil { throw fail("\(joined(key)) is defined twice", at: offset) }
        let valueStart = position
        let content = try parseValue(depth: depth + key.count)
        target.insert(name, TOMLValue(content: content, keyOffset: offset, valueRange: valueStart..<position))
    }

    // MARK: Values

    private mutating func parseValue(depth: Int) throws(TOMLError) -> TOMLValue.Content {
        guard depth <= TOML.maximumDepth else { throw fail("nested more than \(TOML.maximumDepth) levels deep") }
        guard let byte = peek() else { throw fail("expected a value") }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            let literal = byte == UInt8(ascii: "'")
            if peek(1) == byte, peek(2) == byte {
                position += 3
                return .string(try parseMultilineString(literal: literal))
            }
            position += 1
            return .string(literal ? try parseLiteralString() : try parseBasicString())
        case UInt8(ascii: "["):
            return try parseArray(depth: depth)
        case UInt8(ascii: "{"):
            return .table(try parseInlineTable(depth: depth))
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            for (word, value) in [("true", true), ("false", false)] where matches(word) {
                position += word.utf8.count
                return .boolean(value)
            }
            throw fail("expected a value, found \(describe(byte))")
        default:
            return try parseNumberOrDate()
        }
    }

    private func matches(_ word: String) -> Bool {
        let utf8 = Array(word.utf8)
        guard position + utf8.count <= bytes.count, Array(bytes[position..<position + utf8.count]) == utf8 else { return false }
        guard let after = peek(utf8.count) else { return true }
        return !isBareKeyByte(after)
    }

    private mutating func parseArray(depth: Int) throws(TOMLError) -> TOMLValue.Content {
        position += 1
        var elements: [TOMLValue] = []
        while true {
            try skipBlanksAndNewlines()
            guard let byte = peek() else { throw fail("unterminated array: expected ]") }
            if byte == UInt8(ascii: "]") {
                position += 1
                return .array(TOMLArray(elements: elements, isTableArray: false))
            }
            let start = position
            elements.append(TOMLValue(content: try parseValue(depth: depth + 1), keyOffset: start))
            try skipBlanksAndNewlines()
            if peek() == UInt8(ascii: ",") {
                position += 1
            } else if peek() != UInt8(ascii: "]") {
                throw fail(peek().map { "expected , or ] in the array, found \(describe($0))" } ?? "unterminated array: expected ]")
            }
        }
    }

    private mutating func parseInlineTable(depth: Int) throws(TOMLError) -> TOMLTable {
        let table = TOMLTable(origin: .dotted, start: position)
        position += 1
        skipBlanks()
        if peek() == UInt8(ascii: "}") {
            position += 1
            table.origin = .inline
            return table
        }
        while true {
            skipBlanks()
            try parseKeyValue(into: table, depth: depth + 1)
            skipBlanks()
            guard let byte = peek() else { throw fail("unterminated inline table: expected }") }
            position += 1
            if byte == UInt8(ascii: "}") { break }
            guard byte == UInt8(ascii: ",") else {
                throw fail("expected , or } in the inline table, found \(describe(byte))", at: position - 1)
            }
        }
        close(table)
        return table
    }

    /// Marks an inline table and the tables its dotted keys made as closed.
    private func close(_ table: TOMLTable) {
        var pending = [table]
        while let next = pending.popLast() {
            next.origin = .inline
            for key in next.keys {
                if let inner = next[key]?.table, inner.origin == .dotted { pending.append(inner) }
            }
        }
    }

    // MARK: Strings

    private func isControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7F
    }

    /// After the opening quote: up to and including the closing one.
    private mutating func parseBasicString() throws(TOMLError) -> String {
        var text: [UInt8] = []
        while true {
            guard let byte = peek() else { throw fail("unterminated string") }
            if byte == UInt8(ascii: "\"") {
                position += 1
                return String(decoding: text, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") {
                try appendEscape(to: &text)
                continue
            }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { throw fail("unterminated string (a basic string ends on its line)") }
            if isControl(byte) { throw fail("control character \(describe(byte)) in a string; write it as an escape") }
            text.append(byte)
            position += 1
        }
    }

    private mutating func parseLiteralString() throws(TOMLError) -> String {
        let start = position
        while true {
            guard let byte = peek() else { throw fail("unterminated string") }
            if byte == UInt8(ascii: "'") {
                position += 1
                return String(decoding: bytes[start..<position - 1], as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { throw fail("unterminated string (a literal string ends on its line)") }
            if isControl(byte) { throw fail("control character \(describe(byte)) in a string") }
            position += 1
        }
    }

    /// After the opening `"""` or `'''`: up to and including the closing one (with at most two
    /// quotes of the same kind before it, which belong to the text).
    private mutating func parseMultilineString(literal: Bool) throws(TOMLError) -> String {
        let quote = literal ? UInt8(ascii: "'") : UInt8(ascii: "\"")
        if peek() == UInt8(ascii: "\n") {
            position += 1
        } else if peek() == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
            position += 2
        }
        var text: [UInt8] = []
        while true {
            guard let byte = peek() else { throw fail("unterminated multi-line string") }
            if byte == quote, peek(1) == quote, peek(2) == quote {
                var run = 3
                while peek(run) == quote { run += 1 }
                guard run <= 5 else { throw fail("too many quotes at the end of a multi-line string") }
                text.append(contentsOf: repeatElement(quote, count: run - 3))
                position += run
                return String(decoding: text, as: UTF8.self)
            }
            if !literal, byte == UInt8(ascii: "\\") {
                if try skipLineEndingBackslash() { continue }
                try appendEscape(to: &text)
                continue
            }
            if byte == UInt8(ascii: "\r") {
                guard peek(1) == UInt8(ascii: "\n") else { throw fail("carriage return without a line feed in a string") }
                text.append(contentsOf: [0x0D, 0x0A])
                position += 2
                continue
            }
            if byte != UInt8(ascii: "\n"), isControl(byte) {
                throw fail("control character \(describe(byte)) in a string\(literal ? "" : "; write it as an escape")")
            }
            text.append(byte)
            position += 1
        }
    }

    /// A `\` followed by blanks and a newline: skips it and all blanks and newlines after it.
    private mutating func skipLineEndingBackslash() throws(TOMLError) -> Bool {
        var ahead = 1
        while let byte = peek(ahead), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { ahead += 1 }
        guard peek(ahead) == UInt8(ascii: "\n") || (peek(ahead) == UInt8(ascii: "\r") && peek(ahead + 1) == UInt8(ascii: "\n"))
        else { return false }
        position += ahead
        while let byte = peek() {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") {
                position += 1
            } else if byte == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
                position += 2
            } else {
                break
            }
        }
        return true
    }

    private mutating func appendEscape(to text: inout [UInt8]) throws(TOMLError) {
        let start = position
        position += 1
        guard let code = peek() else { throw fail("unterminated string") }
        position += 1
        let simple: [UInt8: UInt8] = [
            UInt8(ascii: "b"): 0x08, UInt8(ascii: "t"): 0x09, UInt8(ascii: "n"): 0x0A, UInt8(ascii: "f"): 0x0C,
            UInt8(ascii: "r"): 0x0D, UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C,
        ]
        if let byte = simple[code] {
            text.append(byte)
            return
        }
        let digits: Int
        switch code {
        case UInt8(ascii: "u"): digits = 4
        case UInt8(ascii: "U"): digits = 8
        default: throw fail("unknown escape \\\(describe(code))", at: start)
        }
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard let byte = peek(), let digit = hexValue(byte) else { throw fail("\\\(Character(Unicode.Scalar(code))) needs \(digits) hex digits", at: start) }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw fail("\\\(Character(Unicode.Scalar(code))) escape is not a Unicode scalar value", at: start)
        }
        text.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    private func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Numbers and dates

    private mutating func parseNumberOrDate() throws(TOMLError) -> TOMLValue.Content {
        let start = position
        while let byte = peek(), isNumberByte(byte) { position += 1 }
        // A date and a time may be separated by one space.
        if position - start == 10, peek() == UInt8(ascii: " "), let digit = peek(1), isDigit(digit),
           let next = peek(2), isDigit(next), peek(3) == UInt8(ascii: ":") {
            position += 1
            while let byte = peek(), isNumberByte(byte) { position += 1 }
        }
        let token = Array(bytes[start..<position])
        guard !token.isEmpty else { throw fail(peek().map { "expected a value, found \(describe($0))" } ?? "expected a value") }
        // A date starts with four digits and a '-' (a float such as 1.5e-3 has a '-' there too);
        // a time with two digits and a ':'.
        if token.count >= 5, token[0..<4].allSatisfy(isDigit) && token[4] == UInt8(ascii: "-")
            || token[0..<2].allSatisfy(isDigit) && token[2] == UInt8(ascii: ":") {
            guard TOMLDateTime.isValid(token) else { throw fail("invalid date or time", at: start) }
            return .dateTime(String(decoding: token, as: UTF8.self))
        }
        if token.count >= 3, token[2] == UInt8(ascii: ":"), isDigit(token[0]) {
            guard TOMLDateTime.isValid(token) else { throw fail("invalid time", at: start) }
            return .dateTime(String(decoding: token, as: UTF8.self))
        }
        if let number = TOMLNumber.parse(token) { return number }
        throw fail("invalid value \"\(String(decoding: token.prefix(40), as: UTF8.self))\"", at: start)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private func isNumberByte(_ byte: UInt8) -> Bool {
        isBareKeyByte(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
    }

    /// A byte named for a message: the character, or its code when it is not printable.
    private func describe(_ byte: UInt8) -> String {
        if byte == UInt8(ascii: "\n") { return "the end of the line" }
        return byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }
}

/// TOML's integers and floats.
enum TOMLNumber {
    static func parse(_ token: [UInt8]) -> TOMLValue.Content? {
        var body = token[...]
        var negative = false
        if let sign = body.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            body = body.dropFirst()
        }
        let word = String(decoding: body, as: UTF8.self)
        if word == "inf" { return .float(negative ? -.infinity : .infinity) }
        if word == "nan" { return .float(.nan) }
        if body.count > 2, body.first == UInt8(ascii: "0"), body.count == token.count {
            let radix: Int?
            switch body[body.startIndex + 1] {
            case UInt8(ascii: "x"): radix = 16
            case UInt8(ascii: "o"): radix = 8
            case UInt8(ascii: "b"): radix = 2
            default: radix = nil
            }
            if let radix {
                guard let digits = digitsWithUnderscores(body.dropFirst(2), radix: radix),
                      let value = Int(digits, radix: radix) else { return nil }
                return .integer(value)
            }
        }
        // Decimal: integer part, then an optional fraction and exponent.
        var rest = body
        let integerEnd = rest.firstIndex { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } ?? rest.endIndex
        guard let integer = digitsWithUnderscores(rest[..<integerEnd], radix: 10) else { return nil }
        if integer.count > 1, integer.first == "0" { return nil }
        rest = rest[integerEnd...]
        var text = integer
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            let fractionEnd = rest.firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } ?? rest.endIndex
            guard let fraction = digitsWithUnderscores(rest[..<fractionEnd], radix: 10) else { return nil }
            text += "." + fraction
            rest = rest[fractionEnd...]
        }
        if let marker = rest.first, marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
            rest = rest.dropFirst()
            var sign = ""
            if let first = rest.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
                sign = first == UInt8(ascii: "-") ? "-" : ""
                rest = rest.dropFirst()
            }
            guard let exponent = digitsWithUnderscores(rest, radix: 10) else { return nil }
            text += "e" + sign + exponent
            rest = rest[rest.endIndex...]
        }
        guard rest.isEmpty else { return nil }
        if text == integer {
            guard let value = Int((negative ? "-" : "") + integer) else { return nil }
            return .integer(value)
        }
        guard let value = Double(text) else { return nil }
        return .float(negative ? -value : value)
    }

    /// The digits of `bytes` without their underscores, each underscore between two digits.
    private static func digitsWithUnderscores(_ bytes: ArraySlice<UInt8>, radix: Int) -> String? {
        guard let first = bytes.first, let last = bytes.last, first != UInt8(ascii: "_"), last != UInt8(ascii: "_") else { return nil }
        var digits = ""
        var previousUnderscore = false
        for byte in bytes {
            if byte == UInt8(ascii: "_") {
                if previousUnderscore { return nil }
                previousUnderscore = true
                continue
            }
            previousUnderscore = false
            let character = Character(Unicode.Scalar(byte))
            guard character.isASCII, character.hexDigitValue.map({ $0 < radix }) ?? false else { return nil }
            digits.append(character)
        }
        return digits
    }
}

/// TOML's dates and times: checked for form and range, kept as text.
enum TOMLDateTime {
    static func isValid(_ token: [UInt8]) -> Bool {
        var rest = token[...]
        if token.count >= 10, token[4] == UInt8(ascii: "-") {
            guard let year = number(&rest, 4), take(&rest, "-"), let month = number(&rest, 2), take(&rest, "-"),
                  let day = number(&rest, 2), (1...12).contains(month), day >= 1, day <= daysIn(month, year: year)
            else { return false }
            if rest.isEmpty { return true }
            guard let separator = rest.first, [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(separator) else { return false }
            rest = rest.dropFirst()
            guard time(&rest) else { return false }
            if rest.isEmpty { return true }
            if rest == [UInt8(ascii: "Z")] || rest == [UInt8(ascii: "z")] { return true }
            guard let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return false }
            rest = rest.dropFirst()
            guard let hours = number(&rest, 2), take(&rest, ":"), let minutes = number(&rest, 2) else { return false }
            return rest.isEmpty && hours < 24 && minutes < 60
        }
        return time(&rest) && rest.isEmpty
    }

    private static func time(_ rest: inout ArraySlice<UInt8>) -> Bool {
        guard let hour = number(&rest, 2), take(&rest, ":"), let minute = number(&rest, 2), take(&rest, ":"),
              // No leap second: Python's tomllib, which the tests read against, and most readers refuse :60.
              let second = number(&rest, 2), hour < 24, minute < 60, second < 60 else { return false }
        if take(&rest, ".") {
            let digits = rest.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            guard !digits.isEmpty else { return false }
            rest = rest.dropFirst(digits.count)
        }
        return true
    }

    private static func number(_ rest: inout ArraySlice<UInt8>, _ count: Int) -> Int? {
        guard rest.count >= count else { return nil }
        var value = 0
        for byte in rest.prefix(count) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        rest = rest.dropFirst(count)
        return value
    }

    private static func take(_ rest: inout ArraySlice<UInt8>, _ character: Unicode.Scalar) -> Bool {
        guard rest.first == UInt8(character.value) else { return false }
        rest = rest.dropFirst()
        return true
    }

    private static func daysIn(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
