import Foundation
import GeoAlarmConfig
import GeoAlarmCore
@testable import GeoAlarmMap
import GeoAlarmScanners
import GeoAlarmSystem
import GeoAlarmTestSupport
import Logging
import Testing

/// The map's answers to hostile and careless requests: views that are no views, requests without
/// the token, a credential that must reach no other server.
struct MapHandlerTests {
    static let token = String(repeating: "cd", count: 32)

    /// A handler for a config with places on both sides of the antimeridian (Fiji) and in Lisbon.
    static func handler() throws -> MapHandler {
        let path = try Command.temporaryFile("""
            [[reminder]]
            id = "bread"
            title = "Buy bread"
            location = "38.7105,-9.1366"

            [[collection]]
            id = "fiji"
            file = "fiji.csv"
            title = "{name}"
            radius = "50m"

            """)
        let rows = "name,lat,lon\nwest of the line,-17.8,179.9\neast of the line,-17.8,-179.9\nfar,-17.8,170\n"
        try rows.write(toFile: URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("fiji.csv").path,
                       atomically: false, encoding: .utf8)
        let config = try ConfigLoader.load(path: path)
        let handler = MapHandler(
            model: MapModel(config: config, store: nil, logger: Logger(label: "test")), page: MapPage(settings: config.map),
            leafletFolder: "/nonexistent")
        handler.access.withLock { $0 = MapAccess(token: token, host: "127.0.0.1", port: 8765) }
        return handler
    }

    static func get(_ handler: MapHandler, _ target: String, token: String? = MapHandlerTests.token) throws -> HTTPResponse {
        var head = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:8765\r\n"
        if let token { head += "X-GeoAlarm-Token: \(token)\r\n" }
        guard case .complete(let request, _) = HTTPRequestReader.read(Array((head + "\r\n").utf8), largestBody: 0) else {
            throw Failure(description: "not a request: \(target)")
        }
        guard case .response(let response) = handler.reply(to: request, from: HTTPPeer(descriptor: -1)) else {
            throw Failure(description: "\(target) answered with a stream")
        }
        return response
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func names(_ response: HTTPResponse) throws -> Set<String> {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        return Set((object["places"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String })
    }

    /// West east of east is a view across the antimeridian, answered; what cannot be a view is
    /// refused with why; nothing stops the server (these crashed it with SIGILL).
    @Test func viewsAcrossTheAntimeridianAreAnsweredAndNoViewCrashes() throws {
        let handler = try Self.handler()
        let across = try Self.get(handler, "/api/places?south=-18&west=179.5&north=-17.5&east=-179.5")
        #expect(across.status == 200)
        #expect(try Self.names(across) == ["west of the line", "east of the line"])
        let unwrapped = try Self.get(handler, "/api/places?south=-18&west=179.5&north=-17.5&east=180.5")
        #expect(try Self.names(unwrapped) == ["west of the line", "east of the line"], "Leaflet's longitudes past 180")
        let turnsAway = try Self.get(handler, "/api/places?south=-18&west=-900.5&north=-17.5&east=-899.5")
        #expect(try Self.names(turnsAway) == ["west of the line", "east of the line"], "a map panned round the earth")
        let almostAll = try Self.get(handler, "/api/places?south=0&west=10&north=10&east=9.99")
        #expect(almostAll.status == 200, "west greater than east: the view across the antimeridian, all but 0.01°")
        for target in [
            "/api/places?south=-90&west=1e19&north=90&east=1e19", "/api/places?south=-90&west=-1e308&north=90&east=1e308",
            "/api/places?south=-90&west=1e300&north=90&east=-1e300", "/api/places?south=-18&west=179&north=-17&east=181&limit=99999999999999999999",
        ] {
            #expect(try Self.get(handler, target).status == 200, "\(target)")
        }
        for (target, why) in [
            ("/api/places?south=1e300&west=0&north=1e301&east=1", "latitudes run from -90 to 90"),
            ("/api/places?south=-91&west=0&north=0&east=1", "latitudes run from -90 to 90"),
            ("/api/places?south=10&west=0&north=0&east=1", "south side is north of its north side"),
            ("/api/places?south=nan&west=0&north=0&east=1", "not all finite"),
            ("/api/places?south=0&west=inf&north=1&east=1", "not all finite"),
            ("/api/places?south=0&west=0&north=1", "give the view"),
        ] {
            let answer = try Self.get(handler, target)
            #expect(answer.status == 400 && String(decoding: answer.body, as: UTF8.self).contains(why), "\(target)")
        }
    }

    /// The data needs the token in its header; the page and its script do not, and hold no secret.
    @Test func theDataNeedsTheTokenThePageDoesNot() throws {
        let handler = try Self.handler()
        for target in ["/api/reminders", "/api/state", "/api/places?south=0&west=0&north=1&east=1"] {
            #expect(try Self.get(handler, target, token: nil).status == 403, "\(target)")
            #expect(try Self.get(handler, target, token: String(repeating: "0", count: 64)).status == 403, "\(target)")
            #expect(try Self.get(handler, target).status == 200, "\(target)")
        }
        let page = try Self.get(handler, "/", token: nil)
        #expect(page.status == 200)
        #expect(!String(decoding: page.body, as: UTF8.self).contains(Self.token), "the page holds no token")
        #expect(try Self.get(handler, "/map.js", token: nil).status == 200)
    }

    /// No answer sets a cookie (one goes to every server of the host, whatever its port) or
    /// sends the browser elsewhere (a redirect built from the request's path could).
    @Test func noAnswerSetsACookieOrRedirects() throws {
        let handler = try Self.handler()
        for target in ["/?token=\(Self.token)", "/%0d%0aSet-Cookie:%20x=1?token=\(Self.token)", "//evil.example/?token=\(Self.token)",
                       "/%5cevil.example?token=\(Self.token)", "/api/reminders?token=\(Self.token)", "/map.js", "/api/state"] {
            for token in [nil, Self.token] {
                let answer = try Self.get(handler, target, token: token)
                let names = Set(answer.headers.map { $0.0.lowercased() })
                #expect(!names.contains("set-cookie") && !names.contains("location"), "\(target): \(answer.headers)")
                #expect(!(300..<400).contains(answer.status), "\(target): \(answer.status)")
            }
        }
    }

    /// The live feed carries the parts' versions, a few bytes however large an area is; the
    /// part with the shapes is fetched apart, and only when it changed.
    @Test func theLiveFeedCarriesVersionsNotShapes() throws {
        let handler = try Self.handler()
        let reminders = try #require(try JSONSerialization.jsonObject(with: Data(Self.get(handler, "/api/reminders").body)) as? [String: Any])
        let state = try #require(try JSONSerialization.jsonObject(with: Data(Self.get(handler, "/api/state").body)) as? [String: Any])
        #expect(reminders["version"] as? Int == 1 && state["version"] as? Int == 1)
        let sent = LockedBox<[String]>([])
        let end = handler.model.subscribe { text in sent.mutate { $0.append(text) } }
        defer { end() }
        #expect(sent.value == [#"{"reminders":1,"state":1}"#])
    }
}

/// A value behind a lock, for a test's callbacks.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var held: Value

    init(_ value: Value) { held = value }

    var value: Value { lock.withLock { held } }

    func mutate(_ change: (inout Value) -> Void) { lock.withLock { change(&held) } }
}
