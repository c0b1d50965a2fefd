import FoundationEssentials
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmListCache
import GeoAlarmTasks
import GeoAlarmWebDAV

/// Why a CalDAV call gave nothing usable.
public enum CalDAVProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// No answer read: the server is away, the name unknown, the TLS certificate refused, the answer over its bound...
    case unreachable(String)
    /// 401 or 403: the credentials.
    case refused(Int)
    /// Redirected to this address, on another server, and refused there (401): the credentials
    /// go to the server of `url` only.
    case refusedElsewhere(String)
    /// 412: the object changed since it was read.
    case changed
    /// 404 or 410.
    case notFound
    /// Another status.
    case status(Int)
    /// An answer that is no answer (not a multistatus, an object over its bound).
    case malformed(String)
    /// An object's address that is no member of the list's collection: nothing is sent there.
    case notAMember(String)
    /// The server gives the object no ETag, even fetched anew: no write can be made over only
    /// what was read (RFC 7232), and a write over whatever is there could undo another's change.
    case noSafeWrite
    /// The address is no task collection (a server, a principal): the task collections found there.
    case notACollection([String])

    /// The problem of a request that got no usable answer.
    init(_ failure: WebFailure) {
        switch failure {
        case .unanswered(let reason): self = .unreachable(reason)
        case .refusedElsewhere(let address): self = .refusedElsewhere(address)
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let reason): "the server could not be read: \(reason)"
        case .refused(403):
            "the server does not let this account do that (403): the list may be shared with it read-only; "
                + "ask its owner for write access, or complete the task in an app that can"
        case .refused(let status): "the server refuses the credentials (\(status)): check username and the password"
        case .refusedElsewhere(let address):
            "redirected to \(address), another server, which asks for the credentials (401); they go to the server of url only: "
                + "give url as the server now has it"
        case .changed: "the task changed on the server meanwhile"
        case .notFound: "not found on the server"
        case .status(let status) where (300..<400).contains(status):
            "the server answered \(status), a redirect not followed: give url as the server now has it"
        case .status(let status): "the server answered \(status)"
        case .malformed(let reason): "the server's answer cannot be used: \(reason)"
        case .noSafeWrite:
            "the server gives the task no ETag, so no change can be sent without risking another device's edit of it: "
                + "make it in the task's own app"
        case .notAMember(let href):
            "\(DisplayText.escaped(href)) is no object of the list's collection (another server, or outside it): nothing is sent there"
        case .notACollection(let found):
            found.isEmpty
                ? "the address is no task collection, and none was found there"
                : "the address is no task collection; give url one of those found there: \(found.joined(separator: ", "))"
        }
    }
}

/// A CalDAV task collection (RFC 4791), and the calls geoalarm makes of it: what state it is in
/// (`getctag`, `sync-token`), what changed (RFC 6578's sync-collection, or the ETags of a
/// calendar-query), the changed objects (calendar-multiget), and the writes (PUT and DELETE,
/// conditional on the ETag: RFC 7232's `If-Match`, or `If-None-Match: *` to create).
public struct CalDAVCollection: Sendable {
    public let client: CurlClient
    /// The collection's address, ending in `/`.
    public let url: String
    public var settings: WebSettings

    /// The most objects asked for in one calendar-multiget.
    static let batch = 100

    /// The collection at `url`, asked with `settings`, whose credentials go to `url`'s server alone.
    public init(client: CurlClient, url: String, settings: WebSettings) {
        self.client = client
        self.url = ServerAddress.collection(url)
        self.settings = settings
        self.settings.credentialsServer = ServerAddress.server(of: url)
    }

    // MARK: Reading

