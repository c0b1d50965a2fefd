import GeoAlarmMap
import Testing

/// The map server's reading of requests: whole ones, partial ones, and the ones it refuses.
struct HTTPRequestReaderTests {
    static func read(_ text: String, largestBody: Int = 100) -> HTTPRequestReader.Outcome {
        HTTPRequestReader.read(Array(text.utf8), largestBody: largestBody)
    }

    @Test func aGetWithItsQueryAndHeaders() {
        let text = "GET /api/places?south=38.7&west=-9.2&name=caf%C3%A9+bar&south=1 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n"
            + "Cookie: a=1\r\nCOOKIE: geoalarm_map=ff\r\nAccept:  */*  \r\n\r\n"
        guard case .complete(let request, let length) = Self.read(text) else {
            Issue.record("not read: \(Self.read(text))")
            return
        }
        #expect(length == text.utf8.count)
        #expect(request.method == "GET" && request.path == "/api/places")
        #expect(request.query == ["south": "38.7", "west": "-9.2", "name": "café bar"], "the first of a repeated name")
        #expect(request.headers == ["host": "127.0.0.1:80", "cookie": "a=1; geoalarm_map=ff", "accept": "*/*"])
        #expect(request.body.isEmpty)
    }

    @Test func aBodyIsWaitedForUntilItsLengthHasCome() {
        let head = "POST /api/add HTTP/1.1\nContent-Length: 5\n\n"
        #expect(Self.read("POST /api/add HTTP/1.1\r\nContent-Len") == .incomplete)
        #expect(Self.read(head + "abc") == .incomplete)
        #expect(Self.read(head + "abcdeXYZ") == .complete(
            HTTPRequest(method: "POST", path: "/api/add", headers: ["content-length": "5"], body: Array("abcde".utf8)),
            length: head.utf8.count + 5), "lines may end in LF alone; what follows the body is not its")
    }

    @Test func whatCouldBeMisreadIsRefused() {
        func status(_ text: String) -> Int? {
            if case .refused(let status, _) = Self.read(text) { return status }
            return nil
        }
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\n folded: value\r\n\r\n") == 400, "a folded header")
        #expect(status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == 501)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd") == 400, "two lengths")
        #expect(status("POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n") == 400)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n") == 413, "refused before the body comes")
        #expect(status("GET / HTTP/2.0\r\n\r\n") == 505)
        #expect(status("GET http://elsewhere/ HTTP/1.1\r\n\r\n") == 400)
        #expect(status("GET /%zz HTTP/1.1\r\n\r\n") == 400)
        #expect(status("GET /a%00b HTTP/1.1\r\n\r\n") == 400)
        #expect(status("GET  / HTTP/1.1\r\n\r\n") == 400)
        #expect(status("G@T / HTTP/1.1\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\nNo colon\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: HTTPRequestReader.largestHead) + "\r\n\r\n") == 431)
        #expect(status("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: HTTPRequestReader.largestHead)) == 431,
                "a head too long is refused before its end comes")
    }
}
