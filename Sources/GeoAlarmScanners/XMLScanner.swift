import FoundationEssentials

/// A pull reader of XML documents over bytes, for the GPX readers (tracks here, waypoint
/// collections in the config): start tags, end tags and text, in document order, with lines.
///
/// Not Foundation's XMLParser: libxml2 behind it took 3.8 s for a million waypoints (this reads
/// them in 0.6 s), refuses a document over 10 MB given at once, and brings libxml2 and ICU into
/// the agent's memory. It checks what makes XML well-formed that a reader of GPX can trip over
/// (tags nest and close, attributes are quoted, entities are known, one root element, text
/// only inside it, a supported encoding) and stops at the first fault with its line. It does
/// not validate against a DTD or schema, and reads no external entities.
public struct XMLScanner {
    /// Where and why the document is not well-formed XML (or not in a supported encoding).
    public struct Failure: Error, Sendable {
        /// 1-based line of the document.
        public var line: Int
        public var message: String
    }

    /// What the document holds next.
    public enum Event: Equatable {
        /// A start tag (of an empty element `<a/>` too, whose `.end` follows at once); its
        /// attributes are read with ``XMLScanner/number(_:)`` until the next event.
        case start(Tag)
        case end(Tag)
        /// Character data (text or a CDATA section) inside the root element; its characters
        /// are read with ``XMLScanner/bytes(of:)``.
        case text(Text)
    }

    /// An element's tag: where its name is, and the line of its `<`.
    public struct Tag: Equatable {
        fileprivate var name: Range<Int>
        public var line: Int
    }

    /// A stretch of character data, as written.
    public struct Text: Equatable {
        fileprivate var range: Range<Int>
        /// Holds `&...;` references to decode (never in CDATA).
        fileprivate var hasReferences: Bool
    }

    private enum Encoding {
        case utf8, latin1
    }

    private let bytes: [UInt8]
    private var position = 0
    /// The 1-based line of `position`.
    private var line = 1
    private var encoding = Encoding.utf8
    /// The elements open, innermost last.
    private var open: [Tag] = []
    private var sawRoot = false
    /// The end of an empty element, due as the next event.
    private var pendingEnd: Tag?
    /// The attributes of the last start tag: name and value ranges, reused from tag to tag.
    private var attributes: [(name: Range<Int>, value: Range<Int>)] = []

    /// A scanner at the start of `bytes` (after a UTF-8 byte order mark, if any).
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// How many elements are open, counting one just started.
    public var depth: Int { open.count }

