import GeoAlarmEncoding

/// One HTTP/1.x request, as ``HTTPRequestReader`` read it.
public struct HTTPRequest: Sendable, Equatable {
    /// `GET`, `POST`, ... as sent (methods are case-sensitive).
    public var method: String
    /// The target's path, percent-decoded: `/api/map`.
    public var path: String
    /// The target's query, decoded as a form (`+` is a space); the first of a repeated name.
    public var query: [String: String]
    /// Header values by lower-case name; a repeated header's values joined with ", " (a
    /// cookie's with "; ").
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// Reads an HTTP/1.0 or 1.1 request from the bytes a connection has received so far: a
/// request line, headers and a body of `Content-Length` bytes. Strict where laxness lets
/// requests be smuggled or be misread (folded headers, a chunked body, two lengths), and
/// bounded: a head over ``largestHead`` bytes or a body over the caller's limit is refused
/// before it has all come.
public enum HTTPRequestReader {
    /// What the bytes received so far make.
    public enum Outcome: Sendable, Equatable {
        /// A request, and how many bytes of the input it took.
        case complete(HTTPRequest, length: Int)
        /// More bytes are needed.
        case incomplete
        /// Not a request this server takes: the status to answer with, and why.
        case refused(status: Int, reason: String)
    }

    /// The most bytes a request line and headers may take.
    public static let largestHead = 16 * 1024

    /// The request at the start of `bytes`, with a body of at most `largestBody` bytes.
    public static func read(_ bytes: [UInt8], largestBody: Int) -> Outcome {
        guard let (headEnd, bodyStart) = endOfHead(bytes) else {
            return bytes.count > largestHead ? .refused(status: 431, reason: "the request's head is over \(largestHead) bytes") : .incomplete
        }
        guard headEnd <= largestHead else { return .refused(status: 431, reason: "the request's head is over \(largestHead) bytes") }
        var lines = bytes[..<headEnd].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenByte) else {
            return .refused(status: 400, reason: "the request line is not \"METHOD /path HTTP/1.1\"")
        }
        guard parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8) else {
            return .refused(status: 505, reason: "only HTTP/1.0 and 1.1 are spoken here")
        }
        guard parts[1].first == UInt8(ascii: "/") else { return .refused(status: 400, reason: "the target is not a path") }
        let target = parts[1]
        let pathBytes = target.prefix { $0 != UInt8(ascii: "?") }
        guard let path = PercentText.decoded(pathBytes), !path.contains("\u{0}") else {
            return .refused(status: 400, reason: "the path is not percent-encoded UTF-8")
        }
        var query: [String: String] = [:]
        if pathBytes.endIndex < target.endIndex {
            for pair in target[(pathBytes.endIndex + 1)...].split(separator: UInt8(ascii: "&")) {
                let name = pair.prefix { $0 != UInt8(ascii: "=") }
                let value = name.endIndex < pair.endIndex ? pair[(name.endIndex + 1)...] : pair[pair.endIndex...]
                guard let key = PercentText.decoded(name, plusIsSpace: true), let text = PercentText.decoded(value, plusIsSpace: true) else {
                    return .refused(status: 400, reason: "the query is not percent-encoded UTF-8")
                }
                if query[key] == nil { query[key] = text }
            }
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                  line[..<colon].allSatisfy(isTokenByte)
            else { return .refused(status: 400, reason: "a header line is not \"Name: value\"") }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: trimmed(line[(colon + 1)...]), as: UTF8.self)
            if let earlier = headers[name] {
                headers[name] = earlier + (name == "cookie" ? "; " : ", ") + value
            } else {
                headers[name] = value
            }
        }
        if headers["transfer-encoding"] != nil {
            return .refused(status: 501, reason: "a body in chunks is not taken: send its Content-Length")
        }
        var length = 0
        if let text = headers["content-length"] {
            guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(text) else {
                return .refused(status: 400, reason: "Content-Length is not one number")
            }
            length = number
        }
        guard length <= largestBody else { return .refused(status: 413, reason: "the request is larger than \(largestBody) bytes") }
        guard bytes.count - bodyStart >= length else { return .incomplete }
        let request = HTTPRequest(
            method: String(decoding: parts[0], as: UTF8.self), path: path, query: query, headers: headers,
            body: Array(bytes[bodyStart..<(bodyStart + length)]))
        return .complete(request, length: bodyStart + length)
    }

    /// Where the head ends (before its blank line) and the body starts; nil before the blank line has come.
    private static func endOfHead(_ bytes: [UInt8]) -> (head: Int, body: Int)? {
        var index = 0
        while let newline = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) {
            // The blank line: "\n\n" or "\n\r\n".
            if newline + 1 < bytes.count, bytes[newline + 1] == UInt8(ascii: "\n") { return (newline, newline + 2) }
            if newline + 2 < bytes.count, bytes[newline + 1] == UInt8(ascii: "\r"), bytes[newline + 2] == UInt8(ascii: "\n") {
                return (newline, newline + 3)
            }
            index = newline + 1
            if index > largestHead + 4 { return nil }
        }
        return nil
    }

    /// A byte of a token (a method, a header's name), as RFC 9110 allows them.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else {
            return bytes[bytes.endIndex...]
        }
        return bytes[first...last]
    }
}
