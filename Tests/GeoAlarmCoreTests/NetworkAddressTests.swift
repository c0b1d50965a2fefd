import GeoAlarmCore
import Testing

/// Every address the program is given is read by one type: a URL (a task list's server, the
/// broker) or a bare authority (gpsd, `map --listen`).
struct NetworkAddressTests {
    /// A URL's parts, as RFC 3986's generic syntax splits them.
    @Test(arguments: [
        ("https://cloud.example.org:8443/dav/ana/tasks/", "https", nil, "cloud.example.org", "8443", "/dav/ana/tasks/", nil, nil),
        ("HTTPS://Cloud.Example.org/dav", "https", nil, "Cloud.Example.org", nil, "/dav", nil, nil),
        ("mqtts://[::1]:8883", "mqtts", nil, "::1", "8883", "", nil, nil),
        ("http://ana:secret@host/x?y=1#z", "http", "ana:secret", "host", nil, "/x", "y=1", "z"),
        ("http://a@b@host:1/", "http", "a@b", "host", "1", "/", nil, nil),
        ("mqtt://host?x", "mqtt", nil, "host", nil, "", "x", nil),
        ("http://:80/", "http", nil, "", "80", "/", nil, nil),
    ] as [(String, String, String?, String, String?, String, String?, String?)])
    func aURLIsSplitIntoItsParts(
        text: String, scheme: String, userInfo: String?, host: String, port: String?, path: String, query: String?, fragment: String?
    ) throws {
        let address = try NetworkAddress(url: Substring(text))
        #expect(address.scheme == scheme && address.userInfo.map(String.init) == userInfo && String(address.host) == host)
        #expect(address.portText.map(String.init) == port && String(address.path) == path)
        #expect(address.query.map(String.init) == query && address.fragment.map(String.init) == fragment)
    }

    /// The origin keeps the authority as written, the scheme in lower case.
    @Test func anOriginIsTheSchemeAndTheAuthorityAsWritten() throws {
        #expect(try NetworkAddress(url: "HTTPS://Ana@Cloud.example.org:443/dav/").origin == "https://Ana@Cloud.example.org:443")
        #expect(try NetworkAddress(authority: "localhost:2947").origin == "localhost:2947")
    }

    /// A bare authority: a host, a port after one colon, an IPv6 address in brackets or bare
    /// (more than one colon, all of it the host).
    @Test(arguments: [
        ("localhost", "localhost", nil), ("localhost:2947", "localhost", "2947"), ("[::1]:2947", "::1", "2947"),
        ("[fe80::1%eth0]", "fe80::1%eth0", nil), ("::1", "::1", nil), ("2001:db8::7", "2001:db8::7", nil), (":8080", "", "8080"),
        ("8080", "8080", nil), ("host:", "host", ""),
    ] as [(String, String, String?)])
    func anAuthorityIsAHostAndAPort(text: String, host: String, port: String?) throws {
        let address = try NetworkAddress(authority: Substring(text))
        #expect(String(address.host) == host && address.portText.map(String.init) == port)
        #expect(address.scheme == nil && address.userInfo == nil && address.path.isEmpty)
    }

    /// A port is a number a connection may be made to; what is not one is none.
    @Test func aPortIsANumberAConnectionMayBeMadeTo() throws {
        #expect(try NetworkAddress(authority: "h:2947").port == 2947)
        for text in ["h:0", "h:65536", "h:-1", "h:+80", "h:x", "h:"] {
            #expect(try NetworkAddress(authority: Substring(text)).port == nil, "\(text)")
        }
        #expect(NetworkAddress.portNumber("65535") == 65535 && NetworkAddress.portNumber("1e3") == nil)
    }

    /// What is no address says why.
    @Test func whatIsNoAddressSaysWhy() {
        #expect(throws: NetworkAddress.Problem.noScheme) { try NetworkAddress(url: "cloud.example.org/dav") }
        #expect(throws: NetworkAddress.Problem.noScheme) { try NetworkAddress(url: "1http://host") }
        #expect(throws: NetworkAddress.Problem.noScheme) { try NetworkAddress(url: "mailto:ana@example.org") }
        #expect(throws: NetworkAddress.Problem.unclosedBracket) { try NetworkAddress(url: "http://[::1/x") }
        #expect(throws: NetworkAddress.Problem.unclosedBracket) { try NetworkAddress(authority: "[::1") }
        #expect(throws: NetworkAddress.Problem.textAfterBracket) { try NetworkAddress(authority: "[::1]x") }
        #expect(NetworkAddress.Problem.unclosedBracket.description == "has an unclosed [")
    }
}
