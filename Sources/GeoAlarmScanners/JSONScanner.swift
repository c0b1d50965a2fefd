import FoundationEssentials
/// An object member's key, as UTF-8: matched against string literals (`case "lat":`) without
/// making a String of every key. It points into the text being read (or the key's decoded
/// escapes), so it is valid only during the call it is given to.
public struct JSONKey {
    @usableFromInline let utf8: UnsafeBufferPointer<UInt8>

    @inlinable public static func ~= (pattern: StaticString, key: JSONKey) -> Bool {
        guard pattern.utf8CodeUnitCount == key.utf8.count else { return false }
        return pattern.withUTF8Buffer { literal in
            for offset in literal.indices where literal[offset] != key.utf8[offset] { return false }
            return true
        }
    }
}

/// A JSON reader over UTF-8 bytes that counts lines and reads containers member by member, so
/// that a caller keeps only what it needs (a GeoJSON feature at a time, a TPV's few numbers).
///
/// A scanner reads the bytes in place, through a pointer held for the call to ``scan(_:_:)-(ArraySlice<UInt8>,_)``
/// that made it: it is valid only during that call (a copy kept beyond it would read freed bytes).
/// A slice of the text for each key, number and string would retain and release its storage,
/// and a million-fix replay reads ten of them a line.
public struct JSONScanner {
    /// Where and why the text is not JSON.
    public struct Failure: Error, Sendable {
        /// 1-based line of the bytes given.
        public var line: Int
        public var message: String
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// The 1-based line of the next byte.
    public private(set) var line = 1
    /// Containers open (objects and arrays being read): deeper than `maximumDepth` is refused rather
    /// than recursed into until the stack runs out.
    private var depth = 0
    private static let maximumDepth = 512

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// Calls `body` with a scanner at the start of `text` (after a UTF-8 byte order mark, if
    /// any), valid for that call only.
    public static func scan<Result>(
        _ text: ArraySlice<UInt8>, _ body: (inout JSONScanner) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try text.withUnsafeBufferPointer { (buffer) throws(Failure) in try scan(buffer, body) }
    }

    /// ``scan(_:_:)-(ArraySlice<UInt8>,_)`` of bytes the caller holds in a buffer.
    public static func scan<Result>(
        _ text: UnsafeBufferPointer<UInt8>, _ body: (inout JSONScanner) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var scanner = JSONScanner(text)
        return try body(&scanner)
    }

    /// Skips blanks and consumes `byte`, or fails.
    public mutating func expect(_ byte: UInt8) throws(Failure) {
        guard peek() == byte else { throw expected(byte) }
        position += 1
    }

    /// Kept out of line, as ``expectedCommaOr(_:)``: a message built where it is thrown would
    /// make each reader too large to inline.
    @inline(never)
    private func expected(_ byte: UInt8) -> Failure {
        fail("expected '\(Character(Unicode.Scalar(byte)))'")
    }

    /// Fails unless only blanks are left.
    public mutating func expectEnd() throws(Failure) {
        guard peek() == nil else { throw fail("more text after the end of the JSON value") }
    }

    /// Reads the members of an object whose `{` was consumed, calling `body` with each key
    /// before its value (which `body` must read or skip).
    public mutating func members(_ body: (inout JSONScanner, JSONKey) throws(Failure) -> Void) throws(Failure) {
        try enterContainer()
        defer { depth -= 1 }
        if peek() == UInt8(ascii: "}") { position += 1; return }
        while true {
            try withString { (scanner, key) throws(Failure) in
                try scanner.expect(UInt8(ascii: ":"))
                try body(&scanner, JSONKey(utf8: key))
            }
            if try endOrComma(UInt8(ascii: "}")) { return }
        }
    }

    /// Reads the elements of an array whose `[` was consumed, calling `body` at the start of each
    /// (which must read or skip it).
    public mutating func elements(_ body: (inout JSONScanner) throws(Failure) -> Void) throws(Failure) {
        try enterContainer()
        defer { depth -= 1 }
        if peek() == UInt8(ascii: "]") { position += 1; return }
        while true {
            _ = peek()
            try body(&self)
            if try endOrComma(UInt8(ascii: "]")) { return }
        }
    }

    /// Reads an object's members as ``members(_:)`` does when the next value is an object and
    /// returns true; passes over any other value and returns false.
    public mutating func membersIfObject(_ body: (inout JSONScanner, JSONKey) throws(Failure) -> Void) throws(Failure) -> Bool {
        guard peek() == UInt8(ascii: "{") else {
            try skipValue()
            return false
        }
        position += 1
        try members(body)
        return true
    }

