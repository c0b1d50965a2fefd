import FoundationEssentials
import GeoAlarmEncoding
import Synchronization

/// Where a task list that lives on a server is kept between its syncs: its last good copy (each
/// object with its ETag, and how the server said the collection stood), and the writes that wait
/// for the server (Done, uncomplete, add, remove), in order, across restarts. The state file is
/// one (GeoAlarmStore), so that the agent starts and fires with the server away.
public protocol TaskListCache: Sendable {
    /// The copy of the list `name`; nil when it was never fetched.
    func cachedList(_ name: String) throws -> CachedList?
    /// Changes the copy of the list `name` as `update` says, in one transaction.
    func updateCachedList(_ name: String, _ update: CachedList.Update) throws
    /// Adds a write at the end of the queue, and makes `copy` of its list's copy (the change
    /// made there at once), both in one transaction: the copy never holds a change that is not
    /// queued, nor the queue one the copy lacks. Its number.
    @discardableResult
    func enqueue(_ write: TaskListWrite, updating copy: CachedList.Update?) throws -> Int64
    /// Every write waiting, oldest first.
    func waitingWrites() throws -> [TaskListWrite]
    /// Drops a write that was made (or can never be).
    func dropWrite(_ number: Int64) throws
}

extension TaskListCache {
    /// Adds a write at the end of the queue, the copy left as it is; its number.
    @discardableResult
    public func enqueue(_ write: TaskListWrite) throws -> Int64 {
        try enqueue(write, updating: nil)
    }
}

/// A server's task list as last fetched.
public struct CachedList: Sendable, Equatable {
    /// The collection's address.
    public var url: String
    /// The collection's `getctag` and `sync-token` when fetched: unchanged, nothing to fetch.
    public var ctag: String?
    public var syncToken: String?
    /// Each object by its address on the server: its ETag and its bytes.
    public var objects: [String: Object]

    public struct Object: Sendable, Equatable {
        public var etag: String?
        public var bytes: [UInt8]

        public init(etag: String?, bytes: [UInt8]) {
            self.etag = etag
            self.bytes = bytes
        }
    }

    public init(url: String, ctag: String? = nil, syncToken: String? = nil, objects: [String: Object] = [:]) {
        self.url = url
        self.ctag = ctag
        self.syncToken = syncToken
        self.objects = objects
    }

    /// A change of the copy: the collection's new state, objects put or removed; with `replacing`,
    /// every object not put goes.
    public struct Update: Sendable, Equatable {
        public var url: String
        public var ctag: String?
        public var syncToken: String?
        public var put: [String: Object]
        public var removed: [String]
        public var replacing: Bool

        public init(url: String, ctag: String?, syncToken: String?, put: [String: Object] = [:], removed: [String] = [], replacing: Bool = false) {
            self.url = url
            self.ctag = ctag
            self.syncToken = syncToken
            self.put = put
            self.removed = removed
            self.replacing = replacing
        }
    }
}

/// A change to a task on a server, waiting to be made: made again on the object as the server
/// has it when it goes out (so that another device's edit meanwhile survives).
public struct TaskListWrite: Sendable, Equatable {
    /// Its place in the queue (0 for one not queued yet).
    public var number: Int64
    /// The list's name.
    public var list: String
    public var kind: Kind
    public var uid: String
    /// The object's address on the server.
    public var href: String
    /// When it was asked for (a completion's time).
    public var time: Double
    /// A new task's object.
    public var bytes: [UInt8]

    public enum Kind: String, Sendable {
        case complete, uncomplete, create, delete
    }

    public init(number: Int64 = 0, list: String, kind: Kind, uid: String, href: String, time: Double, bytes: [UInt8] = []) {
        self.number = number
        self.list = list
        self.kind = kind
        self.uid = uid
        self.href = href
        self.time = time
        self.bytes = bytes
    }

