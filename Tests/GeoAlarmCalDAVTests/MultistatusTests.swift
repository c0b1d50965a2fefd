import Foundation
import GeoAlarmWebDAV
import Testing

/// The WebDAV multistatus reader: the answers CalDAV servers give to geoalarm's questions, with
/// whatever prefixes they choose, and documents that are no answer.
struct MultistatusTests {
    static func parse(_ text: String) throws -> Multistatus {
        try Multistatus.parse(Array(text.utf8))
    }

    /// A collection's PROPFIND, as Nextcloud writes it (its own prefixes, a 404 propstat for the
    /// properties it lacks).
    @Test func aCollectionsPropertiesWhateverItsPrefixes() throws {
        let answer = try Self.parse("""
            <?xml version="1.0"?>
            <d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/">
             <d:response>
              <d:href>/remote.php/dav/calendars/ana/tasks/</d:href>
              <d:propstat>
               <d:prop>
                <cs:getctag>http://sabre.io/ns/sync/62</cs:getctag>
                <d:sync-token>http://sabre.io/ns/sync/62</d:sync-token>
                <d:resourcetype><d:collection/><cal:calendar/></d:resourcetype>
                <d:displayname>Tasks &amp; errands</d:displayname>
                <cal:supported-calendar-component-set><cal:comp name="VTODO"/></cal:supported-calendar-component-set>
               </d:prop>
               <d:status>HTTP/1.1 200 OK</d:status>
              </d:propstat>
              <d:propstat>
               <d:prop><d:getetag/></d:prop>
               <d:status>HTTP/1.1 404 Not Found</d:status>
              </d:propstat>
             </d:response>
            </d:multistatus>
            """)
        let own = try #require(answer.responses.first)
        #expect(own.href == "/remote.php/dav/calendars/ana/tasks/")
        #expect(own.ctag == "http://sabre.io/ns/sync/62" && own.syncToken == "http://sabre.io/ns/sync/62")
        #expect(own.isCalendar && own.components == ["VTODO"] && own.displayName == "Tasks & errands")
        #expect(own.etag == nil, "a property found only in a 404 propstat is not there")
    }

    /// Radicale's sync-collection: a changed object with its ETag, a removed one (404 on the
    /// response), and the new token; default namespace, no prefixes.
    @Test func aSyncCollectionsChangesAndRemovals() throws {
        let answer = try Self.parse("""
            <?xml version='1.0' encoding='utf-8'?>
            <multistatus xmlns="DAV:"><response><href>/ana/tasks/bread.ics</href><propstat><prop><getetag>"e1"</getetag></prop>\
            <status>HTTP/1.1 200 OK</status></propstat></response><response><href>/ana/tasks/gone.ics</href>\
            <status>HTTP/1.1 404 Not Found</status></response><sync-token>http://radicale.org/ns/sync/abc</sync-token></multistatus>
            """)
        #expect(answer.syncToken == "http://radicale.org/ns/sync/abc")
        #expect(answer.responses.map(\.href) == ["/ana/tasks/bread.ics", "/ana/tasks/gone.ics"])
        #expect(answer.responses[0].etag == "\"e1\"" && answer.responses[0].status == nil)
        #expect(answer.responses[1].status == 404)
    }

    /// A calendar-multiget: each object's text, its escapes undone and a CDATA section kept as it is.
    @Test func objectsComeBackByteForByte() throws {
        let object = "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:a\r\nSUMMARY:Salt & <pepper>\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
        let escaped = object.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\r", with: "&#13;")
        let answer = try Self.parse("""
            <D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
            <D:response><D:href>/t/a.ics</D:href><D:propstat><D:prop><D:getetag>"1"</D:getetag>
            <C:calendar-data>\(escaped)</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            <D:response><D:href>/t/b.ics</D:href><D:propstat><D:prop><D:getetag>"2"</D:getetag>
            <C:calendar-data><![CDATA[\(object)]]></C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            </D:multistatus>
            """)
        #expect(answer.responses.count == 2)
        #expect(answer.responses.allSatisfy { $0.calendarData == Array(object.utf8) }, "\(answer.responses.map { String(decoding: $0.calendarData ?? [], as: UTF8.self) })")
    }

    /// Discovery's answers: the principal and the calendar home, each an href inside.
    @Test func thePrincipalAndTheCalendarHome() throws {
        let answer = try Self.parse("""
            <multistatus xmlns="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><response><href>/</href><propstat><prop>
            <current-user-principal><href>/principals/ana/</href></current-user-principal>
            <C:calendar-home-set><href>/calendars/ana/</href></C:calendar-home-set>
            </prop><status>HTTP/1.1 200 OK</status></propstat></response></multistatus>
            """)
        #expect(answer.responses.first?.principal == "/principals/ana/" && answer.responses.first?.calendarHome == "/calendars/ana/")
    }

