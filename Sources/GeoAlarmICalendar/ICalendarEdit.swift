import FoundationEssentials

/// Changes properties of one component of an iCalendar object and keeps every other byte: the
/// other lines, their folding and line ends, unknown properties and parameters, the other
/// components. A changed property's lines are replaced by the new line; a new property goes
/// just before the component's `END` line; a removed one takes its lines with it. New lines end
/// as the object's first line does (CRLF, as RFC 5545 asks, unless the object uses LF) and are
/// folded at 75 bytes, never inside a character.
public struct ICalendarEdit {
    private let bytes: [UInt8]
    private let component: Component
    private var replacements: [(range: Range<Int>, text: [UInt8])] = []
    private var added: [UInt8] = []
    private let lineEnd: [UInt8]

    /// Edits of `component`, read from `bytes`.
    public init(_ bytes: [UInt8], component: Component) {
        self.bytes = bytes
        self.component = component
        let firstNewline = bytes.firstIndex(of: 0x0A)
        lineEnd = firstNewline.map { $0 > 0 && bytes[$0 - 1] == 0x0D } == false ? [0x0A] : [0x0D, 0x0A]
    }

    /// Sets `name` to `value` (its text as written, parameters included: `COMPLETED:...`): the
    /// first such property's lines are replaced (any others removed), or a line is added.
    public mutating func set(_ name: String, _ line: String) {
        let existing = component.properties(name)
        let folded = fold(line)
        if let first = existing.first {
            replacements.append((first.range, folded))
            for other in existing.dropFirst() { replacements.append((other.range, [])) }
        } else {
            added += folded
        }
    }

    /// Replaces `property` (of this component or one inside it) with `line`.
    public mutating func replace(_ property: ContentLine, with line: String) {
        replacements.append((property.range, fold(line)))
    }

    /// Removes every property called `name`.
    public mutating func remove(_ name: String) {
        for property in component.properties(name) { replacements.append((property.range, [])) }
    }

    /// The object with the edits made.
    public var result: [UInt8] {
        var edited = bytes
        var edits = replacements
        if !added.isEmpty { edits.append((component.endLineStart..<component.endLineStart, added)) }
        for edit in edits.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            edited.replaceSubrange(edit.range, with: edit.text)
        }
        return edited
    }

    /// A content line folded at 75 bytes (continuations start with a space), with its line end.
    func fold(_ line: String) -> [UInt8] {
        Self.fold(line, lineEnd: lineEnd)
    }

    /// `line` folded at 75 bytes with `lineEnd` after each physical line.
    static func fold(_ line: String, lineEnd: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var width = 0
        for scalar in line.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            if width + encoded.count > 75 {
                out += lineEnd + [0x20]
                width = 1
            }
            out += encoded
            width += encoded.count
        }
        return out + lineEnd
    }
}
