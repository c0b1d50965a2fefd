import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmScanners
import Synchronization

/// Answers the map's requests: the page and its files, the data, the changes and the live feed,
/// each only for the holder of the token (``MapAccess``).
final class MapHandler: Sendable {
    let model: MapModel
    /// Set once the server listens (its port is known only then); until then every request is refused.
    let access = Mutex<MapAccess?>(nil)
    let page: MapPage
    /// Where Debian's libjs-leaflet puts Leaflet.
    let leafletFolder: String

    init(model: MapModel, page: MapPage, leafletFolder: String) {
        self.model = model
        self.page = page
        self.leafletFolder = leafletFolder
    }

    /// The reply to `request`, with the page's security headers on it.
    func reply(to request: HTTPRequest) -> HTTPReply {
        switch answer(request) {
        case .response(var response):
            response.headers += page.securityHeaders
            return .response(response)
        case .eventStream(let headers, let subscribe):
            return .eventStream(headers: headers + page.securityHeaders, subscribe: subscribe)
        }
    }

    private func answer(_ request: HTTPRequest) -> HTTPReply {
        let isChange = request.method != "GET" && request.method != "HEAD"
        let verdict = access.withLock { $0 }.map { access in
            access.check(MapAccess.Request(
                isChange: isChange, host: request.headers["host"], cookie: request.headers["cookie"],
                queryToken: request.query["token"], headerToken: request.headers[MapAccess.tokenHeader.lowercased()],
                origin: request.headers["origin"]))
        } ?? .refused(status: 503, reason: "starting")
        switch verdict {
        case .refused(let status, let reason):
            return .response(Self.text(status, reason + "\n"))
        case .allowedByAddress:
            // The token goes into the cookie and out of the address (and the browser's history).
            guard let access = access.withLock({ $0 }) else { return .response(Self.text(503, "starting\n")) }
            return .response(HTTPResponse(status: 303, headers: [("Location", request.path), ("Set-Cookie", access.cookie)]))
        case .allowed:
            break
        }
        if isChange {
            guard request.method == "POST" else { return .response(Self.text(405, "changes are POSTed\n")) }
            return .response(change(request))
        }
        switch request.path {
        case "/":
            guard let token = access.withLock({ $0?.token }) else { return .response(Self.text(503, "starting\n")) }
            return .response(HTTPResponse(
                status: 200, headers: [("Content-Type", "text/html; charset=utf-8")],
                body: Array(page.html(token: token, settings: model.current.config.map).utf8)))
        case "/map.js":
            return .response(HTTPResponse(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8")], body: MapPage.script))
        case "/map.css":
            return .response(HTTPResponse(status: 200, headers: [("Content-Type", "text/css; charset=utf-8")], body: MapPage.style))
        case "/api/map":
            return .response(Self.json(200, model.current.snapshot(now: Date())))
        case "/api/places":
            return .response(places(request))
        case "/api/live":
            return .eventStream(headers: []) { [model] send in model.subscribe(send) }
        default:
            if request.path.hasPrefix("/leaflet/") { return .response(leaflet(String(request.path.dropFirst("/leaflet/".count)))) }
            return .response(Self.text(404, "not found\n"))
        }
    }

    /// Collection places in the view the query names (`south`, `west`, `north`, `east`; `limit`).
    private func places(_ request: HTTPRequest) -> HTTPResponse {
        let numbers = ["south", "west", "north", "east"].map { request.query[$0].flatMap(Double.init) }
        guard let south = numbers[0], let west = numbers[1], let north = numbers[2], let east = numbers[3],
              numbers.allSatisfy({ $0?.isFinite == true }), south <= north
        else { return Self.text(400, "give the view as south, west, north and east in degrees\n") }
        let limit = min(max(request.query["limit"].flatMap(Int.init) ?? 500, 1), 5000)
        let box = GeoBox(south: max(south, -90), north: min(north, 90), west: west, east: east, everyLongitude: east - west >= 360)
        return Self.json(200, model.current.places(in: box, limit: limit, now: Date()))
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
                let id = try MapEdits.add(parsed, to: config)
                model.reloadConfig()
                var object = JSONObject()
                object.add("id", id)
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
