@testable import GeoAlarmMap
import Testing

/// Who may use the map: the Host, the Origin, the token's header on everything private.
struct MapAccessTests {
    static let token = String(repeating: "ab", count: 32)
    static let access = MapAccess(token: token, host: "127.0.0.1", port: 8765)

    static func request(
        isPrivate: Bool = true, host: String? = "127.0.0.1:8765", header: String? = token, origin: String? = nil
    ) -> MapAccess.Request {
        MapAccess.Request(isPrivate: isPrivate, host: host, headerToken: header, origin: origin)
    }

    /// Whether `verdict` refuses with `status`.
    static func refuses(_ verdict: MapAccess.Verdict, with status: Int) -> Bool {
        if case .refused(status, _) = verdict { true } else { false }
    }

    @Test func theTokenInItsHeaderLetsARequestIn() {
        #expect(Self.access.check(Self.request()) == .allowed)
        #expect(Self.access.check(Self.request(host: "localhost:8765")) == .allowed, "localhost names the loopback address too")
    }

    /// The page and its files hold no secret: they need the right Host, not the token.
    @Test func thePageIsPublicItsDataIsNot() {
        #expect(Self.access.check(Self.request(isPrivate: false, header: nil)) == .allowed)
        #expect(Self.refuses(Self.access.check(Self.request(isPrivate: false, host: "evil.example:8765", header: nil)), with: 421))
    }

    @Test func noTokenOrAnotherOneIsRefused() {
        for header in [nil, String(repeating: "0", count: 64), String(Self.token.dropLast()), "abab", ""] {
            #expect(Self.refuses(Self.access.check(Self.request(header: header)), with: 403), "\(header ?? "none")")
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
        let v6 = MapAccess(token: Self.token, host: "::1", port: 8765)
        #expect(v6.check(Self.request(host: "[::1]:8765")) == .allowed && v6.check(Self.request(host: "localhost:8765")) == .allowed)
    }

    /// Listening on every address, a browser on another machine names this one by an address
    /// of it, or by its name; a rebinding site's name is still refused.
    @Test func onEveryAddressAnyAddressLiteralOrTheMachinesNameIsTheHost() {
        let everywhere = MapAccess(token: Self.token, host: "0.0.0.0", port: 8765, machineNames: ["pi", "pi.local"])
        for host in ["192.168.1.5:8765", "10.0.0.7:8765", "127.0.0.1:8765", "[fe80::1]:8765", "localhost:8765", "pi:8765", "PI.local:8765"] {
            #expect(everywhere.check(Self.request(host: host)) == .allowed, "\(host)")
        }
        for host in ["evil.example:8765", "192.168.1.5:8766", "192.168.1.5", "fe80::1:8765", "[192.168.1.5]:8765", "pi.evil.example:8765"] {
            #expect(Self.refuses(everywhere.check(Self.request(host: host)), with: 421), "\(host)")
        }
        let everywhere6 = MapAccess(token: Self.token, host: "::", port: 8765)
        #expect(everywhere6.check(Self.request(host: "[2001:db8::5]:8765")) == .allowed)
    }

    @Test func anotherSitesOriginIsRefused() {
        #expect(Self.refuses(Self.access.check(Self.request(origin: "http://evil.example")), with: 403))
        #expect(Self.refuses(Self.access.check(Self.request(isPrivate: false, header: nil, origin: "http://evil.example")), with: 403))
        #expect(Self.access.check(Self.request(origin: "http://127.0.0.1:8765")) == .allowed)
    }

    @Test func tokensAreLongRandomAndCompareWhole() {
        let tokens = Set((0..<100).map { _ in MapAccess.makeToken() })
        #expect(tokens.count == 100)
        #expect(tokens.allSatisfy { $0.count == 64 && $0.allSatisfy(\.isHexDigit) })
        #expect(MapAccess.same("abc", "abc") && !MapAccess.same("abc", "abd") && !MapAccess.same("abc", "ab"))
    }
}