    /// `bytes` (the object as cached) with this change made; nil for a deletion, which leaves none.
    /// A task that is completed already (or open already, to uncomplete) is left as it is: a
    /// change made twice (by two processes, or again after an answer that was lost) is made once
    /// (for a completion, as ``TaskEdits/completing(_:uid:at:zones:)`` does it, repeating tasks too).
    public func applied(to bytes: [UInt8]) throws(TaskProblem) -> [UInt8]? {
        switch kind {
        case .complete:
            try TaskEdits.completing(bytes, uid: uid, at: .init(timeIntervalSince1970: time), zones: .system)
        case .uncomplete:
            try TaskEdits.isClosed(bytes, uid: uid) ? TaskEdits.uncompleting(bytes, uid: uid, at: .init(timeIntervalSince1970: time)) : bytes
        case .create: self.bytes
        case .delete: nil
        }
    }
}

/// The parts of a server's address a task list needs.
public enum ServerAddress {
    /// `https://cloud.example.org:8443` of `https://cloud.example.org:8443/dav/ana/tasks/`.
    public static func origin(of url: String) -> String {
        let schemeEnd = url.hasPrefix("https://") ? 8 : url.hasPrefix("http://") ? 7 : 0
        let rest = url.dropFirst(schemeEnd)
        let end = rest.firstIndex(of: "/") ?? rest.endIndex
        return String(url[..<end])
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
        let origin = origin(of: url)
        let path = String(url.dropFirst(origin.count))
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
        let origin = origin(of: url)
        if location.hasPrefix("/") { return origin + location }
        let path = url.dropFirst(origin.count).prefix { $0 != "?" && $0 != "#" }
        let directory = path.lastIndex(of: "/").map { path[...$0] } ?? "/"
        return origin + directory + location
    }

    /// `address` with its scheme in lower case, when it is an http or https URL with the scheme
    /// written in any case (RFC 3986 3.1: `HTTPS://` is `https://`); nil when it is not one.
    public static func httpURL(_ address: String) -> String? {
        for scheme in ["http://", "https://"] where address.prefix(scheme.count).lowercased() == scheme {
            return scheme + address.dropFirst(scheme.count)
        }
        return nil
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
        guard let absolute = redirect(href, from: collection), isSameServer(absolute, collection) else { return nil }
        let path = absolute.dropFirst(origin(of: absolute).count)
        // The collection's path ends in `/`: its segments but the empty last one.
        guard !path.contains("?"), !path.contains("#"), let segments = decodedSegments(path),
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

/// A ``TaskListCache`` in memory: for an agent that runs without a state file, and for a command
/// that may not write the state file (it reads a copy of it): what it fetches lasts as long as
/// the process.
public final class MemoryTaskListCache: TaskListCache {
    private let held: Mutex<Held>

    private struct Held {
        var lists: [String: CachedList] = [:]
        var writes: [TaskListWrite] = []
        var lastNumber: Int64 = 0

        mutating func apply(_ update: CachedList.Update, toList name: String) {
            var list = lists[name] ?? CachedList(url: update.url)
            list.url = update.url
            list.ctag = update.ctag
            list.syncToken = update.syncToken
            if update.replacing { list.objects = [:] }
            for href in update.removed { list.objects[href] = nil }
            list.objects.merge(update.put) { _, new in new }
            lists[name] = list
        }
    }

    /// Starts with `lists` (copied from a state file), and no writes.
    public init(lists: [String: CachedList] = [:]) {
        held = Mutex(Held(lists: lists))
    }

    public func cachedList(_ name: String) -> CachedList? {
        held.withLock { $0.lists[name] }
    }

    public func updateCachedList(_ name: String, _ update: CachedList.Update) {
        held.withLock { $0.apply(update, toList: name) }
    }

    @discardableResult
    public func enqueue(_ write: TaskListWrite, updating copy: CachedList.Update?) -> Int64 {
        held.withLock { held in
            if let copy { held.apply(copy, toList: write.list) }
            held.lastNumber += 1
            var write = write
            write.number = held.lastNumber
            held.writes.append(write)
            return held.lastNumber
        }
    }

    /// Adds a write at the end of the queue, the copy left as it is; its number.
    @discardableResult
    public func enqueue(_ write: TaskListWrite) -> Int64 {
        enqueue(write, updating: nil)
    }

    public func waitingWrites() -> [TaskListWrite] {
        held.withLock { $0.writes }
    }

    public func dropWrite(_ number: Int64) {
        held.withLock { $0.writes.removeAll { $0.number == number } }
    }
}
