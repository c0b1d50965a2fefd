import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmScanners
import GeoAlarmSystem
import Glibc
import Synchronization

/// Answers the map's requests: the page and its files to anyone who names the server as its
/// `Host`; the data, the changes and the live feed only to the holder of the token
/// (``MapAccess``); and the exchange of a one-time code for the token.
final class MapHandler: Sendable {
    let model: MapModel
    /// Set once the server listens (its port is known only then); until then every request is refused.
    let access = Mutex<MapAccess?>(nil)
    let page: MapPage
    /// Where Debian's libjs-leaflet puts Leaflet.
    let leafletFolder: String
    /// One-time codes not used yet, and when each stops working.
    private let codes = Mutex<[String: ContinuousClock.Instant]>([:])
    /// The user the codes are for: the one running the map.
    private let owner: uid_t

    /// How long a one-time code works: long enough for a browser's cold start on a slow machine
    /// (a Pi's, or one busy with other work); it works once, and for this user only, all the same.
    static let codeLifetime: Duration = .seconds(600)

    init(model: MapModel, page: MapPage, leafletFolder: String, owner: uid_t = geteuid()) {
        self.model = model
        self.page = page
        self.leafletFolder = leafletFolder
        self.owner = owner
    }

    /// A code that opens the map once, within ``codeLifetime``, for a browser of this user on
    /// this machine: for an address given on a command line (`xdg-open`), which every local user
    /// can read.
    func makeCode() -> String {
        let code = MapAccess.makeToken()
        codes.withLock { codes in
            let now = ContinuousClock.now
            codes = codes.filter { $0.value > now }
            codes[code] = now + Self.codeLifetime
        }
        return code
    }

    /// The reply to `request`, with the page's security headers on it.
    func reply(to request: HTTPRequest, from peer: HTTPPeer) -> HTTPReply {
        switch answer(request, from: peer) {
        case .response(var response):
            response.headers += page.securityHeaders
            return .response(response)
        case .eventStream(let headers, let subscribe):
            return .eventStream(headers: headers + page.securityHeaders, subscribe: subscribe)
        }
    }

