internal import CCurl
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import GeoAlarmTasks
import GeoAlarmWebDAV
import Synchronization

/// HTTP through libcurl's multi interface, driven by an ``EventLoop``: libcurl says which sockets
/// to watch and when to wake it (its socket and timer callbacks), and the loop calls it back
/// when a socket is ready or the time has come (`curl_multi_socket_action`). No thread of its
/// own, and nothing runs between requests. TLS is verified (against the system's authorities,
/// or `caFile`); HTTP/1.1 or HTTP/2 as the server offers; a read follows at most 5 redirects,
/// to http(s) only, and a write none; proxies from the environment, as curl reads them (`https_proxy`, `no_proxy`...).
///
/// Over https the credentials go with the first request (Basic), so that a request is one round
/// trip; a server that asks for Digest instead gets Digest from then on. Over plain http the
/// password never goes as it is to a server that has not asked for Basic: the first request
/// goes without credentials, and the server's challenge says which scheme it gets from then
/// on. Digest needs the server's
/// challenge (its nonce) before the credentials can go: libcurl keeps it in the request's handle,
/// so the client keeps one handle per Digest server and user after a request answered, and the
/// next request to it answers the kept challenge at once, one round trip again. A request on a
/// kept handle that is refused (the server dropped its nonce without saying it is stale) is made
/// once more on a new handle, which takes a new challenge.
///
/// Every call is made on the loop's thread.
public final class CurlClient: Sendable {
    private let loop: EventLoop
    private let state: Confined<State>
    /// The multi handle, made on the first request.
    private let multi: Mutex<UnsafeMutableRawPointer?>
    /// The scheme each server asked for (by ``ServerAddress/server(of:)``: one entry for every way
    /// of writing one).
    private let schemes = Mutex<[String: AuthScheme]>([:])
    /// The handles of Digest requests answered, by ``reuseKey(_:settings:)``: each holds its
    /// server's last challenge.
    private let keptHandles: KeptCurlHandles
    private let counted = Mutex(Traffic())

    /// What the client sent and received since it was made: for `make bench`'s cost of a look.
    public struct Traffic: Sendable, Equatable {
        /// Requests answered (each redirect counts).
        public var requests = 0
        /// Bytes of requests (headers and bodies) and of answers (headers and bodies, as they
        /// came over the wire: compressed, when the server compressed them).
        public var sent = 0
        public var received = 0

        static func += (total: inout Traffic, more: Traffic) {
            total.requests += more.requests
            total.sent += more.sent
            total.received += more.received
        }
    }

    /// What the client sent and received so far.
    public var traffic: Traffic { counted.withLock { $0 } }

    private struct State {
        var transfers: [UInt: CurlTransfer] = [:]
        var watches: [Int32: EventLoop.Watch] = [:]
        var timer: EventLoop.Timer?
        var next: UInt = 0
    }

    public init(loop: EventLoop) {
        self.loop = loop
        state = Confined(State(), on: loop)
        multi = Mutex(nil)
        keptHandles = KeptCurlHandles(loop: loop)
    }

    deinit {
        // Handles exist only once libcurl is loaded.
        guard case .success(let curl) = LibCurl.loaded else { return }
        keptHandles.freeAll(curl)
        if let multi = multi.withLock({ $0 }) { _ = curl.multiCleanup(multi) }
    }

    /// Sends `request` and returns the answer.
    public func perform(_ request: WebRequest, settings: WebSettings) async -> WebResponse {
        let server = ServerAddress.server(of: request.url)
        var settings = settings
        if settings.credentialsServer != server { (settings.username, settings.password) = (nil, nil) }
        let known = schemes.withLock { $0[server] }
        settings.digest = known == .digest
        // Over plain http, a server whose scheme is not known yet is asked without credentials:
        // its challenge says which to send. (Not through libcurl's Digest: before a request with
        // a body it would send the body empty, which a server that asks nothing would take.)
        let asksFirst = settings.username != nil && known == nil && !server.hasPrefix("https://")
        var sent = settings
        if asksFirst { (sent.username, sent.password) = (nil, nil) }
        var (answer, wasReused) = await send(request, settings: sent, reusing: true)
        // Refused on a kept handle: its challenge may have gone stale unsaid; a new handle takes a new one.
        if wasReused, case .response(401, _, _) = answer {
            answer = await send(request, settings: settings, reusing: false).answer
        }
        guard settings.username != nil, case .response(let status, let headers, _) = answer else { return answer }
        // Refused for the want of a scheme not sent: that one, for this request and the next.
        let schemeSent: AuthScheme? = sent.username == nil ? nil : settings.digest ? .digest : .basic
        if status == 401, let asked = AuthScheme(challenges: headers["www-authenticate"] ?? ""), asked != schemeSent {
            schemes.withLock { $0[server] = asked }
            settings.digest = asked == .digest
            return await send(request, settings: settings, reusing: false).answer
        }
        // A question refused without a scheme to answer (403 or 404 to whoever is anonymous, a
        // 401 with no challenge geoalarm knows): Basic, as the request went before it was asked.
        guard asksFirst, [401, 403, 404].contains(status) else { return answer }
        let withBasic = await send(request, settings: settings, reusing: false).answer
        if case .response(let status, _, _) = withBasic, status < 400 { schemes.withLock { $0[server] = .basic } }
        return withBasic
    }