    /// The collection's own properties: its ctag, its sync token, whether it is a calendar, what it holds.
    public func describe() async -> Result<Multistatus.Response, CalDAVProblem> {
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/">
            <d:prop><cs:getctag/><d:sync-token/><d:resourcetype/><d:displayname/><c:supported-calendar-component-set/></d:prop>
            </d:propfind>
            """
        switch await multistatus("PROPFIND", url, depth: "0", body: body) {
        case .failure(let problem): return .failure(problem)
        case .success(let answer):
            guard let own = answer.responses.first else { return .failure(.malformed("no properties of the collection")) }
            return .success(own)
        }
    }

    /// What a sync-collection report gives (RFC 6578).
    public struct Changes: Sendable {
        /// The objects changed or added: address and ETag.
        public var changed: [(href: String, etag: String?)] = []
        /// The objects removed.
        public var removed: [String] = []
        /// The token to ask from next.
        public var token: String?
        /// Whether the server gave only the first of the changes (a 507 on the collection,
        /// RFC 6578 section 3.6): the rest follow from `token`.
        public var isTruncated = false
    }

    /// What changed since `token` (RFC 6578): the objects changed (address and ETag), the ones
    /// removed, the new token, and whether more follow from it.
    public func changes(since token: String) async -> Result<Changes, CalDAVProblem> {
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:sync-collection xmlns:d="DAV:"><d:sync-token>\(MarkupText.escaped(token))</d:sync-token><d:sync-level>1</d:sync-level>
            <d:prop><d:getetag/></d:prop></d:sync-collection>
            """
        switch await members("REPORT", depth: nil, body: body) {
        case .failure(let problem): return .failure(problem)
        case .success(let (answer, member)):
            var changes = Changes(token: answer.syncToken)
            for response in answer.responses {
                // The collection's own response says only whether the answer was cut short.
                guard !response.href.hasSuffix("/") else {
                    changes.isTruncated = changes.isTruncated || response.status == 507
                    continue
                }
                guard let href = member(response.href) else { continue }
                if response.status == 404 || response.status == 410 {
                    changes.removed.append(href)
                } else {
                    changes.changed.append((href, response.etag))
                }
            }
            return .success(changes)
        }
    }

