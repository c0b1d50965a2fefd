@testable import GeoAlarmMap
import GeoAlarmScanners
import GeoAlarmSystem
import GeoAlarmTestSupport
import Glibc
import Synchronization
import Testing

/// The map's HTTP server on a real loopback socket, its event loop on a thread of its own.
struct LoopHTTPServerTests {
    /// A blocking client connection, each read bounded by the failure deadline.
    final class Client {
        let descriptor: Int32

        init(port: UInt16) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var timeout = timeval(tv_sec: Int(Deadline.failure), tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            #expect(connected == 0, "connect: \(String(cString: strerror(errno)))")
        }

        deinit { close(descriptor) }

        func send(_ text: String) throws { try System.writeAll(descriptor, Array(text.utf8)) }

        /// What the server sends until it closes (or the deadline passes).
        func readToEnd() -> String {
            var all: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while let count = try? System.read(descriptor, into: &buffer), count > 0 { all += buffer[..<count] }
            return String(decoding: all, as: UTF8.self)
        }

        /// What the server sends until `text` has come.
        func read(until text: String) -> String {
            var all = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !all.contains(text), let count = try? System.read(descriptor, into: &buffer), count > 0 {
                all += String(decoding: buffer[..<count], as: UTF8.self)
            }
            return all
        }
    }

    /// A server on a port the system picked, answering with `handle`; stopped by `body`'s end.
    static func serving(
        limits: LoopHTTPServer.Limits = LoopHTTPServer.Limits(), _ handle: @escaping @Sendable (HTTPRequest) -> HTTPReply,
        _ body: (UInt16) throws -> Void
    ) throws {
        let loop = try EventLoop.startOnNewThread()
        defer { loop.stop() }
        let listening = try System.listen(host: "127.0.0.1", port: 0)
        let server = LoopHTTPServer(loop: loop, largestBody: 64, limits: limits) { request, _ in handle(request) }
        loop.execute { server.start(listening: listening.descriptor) }
        defer { loop.execute { server.stop() } }
        try body(listening.port)
    }