    /// Sends `request` on the loop's thread (on a kept handle, when `reusing` and one is kept for
    /// it) and returns the answer, and whether the handle was a kept one.
    private func send(_ request: WebRequest, settings: WebSettings, reusing: Bool) async -> (answer: WebResponse, wasReused: Bool) {
        await withCheckedContinuation { continuation in
            loop.execute { [self] in
                start(request, settings: settings, reusing: reusing) { continuation.resume(returning: ($0, $1)) }
            }
        }
    }

    /// Where a Digest request's handle is kept: one for each server (as ``ServerAddress/server(of:)``
    /// writes it), user and authority file. Nil for any other request.
    private static func reuseKey(_ request: WebRequest, settings: WebSettings) -> String? {
        guard settings.digest, let username = settings.username else { return nil }
        return [ServerAddress.server(of: request.url), username, settings.caFile ?? ""].joined(separator: "\n")
    }

    /// Ends every request under way, each answered with `reason` (the agent stops: it does not
    /// wait for a server that is slow to answer).
    public func cancelAll(_ reason: String) {
        loop.execute { [self] in
            let multi = multi.withLock { $0 }
            let transfers = state.value.transfers
            state.value.transfers = [:]
            for (number, transfer) in transfers.sorted(by: { $0.key < $1.key }) {
                finish(transfer, number: number, with: .failure(.unanswered(reason)), multi: multi)
            }
        }
    }

    // MARK: Requests

    private func start(
        _ request: WebRequest, settings: WebSettings, reusing: Bool, done: @escaping @Sendable (WebResponse, Bool) -> Void
    ) {
        let reuseKey = Self.reuseKey(request, settings: settings)
        let curl: LibCurl
        switch LibCurl.loaded {
        case .success(let loaded): curl = loaded
        case .failure(let failure): return done(.failure(.unanswered(failure.reason)), false)
        }
        let kept = reusing ? reuseKey.flatMap(keptHandles.take) : nil
        guard let multi = multiHandle(curl), let handle = kept ?? curl.easyInit() else {
            return done(.failure(.unanswered("libcurl could not start a request")), false)
        }
        let transfer = CurlTransfer(curl: curl, handle: handle, largestBody: settings.largestBody)
        if settings.username != nil { transfer.credentialsServer = ServerAddress.origin(of: request.url) }
        transfer.reuseKey = reuseKey
        let wasReused = kept != nil
        transfer.done = { response in done(response, wasReused) }
        state.value.next += 1
        let number = state.value.next
        if let problem = transfer.configure(number: number, request: request, settings: settings) {
            finish(transfer, number: number, with: .failure(.unanswered(problem)), multi: nil)
            return
        }
        state.value.transfers[number] = transfer
        let added = curl.multiAddHandle(multi, handle)
        if added != CURLM_OK {
            state.value.transfers[number] = nil
            finish(transfer, number: number, with: .failure(.unanswered(curl.words(added))), multi: nil)
        }
    }

    /// The multi handle, made and given its callbacks the first time.
    private func multiHandle(_ curl: LibCurl) -> UnsafeMutableRawPointer? {
        multi.withLock { multi in
            if let multi { return multi }
            guard let made = curl.multiInit() else { return nil }
            let context = Unmanaged.passUnretained(self).toOpaque()
            _ = geoalarm_curl_multi_setopt_socket(curl.multiSetopt, made, socketChanged)
            _ = geoalarm_curl_multi_setopt_pointer(curl.multiSetopt, made, CURLMOPT_SOCKETDATA, context)
            _ = geoalarm_curl_multi_setopt_timer(curl.multiSetopt, made, timerChanged)
            _ = geoalarm_curl_multi_setopt_pointer(curl.multiSetopt, made, CURLMOPT_TIMERDATA, context)
            multi = made
            return made
        }
    }

    // MARK: libcurl's wishes

    /// libcurl wants `socket` watched for `what` (or no longer: `CURL_POLL_REMOVE`).
    fileprivate func watch(_ socket: Int32, _ what: Int32) {
        if what == CURL_POLL_REMOVE {
            if let watch = state.value.watches.removeValue(forKey: socket) { loop.unwatch(watch) }
            return
        }
        var interest: EventLoop.Interest = []
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { interest.insert(.readable) }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { interest.insert(.writable) }
        if let watch = state.value.watches[socket] {
            loop.update(watch, interest: interest)
        } else {
            state.value.watches[socket] = loop.watch(socket, for: interest) { [self] ready in
                var mask: Int32 = 0
                if ready.contains(.readable) { mask |= CURL_CSELECT_IN }
                if ready.contains(.writable) { mask |= CURL_CSELECT_OUT }
                act(on: socket, mask)
            }
        }
    }