    /// What is no answer is refused with why: another document, broken XML, an entity that
    /// would expand, an empty body.
    @Test(arguments: [
        "<html><body>Login</body></html>",
        "<d:multistatus xmlns:d=\"DAV:\"><d:response><d:href>/a</d:href>",
        "<multistatus xmlns=\"DAV:\"><response></multistatus>",
        "<!DOCTYPE m [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><multistatus xmlns=\"DAV:\">&b;</multistatus>",
        "",
        "\u{0}\u{1}garbage",
    ])
    func whatIsNoAnswerIsRefused(_ text: String) {
        #expect(throws: Multistatus.Problem.self) { try Self.parse(text) }
    }

    /// Text that is not UTF-8 (in a document that says it is) is refused, not read with
    /// replacement characters (found by the fuzzer: an href longer than the answer).
    @Test func textThatIsNotUTF8IsRefused() {
        let bytes = Array("<multistatus xmlns=\"DAV:\"><response><href>/a".utf8) + [0xC3, 0xC3] + Array("</href></response></multistatus>".utf8)
        #expect { try Multistatus.parse(bytes) } throws: { "\($0)" == "line 1: text that is not UTF-8" }
    }

    /// Elements nested a hundred thousand deep are read without recursion (no stack to exhaust).
    @Test func deepNestingIsReadWithoutRecursion() throws {
        let depth = 100_000
        let text = "<multistatus xmlns=\"DAV:\"><response><href>/a</href>" + String(repeating: "<x>", count: depth)
            + String(repeating: "</x>", count: depth) + "</response></multistatus>"
        #expect(try Self.parse(text).responses.map(\.href) == ["/a"])
    }

    /// The scheme a refusal asks for: Digest where offered, else Basic; a scheme's name inside a
    /// quoted realm or a parameter's value is none.
    @Test(arguments: [
        ("Basic realm=\"x\"", ["basic"], AuthScheme.basic),
        ("Digest realm=\"x\", nonce=\"n\", qop=\"auth\", Basic realm=\"x\"", ["digest", "basic"], .digest),
        ("Basic realm=\"a, Digest b\", charset=\"UTF-8\"", ["basic"], .basic),
        ("Basic realm=\"a \\\" , Digest\"", ["basic"], .basic),
        ("Bearer realm = \"api\", error=\"invalid_token\"", ["bearer"], nil),
        ("Negotiate YIIGhgYJKoZIhvcSAQICAQBuggZ1==", ["negotiate"], nil),
        ("NTLM, BASIC realm=\"x\"", ["ntlm", "basic"], .basic),
        ("", [], nil),
    ] as [(String, [String], AuthScheme?)])
    func theSchemeAskedIsReadFromTheChallenges(header: String, names: [String], scheme: AuthScheme?) {
        #expect(AuthScheme.schemeNames(header) == names)
        #expect(AuthScheme(challenges: header) == scheme)
    }

    /// Names are matched in their namespace, as WebDAV asks: DAV's in a default namespace or
    /// under any prefix (one rebound inside the answer too), and a name of another namespace
    /// (an `href` or `calendar-data` of an extension's) is no DAV or CalDAV name.
    @Test func namesAreMatchedInTheirNamespace() throws {
        let answer = try Self.parse("""
            <multistatus xmlns="DAV:" xmlns:x="http://example.com/ns">
             <response xmlns:C="urn:ietf:params:xml:ns:caldav">
              <x:href>/elsewhere/evil.ics</x:href>
              <href>/ana/tasks/a.ics</href>
              <propstat><prop><getetag>"1"</getetag><x:calendar-data>BEGIN:EVIL</x:calendar-data>
               <C:calendar-data>BEGIN:VCALENDAR</C:calendar-data></prop><status>HTTP/1.1 200 OK</status></propstat>
             </response>
             <response xmlns:d="http://example.com/not-dav">
              <href>/ana/tasks/b.ics</href>
              <propstat><prop><d:getetag>"forged"</d:getetag><getetag>"2"</getetag></prop><status>HTTP/1.1 200 OK</status></propstat>
             </response>
            </multistatus>
            """)
        #expect(answer.responses.map(\.href) == ["/ana/tasks/a.ics", "/ana/tasks/b.ics"])
        #expect(answer.responses.map(\.etag) == ["\"1\"", "\"2\""])
        #expect(answer.responses.first?.calendarData == Array("BEGIN:VCALENDAR".utf8))
        // A multistatus in no namespace is no DAV answer.
        #expect(throws: Multistatus.Problem.self) { try Self.parse("<multistatus><response><href>/a</href></response></multistatus>") }
    }
}
