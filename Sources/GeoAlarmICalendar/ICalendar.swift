/// One content line of an iCalendar object (RFC 5545, 3.1): `NAME;PARAM=VALUE:value`, unfolded,
/// with where its physical lines lie in the bytes read (so that a writer can replace exactly them).
public struct ContentLine: Sendable, Equatable {
    /// The property's name, upper case (names are case-insensitive).
    public var name: String
    public var parameters: [Parameter]
    /// The value as written (unfolded, not unescaped).
    public var value: String
    /// The bytes of its physical lines, their line ends included.
    public var range: Range<Int>
    /// Its first physical line, 1-based.
    public var line: Int

    /// A parameter and its values (quotes taken off; RFC 6868's `^` escapes read).
    public struct Parameter: Sendable, Equatable {
        /// Upper case.
        public var name: String
        public var values: [String]
    }

    /// The first value of the parameter `name` (upper case), if any.
    public func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.values.first
    }

    /// The value read as TEXT: `\n`, `\,`, `\;` and `\\` unescaped.
    public var text: String { ICalendarText.unescaped(value) }
}

/// A component: `BEGIN:NAME` ... `END:NAME`, its properties and the components inside it.
public struct Component: Sendable, Equatable {
    /// Upper case: `VCALENDAR`, `VTODO`, `VALARM`, `VLOCATION`...
    public var name: String
    public var properties: [ContentLine]
    public var components: [Component]
    /// The bytes from its `BEGIN` line to its `END` line, both included.
    public var range: Range<Int>
    /// Where its `END` line starts: where a property added to it goes.
    public var endLineStart: Int

    /// The first property called `name` (upper case).
    public func property(_ name: String) -> ContentLine? {
        properties.first { $0.name == name }
    }

    /// Every property called `name`.
    public func properties(_ name: String) -> [ContentLine] {
        properties.filter { $0.name == name }
    }

    /// The components called `name` directly inside this one.
    public func components(_ name: String) -> [Component] {
        components.filter { $0.name == name }
    }
}

/// Why bytes are not an iCalendar object this reader takes, and where.
public struct ICalendarError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line (0 for the object as a whole).
    public var line: Int
    public var message: String

    public var description: String { line > 0 ? "line \(line): \(message)" : message }
}

/// Reads an iCalendar object (RFC 5545): strict where a reading could go wrong, and bounded.
///
/// Content lines end in CRLF (or LF alone, as some writers leave them); a line that starts with a
/// space or a tab continues the one before. Names are tokens, parameter values plain or quoted.
/// The object must be UTF-8 and one `VCALENDAR`; components must nest and close, at most
/// ``deepest`` deep; a content line, unfolded, is at most ``longestLine`` bytes.
public enum ICalendarReader {
    /// The longest content line taken, unfolded: 256 KiB (an inline attachment is refused beyond).
    public static let longestLine = 256 << 10
    /// The deepest nesting of components (VCALENDAR, VTODO, VALARM, VLOCATION are four).
    public static let deepest = 8

