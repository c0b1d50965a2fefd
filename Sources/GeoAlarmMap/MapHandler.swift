import Foundation
internal import FlyingFox
import GeoAlarmCore
import GeoAlarmEncoding
import Synchronization

/// Answers the map's requests: the page and its files, the data, the changes and the live feed,
/// each only for the holder of the token (``MapAccess``).
final class MapHandler: HTTPHandler {
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

    func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        var response = try await answer(request)
        for (header, value) in page.securityHeaders { response.headers[HTTPHeader(header)] = value }
        return response
    }

    private func answer(_ request: HTTPRequest) async throws -> HTTPResponse {
        let isChange = request.method != .GET && request.method != .HEAD
        let verdict = access.withLock { $0 }.map { access in
            access.check(MapAccess.Request(
                isChange: isChange, host: request.headers[.host], cookie: request.headers[.cookie],
                queryToken: request.query["token"], headerToken: request.headers[HTTPHeader(MapAccess.tokenHeader)],
                origin: request.headers[HTTPHeader("Origin")]))
        } ?? .refused(status: 503, reason: "starting")
        switch verdict {
        case .refused(let status, let reason):
            return Self.text(HTTPStatusCode(status, phrase: status == 421 ? "Misdirected Request" : "Forbidden"), reason + "\n")
        case .allowedByAddress:
            // The token goes into the cookie and out of the address (and the browser's history).
            guard let access = access.withLock({ $0 }) else { return Self.text(.serviceUnavailable, "starting\n") }
            var headers = HTTPHeaders()
            headers[.location] = request.path
            headers[.setCookie] = access.cookie
            return HTTPResponse(statusCode: .seeOther, headers: headers)
        case .allowed:
            break
        }
        if isChange {
            guard request.method == .POST else { return Self.text(.methodNotAllowed, "changes are POSTed\n") }
            return await change(request)
        }
        switch request.path {
        case "/":
            guard let token = access.withLock({ $0?.token }) else { return Self.text(.serviceUnavailable, "starting\n") }
            return HTTPResponse(
                statusCode: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: Data(page.html(token: token, settings: model.current.config.map).utf8))
        case "/map.js":
            return HTTPResponse(statusCode: .ok, headers: [.contentType: "text/javascript; charset=utf-8"], body: Data(MapPage.script))
        case "/map.css":
            return HTTPResponse(statusCode: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: Data(MapPage.style))
        case "/api/map":
            return Self.json(.ok, model.current.snapshot(now: Date()))
        case "/api/places":
            return places(request)
        case "/api/live":
            return try await WebSocketHTTPHandler.webSocket(LiveFeed(model: model)).handleRequest(request)
        default:
            if request.path.hasPrefix("/leaflet/") { return leaflet(String(request.path.dropFirst("/leaflet/".count))) }
            return Self.text(.notFound, "not found\n")
        }
    }

    /// Collection places in the view the query names (`south`, `west`, `north`, `east`; `limit`).
    private func places(_ request: HTTPRequest) -> HTTPResponse {
        let numbers = ["south", "west", "north", "east"].map { request.query[$0].flatMap(Double.init) }
        guard let south = numbers[0], let west = numbers[1], let north = numbers[2], let east = numbers[3],
              numbers.allSatisfy({ $0?.isFinite == true }), south <= north
        else { return Self.text(.badRequest, "give the view as south, west, north and east in degrees\n") }
        let limit = min(max(request.query["limit"].flatMap(Int.init) ?? 500, 1), 5000)
        let box = GeoBox(south: max(south, -90), north: min(north, 90), west: west, east: east, everyLongitude: east - west >= 360)
        return Self.json(.ok, model.current.places(in: box, limit: limit, now: Date()))
    }

    /// A change the page asks for; the config or the state file is read again before the answer,
    /// so that the page's next look sees it.
    private func change(_ request: HTTPRequest) async -> HTTPResponse {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > MapChange.largestBody {
            return Self.error(.payloadTooLarge, "the request is larger than \(MapChange.largestBody) bytes")
        }
        let parsed: MapChange
        do {
            parsed = try MapChange.parse(Array(try await request.bodyData))
        } catch let invalid as MapChange.Invalid {
            return Self.error(.badRequest, invalid.description)
        } catch {
            return Self.error(.badRequest, "the request's body could not be read")
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
                return Self.json(.created, object.text)
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
                return Self.error(.notFound, "no such change")
            }
        } catch {
            return Self.error(.unprocessableContent, error.description)
        }
        return Self.json(.ok, "{}")
    }

    /// A file of Leaflet's (its script, style and marker images), by name only.
    private func leaflet(_ name: String) -> HTTPResponse {
        let types = ["leaflet.js": "text/javascript", "leaflet.css": "text/css"]
        let isImage = name.hasPrefix("images/") && name.hasSuffix(".png")
            && name.dropFirst("images/".count).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }
            && !name.contains("..")
        guard let type = types[name] ?? (isImage ? "image/png" : nil),
              let bytes = FileManager.default.contents(atPath: leafletFolder + "/" + name)
        else { return Self.text(.notFound, "not found\n") }
        return HTTPResponse(statusCode: .ok, headers: [.contentType: type, .cacheControl: "max-age=3600"], body: bytes)
    }

    private static func text(_ status: HTTPStatusCode, _ text: String) -> HTTPResponse {
        HTTPResponse(statusCode: status, headers: [.contentType: "text/plain; charset=utf-8"], body: Data(text.utf8))
    }

    private static func json(_ status: HTTPStatusCode, _ text: String) -> HTTPResponse {
        HTTPResponse(statusCode: status, headers: [.contentType: "application/json", .cacheControl: "no-store"], body: Data(text.utf8))
    }

    /// A refused change: `{"error": message}`.
    private static func error(_ status: HTTPStatusCode, _ message: String) -> HTTPResponse {
        var object = JSONObject()
        object.add("error", message)
        return json(status, object.text)
    }
}

/// Each page's live feed: the snapshot, then a new one whenever the config or the state file
/// changes what the page shows. What the page sends is read and dropped; when it goes, so does
/// its feed.
struct LiveFeed: WSMessageHandler {
    let model: MapModel

    func makeMessages(for client: AsyncStream<WSMessage>) async throws -> AsyncStream<WSMessage> {
        let snapshots = model.watch()
        let (messages, continuation) = AsyncStream.makeStream(of: WSMessage.self)
        let forward = Task {
            for await snapshot in snapshots { continuation.yield(.text(snapshot)) }
            continuation.finish()
        }
        Task {
            for await _ in client {}
            forward.cancel()
            continuation.finish()
        }
        return messages
    }
}
