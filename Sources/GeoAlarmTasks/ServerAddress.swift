import GeoAlarmEncoding
import GeoAlarmCore

/// The parts of a server's address a task list needs, each read through ``NetworkAddress``.
public enum ServerAddress {
    /// `https://cloud.example.org:8443` of `https://cloud.example.org:8443/dav/ana/tasks/`;
    /// `url` itself when it is no URL.
    public static func origin(of url: String) -> String {
        (try? NetworkAddress(url: Substring(url)))?.origin ?? url
    }

    /// The server of `url` written one way: its origin in lower case, without the scheme's own
    /// port (`https://Cloud.example.org:443/a` is `https://cloud.example.org`).
    public static func server(of url: String) -> String {
        let origin = origin(of: url).lowercased()
        for (scheme, port) in [("https://", ":443"), ("http://", ":80")] where origin.hasPrefix(scheme) && origin.hasSuffix(port) {
            return String(origin.dropLast(port.count))
        }
        return origin
    }

    /// Whether two addresses are on one server: the same scheme, host and port, the host in any
    /// case and the scheme's own port written or not (`https://Cloud.example.org:443/a` and
    /// `https://cloud.example.org/b` are).
    public static func isSameServer(_ one: String, _ other: String) -> Bool {
        server(of: one) == server(of: other)
    }

    /// `/dav/ana/tasks/` of the same, ending in `/`.
    public static func path(of url: String) -> String {
        let path = (try? NetworkAddress(url: Substring(url))).map { String($0.path) } ?? ""
        return path.isEmpty ? "/" : (path.hasSuffix("/") ? path : path + "/")
    }

    /// A collection's address as the copy keeps it: ending in `/`.
    public static func collection(_ url: String) -> String {
        url.hasSuffix("/") ? url : url + "/"
    }

    /// Where a redirect from `url` leads (or any reference read against it, such as a server's
    /// href): its `Location`, a whole URL, a path on the same server
    /// (`/dav/`), one from the same scheme (`//host/dav/`), or one beside `url`'s last segment
    /// (`dav/` from `/.well-known/caldav` is `/.well-known/dav/`), as RFC 3986 reads a
    /// reference (dot segments are left to the server; the scheme written in lower case); nil
    /// for another scheme (`ftp:`, `file:`).
    public static func redirect(_ location: String, from url: String) -> String? {
        let scheme = location.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
        if !scheme.isEmpty, location.dropFirst(scheme.count).first == ":" {
            return ["http", "https"].contains(scheme.lowercased()) ? scheme.lowercased() + location.dropFirst(scheme.count) : nil
        }
        if location.hasPrefix("//") { return (url.hasPrefix("https://") ? "https:" : "http:") + location }
        let base = try? NetworkAddress(url: Substring(url))
        let origin = base?.origin ?? url
        if location.hasPrefix("/") { return origin + location }
        let path = base?.path ?? ""
        let directory = path.lastIndex(of: "/").map { path[...$0] } ?? "/"
        return origin + directory + location
    }

    /// `address` with its scheme in lower case, when it is an http or https URL with the scheme
    /// written in any case (RFC 3986 3.1: `HTTPS://` is `https://`); nil when it is not one.
    public static func httpURL(_ address: String) -> String? {
        guard let url = try? NetworkAddress(url: Substring(address)), let scheme = url.scheme, ["http", "https"].contains(scheme) else {
            return nil
        }
        return scheme + address.dropFirst(scheme.count)
    }

    /// The path of `href` (a whole URL, a path, or one relative to the collection) when it names
    /// a member of the collection at `collection`, written one way: percent-decoded, its dot
    /// segments removed (RFC 3986 5.2.4), then each segment encoded again as a path's characters
    /// (as vdirsyncer's `_normalize_href` does, for servers' quirks of encoding). Nil when it
    /// names anything else: another server (scheme, host or port), a place outside the
    /// collection (`../other/x.ics`, `%2e%2e/%2e%2e/etc/x.ics`), the collection itself, one
    /// inside a collection within it, a query or fragment, or bytes no path holds.
    public static func member(_ href: String, of collection: String) -> String? {
        // Read as a reference from the collection (a whole URL, `//host/...`, a path, or one beside it).
        guard let absolute = redirect(href, from: collection), isSameServer(absolute, collection),
              let address = try? NetworkAddress(url: Substring(absolute)), address.query == nil, address.fragment == nil
        else { return nil }
        // The collection's path ends in `/`: its segments but the empty last one.
        guard let segments = decodedSegments(address.path),
              let own = decodedSegments(Substring(self.path(of: collection)))?.dropLast(),
              segments.count == own.count + 1, segments.starts(with: own), let name = segments.last, !name.isEmpty
        else { return nil }
        return "/" + segments.map(encodedSegment).joined(separator: "/")
    }

    /// A path's segments, percent-decoded, with `.` and `..` taken as RFC 3986 takes them (a
    /// trailing slash is an empty last segment); nil for a malformed escape or a decoded byte
    /// that no name holds (a control character, NUL, or bytes that are no UTF-8).
    private static func decodedSegments(_ path: Substring) -> [String]? {
        guard let text = PercentText.decoded(path.utf8), !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        var segments: [String] = []
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (number, part) in parts.enumerated() {
            let isLast = number == parts.count - 1
            switch part {
            case ".": if isLast { segments.append("") }
            case "..":
                if !segments.isEmpty { segments.removeLast() }
                if isLast { segments.append("") }
            default: segments.append(String(part))
            }
        }
        // `/a//b`: an empty segment within a path names nothing a server keeps apart.
        return segments.dropLast().contains("") ? nil : segments
    }

    /// A segment as a path writes it: unreserved characters, sub-delimiters, `:` and `@` as they
    /// are, every other byte percent-encoded (RFC 3986 3.3's `pchar`).
    private static func encodedSegment(_ segment: String) -> String {
        var out = ""
        for byte in segment.utf8 {
            let character = Character(Unicode.Scalar(byte))
            if byte < 0x80, character.isLetter || character.isNumber || "-._~!$&'()*+,;=:@".contains(character) {
                out.append(character)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return out
    }

    /// The absolute address of `href` (a path, or a whole URL) on the server of `url`.
    public static func resolve(_ href: String, against url: String) -> String {
        if let absolute = httpURL(href) { return absolute }
        if href.hasPrefix("/") { return origin(of: url) + href }
        return origin(of: url) + path(of: url) + href
    }
}