    /// Every task's address and ETag (a calendar-query for VTODOs).
    public func etags() async -> Result<[String: String?], CalDAVProblem> {
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
            <d:prop><d:getetag/></d:prop>
            <c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"/></c:comp-filter></c:filter>
            </c:calendar-query>
            """
        switch await members("REPORT", depth: "1", body: body) {
        case .failure(let problem): return .failure(problem)
        case .success(let (answer, member)):
            var etags: [String: String?] = [:]
            for response in answer.responses {
                if let href = member(response.href) { etags[href] = response.etag }
            }
            return .success(etags)
        }
    }

    /// What a calendar-multiget brought: the objects by href, and those left out for their size.
    public struct Fetched: Sendable {
        public var objects: [String: CachedList.Object] = [:]
        /// The hrefs of objects over ``Vdir/largestObject``, with their size.
        public var tooLarge: [(href: String, size: Int)] = []
    }

    /// The objects at `hrefs` (calendar-multiget, a hundred at a time), with their ETags; one
    /// over ``Vdir/largestObject`` is left out, and named.
    public func objects(_ hrefs: [String]) async -> Result<Fetched, CalDAVProblem> {
        var fetched = Fetched()
        var start = 0
        while start < hrefs.count {
            let chunk = hrefs[start..<min(start + Self.batch, hrefs.count)]
            start += Self.batch
            let body = """
                <?xml version="1.0" encoding="utf-8"?>
                <c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
                <d:prop><d:getetag/><c:calendar-data/></d:prop>
                \(chunk.map { "<d:href>\(MarkupText.escaped($0))</d:href>" }.joined())
                </c:calendar-multiget>
                """
            switch await members("REPORT", depth: "1", body: body) {
            case .failure(let problem): return .failure(problem)
            case .success(let (answer, member)):
                for response in answer.responses {
                    guard let data = response.calendarData, let href = member(response.href) else { continue }
                    guard data.count <= Vdir.largestObject else {
                        fetched.tooLarge.append((href, data.count))
                        continue
                    }
                    fetched.objects[href] = CachedList.Object(etag: response.etag, bytes: data)
                }
            }
        }
        return .success(fetched)
    }

    /// One object and its ETag: as a look reads it (a calendar-multiget, whose `getetag` is the
    /// server's own), else by a GET. A proxy that compresses a GET's answer (nginx with gzip)
    /// makes its ETag weak, `W/"..."`, and no `If-Match` matches a weak ETag: a change sent over
    /// it would be refused (412) however often it was made again.
    public func object(_ href: String) async -> Result<CachedList.Object, CalDAVProblem> {
        guard let target = target(of: href) else { return .failure(.notAMember(href)) }
        switch await objects([href]) {
        case .success(let found):
            if let object = found.objects[target.member] { return .success(object) }
            if !found.tooLarge.isEmpty { return .failure(.malformed("an object over \(DisplayText.size(Vdir.largestObject))")) }
        // A server not reached is not tried again at once: the GET would wait out the same timeout.
        case .failure(.unreachable(let reason)): return .failure(.unreachable(reason))
        case .failure: break
        }
        let answer = await client.perform(WebRequest(method: "GET", url: target.url), settings: settings)
        switch answer {
        case .failure(let failure): return .failure(CalDAVProblem(failure))
        case .response(let status, let headers, let body):
            if let problem = Self.problem(status) { return .failure(problem) }
            guard body.count <= Vdir.largestObject else { return .failure(.malformed("an object over \(DisplayText.size(Vdir.largestObject))")) }
            return .success(CachedList.Object(etag: headers["etag"], bytes: body))
        }
    }

    // MARK: Writing

    /// Puts `bytes` at `href`, only over the ETag `ifMatch` (nil: only when nothing is there);
    /// the new ETag when the server gives it.
    public func put(_ bytes: [UInt8], at href: String, ifMatch etag: String?) async -> Result<String?, CalDAVProblem> {
        guard let target = target(of: href) else { return .failure(.notAMember(href)) }
        let condition = etag.map { ("If-Match", $0) } ?? ("If-None-Match", "*")
        let request = WebRequest(
            method: "PUT", url: target.url,
            headers: [("Content-Type", "text/calendar; charset=utf-8"), condition], body: bytes)
        switch await perform(write: request) {
        case .failure(let failure): return .failure(CalDAVProblem(failure))
        case .response(let status, let headers, _):
            if let problem = Self.problem(status) { return .failure(problem) }
            // A weak ETag serves no `If-Match`: the next look learns the server's own.
            return .success(headers["etag"].flatMap { $0.hasPrefix("W/") ? nil : $0 })
        }
    }

    /// Deletes `href`, only over the ETag `ifMatch` when given.
    public func delete(_ href: String, ifMatch etag: String?) async -> Result<Void, CalDAVProblem> {
        guard let target = target(of: href) else { return .failure(.notAMember(href)) }
        let request = WebRequest(method: "DELETE", url: target.url, headers: etag.map { [("If-Match", $0)] } ?? [])
        switch await perform(write: request) {
        case .failure(let failure): return .failure(CalDAVProblem(failure))
        case .response(let status, _, _):
            if let problem = Self.problem(status) { return .failure(problem) }
            return .success(())
        }
    }

    /// Performs a write, which the client lets follow no redirect: a 301, 307 or 308 to the same
    /// server (a collection moved) is followed here, once, with the same method, conditions and
    /// body. A 302 or 303 (where a login page or a portal sends a request, which must not take
    /// the change and refuse it for good), a redirect to another server or one relative to the
    /// object is the answer: the change waits.
    private func perform(write request: WebRequest) async -> WebResponse {
        let answer = await client.perform(request, settings: settings)
        guard case .response(let status, let headers, _) = answer, [301, 307, 308].contains(status),
              let location = headers["location"], location.hasPrefix("/") || ServerAddress.httpURL(location) != nil,
              let target = ServerAddress.redirect(location, from: request.url), ServerAddress.isSameServer(target, request.url)
        else { return answer }
        var moved = request
        moved.url = target
        return await client.perform(moved, settings: settings)
    }

    // MARK: Discovery

    /// A task collection found on a server.
    public struct Found: Sendable, Equatable {
        public var url: String
        public var name: String?
    }

    /// The task collections of the user, when `url` names a server or a principal rather than a
    /// collection (RFC 4791's discovery: `current-user-principal`, its `calendar-home-set`, the
    /// collections there whose `supported-calendar-component-set` holds VTODO). The principal
    /// is asked of `url`, and where it names none (a server whose root is its web pages), of
    /// the server's `/.well-known/caldav` (RFC 6764), which such a server points at its CalDAV,
    /// maybe on another server. Each address found is read against the one that named it.
    public func discover() async -> Result<[Found], CalDAVProblem> {
        let wellKnown = ServerAddress.origin(of: url) + "/.well-known/caldav"
        var principal = ServerAddress.collection(url)
        if let found = await userPrincipal(at: url) {
            principal = found
        } else if url != wellKnown + "/", let found = await userPrincipal(at: wellKnown) {
            principal = found
        }
        let homeQuery = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:calendar-home-set/></d:prop></d:propfind>
            """
        var home = principal
        switch await multistatus("PROPFIND", principal, depth: "0", body: homeQuery, settings: discoverySettings(towards: principal)) {
        case .failure(let problem): return .failure(problem)
        case .success(let answer): home = answer.responses.first?.calendarHome.map { ServerAddress.resolve($0, against: principal) } ?? principal
        }
        let listQuery = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
            <d:prop><d:resourcetype/><d:displayname/><c:supported-calendar-component-set/></d:prop></d:propfind>
            """
        switch await multistatus("PROPFIND", home, depth: "1", body: listQuery, settings: discoverySettings(towards: home)) {
        case .failure(let problem): return .failure(problem)
        case .success(let answer):
            return .success(answer.responses.filter { $0.isCalendar && ($0.components.isEmpty || $0.components.contains("VTODO")) }.map {
                Found(url: ServerAddress.resolve($0.href, against: home), name: $0.displayName)
            })
        }
    }

    /// The address of the `current-user-principal` that `target` names; nil when it names none.
    ///
    /// Its redirects are followed here rather than by the client, which would send no
    /// credentials to another server: RFC 6764 lets `/.well-known/caldav` point to another one
    /// (a provider's `example.com` to its `caldav.example.com`), and the principal is asked of it
    /// with the credentials, since the server the user named sent them there over TLS
    /// (``discoverySettings(towards:)``); at most five, as the client's. Never from https to
    /// http, where they would travel in clear.
    private func userPrincipal(at target: String) async -> String? {
        let query = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:propfind xmlns:d="DAV:"><d:prop><d:current-user-principal/></d:prop></d:propfind>
            """
        var target = target
        for _ in 0...5 {
            var request = Self.request("PROPFIND", target, depth: "0", body: query)
            request.followsRedirects = false
            let answer = await client.perform(request, settings: discoverySettings(towards: target))
            guard case .response(let status, let headers, _) = answer, [301, 302, 303, 307, 308].contains(status) else {
                guard case .success(let found) = Self.multistatus(of: answer), let principal = found.responses.first?.principal, !principal.isEmpty
                else { return nil }
                return ServerAddress.resolve(principal, against: target)
            }
            guard let location = headers["location"], let next = ServerAddress.redirect(location, from: target),
                  next.hasPrefix("https://") || !target.hasPrefix("https://")
            else { return nil }
            target = next
        }
        return nil
    }