    /// Reads an array's elements as ``elements(_:)`` does when the next value is an array and
    /// returns true; passes over any other value and returns false.
    public mutating func elementsIfArray(_ body: (inout JSONScanner) throws(Failure) -> Void) throws(Failure) -> Bool {
        guard peek() == UInt8(ascii: "[") else {
            try skipValue()
            return false
        }
        position += 1
        try elements(body)
        return true
    }

    /// Whether the next value is the string `literal`; the value is passed over either way.
    public mutating func stringValue(is literal: StaticString) throws(Failure) -> Bool {
        try utf8Value { literal ~= JSONKey(utf8: $0) } ?? false
    }

    /// Whether the next value is a string (nothing is consumed).
    public var nextIsString: Bool {
        mutating get { peek() == UInt8(ascii: "\"") }
    }

    /// Whether the next value is an array (nothing is consumed).
    public var nextIsArray: Bool {
        mutating get { peek() == UInt8(ascii: "[") }
    }

    /// Passes over one whole value without building it.
    public mutating func skipValue() throws(Failure) {
        switch peek() {
        case UInt8(ascii: "{"):
            position += 1
            try members { scanner, _ throws(Failure) in try scanner.skipValue() }
        case UInt8(ascii: "["):
            position += 1
            try elements { scanner throws(Failure) in try scanner.skipValue() }
        case UInt8(ascii: "\""):
            try withString { _, _ in }
        case UInt8(ascii: "t"): try word("true")
        case UInt8(ascii: "f"): try word("false")
        case UInt8(ascii: "n"): try word("null")
        case nil: throw fail("unexpected end of file")
        default: _ = try number()
        }
    }

    /// True after consuming a `null`; false, consuming nothing, before any other value.
    public mutating func nullValue() throws(Failure) -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try word("null")
        return true
    }

