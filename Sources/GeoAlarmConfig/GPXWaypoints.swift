import Foundation
import GeoAlarmCore
import GeoAlarmReplay

/// The waypoints (`wpt`) of a GPX 1.0 or 1.1 file: `lat` and `lon` attributes and a `<name>`.
/// GPX has no radius, so every waypoint takes the collection's.
///
/// Read by ``WaypointScanner``, a byte-level XML reader, not Foundation's XMLParser: libxml2
/// behind XMLParser took 3.8 s for a million waypoints, and a collection of that size has to
/// load in well under two seconds. The scanner checks what makes XML well-formed that matters
/// here (tags nest and close, attributes are quoted, entities are known, one root element) and
/// reports the first fault with its line, as a config error.
enum GPXWaypoints {
    static func read(_ bytes: [UInt8], defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        var scanner = WaypointScanner(bytes, defaultRadius: defaultRadius)
        do {
            try scanner.scan()
        } catch {
            throw CollectionFileError("line \(error.line): not well-formed XML: \(error.message)")
        }
        return scanner.list
    }
}

/// Walks a GPX document's bytes once, gathering its waypoints into `list`.
struct WaypointScanner {
    /// Where and why the document is not well-formed XML.
    struct Failure: Error {
        var line: Int
        var message: String
    }

    /// How the document's bytes encode its text (from the XML declaration).
    private enum Encoding {
        case utf8, latin1
    }

    /// An element that has been opened and not yet closed.
    private struct OpenElement {
        var name: Range<Int>
        var line: Int
    }

    /// The waypoint being read: where it starts, its attributes and the bytes of its name.
    private struct OpenWaypoint {
        var line: Int
        /// How many elements are open around it, itself included.
        var depth: Int
        var latitude: Double?
        var longitude: Double?
        var name: [UInt8] = []
        var inName = false
    }

    private let bytes: [UInt8]
    private let defaultRadius: Double
    private var position = 0
    /// The 1-based line of `position`.
    private var line = 1
    private var encoding = Encoding.utf8
    private var open: [OpenElement] = []
    private var sawRoot = false
    private var waypoint: OpenWaypoint?
    /// The places read so far.
    private(set) var list = PlaceList()

    init(_ bytes: [UInt8], defaultRadius: Double) {
        self.bytes = bytes
        self.defaultRadius = defaultRadius
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// Reads the whole document.
    mutating func scan() throws(Failure) {
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw fail("the file is UTF-16; save it as UTF-8")
        }
        while position < bytes.count {
            if bytes[position] == .lessThan {
                try markup()
            } else {
                try text()
            }
        }
        if let element = open.last {
            throw fail("the file ends before <\(string(element.name))> (line \(element.line)) is closed")
        }
        guard sawRoot else { throw fail("there is no element in the file") }
    }

    // MARK: Markup

    private mutating func markup() throws(Failure) {
        if starts(with: "<?") {
            try processingInstruction()
        } else if starts(with: "<!--") {
            try skip(past: "-->", what: "comment")
        } else if starts(with: "<![CDATA[") {
            position += 9
            let start = position
            try skip(past: "]]>", what: "CDATA section")
            try characters(start..<position - 3)
        } else if starts(with: "<!") {
            try declaration()
        } else if starts(with: "</") {
            try endTag()
        } else {
            try startTag()
        }
    }

    /// `<?xml ... ?>` (whose encoding is read) or another processing instruction (skipped).
    private mutating func processingInstruction() throws(Failure) {
        let start = position
        try skip(past: "?>", what: "processing instruction")
        let instruction = bytes[start..<position]
        guard start == 0 || start == 3, instruction.starts(with: Array("<?xml ".utf8)),
              let encodingName = pseudoAttribute("encoding", in: instruction)?.lowercased()
        else { return }
        switch encodingName {
        case "utf-8", "utf8", "us-ascii", "ascii": encoding = .utf8
        case "iso-8859-1", "latin1", "iso_8859-1": encoding = .latin1
        default: throw fail("the encoding \"\(encodingName)\" is not supported; save the file as UTF-8")
        }
    }

    /// The value of `name="..."` in an XML declaration.
    private func pseudoAttribute(_ name: String, in instruction: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: instruction, as: UTF8.self)
        guard let key = text.range(of: name + "=") else { return nil }
        let rest = text[key.upperBound...]
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return rest.dropFirst().prefix { $0 != quote }.description
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