    /// The settings of a discovery request to `target`: the credentials go to another server
    /// than `url`'s only when both are https (a provider's `/.well-known/caldav` pointing at its
    /// CalDAV, iCloud's calendar homes), where whoever named it was the server the user chose,
    /// over TLS. Over plain http anyone on the way could name a server of theirs: the credentials
    /// stay with `url`'s server.
    private func discoverySettings(towards target: String) -> WebSettings {
        guard !ServerAddress.isSameServer(target, url), target.hasPrefix("https://"), url.hasPrefix("https://") else { return settings }
        var moved = settings
        moved.credentialsServer = ServerAddress.server(of: target)
        return moved
    }

    // MARK: Parts

    /// An object's `href` as the copy keeps it: its path on the server, written one way
    /// (``ServerAddress/member(_:of:)``); nil when it names no member of this collection (another
    /// server, a place outside it, the collection itself), which is passed over: a server's
    /// answer never steers a write elsewhere.
    func member(_ href: String) -> String? {
        ServerAddress.member(href, of: url)
    }

    /// The member `href` names, as the copy keeps it, and the whole address a request for it
    /// goes to; nil when it is none.
    private func target(of href: String) -> (member: String, url: String)? {
        member(href).map { ($0, ServerAddress.origin(of: url) + $0) }
    }

