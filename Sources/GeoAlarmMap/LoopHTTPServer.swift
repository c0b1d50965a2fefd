import GeoAlarmSystem
import Glibc

/// An answer to one request, whole.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The status line and headers (with the body's length, and the connection's close), then
    /// the body unless only the head was asked for.
    func bytes(headOnly: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + (headOnly ? [] : body)
    }

    /// The reason phrase of each status the map answers with.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 303: "See Other"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 431: "Request Header Fields Too Large"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }
}

/// What a handler makes of a request.
enum HTTPReply: Sendable {
    /// A whole response; the connection closes once it is sent.
    case response(HTTPResponse)
    /// An event stream (`text/event-stream`) that stays open: `subscribe` is handed a function
    /// that sends one event, and returns the function that ends the subscription when the page goes.
    case eventStream(headers: [(String, String)], subscribe: @Sendable (_ send: @escaping @Sendable (String) -> Void) -> @Sendable () -> Void)
}

/// The other end of a connection, as a handler may ask about it.
struct HTTPPeer: Sendable {
    /// The connection's socket, open while its request is handled.
    let descriptor: Int32

    /// The user whose process made the connection, when it comes from this machine.
    func owner() -> uid_t? { System.localPeerOwner(descriptor) }
}

/// A small HTTP/1.1 server on the process's ``EventLoop``: its listening socket and its
/// connections are descriptors of the one loop, and every callback runs on the loop's thread.
/// One request per connection (`Connection: close`), or one event stream.
///
/// Bounded so that nobody can starve the page of its own server (``Limits``): so many
/// connections are open at once; a connection must send its whole request within a time of
/// being taken, and a reader must take what it is sent within another (event streams,
/// which only the token's holder opens, may stay quiet). When every place is taken, a new
/// connection takes the place of the oldest one that has not finished its request: a request
/// that has come whole is never dropped for one that has not.
final class LoopHTTPServer: Sendable {
    private let loop: EventLoop
    private let largestBody: Int
    private let limits: Limits
    private let handle: @Sendable (HTTPRequest, HTTPPeer) -> HTTPReply
    private let state: Confined<State>

    /// The server's bounds (the man page's LIMITS lists them).
    struct Limits: Sendable {
        /// How long a connection may take to send its whole request.
        var requestTime: Duration = .seconds(10)
        /// How long an answer may wait for its reader to take more of it.
        var writeIdleTime: Duration = .seconds(10)
        /// Connections open at once.
        var mostConnections = 64
    }

    /// Bytes an event stream may have waiting for a page that does not read them; past that the page is dropped.
    static let largestBacklog = 1 << 20

    private struct State {
        var listening: (descriptor: Int32, watch: EventLoop.Watch)?
        var connections: [Int: Connection] = [:]
        var nextNumber = 0
    }

    private struct Connection {
        let descriptor: Int32
        var watch: EventLoop.Watch
        var received: [UInt8] = []
        var unsent: [UInt8] = []
        /// Set once its request is read: it sends what is left and closes, or it streams.
        var answered = false
        var streaming = false
        /// When it is closed unless it makes progress: its request's end, or its reader's next take.
        var deadline: EventLoop.Timer?
        var unsubscribe: (@Sendable () -> Void)?
    }

    /// A server on `loop` that answers each request with `handle`, taking bodies of at most `largestBody` bytes.
    init(
        loop: EventLoop, largestBody: Int, limits: Limits = Limits(), handle: @escaping @Sendable (HTTPRequest, HTTPPeer) -> HTTPReply
    ) {
        self.loop = loop
        self.largestBody = largestBody
        self.limits = limits
        self.handle = handle
        state = Confined(State(), on: loop)
    }

    /// Starts taking connections on a listening socket (on the loop's thread); the server owns it from now on.
    func start(listening descriptor: Int32) {
        let watch = loop.watch(descriptor) { [self] _ in acceptAll(descriptor) }
        state.value.listening = (descriptor, watch)
    }

    /// Closes the listening socket and every connection (on the loop's thread).
    func stop() {
        if let (descriptor, watch) = state.value.listening {
            loop.unwatch(watch)
            System.close(descriptor)
            state.value.listening = nil
        }
        for number in Array(state.value.connections.keys) { close(number) }
    }

    private func acceptAll(_ listening: Int32) {
        while true {
            let descriptor: Int32?
            do {
                descriptor = try System.accept(listening)
            } catch {
                // Out of descriptors, most likely: the waiting connection is tried again at the next wake.
                return
            }
            guard let descriptor else { return }
            if state.value.connections.count >= limits.mostConnections {
                // The oldest that has not sent its whole request gives its place; when all have, the newcomer goes.
                guard let oldest = state.value.connections.filter({ !$0.value.answered }).keys.min() else {
                    System.close(descriptor)
                    continue
                }
                close(oldest)
            }
            state.value.nextNumber += 1
            let number = state.value.nextNumber
            let watch = loop.watch(descriptor) { [self] ready in serve(number, ready) }
            state.value.connections[number] = Connection(descriptor: descriptor, watch: watch)
            setDeadline(number, after: limits.requestTime)
            // A browser sends its request with the connection: read at once, it is answered before
            // any newcomer could take its place.
            receive(number)
        }
    }