    /// libcurl wants to be called in `milliseconds` (-1: never).
    fileprivate func wake(in milliseconds: Int) {
        if let timer = state.value.timer { loop.cancel(timer) }
        state.value.timer = nil
        guard milliseconds >= 0 else { return }
        // Not from inside libcurl's own callback: on the loop, at the earliest at its next turn.
        state.value.timer = loop.schedule(at: .now + .milliseconds(milliseconds)) { [self] in
            state.value.timer = nil
            // CURL_SOCKET_TIMEOUT: no socket, the timers.
            act(on: -1, 0)
        }
    }

    /// Lets libcurl move on `socket` (or its timers), then finishes what it finished.
    private func act(on socket: Int32, _ mask: Int32) {
        // A multi handle exists only once libcurl is loaded.
        guard let multi = multi.withLock({ $0 }), case .success(let curl) = LibCurl.loaded else { return }
        var running: Int32 = 0
        _ = curl.multiSocketAction(multi, socket, mask, &running)
        var left: Int32 = 0
        while let message = curl.multiInfoRead(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let result = message.pointee.data.result
            var pointer: UnsafeMutableRawPointer?
            _ = geoalarm_curl_easy_getinfo_pointer(curl.easyGetinfo, handle, CURLINFO_PRIVATE, &pointer)
            let number = UInt(bitPattern: pointer)
            guard let transfer = state.value.transfers.removeValue(forKey: number) else { continue }
            let response: WebResponse
            if transfer.tooLarge {
                response = .failure(.unanswered("the answer is larger than \(DisplayText.size(transfer.largestBody))"))
            } else if transfer.headersTooLarge {
                response = .failure(.unanswered("the answer's headers are larger than \(DisplayText.size(CurlTransfer.largestHeaders)): no server's are"))
            } else if result == CURLE_OUT_OF_MEMORY, transfer.body.isEmpty {
                // libcurl's word for a header over its bound (100 KB), before any of the body came.
                response = .failure(.unanswered("the answer has a header larger than libcurl takes (100 KB): no server's is"))
            } else if result != CURLE_OK {
                response = .failure(.unanswered(transfer.reason(result)))
            } else {
                var status = 0
                _ = geoalarm_curl_easy_getinfo_long(curl.easyGetinfo, handle, CURLINFO_RESPONSE_CODE, &status)
                var headers = transfer.headers
                headers[WebResponse.reachedKey] = transfer.reached
                response = Self.credentialsLeftBehind(transfer, status: status)
                    ?? .response(status: status, headers: headers, body: transfer.body)
            }
            let spent = transfer.traffic
            counted.withLock { $0 += spent }
            finish(transfer, number: number, with: response, multi: multi)
        }
    }

    /// A read redirected to another server and refused there (401), where libcurl sends no
    /// credentials: said as such, rather than as the credentials refused; nil otherwise.
    private static func credentialsLeftBehind(_ transfer: CurlTransfer, status: Int) -> WebResponse? {
        guard status == 401, let server = transfer.credentialsServer, let address = transfer.reached,
              !ServerAddress.isSameServer(address, server)
        else { return nil }
        return .failure(.refusedElsewhere(address))
    }

    private func finish(_ transfer: CurlTransfer, number: UInt, with response: WebResponse, multi: UnsafeMutableRawPointer?) {
        if let multi { _ = transfer.curl.multiRemoveHandle(multi, transfer.handle) }
        if !keep(transfer, answered: response) { transfer.curl.easyCleanup(transfer.handle) }
        transfer.curl.slistFreeAll(transfer.headerList)
        let done = transfer.done
        transfer.done = nil
        done?(response)
    }

    /// Keeps a Digest request's handle, with the challenge it answered, for the next request to
    /// its server; false (the caller frees it) when the request was not answered, was refused or
    /// ended on another server (its challenge may be that one's), or a handle is kept there already.
    private func keep(_ transfer: CurlTransfer, answered response: WebResponse) -> Bool {
        guard let key = transfer.reuseKey, case .response(let status, _, _) = response, status != 401,
              let server = transfer.credentialsServer, let address = transfer.reached,
              ServerAddress.isSameServer(address, server)
        else { return false }
        // What pointed into the transfer, freed once it is done, points nowhere while the handle waits.
        for option in [CURLOPT_ERRORBUFFER, CURLOPT_HTTPHEADER, CURLOPT_WRITEDATA, CURLOPT_HEADERDATA] {
            guard geoalarm_curl_easy_setopt_pointer(transfer.curl.easySetopt, transfer.handle, option, nil) == CURLE_OK else { return false }
        }
        return keptHandles.keep(transfer.handle, under: key)
    }

}

private func socketChanged(
    _ handle: UnsafeMutableRawPointer?, _ socket: curl_socket_t, _ what: Int32, _ context: UnsafeMutableRawPointer?, _ socketContext: UnsafeMutableRawPointer?
) -> Int32 {
    guard let context else { return 0 }
    Unmanaged<CurlClient>.fromOpaque(context).takeUnretainedValue().watch(socket, what)
    return 0
}

private func timerChanged(_ multi: UnsafeMutableRawPointer?, _ milliseconds: Int, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    Unmanaged<CurlClient>.fromOpaque(context).takeUnretainedValue().wake(in: milliseconds)
    return 0
}