    /// The object in `bytes`: its `VCALENDAR` component.
    public static func read(_ bytes: [UInt8]) throws(ICalendarError) -> Component {
        if let nul = bytes.firstIndex(of: 0) { throw ICalendarError(line: lineOf(nul, in: bytes), message: "a NUL byte") }
        var stack: [Component] = []
        var root: Component?
        // A byte order mark (some Windows writers put one first) is no part of the object.
        var reader = LineReader(bytes: bytes, position: bytes.starts(with: byteOrderMark) ? byteOrderMark.count : 0)
        while let physical = try reader.next() {
            let content = try parse(physical, in: bytes)
            if content.name == "BEGIN" {
                guard root == nil else { throw ICalendarError(line: physical.line, message: "more after the end of the calendar") }
                guard stack.count < deepest else {
                    throw ICalendarError(line: physical.line, message: "components nested deeper than \(deepest)")
                }
                let name = content.value.uppercased()
                guard !name.isEmpty, name.utf8.allSatisfy(isNameByte) else {
                    throw ICalendarError(line: physical.line, message: "BEGIN without a component name")
                }
                if stack.isEmpty, name != "VCALENDAR" {
                    throw ICalendarError(line: physical.line, message: "the object begins with \(name), not VCALENDAR")
                }
                stack.append(Component(name: name, properties: [], components: [], range: physical.range, endLineStart: 0))
            } else if content.name == "END" {
                guard var open = stack.popLast() else {
                    throw ICalendarError(line: physical.line, message: "END:\(content.value) without its BEGIN")
                }
                guard content.value.uppercased() == open.name else {
                    throw ICalendarError(line: physical.line, message: "END:\(content.value) closes \(open.name)")
                }
                open.range = open.range.lowerBound..<physical.range.upperBound
                open.endLineStart = physical.range.lowerBound
                if stack.isEmpty {
                    root = open
                } else {
                    stack[stack.count - 1].components.append(open)
                }
            } else {
                guard !stack.isEmpty else {
                    throw ICalendarError(
                        line: physical.line, message: root == nil ? "a property before BEGIN:VCALENDAR" : "more after the end of the calendar")
                }
                stack[stack.count - 1].properties.append(content)
            }
        }
        if let open = stack.last { throw ICalendarError(line: 0, message: "\(open.name) is never closed (END:\(open.name))") }
        guard let root else { throw ICalendarError(line: 0, message: "no BEGIN:VCALENDAR") }
        return root
    }

    /// One physical line run (a content line and its continuations): where its bytes are, and
    /// its text unfolded.
    struct PhysicalLine {
        var range: Range<Int>
        var unfolded: ArraySlice<UInt8>
        var line: Int
    }

    /// UTF-8's byte order mark.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Splits the bytes into content lines, unfolding them. Each content line is checked for
    /// UTF-8 once unfolded (RFC 5545 3.1: a writer may fold inside a character), and for a
    /// carriage return that ends no line.
    struct LineReader {
        let bytes: [UInt8]
        var position = 0
        var lineNumber = 1

        /// The next content line, or nil at the end; blank lines are passed over.
        mutating func next() throws(ICalendarError) -> PhysicalLine? {
            while position < bytes.count {
                let start = position, firstLine = lineNumber
                var unfolded: [UInt8] = []
                var end = endOfLine(from: position)
                unfolded += bytes[position..<end.text]
                position = end.next
                lineNumber += 1
                // Continuation lines: a space or a tab, then more of the same content line.
                while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x09 {
                    end = endOfLine(from: position)
                    unfolded += bytes[(position + 1)..<end.text]
                    position = end.next
                    lineNumber += 1
                    guard unfolded.count <= longestLine else {
                        throw ICalendarError(line: firstLine, message: "a content line longer than \(longestLine) bytes")
                    }
                }
                guard unfolded.count <= longestLine else {
                    throw ICalendarError(line: firstLine, message: "a content line longer than \(longestLine) bytes")
                }
                if unfolded.isEmpty { continue }
                if unfolded.contains(0x0D) {
                    throw ICalendarError(
                        line: firstLine,
                        message: "a carriage return (CR) that ends no line: lines end in CR LF (or LF), and this file's seem to end in CR alone")
                }
                guard String(validating: unfolded, as: UTF8.self) != nil else {
                    throw ICalendarError(line: firstLine, message: "not UTF-8 text")
                }
                return PhysicalLine(range: start..<position, unfolded: unfolded[...], line: firstLine)
            }
            return nil
        }

        /// Where the line starting at `start` ends: its text's end (before CR LF or LF) and the next line's start.
        private func endOfLine(from start: Int) -> (text: Int, next: Int) {
            guard let newline = bytes[start...].firstIndex(of: 0x0A) else { return (bytes.count, bytes.count) }
            let text = newline > start && bytes[newline - 1] == 0x0D ? newline - 1 : newline
            return (text, newline + 1)
        }
    }