    @Test func aRequestGetsItsAnswerAndTheConnectionCloses() throws {
        try Self.serving({ request in
            .response(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array("\(request.method) \(request.path) \(request.body.count)".utf8)))
        }) { port in
            let client = try Client(port: port)
            try client.send("POST /api/x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n")
            try client.send("abc")
            let answer = client.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer)")
            #expect(answer.contains("Content-Length: 13\r\n") && answer.contains("Connection: close\r\n"))
            #expect(answer.hasSuffix("\r\n\r\nPOST /api/x 3"))
            let head = try Client(port: port)
            try head.send("HEAD /y HTTP/1.1\r\n\r\n")
            #expect(head.readToEnd().hasSuffix("Content-Length: 9\r\nConnection: close\r\n\r\n"), "a HEAD gets the head alone")
        }
    }

    @Test func aRequestItCannotTakeIsRefusedWithItsReason() throws {
        try Self.serving({ _ in .response(HTTPResponse(status: 200)) }) { port in
            let client = try Client(port: port)
            try client.send("POST / HTTP/1.1\r\nContent-Length: 65\r\n\r\n")
            let answer = client.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 413 Content Too Large\r\n") && answer.hasSuffix("the request is larger than 64 bytes\n"), "\(answer)")
        }
    }

    @Test func anEventStreamCarriesEachEventUntilThePageGoes() throws {
        let (ended, endedWrite) = try System.pipe()
        defer { System.close(ended); System.close(endedWrite) }
        let subscriber = Mutex<(@Sendable (String) -> Void)?>(nil)
        let (subscribed, subscribedWrite) = try System.pipe()
        defer { System.close(subscribed); System.close(subscribedWrite) }
        try Self.serving({ _ in
            .eventStream(headers: [("X-Test", "1")]) { send in
                subscriber.withLock { $0 = send }
                send("first")
                try? System.writeAll(subscribedWrite, [1])
                return { try? System.writeAll(endedWrite, [1]) }
            }
        }) { port in
            var client: Client? = try Client(port: port)
            try client?.send("GET /api/live HTTP/1.1\r\n\r\n")
            let start = client?.read(until: "data: first\n\n") ?? ""
            #expect(start.hasPrefix("HTTP/1.1 200 OK\r\nX-Test: 1\r\nContent-Type: text/event-stream\r\n"), "\(start)")
            #expect(start.hasSuffix("\r\n\r\ndata: first\n\n"))
            var byte = [UInt8](repeating: 0, count: 1)
            #expect(try System.read(subscribed, into: &byte) == 1)
            subscriber.withLock { $0 }?("two\nlines")
            #expect(client?.read(until: "lines\n\n") == "data: two\ndata: lines\n\n", "each line of an event is a data line")
            client = nil
            var polled = [pollfd(fd: ended, events: Int16(POLLIN), revents: 0)]
            #expect(try System.poll(&polled, milliseconds: Int32(Deadline.failure * 1000)) == 1, "the subscription ends when the page goes")
        }
    }

    /// Connections that send nothing hold no place against a page: every new connection takes
    /// the place of the oldest one still without its whole request, and a request that came
    /// whole is answered, however many idle connections there are.
    @Test func idleConnectionsCannotStarveThePage() throws {
        try Self.serving(limits: LoopHTTPServer.Limits(mostConnections: 8), { request in
            .response(HTTPResponse(status: 200, body: Array(request.path.utf8)))
        }) { port in
            var idle = try (0..<8).map { _ in try Client(port: port) }
            // A partial request holds no place either.
            try idle[1].send("GET /slow HTTP/1.1\r\nHost: h\r\n")
            // Three newcomers that send nothing, then the page: each takes the oldest idle place.
            idle += try (0..<3).map { _ in try Client(port: port) }
            let page = try Client(port: port)
            try page.send("GET /page HTTP/1.1\r\nHost: h\r\n\r\n")
            let answer = page.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n") && answer.hasSuffix("/page"), "\(answer)")
            for number in 0..<4 {
                #expect(idle[number].readToEnd() == "", "idle connection \(number) gave its place")
            }
            var probe = [pollfd(fd: idle[4].descriptor, events: Int16(POLLIN), revents: 0)]
            #expect(try System.poll(&probe, milliseconds: 0) == 0, "the younger ones are still open")
        }
    }

    /// An open event stream has answered its request: newcomers never take its place.
    @Test func aStreamKeepsItsPlaceAgainstNewcomers() throws {
        try Self.serving(limits: LoopHTTPServer.Limits(mostConnections: 2), { request in
            request.path == "/live"
                ? .eventStream(headers: []) { send in send("hello"); return {} }
                : .response(HTTPResponse(status: 200, body: Array(request.path.utf8)))
        }) { port in
            let stream = try Client(port: port)
            try stream.send("GET /live HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(stream.read(until: "data: hello\n\n").hasSuffix("data: hello\n\n"))
            let second = try Client(port: port)
            try second.send("GET /live HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(second.read(until: "data: hello\n\n").hasSuffix("data: hello\n\n"))
            // Both places are streams: a third connection is closed at once, the streams stay.
            let third = try Client(port: port)
            try? third.send("GET /x HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(third.readToEnd() == "")
            // The first stream still works: its end is still open (a close would read as end of file).
            var probe = [pollfd(fd: stream.descriptor, events: Int16(POLLIN), revents: 0)]
            #expect(try System.poll(&probe, milliseconds: 0) == 0, "the stream is open and quiet")
        }
    }

    /// A connection that sends its request too slowly is closed when its time is up.
    @Test func aRequestThatNeverEndsIsClosedWhenItsTimeIsUp() throws {
        try Self.serving(limits: LoopHTTPServer.Limits(requestTime: .milliseconds(200)), { _ in
            .response(HTTPResponse(status: 200))
        }) { port in
            let slow = try Client(port: port)
            try slow.send("GET / HTTP/1.1\r\nHost: h\r\n")
            #expect(slow.readToEnd() == "", "closed without an answer")
        }
    }
}