    /// A multistatus of the collection, and how to read its hrefs: each as the member of the
    /// collection it names, or nil. A collection moved on its server (the client followed a
    /// redirect to it) names its objects where it now is: each is taken as the member of this
    /// one of the same name, where a write follows it (``perform(write:)``).
    private func members(
        _ method: String, depth: String?, body: String
    ) async -> Result<(Multistatus, member: (String) -> String?), CalDAVProblem> {
        let answer = await client.perform(Self.request(method, url, depth: depth, body: body), settings: settings)
        var movedTo: String?
        if case .response(_, let headers, _) = answer, let reached = headers[WebResponse.reachedKey],
           ServerAddress.isSameServer(reached, url), ServerAddress.collection(reached) != url {
            movedTo = ServerAddress.collection(reached)
        }
        return Self.multistatus(of: answer).map { [url] found in
            (found, { href in
                if let own = ServerAddress.member(href, of: url) { return own }
                guard let movedTo, let there = ServerAddress.member(href, of: movedTo) else { return nil }
                return there.split(separator: "/").last.flatMap { ServerAddress.member(String($0), of: url) }
            })
        }
    }

    private func multistatus(
        _ method: String, _ target: String, depth: String?, body: String, settings: WebSettings? = nil
    ) async -> Result<Multistatus, CalDAVProblem> {
        Self.multistatus(of: await client.perform(Self.request(method, target, depth: depth, body: body), settings: settings ?? self.settings))
    }

    /// A WebDAV request of XML `body`.
    private static func request(_ method: String, _ target: String, depth: String?, body: String) -> WebRequest {
        var headers = [("Content-Type", "application/xml; charset=utf-8")]
        if let depth { headers.append(("Depth", depth)) }
        return WebRequest(method: method, url: target, headers: headers, body: Array(body.utf8))
    }

    /// The multistatus an answer holds, or why it holds none.
    private static func multistatus(of answer: WebResponse) -> Result<Multistatus, CalDAVProblem> {
        switch answer {
        case .failure(let failure):
            return .failure(CalDAVProblem(failure))
        case .response(let status, _, let answer):
            if let problem = problem(status) { return .failure(problem) }
            guard status == 207 else { return .failure(.status(status)) }
            do {
                return .success(try Multistatus.parse(answer))
            } catch {
                return .failure(.malformed(error.description))
            }
        }
    }

    /// The problem a status says, nil for a success.
    static func problem(_ status: Int) -> CalDAVProblem? {
        switch status {
        case 200..<300: nil
        case 401, 403: .refused(status)
        case 412: .changed
        case 404, 410: .notFound
        default: .status(status)
        }
    }
}