    /// Closes the connection unless it makes progress within `time` (cancelling the one set before).
    private func setDeadline(_ number: Int, after time: Duration) {
        guard state.value.connections[number] != nil else { return }
        if let deadline = state.value.connections[number]?.deadline { loop.cancel(deadline) }
        state.value.connections[number]?.deadline = loop.schedule(at: .now + time) { [self] in close(number) }
    }

    private func serve(_ number: Int, _ ready: EventLoop.Interest) {
        if ready.contains(.readable) { receive(number) }
        if ready.contains(.writable) { flush(number) }
    }

    private func receive(_ number: Int) {
        guard let connection = state.value.connections[number] else { return }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let count: Int
        do {
            count = try System.read(connection.descriptor, into: &buffer)
        } catch where error.code == EAGAIN || error.code == EWOULDBLOCK {
            return
        } catch {
            close(number)
            return
        }
        guard count > 0 else {
            // The peer is gone (or has said all it will): nothing more to do for it.
            close(number)
            return
        }
        // What comes after the request (or on a stream) is read and dropped.
        guard !connection.answered else { return }
        state.value.connections[number]?.received += buffer[..<count]
        let received = state.value.connections[number]?.received ?? []
        switch HTTPRequestReader.read(received, largestBody: largestBody) {
        case .incomplete:
            return
        case .refused(let status, let reason):
            answer(number, .response(HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                                                  body: Array((reason + "\n").utf8))), headOnly: false)
        case .complete(let request, _):
            answer(number, handle(request, HTTPPeer(descriptor: connection.descriptor)), headOnly: request.method == "HEAD")
        }
    }

    private func answer(_ number: Int, _ reply: HTTPReply, headOnly: Bool) {
        guard var connection = state.value.connections[number] else { return }
        connection.answered = true
        connection.received = []
        if let deadline = connection.deadline { loop.cancel(deadline) }
        connection.deadline = nil
        switch reply {
        case .response(let response):
            connection.unsent = response.bytes(headOnly: headOnly)
            state.value.connections[number] = connection
        case .eventStream(let headers, let subscribe):
            var head = "HTTP/1.1 200 OK\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "Content-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
            connection.unsent = Array(head.utf8)
            connection.streaming = !headOnly
            state.value.connections[number] = connection
            if !headOnly {
                let unsubscribe = subscribe { [self, loop] text in loop.execute { self.send(event: text, to: number) } }
                state.value.connections[number]?.unsubscribe = unsubscribe
            }
        }
        flush(number)
    }

    /// One event on a stream: each line of `text` as a `data:` line, then a blank line.
    private func send(event text: String, to number: Int) {
        guard let connection = state.value.connections[number], connection.streaming else { return }
        var event = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) { event += "data: \(line)\n" }
        event += "\n"
        guard connection.unsent.count + event.utf8.count <= Self.largestBacklog else {
            close(number)
            return
        }
        state.value.connections[number]?.unsent += Array(event.utf8)
        flush(number)
    }

    /// Writes what waits; closes a connection whose response is all sent. While an answer waits
    /// for its reader, the reader has ``writeIdleTime`` to take more; a quiet stream has no deadline.
    private func flush(_ number: Int) {
        guard let connection = state.value.connections[number] else { return }
        var sent = 0
        while sent < connection.unsent.count {
            do {
                let count = try System.writeSome(connection.descriptor, connection.unsent[sent...])
                if count == 0 { break }
                sent += count
            } catch {
                close(number)
                return
            }
        }
        state.value.connections[number]?.unsent.removeFirst(sent)
        let waiting = state.value.connections[number]?.unsent.isEmpty == false
        if !waiting, connection.answered, !connection.streaming {
            close(number)
            return
        }
        if connection.answered {
            if waiting {
                if sent > 0 || connection.deadline == nil { setDeadline(number, after: limits.writeIdleTime) }
            } else if let deadline = connection.deadline {
                loop.cancel(deadline)
                state.value.connections[number]?.deadline = nil
            }
        }
        loop.update(connection.watch, interest: waiting ? [.readable, .writable] : .readable)
    }

    private func close(_ number: Int) {
        guard let connection = state.value.connections.removeValue(forKey: number) else { return }
        loop.unwatch(connection.watch)
        if let deadline = connection.deadline { loop.cancel(deadline) }
        connection.unsubscribe?()
        System.close(connection.descriptor)
    }
}