    private func answer(_ request: HTTPRequest, from peer: HTTPPeer) -> HTTPReply {
        guard let access = access.withLock({ $0 }) else { return .response(Self.text(503, "starting\n")) }
        let isSession = request.path == "/api/session"
        let verdict = access.check(MapAccess.Request(
            isPrivate: request.path.hasPrefix("/api/") && !isSession, host: request.headers["host"],
            headerToken: request.headers[MapAccess.tokenHeader.lowercased()], origin: request.headers["origin"]))
        if case .refused(let status, let reason) = verdict { return .response(Self.text(status, reason + "\n")) }
        let isChange = request.method != "GET" && request.method != "HEAD"
        if isSession { return .response(session(request, from: peer, token: access.token)) }
        if isChange {
            guard request.method == "POST", request.path.hasPrefix("/api/") else { return .response(Self.text(405, "changes are POSTed\n")) }
            return .response(change(request))
        }
        switch request.path {
        case "/":
            return .response(HTTPResponse(
                status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")],
                body: Array(page.html(settings: model.current.config.map).utf8)))
        case "/map.js":
            return .response(HTTPResponse(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8")], body: MapPage.script))
        case "/map.css":
            return .response(HTTPResponse(status: 200, headers: [("Content-Type", "text/css; charset=utf-8")], body: MapPage.style))
        case "/api/reminders":
            return .response(Self.json(200, model.reminders.reply))
        case "/api/state":
            return .response(Self.json(200, model.state(now: Date()).reply))
        case "/api/places":
            return .response(places(request))
        case "/api/live":
            return .eventStream(headers: []) { [model] send in model.subscribe(send) }
        default:
            if request.path.hasPrefix("/leaflet/") { return .response(leaflet(String(request.path.dropFirst("/leaflet/".count)))) }
            return .response(Self.text(404, "not found\n"))
        }
    }

    /// A one-time code exchanged for the token: `{"code": ...}` in, `{"token": ...}` out. The
    /// code is taken only from a process of the map's own user on this machine (another user who
    /// read it on a command line can neither use it nor spend it), and only once.
    private func session(_ request: HTTPRequest, from peer: HTTPPeer, token: String) -> HTTPResponse {
        guard request.method == "POST" else { return Self.text(405, "a code is POSTed\n") }
        var given: String?
        do {
            try JSONScanner.scan(request.body[...]) { scanner throws(JSONScanner.Failure) in
                try scanner.expect(UInt8(ascii: "{"))
                try scanner.members { (scanner, key) throws(JSONScanner.Failure) in
                    switch key {
                    case "code": given = try scanner.stringValue()
                    default: try scanner.skipValue()
                    }
                }
                try scanner.expectEnd()
            }
        } catch {
            return Self.error(400, "the request is not a JSON object: \(error.message)")
        }
        guard let given else { return Self.error(400, "give the code") }
        // Another user's try is refused before it can spend the code: the browser still gets in.
        guard peer.owner() == owner else {
            return Self.error(403, "this link opens the map only in a browser of the user who started geoalarm map, on this machine")
        }
        let valid = codes.withLock { codes in
            let now = ContinuousClock.now
            codes = codes.filter { $0.value > now }
            return codes.removeValue(forKey: given) != nil
        }
        guard valid else { return Self.error(403, "this link was used already or is too old: open the address geoalarm map printed") }
        var object = JSONObject()
        object.add("token", token)
        return Self.json(200, object.text)
    }

    /// Collection places in the view the query names (`south`, `west`, `north`, `east`; `limit`).
    private func places(_ request: HTTPRequest) -> HTTPResponse {
        switch MapView.parse(request.query) {
        case .success(let view): Self.json(200, model.current.places(in: view.box, limit: view.limit, now: Date()))
        case .failure(let problem): Self.text(400, "\(problem)\n")
        }
    }

    /// A change the page asks for; the config or the state file is read again before the answer,
    /// so that the page's next look sees it.
    private func change(_ request: HTTPRequest) -> HTTPResponse {
        let parsed: MapChange
        do {
            parsed = try MapChange.parse(request.body)
        } catch {
            return Self.error(400, error.description)
        }
        let config = model.current.config
        let now = Date()
        do {
            switch request.path {
            case "/api/add":
                let id = try MapEdits.add(parsed, to: config, store: model.store)
                model.reloadConfig()
                var object = JSONObject()
                object.add("id", id)
                // What the config now warns of (an id that only looks like its words), as `add` says it.
                let warnings = model.current.config.warnings.map(\.description)
                if !warnings.isEmpty { object.add("warning", warnings.joined(separator: "\n")) }
                return Self.json(201, object.text)
            case "/api/change":
                try MapEdits.change(parsed, in: config)
                model.reloadConfig()
            case "/api/remove":
                try MapEdits.remove(parsed, from: config, store: model.store)
                model.reloadConfig()
                model.reloadState()
            case "/api/complete", "/api/uncomplete", "/api/snooze":
                let action: MapEdits.LifecycleAction =
                    request.path == "/api/complete" ? .complete : request.path == "/api/uncomplete" ? .uncomplete : .snooze
                try MapEdits.apply(action, parsed, in: config, store: model.store, now: now)
                model.reloadState()
            default:
                return Self.error(404, "no such change")
            }
        } catch {
            return Self.error(422, error.description)
        }
        return Self.json(200, "{}")
    }

    /// A file of Leaflet's (its script, style and marker images), by name only.
    private func leaflet(_ name: String) -> HTTPResponse {
        let types = ["leaflet.js": "text/javascript", "leaflet.css": "text/css"]
        let isImage = name.hasPrefix("images/") && name.hasSuffix(".png")
            && name.dropFirst("images/".count).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }
            && !name.contains("..")
        guard let type = types[name] ?? (isImage ? "image/png" : nil),
              let bytes = try? UserFile.contents(of: leafletFolder + "/" + name, limit: 4 << 20)
        else { return Self.text(404, "not found\n") }
        return HTTPResponse(status: 200, headers: [("Content-Type", type), ("Cache-Control", "max-age=3600")], body: bytes)
    }

    private static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8))
    }

    private static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body: Array(text.utf8))
    }

    /// A refused change: `{"error": message}`.
    private static func error(_ status: Int, _ message: String) -> HTTPResponse {
        var object = JSONObject()
        object.add("error", message)
        return json(status, object.text)
    }
}