    private mutating func startTag() throws(Failure) {
        let tagLine = line
        position += 1
        let name = try self.name()
        if open.isEmpty {
            guard !sawRoot else { throw fail("a second root element <\(string(name))> after the first one closed") }
            sawRoot = true
        }
        let isWaypoint = waypoint == nil && localName(name).elementsEqual("wpt".utf8)
        var latitude: Double?, longitude: Double?
        while true {
            let blank = skipBlanks()
            guard position < bytes.count else { throw fail("the file ends inside the tag <\(string(name))>") }
            switch bytes[position] {
            case .greaterThan:
                position += 1
                open.append(OpenElement(name: name, line: tagLine))
                if isWaypoint {
                    waypoint = OpenWaypoint(line: tagLine, depth: open.count, latitude: latitude, longitude: longitude)
                } else if var current = waypoint, open.count == current.depth + 1, localName(name).elementsEqual("name".utf8) {
                    current.inName = true
                    waypoint = current
                }
                return
            case .slash:
                position += 1
                guard position < bytes.count, bytes[position] == .greaterThan else {
                    throw fail("expected '>' after '/' in <\(string(name))>")
                }
                position += 1
                if isWaypoint { add(OpenWaypoint(line: tagLine, depth: 0, latitude: latitude, longitude: longitude)) }
                return
            default:
                guard blank else { throw fail("expected a blank between the attributes of <\(string(name))>") }
                let (attribute, value) = try self.attribute()
                guard isWaypoint else { continue }
                switch string(attribute) {
                case "lat": latitude = DecimalText.value(value)
                case "lon": longitude = DecimalText.value(value)
                default: break
                }
            }
        }
    }

    /// `name="value"` (or with single quotes); returns the name and the value's bytes as written.
    private mutating func attribute() throws(Failure) -> (name: Range<Int>, value: ArraySlice<UInt8>) {
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
        while position < bytes.count, bytes[position] != quote {
            if bytes[position] == .lessThan { throw fail("'<' inside the value of the attribute \(string(name))") }
            advance()
        }
        guard position < bytes.count else { throw fail("the value of the attribute \(string(name)) is not closed") }
        position += 1
        return (name, bytes[start..<position - 1])
    }

    private mutating func endTag() throws(Failure) {
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
        guard let current = waypoint else { return }
        if open.count < current.depth {
            add(current)
            waypoint = nil
        } else if current.inName, open.count == current.depth {
            waypoint?.inName = false
        }
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

    /// The part of a name after its namespace prefix (`gpx:wpt` is `wpt`).
    private func localName(_ name: Range<Int>) -> ArraySlice<UInt8> {
        let colon = bytes[name].lastIndex(of: .colon)
        return bytes[(colon.map { $0 + 1 } ?? name.lowerBound)..<name.upperBound]
    }

    // MARK: Text

    /// Character data up to the next `<`: kept when it is a waypoint's name; outside the root
    /// element only blanks are allowed.
    private mutating func text() throws(Failure) {
        let start = position
        var hasEntity = false
        while position < bytes.count, bytes[position] != .lessThan {
            if bytes[position] == .ampersand { hasEntity = true }
            advance()
        }
        let range = start..<position
        guard hasEntity else { return try characters(range) }
        var decoded: [UInt8] = []
        var index = range.lowerBound
        while index < range.upperBound {
            guard bytes[index] == .ampersand else {
                decoded.append(bytes[index])
                index += 1
                continue
            }
            guard let end = bytes[index..<range.upperBound].firstIndex(of: .semicolon) else {
                throw Failure(line: line, message: "'&' that starts no entity (write &amp;)")
            }
            guard let character = Self.entity(bytes[(index + 1)..<end]) else {
                throw Failure(line: line, message: "unknown entity &\(string(index + 1..<end));")
            }
            decoded.append(contentsOf: character.utf8)
            index = end + 1
        }
        try characters(decoded[...])
    }

    private mutating func characters(_ range: Range<Int>) throws(Failure) {
        try characters(bytes[range])
    }

    private mutating func characters(_ text: ArraySlice<UInt8>) throws(Failure) {
        if waypoint?.inName == true {
            waypoint?.name.append(contentsOf: text)
        } else if open.isEmpty, text.contains(where: { !Self.isBlank($0) }) {
            throw fail("text outside the root element")
        }
    }

    /// The text an entity's name (between `&` and `;`) stands for.
    private static func entity(_ name: ArraySlice<UInt8>) -> String? {
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

    // MARK: Places

    private mutating func add(_ finished: OpenWaypoint) {
        var name = finished.name[...]
        while let first = name.first, Self.isBlank(first) { name.removeFirst() }
        while let last = name.last, Self.isBlank(last) { name.removeLast() }
        list.add(
            latitude: finished.latitude, longitude: finished.longitude, radius: nil, name: decode(name),
            line: finished.line, defaultRadius: defaultRadius)
    }

    private func decode(_ text: ArraySlice<UInt8>) -> String {
        switch encoding {
        case .utf8: String(decoding: text, as: UTF8.self)
        case .latin1: String(String.UnicodeScalarView(text.map { Unicode.Scalar($0) }))
        }
    }

    // MARK: Bytes

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
