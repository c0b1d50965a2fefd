import GeoAlarmCore

/// The Point features of a GeoJSON FeatureCollection (RFC 7946): `coordinates` are
/// `[lon, lat]`, `properties.name` (or `title`) names the place and `properties.radius`
/// (metres) sizes it. Features of other geometries are skipped with their line.
///
/// Read with a small JSON scanner of its own: it knows the line of every feature (which
/// Foundation's JSONSerialization does not tell) and holds one feature at a time, not the file.
enum GeoJSONPoints {
    static func read(_ bytes: [UInt8], defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        var scanner = JSONScanner(bytes)
        var list = PlaceList()
        do throws(JSONScanner.Failure) {
            var sawFeatures = false
            try scanner.expect(UInt8(ascii: "{"))
            try scanner.members { scanner, key throws(JSONScanner.Failure) in
                guard key == "features" else { return try scanner.skipValue() }
                sawFeatures = true
                try scanner.expect(UInt8(ascii: "["))
                try scanner.elements { scanner throws(JSONScanner.Failure) in
                    let line = scanner.line
                    add(try scanner.value(), line: line, to: &list, defaultRadius: defaultRadius)
                }
            }
            guard sawFeatures else { throw JSONScanner.Failure(line: 1, message: "no \"features\" array (is it a FeatureCollection?)") }
        } catch {
            throw CollectionFileError("line \(error.line): \(error.message)")
        }
        return list
    }

    private static func add(_ feature: JSONValue, line: Int, to list: inout PlaceList, defaultRadius: Double) {
        guard case .object(let members) = feature else { return list.skip(line: line, "a feature must be an object") }
        guard case .object(let geometry)? = members["geometry"] else {
            return list.skip(line: line, "feature without a geometry")
        }
        guard case .string(let type)? = geometry["type"], type == "Point" else {
            return list.skip(line: line, "geometry is not a Point")
        }
        guard case .array(let position)? = geometry["coordinates"], position.count >= 2,
              case .number(let longitude) = position[0], case .number(let latitude) = position[1]
        else { return list.skip(line: line, "a Point needs coordinates [lon, lat]") }
        var name = ""
        var radius: Double?
        if case .object(let properties)? = members["properties"] {
            if case .string(let text)? = properties["name"] ?? properties["title"] { name = text }
            switch properties["radius"] {
            case .number(let metres)?: radius = metres
            case nil, .null?: break
            default: return list.skip(line: line, "properties.radius must be a number of metres")
            }
        }
        list.add(latitude: latitude, longitude: longitude, radius: radius, name: name, line: line, defaultRadius: defaultRadius)
    }
}

/// A parsed JSON value.
enum JSONValue {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
}

/// A JSON reader over UTF-8 bytes that counts lines and reads containers member by member.
struct JSONScanner {
    struct Failure: Error {
        var line: Int
        var message: String
    }

    private let bytes: [UInt8]
    private var position = 0
    /// The 1-based line of the next byte.
    private(set) var line = 1

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// Skips blanks and consumes `byte`, or fails.
    mutating func expect(_ byte: UInt8) throws(Failure) {
        guard peek() == byte else { throw fail("expected '\(Character(Unicode.Scalar(byte)))'") }
        position += 1
    }

    /// Reads the members of an object whose `{` was consumed, calling `body` with each key
    /// before its value (which `body` must read or skip).
    mutating func members(_ body: (inout JSONScanner, String) throws(Failure) -> Void) throws(Failure) {
        if peek() == UInt8(ascii: "}") { position += 1; return }
        while true {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try body(&self, key)
            if try endOrComma(UInt8(ascii: "}")) { return }
        }
    }

    /// Reads the elements of an array whose `[` was consumed, calling `body` at the start of each
    /// (which must read or skip it).
    mutating func elements(_ body: (inout JSONScanner) throws(Failure) -> Void) throws(Failure) {
        if peek() == UInt8(ascii: "]") { position += 1; return }
        while true {
            _ = peek()
            try body(&self)
            if try endOrComma(UInt8(ascii: "]")) { return }
        }
    }

    mutating func skipValue() throws(Failure) {
        _ = try value()
    }

    /// Reads one whole value.
    mutating func value() throws(Failure) -> JSONValue {
        switch peek() {
        case UInt8(ascii: "{"):
            position += 1
            var object: [String: JSONValue] = [:]
            try members { scanner, key throws(Failure) in object[key] = try scanner.value() }
            return .object(object)
        case UInt8(ascii: "["):
            position += 1
            var array: [JSONValue] = []
            try elements { scanner throws(Failure) in array.append(try scanner.value()) }
            return .array(array)
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): try word("true"); return .bool(true)
        case UInt8(ascii: "f"): try word("false"); return .bool(false)
        case UInt8(ascii: "n"): try word("null"); return .null
        case nil: throw fail("unexpected end of file")
        default: return .number(try number())
        }
    }

    private mutating func endOrComma(_ end: UInt8) throws(Failure) -> Bool {
        switch peek() {
        case end: position += 1; return true
        case UInt8(ascii: ","): position += 1; return false
        default: throw fail("expected ',' or '\(Character(Unicode.Scalar(end)))'")
        }
    }

    /// Skips blanks (counting lines) and returns the next byte without consuming it.
    private mutating func peek() -> UInt8? {
        while position < bytes.count {
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
        let start = position
        while position < bytes.count, Self.numberBytes.contains(bytes[position]) { position += 1 }
        guard position > start, let value = Double(String(decoding: bytes[start..<position], as: UTF8.self)) else {
            throw fail("unexpected character")
        }
        return value
    }

    private static let numberBytes = Set("0123456789+-.eE".utf8)

    private mutating func string() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""))
        var utf8: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { break }
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
    private mutating func unicodeEscape() throws(Failure) -> [UInt8] {
        var unit = try hexQuad()
        if (0xD800..<0xDC00).contains(unit), bytes[position...].starts(with: Array("\\u".utf8)) {
            position += 2
            let low = try hexQuad()
            unit = 0x10000 + ((unit - 0xD800) << 10) + (low &- 0xDC00)
        }
        return Array(String(Unicode.Scalar(unit).map(Character.init) ?? "\u{FFFD}").utf8)
    }

    private mutating func hexQuad() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count,
              let value = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
        else { throw fail("bad \\u escape") }
        position += 4
        return value
    }

    private func fail(_ message: String) -> Failure {
        Failure(line: line, message: message)
    }
}