    /// The next event, or nil at the end of a well-formed document.
    public mutating func next() throws(Failure) -> Event? {
        if let tag = pendingEnd {
            pendingEnd = nil
            open.removeLast()
            return .end(tag)
        }
        if position == 0, bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw fail("the file is UTF-16; save it as UTF-8")
        }
        while position < bytes.count {
            if bytes[position] != .lessThan {
                if let text = try text() { return .text(text) }
            } else if let event = try markup() {
                return event
            }
        }
        if let element = open.last {
            throw fail("the file ends before <\(string(element.name))> (line \(element.line)) is closed")
        }
        guard sawRoot else { throw fail("there is no element in the file") }
        return nil
    }

    /// True when the tag's name, without a namespace prefix (`gpx:wpt` is `wpt`), is `local`.
    public func tag(_ tag: Tag, isNamed local: StaticString) -> Bool {
        let name = bytes[tag.name]
        let start = name.lastIndex(of: .colon).map { $0 + 1 } ?? name.startIndex
        return Self.equal(bytes[start..<name.endIndex], local)
    }

    /// A tag's namespace prefix (`d` of `d:multistatus`); empty when it has none.
    public func prefix(of tag: Tag) -> Substring {
        let name = string(tag.name)
        return name.firstIndex(of: ":").map { name[..<$0] } ?? ""
    }

    /// The namespaces the last start tag declares (`xmlns="DAV:"`, `xmlns:c="urn:..."`): each
    /// prefix (empty for the default namespace) with its name, references decoded.
    public var declaredNamespaces: [(prefix: String, name: String)] {
        attributes.compactMap { attribute in
            let written = string(attribute.name)
            let value = text(ofValue: attribute.value)
            if written == "xmlns" { return ("", value) }
            guard written.hasPrefix("xmlns:") else { return nil }
            return (String(written.dropFirst("xmlns:".count)), value)
        }
    }

    /// A tag's name as written, its prefix too (`d:multistatus`, `html`): for a message.
    public func writtenName(of tag: Tag) -> String {
        string(tag.name)
    }

    /// The last start tag's attribute `name` read as a decimal number; nil when the tag has no
    /// such attribute or its value is no number.
    public func number(_ name: StaticString) -> Double? {
        let found = attributes.first { Self.equal(bytes[$0.name], name) }
        return found.flatMap { DecimalText.value(bytes[$0.value]) }
    }

    /// The last start tag's attribute `name` (without a namespace prefix), its references
    /// decoded; nil when the tag has no such attribute.
    public func attribute(_ name: StaticString) -> String? {
        guard let found = attributes.first(where: { attribute in
            let written = bytes[attribute.name]
            let start = written.lastIndex(of: .colon).map { $0 + 1 } ?? written.startIndex
            return Self.equal(bytes[start..<written.endIndex], name)
        }) else { return nil }
        return text(ofValue: found.value)
    }

    /// An attribute's value as text, its references decoded.
    private func text(ofValue range: Range<Int>) -> String {
        String(decoding: characters(range, hasReferences: bytes[range].contains(UInt8(ascii: "&"))), as: UTF8.self)
    }

    /// The text's characters as UTF-8, entity references decoded.
    public func bytes(of text: Text) -> ArraySlice<UInt8> {
        characters(text.range, hasReferences: text.hasReferences)
    }

    /// UTF-8 text as a String without the XML blanks (space, tab, line ends) around it.
    public static func trimmed(_ text: [UInt8]) -> String {
        String(decoding: trimmedBytes(text), as: UTF8.self)
    }

    /// ``trimmed(_:)`` as bytes, for a reader of numbers.
    public static func trimmedBytes(_ text: [UInt8]) -> ArraySlice<UInt8> {
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else {
            return []
        }
        return text[first...last]
    }

    // MARK: Markup

    private mutating func markup() throws(Failure) -> Event? {
        if starts(with: "<?") {
            try processingInstruction()
        } else if starts(with: "<!--") {
            try skip(past: "-->", what: "comment")
        } else if starts(with: "<![CDATA[") {
            position += 9
            let start = position
            try skip(past: "]]>", what: "CDATA section")
            return try insideRoot(Text(range: start..<position - 3, hasReferences: false)).map(Event.text)
        } else if starts(with: "<!") {
            try declaration()
        } else if starts(with: "</") {
            return .end(try endTag())
        } else {
            return .start(try startTag())
        }
        return nil
    }

    /// `<?xml ... ?>` (whose encoding is read) or another processing instruction (passed over).
    private mutating func processingInstruction() throws(Failure) {
        let start = position
        try skip(past: "?>", what: "processing instruction")
        let instruction = String(decoding: bytes[start..<position], as: UTF8.self)
        guard start == 0 || start == 3, instruction.hasPrefix("<?xml "),
              let encodingName = Self.pseudoAttribute("encoding", in: instruction)?.lowercased()
        else { return }
        switch encodingName {
        case "utf-8", "utf8", "us-ascii", "ascii": encoding = .utf8
        case "iso-8859-1", "latin1", "iso_8859-1": encoding = .latin1
        default: throw fail("the encoding \"\(encodingName)\" is not supported; save the file as UTF-8")
        }
    }

    /// The value of `name="..."` in an XML declaration.
    private static func pseudoAttribute(_ name: String, in instruction: String) -> String? {
        guard let key = instruction.firstRange(of: name + "=") else { return nil }
        let rest = instruction[key.upperBound...]
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    /// `<!DOCTYPE ...>` and the like, with any `[...]` internal subset: passed over.
    private mutating func declaration() throws(Failure) {
        let startLine = line
        var brackets = 0
        while position < bytes.count {
            let byte = bytes[position]
            advance()
            if byte == .openBracket {
                brackets += 1
            } else if byte == .closeBracket {
                brackets -= 1
            } else if byte == .greaterThan, brackets <= 0 {
                return
            }
        }
        throw Failure(line: startLine, message: "a <! declaration is not closed")
    }

    private mutating func startTag() throws(Failure) -> Tag {
        let tagLine = line
        position += 1
        let name = try self.name()
        let opened = Tag(name: name, line: tagLine)
        if open.isEmpty {
            guard !sawRoot else { throw fail("a second root element <\(string(name))> after the first one closed") }
            sawRoot = true
        }
        attributes.removeAll(keepingCapacity: true)
        while true {
            let blank = skipBlanks()
            guard position < bytes.count else { throw fail("the file ends inside the tag <\(string(name))>") }
            switch bytes[position] {
            case .greaterThan:
                position += 1
                open.append(opened)
                return opened
            case .slash:
                position += 1
                guard position < bytes.count, bytes[position] == .greaterThan else {
                    throw fail("expected '>' after '/' in <\(string(name))>")
                }
                position += 1
                open.append(opened)
                pendingEnd = opened
                return opened
            default:
                guard blank else { throw fail("expected a blank between the attributes of <\(string(name))>") }
                attributes.append(try attribute())
            }
        }
    }

    /// `name="value"` (or with single quotes): the ranges of the name and of the value as written.
    private mutating func attribute() throws(Failure) -> (name: Range<Int>, value: Range<Int>) {
        let name = try self.name()
        skipBlanks()
        guard position < bytes.count, bytes[position] == .equals else {
            throw fail("the attribute \(string(name)) has no '=' and value")
        }
        position += 1
        skipBlanks()
        guard position < bytes.count, bytes[position] == .quote || bytes[position] == .apostrophe else {
            throw fail("the value of the attribute \(string(name)) is not in quotes")
        }
        let quote = bytes[position]
        position += 1
        let start = position
        var hasReferences = false
        while position < bytes.count, bytes[position] != quote {
            if bytes[position] == .lessThan { throw fail("'<' inside the value of the attribute \(string(name))") }
            if bytes[position] == .ampersand { hasReferences = true }
            advance()
        }
        guard position < bytes.count else { throw fail("the value of the attribute \(string(name)) is not closed") }
        position += 1
        if hasReferences { try checkReferences(start..<position - 1) }
        return (name, start..<position - 1)
    }

    private mutating func endTag() throws(Failure) -> Tag {
        let tagLine = line
        position += 2
        let name = try self.name()
        skipBlanks()
        guard position < bytes.count, bytes[position] == .greaterThan else {
            throw fail("expected '>' to end </\(string(name))>")
        }
        position += 1
        guard let element = open.popLast() else { throw fail("</\(string(name))> closes no element") }
        guard bytes[element.name].elementsEqual(bytes[name]) else {
            throw fail("</\(string(name))> closes <\(string(element.name))> (line \(element.line))")
        }
        return Tag(name: name, line: tagLine)
    }

    /// An element or attribute name; fails where there is none.
    private mutating func name() throws(Failure) -> Range<Int> {
        let start = position
        while position < bytes.count, !Self.endsName(bytes[position]) { position += 1 }
        guard position > start else { throw fail("expected a name after '<'") }
        return start..<position
    }

    private static func endsName(_ byte: UInt8) -> Bool {
        switch byte {
        case .space, .tab, .newline, .carriageReturn, .slash, .greaterThan, .equals, .lessThan, .quote, .apostrophe: true
        default: false
        }
    }

    // MARK: Text

    /// Character data up to the next `<`; nil for blanks between elements outside the root.
    private mutating func text() throws(Failure) -> Text? {
        let start = position
        var hasReferences = false
        while position < bytes.count, bytes[position] != .lessThan {
            if bytes[position] == .ampersand { hasReferences = true }
            advance()
        }
        if hasReferences { try checkReferences(start..<position) }
        return try insideRoot(Text(range: start..<position, hasReferences: hasReferences))
    }

    /// The text when it is inside the root element; outside it only blanks are allowed.
    private func insideRoot(_ text: Text) throws(Failure) -> Text? {
        guard open.isEmpty else { return text }
        guard bytes[text.range].allSatisfy(Self.isBlank) else { throw fail("text outside the root element") }
        return nil
    }

    /// Fails, naming the line, at the first `&` in `range` that is no known reference.
    private func checkReferences(_ range: Range<Int>) throws(Failure) {
        var index = range.lowerBound
        var referenceLine = line - bytes[range].count(where: { $0 == .newline })
        while let ampersand = bytes[index..<range.upperBound].firstIndex(of: .ampersand) {
            referenceLine += bytes[index..<ampersand].count(where: { $0 == .newline })
            guard let end = bytes[ampersand..<range.upperBound].firstIndex(of: .semicolon) else {
                throw Failure(line: referenceLine, message: "'&' that starts no entity (write &amp;)")
            }
            guard Self.reference(bytes[(ampersand + 1)..<end]) != nil else {
                throw Failure(line: referenceLine, message: "unknown entity &\(string(ampersand + 1..<end));")
            }
            index = end
        }
    }

    /// The bytes with their references replaced by UTF-8; nil when one is unknown.
    private static func resolvingReferences(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            guard text[index] == .ampersand else {
                decoded.append(text[index])
                index += 1
                continue
            }
            guard let end = text[index...].firstIndex(of: .semicolon), let character = reference(text[(index + 1)..<end]) else {
                return nil
            }
            decoded.append(contentsOf: character.utf8)
            index = end + 1
        }
        return decoded
    }

    /// The text an entity or character reference (between `&` and `;`) stands for.
    private static func reference(_ name: ArraySlice<UInt8>) -> String? {
        switch String(decoding: name, as: UTF8.self) {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        case let reference where reference.hasPrefix("#x"):
            return UInt32(reference.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
        case let reference where reference.hasPrefix("#"):
            return UInt32(reference.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
        default: return nil
        }
    }

    /// The characters in `range` as UTF-8: converted from the document's encoding, then (the
    /// references being ASCII in either) with their references resolved.
    private func characters(_ range: Range<Int>, hasReferences: Bool) -> ArraySlice<UInt8> {
        let converted = switch encoding {
        case .utf8: bytes[range]
        case .latin1: Array(String(String.UnicodeScalarView(bytes[range].map { Unicode.Scalar($0) })).utf8)[...]
        }
        guard hasReferences else { return converted }
        return (Self.resolvingReferences(converted) ?? [])[...]
    }

    // MARK: Bytes

    /// True when `text` is the bytes of `literal`.
    private static func equal(_ text: ArraySlice<UInt8>, _ literal: StaticString) -> Bool {
        text.count == literal.utf8CodeUnitCount && literal.withUTF8Buffer { text.elementsEqual($0) }
    }

    private func starts(with prefix: StaticString) -> Bool {
        let length = prefix.utf8CodeUnitCount
        guard position + length <= bytes.count else { return false }
        return prefix.withUTF8Buffer { bytes[position..<position + length].elementsEqual($0) }
    }

    /// Moves past the next `terminator`, failing at the end of the file.
    private mutating func skip(past terminator: StaticString, what: String) throws(Failure) {
        let startLine = line
        while position < bytes.count {
            if starts(with: terminator) {
                position += terminator.utf8CodeUnitCount
                return
            }
            advance()
        }
        throw Failure(line: startLine, message: "a \(what) is not closed")
    }

    /// Moves one byte on, counting lines.
    private mutating func advance() {
        if bytes[position] == .newline { line += 1 }
        position += 1
    }

    @discardableResult
    private mutating func skipBlanks() -> Bool {
        let start = position
        while position < bytes.count, Self.isBlank(bytes[position]) { advance() }
        return position > start
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == .space || byte == .newline || byte == .tab || byte == .carriageReturn
    }

    private func string(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    private func fail(_ message: String) -> Failure {
        Failure(line: line, message: message)
    }
}

private extension UInt8 {
    static let lessThan = UInt8(ascii: "<")
    static let greaterThan = UInt8(ascii: ">")
    static let slash = UInt8(ascii: "/")
    static let equals = UInt8(ascii: "=")
    static let quote = UInt8(ascii: "\"")
    static let apostrophe = UInt8(ascii: "'")
    static let ampersand = UInt8(ascii: "&")
    static let semicolon = UInt8(ascii: ";")
    static let colon = UInt8(ascii: ":")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
}