    /// A number, or nil (after passing over it) for any other value.
    public mutating func numberValue() throws(Failure) -> Double? {
        guard let byte = peek(), byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte) else {
            try skipValue()
            return nil
        }
        return try number()
    }

    /// A number, or a string that holds one whole (blanks around it allowed: `"47.5"`, as some
    /// clients write coordinates); nil (after passing over it) for any other value.
    public mutating func numberOrNumericString() throws(Failure) -> Double? {
        guard peek() == UInt8(ascii: "\"") else { return try numberValue() }
        return try withString { _, text in
            func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else { return nil }
            return DecimalText.value(UnsafeBufferPointer(rebasing: text[first...last]))
        }
    }

    /// A string, or nil (after passing over it) for any other value.
    public mutating func stringValue() throws(Failure) -> String? {
        try utf8Value { String(decoding: $0, as: UTF8.self) }
    }

    /// What `body` makes of a string's UTF-8 (its escapes decoded, valid during the call), or nil
    /// (after passing over it) for any other value: for a caller that reads the text itself,
    /// without making a String of it.
    public mutating func utf8Value<Value>(_ body: (UnsafeBufferPointer<UInt8>) -> Value) throws(Failure) -> Value? {
        guard peek() == UInt8(ascii: "\"") else {
            try skipValue()
            return nil
        }
        return try withString { _, text in body(text) }
    }

    private mutating func enterContainer() throws(Failure) {
        guard depth < Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        depth += 1
    }

    private mutating func endOrComma(_ end: UInt8) throws(Failure) -> Bool {
        // A comma right after the value, as in compact JSON, most of the time: taken before the
        // switch (measured: the switch alone was no longer folded into the readers).
        if position < bytes.endIndex, bytes[position] == UInt8(ascii: ",") {
            position += 1
            return false
        }
        switch peek() {
        case end: position += 1; return true
        case UInt8(ascii: ","): position += 1; return false
        default: throw expectedCommaOr(end)
        }
    }

    /// The failure of ``endOrComma(_:)``, out of line as ``expected(_:)`` is.
    @inline(never)
    private func expectedCommaOr(_ end: UInt8) -> Failure {
        fail("expected ',' or '\(Character(Unicode.Scalar(end)))'")
    }

    /// Skips blanks (counting lines) and returns the next byte without consuming it.
    @inline(__always)
    private mutating func peek() -> UInt8? {
        // Compact JSON (gpsd's, OwnTracks') has no blanks between its tokens; every byte above
        // the space is not one.
        if position < bytes.endIndex, bytes[position] > UInt8(ascii: " ") { return bytes[position] }
        return skipBlanks()
    }

    /// ``peek()`` where blanks may come first: kept out of line, so that the readers stay small.
    @inline(never)
    private mutating func skipBlanks() -> UInt8? {
        while position < bytes.endIndex {
            switch bytes[position] {
            case UInt8(ascii: "\n"): line += 1; position += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): position += 1
            default: return bytes[position]
            }
        }
        return nil
    }

    private mutating func word(_ text: String) throws(Failure) {
        guard bytes[position...].starts(with: text.utf8) else { throw fail("unexpected character") }
        position += text.utf8.count
    }

    private mutating func number() throws(Failure) -> Double {
        // Nearly always a plain decimal, read in the pass that finds its end; what follows it must
        // end the number ("1.5e3" is not 1.5).
        let rest = UnsafeBufferPointer(rebasing: bytes[position...])
        if let (value, length) = DecimalText.plainPrefix(rest), length == rest.count || !Self.isNumberByte(rest[length]) {
            position += length
            return value
        }
        let start = position
        while position < bytes.endIndex, Self.isNumberByte(bytes[position]) { position += 1 }
        guard position > start, let value = DecimalText.value(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        else { throw fail("unexpected character") }
        return value
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): true
        default: false
        }
    }

    /// Consumes the next string, then calls `body` with the scanner (which it may read on, as
    /// an object's members do after their key) and the string's UTF-8, its escapes decoded
    /// (valid during the call): the one way a key, a value and a skipped string are read.
    private mutating func withString<Value>(
        _ body: (inout JSONScanner, UnsafeBufferPointer<UInt8>) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        try expect(UInt8(ascii: "\""))
        // Without escapes (nearly always), the string is the bytes up to the closing quote, in place.
        guard let end = plainStringEnd() else {
            return try escapedStringBytes().withUnsafeBufferPointer { (text) throws(Failure) in try body(&self, text) }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[position..<end])
        position = end + 1
        return try body(&self, text)
    }

    /// Where the string whose opening quote was consumed closes, when nothing in it is escaped
    /// (and no line breaks it); nil otherwise. Consumes nothing.
    private func plainStringEnd() -> Int? {
        var end = position
        while end < bytes.endIndex {
            switch bytes[end] {
            case UInt8(ascii: "\""): return end
            case UInt8(ascii: "\\"), UInt8(ascii: "\n"): return nil
            default: end += 1
            }
        }
        return nil
    }

    /// The UTF-8 of the string whose opening quote was consumed, its escapes decoded.
    private mutating func escapedStringBytes() throws(Failure) -> [UInt8] {
        var utf8: [UInt8] = []
        while position < bytes.endIndex {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return utf8
            case UInt8(ascii: "\\"):
                guard position < bytes.endIndex else { break }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "n"): utf8.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "t"): utf8.append(UInt8(ascii: "\t"))
                case UInt8(ascii: "r"): utf8.append(UInt8(ascii: "\r"))
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "u"): utf8.append(contentsOf: try unicodeEscape())
                default: utf8.append(escaped)
                }
            case UInt8(ascii: "\n"):
                throw fail("line break inside a string")
            default:
                utf8.append(byte)
            }
        }
        throw fail("unterminated string")
    }

    /// The UTF-8 of a `\uXXXX` escape (with its low surrogate's escape when it is a pair).
    /// A `\\u` escape's UTF-8: a high surrogate joins the low one that follows it; a surrogate
    /// without its pair becomes U+FFFD (as JSON readers do), and the escape after it is read anew.
    private mutating func unicodeEscape() throws(Failure) -> [UInt8] {
        var unit = try hexQuad()
        if (0xD800..<0xDC00).contains(unit), bytes[position...].starts(with: Array("\\u".utf8)) {
            let resume = position
            position += 2
            let low = try hexQuad()
            if (0xDC00..<0xE000).contains(low) {
                unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            } else {
                position = resume
            }
        }
        return Array(String(Unicode.Scalar(unit).map(Character.init) ?? "\u{FFFD}").utf8)
    }

    private mutating func hexQuad() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.endIndex else { throw fail("bad \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[position..<position + 4] {
            guard byte < 0x80, let digit = Character(Unicode.Scalar(byte)).hexDigitValue else { throw fail("bad \\u escape") }
            value = value << 4 | UInt32(digit)
        }
        position += 4
        return value
    }

    private func fail(_ message: String) -> Failure {
        Failure(line: line, message: message)
    }
}