    /// `NAME *(";" param) ":" value`.
    static func parse(_ physical: PhysicalLine, in bytes: [UInt8]) throws(ICalendarError) -> ContentLine {
        let text = physical.unfolded
        var index = text.startIndex
        func fail(_ message: String) -> ICalendarError { ICalendarError(line: physical.line, message: message) }
        let nameEnd = text[index...].firstIndex { !isNameByte($0) } ?? text.endIndex
        guard nameEnd > index else { throw fail("a content line without a name") }
        let name = String(decoding: text[index..<nameEnd], as: UTF8.self).uppercased()
        index = nameEnd
        var parameters: [ContentLine.Parameter] = []
        while index < text.endIndex, text[index] == UInt8(ascii: ";") {
            index += 1
            let parameterEnd = text[index...].firstIndex { !isNameByte($0) } ?? text.endIndex
            guard parameterEnd > index, parameterEnd < text.endIndex, text[parameterEnd] == UInt8(ascii: "=") else {
                throw fail("\(name): a parameter without \"NAME=\"")
            }
            let parameterName = String(decoding: text[index..<parameterEnd], as: UTF8.self).uppercased()
            index = parameterEnd + 1
            var values: [String] = []
            while true {
                if index < text.endIndex, text[index] == UInt8(ascii: "\"") {
                    guard let close = text[(index + 1)...].firstIndex(of: UInt8(ascii: "\"")) else {
                        throw fail("\(name): a parameter's quoted value is never closed")
                    }
                    values.append(caretUnescaped(text[(index + 1)..<close]))
                    index = close + 1
                } else {
                    let valueEnd = text[index...].firstIndex {
                        $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"")
                    } ?? text.endIndex
                    guard valueEnd == text.endIndex || text[valueEnd] != UInt8(ascii: "\"") else {
                        throw fail("\(name): a quote inside a parameter's value")
                    }
                    values.append(caretUnescaped(text[index..<valueEnd]))
                    index = valueEnd
                }
                guard index < text.endIndex, text[index] == UInt8(ascii: ",") else { break }
                index += 1
            }
            parameters.append(ContentLine.Parameter(name: parameterName, values: values))
        }
        guard index < text.endIndex, text[index] == UInt8(ascii: ":") else { throw fail("\(name): no \":\" before its value") }
        let value = String(decoding: text[(index + 1)...], as: UTF8.self)
        return ContentLine(name: name, parameters: parameters, value: value, range: physical.range, line: physical.line)
    }

    /// A byte of a name (of a property, parameter or component): letters, digits and dashes.
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"): true
        default: false
        }
    }

    /// RFC 6868: `^n` a newline, `^^` a caret, `^'` a double quote; any other caret as it is.
    private static func caretUnescaped(_ bytes: ArraySlice<UInt8>) -> String {
        guard bytes.contains(UInt8(ascii: "^")) else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "^"), index + 1 < bytes.endIndex {
                switch bytes[index + 1] {
                case UInt8(ascii: "n"): out.append(0x0A); index += 2; continue
                case UInt8(ascii: "^"): out.append(UInt8(ascii: "^")); index += 2; continue
                case UInt8(ascii: "'"): out.append(UInt8(ascii: "\"")); index += 2; continue
                default: break
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func lineOf(_ offset: Int, in bytes: [UInt8]) -> Int {
        bytes[..<min(offset, bytes.count)].count { $0 == 0x0A } + 1
    }
}

/// TEXT values (RFC 5545, 3.3.11): escaping and unescaping.
public enum ICalendarText {
    /// `\n` or `\N` a newline, `\,` `\;` `\\` the character itself; any other backslash kept.
    public static func unescaped(_ value: String) -> String {
        guard value.contains("\\") else { return value }
        var out = ""
        var escaping = false
        for character in value {
            if escaping {
                switch character {
                case "n", "N": out.append("\n")
                case ",", ";", "\\": out.append(character)
                default: out.append("\\"); out.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.append(character)
            }
        }
        if escaping { out.append("\\") }
        return out
    }

    /// `text` as a TEXT value: backslashes, commas, semicolons and newlines escaped.
    public static func escaped(_ text: String) -> String {
        text.replacingCharacters { character in
            switch character {
            case "\\": "\\\\"
            case ",": "\\,"
            case ";": "\\;"
            case "\n", "\r\n": "\\n"
            case "\r": ""
            default: nil
            }
        }
    }
}
