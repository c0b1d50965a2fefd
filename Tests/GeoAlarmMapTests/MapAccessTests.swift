@testable import GeoAlarmMap
import Testing

/// Who may use the map: the token, the Host, the header on changes, the Origin.
struct MapAccessTests {
    static let token = String(repeating: "ab", count: 32)
    static let access = MapAccess(token: token, host: "127.0.0.1", port: 8765)

    static func request(
        change: Bool = false, host: String? = "127.0.0.1:8765", cookie: String? = "geoalarm_map=\(token)", query: String? = nil,
        header: String? = nil, origin: String? = nil
    ) -> MapAccess.Request {
        MapAccess.Request(isChange: change, host: host, cookie: cookie, queryToken: query, headerToken: header, origin: origin)
    }

    @Test func theTokenInTheCookieOrTheAddressLetsAPageIn() {
        #expect(Self.access.check(Self.request()) == .allowed)
        #expect(Self.access.check(Self.request(cookie: "other=1; geoalarm_map=\(Self.token); more=2")) == .allowed)
        #expect(Self.access.check(Self.request(cookie: nil, query: Self.token)) == .allowedByAddress)
        #expect(Self.access.check(Self.request(host: "localhost:8765")) == .allowed, "localhost names the loopback address too")
    }

    /// Whether `verdict` refuses with `status`.
    static func refuses(_ verdict: MapAccess.Verdict, with status: Int) -> Bool {
        if case .refused(status, _) = verdict { true } else { false }
    }

    @Test func noTokenOrAnotherOneIsRefused() {
        for request in [
            Self.request(cookie: nil), Self.request(cookie: "geoalarm_map=" + String(repeating: "0", count: 64)),
            Self.request(cookie: "geoalarm_map=\(Self.token.dropLast())"), Self.request(cookie: nil, query: "abab"),
        ] {
            #expect(Self.refuses(Self.access.check(request), with: 403), "\(request)")
        }
    }

    /// A site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own name as Host.
    @Test func aForeignHostIsRefusedEvenWithTheToken() {
        for host in ["evil.example:8765", "127.0.0.1:8766", "127.0.0.1", "", "127.0.0.1:8765.evil.example"] {
            #expect(Self.refuses(Self.access.check(Self.request(host: host)), with: 421), "\(host)")
        }
        #expect(Self.refuses(Self.access.check(Self.request(host: nil)), with: 421))
        let lan = MapAccess(token: Self.token, host: "192.168.1.5", port: 8765)
        #expect(Self.refuses(lan.check(Self.request(host: "localhost:8765")), with: 421), "localhost is not another machine's address")
        #expect(lan.check(Self.request(host: "192.168.1.5:8765")) == .allowed)
    }

    /// A cookie goes with any request to the site, a header only with the page's own: a change
    /// needs the header.
    @Test func aChangeNeedsTheTokenInItsHeader() {
        #expect(Self.refuses(Self.access.check(Self.request(change: true)), with: 403), "the cookie alone")
        #expect(Self.refuses(Self.access.check(Self.request(change: true, header: "x")), with: 403), "a wrong header")
        #expect(Self.access.check(Self.request(change: true, header: Self.token)) == .allowed)
        #expect(Self.access.check(Self.request(change: true, cookie: nil, header: Self.token)) == .allowed)
    }

    @Test func anotherSitesOriginIsRefused() {
        #expect(Self.refuses(Self.access.check(Self.request(change: true, header: Self.token, origin: "http://evil.example")), with: 403))
        #expect(Self.access.check(Self.request(change: true, header: Self.token, origin: "http://127.0.0.1:8765")) == .allowed)
    }

    @Test func tokensAreLongRandomAndCompareWhole() {
        let tokens = Set((0..<100).map { _ in MapAccess.makeToken() })
        #expect(tokens.count == 100)
        #expect(tokens.allSatisfy { $0.count == 64 && $0.allSatisfy(\.isHexDigit) })
        #expect(MapAccess.same("abc", "abc") && !MapAccess.same("abc", "abd") && !MapAccess.same("abc", "ab"))
        #expect(Self.access.cookie.contains("HttpOnly") && Self.access.cookie.contains("SameSite=Strict"))
    }
}
