import GeoAlarmScanners

/// A WebDAV `multistatus` answer (RFC 4918; CalDAV's REPORTs, RFC 4791; sync-collection, RFC 6578),
/// read for what geoalarm asks: per resource its address, its status, and the properties found
/// (a `200` propstat's), among them a task's ETag and its object; and the collection's new sync
/// token. Elements are matched by their namespace and local name, as WebDAV asks (RFC 4918,
/// 17): `DAV:`'s, CalDAV's (`urn:ietf:params:xml:ns:caldav`) and CalendarServer's `getctag`,
/// whatever prefix the server binds them to; another namespace's `href` is not DAV's.
///
/// Bounded by its caller (the answer's size); a document that is not well-formed, or not a
/// multistatus, is refused with its line.
public struct Multistatus: Sendable, Equatable {
    public var responses: [Response] = []
    /// `sync-token` of a sync-collection answer.
    public var syncToken: String?

    /// One `response`.
    public struct Response: Sendable, Equatable {
        /// `href`, percent-encoded as the server wrote it.
        public var href = ""
        /// The response's own `status` (a sync-collection's 404 for a removed resource), when given.
        public var status: Int?
        public var etag: String?
        /// `calendar-data`: the object.
        public var calendarData: [UInt8]?
        /// `getctag` (CalendarServer's), `sync-token` (RFC 6578) as properties.
        public var ctag: String?
        public var syncToken: String?
        /// `displayname`.
        public var displayName: String?
        /// `current-user-principal` and `calendar-home-set`: the `href` inside.
        public var principal: String?
        public var calendarHome: String?
        /// Whether `resourcetype` holds `calendar`.
        public var isCalendar = false
        /// `supported-calendar-component-set`: the `comp` names (`VEVENT`, `VTODO`).
        public var components: [String] = []
    }

    /// Why an answer is not one.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public init() {}

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> Multistatus {
        var scanner = XMLScanner(bytes)
        var result = Multistatus()
        var path: [String] = []
        var response = Response()
        // A propstat's properties count only when its status is 2xx: kept aside until then.
        var found = Response()
        var propstatStatus: Int?
        var text: [UInt8] = []
        // The namespaces in scope at each open element: its declarations over its parent's.
        var scopes: [[String: String]] = []
        do {
            while let event = try scanner.next() {
                switch event {
                case .start(let tag):
                    var scope = scopes.last ?? [:]
                    for (prefix, name) in scanner.declaredNamespaces { scope[prefix] = name }
                    scopes.append(scope)
                    let name = knownName(of: tag, in: scanner, namespaces: scope)
                    if path.isEmpty, name != "multistatus" {
                        let root = String(scanner.writtenName(of: tag).prefix(40))
                        throw Problem(description: "the answer is no WebDAV multistatus (its root element is <\(root)>: a login page, or a proxy's)")
                    }
                    path.append(name)
                    text = []
                    switch name {
                    case "response": response = Response()
                    case "propstat":
                        found = Response()
                        propstatStatus = nil
                    case "calendar" where path.dropLast().last == "resourcetype": found.isCalendar = true
                    case "comp" where path.dropLast().last == "supported-calendar-component-set":
                        if let component = scanner.attribute("name") { found.components.append(component.uppercased()) }
                    default: break
                    }
                case .text(let characters):
                    text += scanner.bytes(of: characters)
                case .end(let tag):
                    guard String(validating: text, as: UTF8.self) != nil else {
                        throw Problem(description: "line \(tag.line): text that is not UTF-8")
                    }
                    let name = path.removeLast()
                    scopes.removeLast()
                    let parent = path.last
                    let value = XMLScanner.trimmed(text)
                    switch (name, parent) {
                    case ("href", "response"): response.href = value
                    case ("status", "response"): response.status = statusCode(value)
                    case ("status", "propstat"): propstatStatus = statusCode(value)
                    case ("getetag", _): found.etag = value
                    case ("calendar-data", _): found.calendarData = text
                    case ("getctag", _): found.ctag = value
                    case ("sync-token", "prop"): found.syncToken = value
                    case ("sync-token", "multistatus"): result.syncToken = value
                    case ("displayname", _): found.displayName = value
                    case ("href", "current-user-principal"): found.principal = value
                    case ("href", "calendar-home-set"): found.calendarHome = value
                    case ("propstat", _):
                        if let status = propstatStatus, (200..<300).contains(status) { response.merge(found) }
                    case ("response", _): result.responses.append(response)
                    default: break
                    }
                    text = []
                }
            }
        } catch let failure as XMLScanner.Failure {
            throw Problem(description: "line \(failure.line): \(failure.message)")
        } catch let problem as Problem {
            throw problem
        } catch {
            throw Problem(description: "\(error)")
        }
        return result
    }

    /// The local name of an element this reader looks at, when it is in that name's namespace
    /// (its prefix bound in `namespaces`, the empty one for the default); "other" for any else.
    private static func knownName(of tag: XMLScanner.Tag, in scanner: XMLScanner, namespaces: [String: String]) -> String {
        guard let namespace = namespaces[String(scanner.prefix(of: tag))] else { return "other" }
        for (name, owner) in known where owner == namespace && scanner.tag(tag, isNamed: name) { return name.description }
        return "other"
    }

    static let dav = "DAV:", calDAV = "urn:ietf:params:xml:ns:caldav", calendarServer = "http://calendarserver.org/ns/"

    /// The names this reader looks at (StaticStrings, as the scanner compares them), each with its namespace.
    private static let known: [(StaticString, String)] = [
        ("multistatus", dav), ("response", dav), ("href", dav), ("status", dav), ("propstat", dav), ("prop", dav),
        ("getetag", dav), ("sync-token", dav), ("displayname", dav), ("current-user-principal", dav), ("resourcetype", dav),
        ("calendar-data", calDAV), ("calendar-home-set", calDAV), ("calendar", calDAV), ("supported-calendar-component-set", calDAV),
        ("comp", calDAV), ("getctag", calendarServer),
    ]

    /// `HTTP/1.1 404 Not Found`'s 404; nil when it is no status (three digits, 100 to 599).
    private static func statusCode(_ line: String) -> Int? {
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[1].utf8.count == 3, let status = Int(parts[1]), (100...599).contains(status) else { return nil }
        return status
    }
}

extension Multistatus.Response {
    /// Takes the properties `other` found.
    fileprivate mutating func merge(_ other: Self) {
        etag = other.etag ?? etag
        calendarData = other.calendarData ?? calendarData
        ctag = other.ctag ?? ctag
        syncToken = other.syncToken ?? syncToken
        displayName = other.displayName ?? displayName
        principal = other.principal ?? principal
        calendarHome = other.calendarHome ?? calendarHome
        isCalendar = isCalendar || other.isCalendar
        components += other.components
    }
}
