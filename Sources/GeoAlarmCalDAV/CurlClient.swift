internal import CCurl
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import GeoAlarmTasks
import GeoAlarmWebDAV
import Synchronization

/// One HTTP request: what a CalDAV call sends.
public struct WebRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// Whether the client follows a redirect itself (up to 5, without the credentials when it
    /// leads to another server, as libcurl does), rather than answering with it. By default a
    /// read does (RFC 9110's safe methods, and WebDAV's PROPFIND and REPORT) and a write does not.
    public var followsRedirects: Bool

    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        followsRedirects = ["GET", "HEAD", "OPTIONS", "PROPFIND", "REPORT"].contains(method)
    }
}

/// What came back: the status, the headers (names lower case; a repeated one joined by commas) and
/// the body; or why nothing usable did.
public enum WebResponse: Sendable {
    case response(status: Int, headers: [String: String], body: [UInt8])
    case failure(WebFailure)

    /// The key in a response's headers of the address it came from, after the redirects the
    /// client followed: no header a server sends has a name with a colon in it.
    public static let reachedKey = ":reached"
}

/// Why no usable answer came.
public enum WebFailure: Sendable, Equatable {
    /// Nothing came, or it broke a bound: the reason, for the log.
    case unanswered(String)
    /// A read redirected to this address, on another server, was refused there (401): libcurl
    /// sends the credentials to the server first asked only, rightly.
    case refusedElsewhere(String)
}

/// How requests reach a server: the credentials, the authority its certificate must come from,
/// and the bounds on what it may send.
public struct WebSettings: Sendable, Equatable {
    public var username: String?
    public var password: String?
    /// A PEM file of the authority (a private CA); nil: the system's authorities.
    public var caFile: String?
    /// The largest body taken; a longer one ends the request.
    public var largestBody = 64 << 20
    /// How long a request may take in all.
    public var timeout: Duration = .seconds(60)
    /// The one server (as ``ServerAddress/server(of:)`` writes it) the credentials go to: a
    /// request to any other goes without them, whoever named its address (an href of the
    /// server's answer, a redirect). Nil: no server yet (``CalDAVCollection`` sets its own).
    public var credentialsServer: String?
    /// Digest rather than Basic (the client learns it from the server).
    var digest = false

    /// Credentials for the server of `url` (none yet when nil).
    public init(username: String? = nil, password: String? = nil, caFile: String? = nil, for url: String? = nil) {
        self.username = username
        self.password = password
        self.caFile = caFile
        credentialsServer = url.map(ServerAddress.server)
    }
}

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
    /// A handle kept after a Digest request answered, by ``reuseKey(_:settings:)``: it holds the
    /// server's last challenge. Not in `state`: `deinit` frees them, on whatever thread.
    private let keptHandles = Mutex<[String: KeptHandle]>([:])

    /// An easy handle between two requests. Sendable only to sit in `keptHandles`: it is put
    /// there and taken out on the loop's thread alone (``takeKept(_:)``, ``keep(_:answered:)``
    /// trap elsewhere), and `deinit`, when no request can run any more, frees what is left.
    private struct KeptHandle: @unchecked Sendable {
        let handle: UnsafeMutableRawPointer
    }

    /// The handle kept under `key`, taken out (on the loop's thread only).
    private func takeKept(_ key: String) -> UnsafeMutableRawPointer? {
        precondition(loop.isCurrent, "a kept libcurl handle taken off the loop's thread")
        return keptHandles.withLock { $0.removeValue(forKey: key)?.handle }
    }
    private let counted = Mutex(Traffic())

    /// What the client sent and received since it was made: for `make bench`'s cost of a look.
    public struct Traffic: Sendable, Equatable {
        /// Requests answered (each redirect counts).
        public var requests = 0
        /// Bytes of requests (headers and bodies) and of answers (headers and bodies, as they
        /// came over the wire: compressed, when the server compressed them).
        public var sent = 0
        public var received = 0
    }

    /// What the client sent and received so far.
    public var traffic: Traffic { counted.withLock { $0 } }

    private struct State {
        var transfers: [UInt: Transfer] = [:]
        var watches: [Int32: EventLoop.Watch] = [:]
        var timer: EventLoop.Timer?
        var next: UInt = 0
    }

    /// A request under way: its handle, what it received, and who waits for it.
    fileprivate final class Transfer {
        let curl: LibCurl
        let handle: UnsafeMutableRawPointer
        let largestBody: Int
        var body: [UInt8] = []
        var headers: [String: String] = [:]
        var tooLarge = false
        /// The bytes of the present answer's headers, and whether they passed ``largestHeaders``.
        var headerBytes = 0
        var headersTooLarge = false
        var headerList: UnsafeMutablePointer<curl_slist>?
        /// The server (`https://host:port`) the credentials go to; nil without credentials.
        var credentialsServer: String?
        /// Where the handle is kept once the request is answered (a Digest request); nil: freed.
        var reuseKey: String?
        /// Where libcurl says what went wrong in its own words (the TLS library's reason).
        let errorWords = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        var done: (@Sendable (WebResponse) -> Void)?

        init(curl: LibCurl, handle: UnsafeMutableRawPointer, largestBody: Int) {
            self.curl = curl
            self.handle = handle
            self.largestBody = largestBody
            errorWords.initialize(to: 0)
        }

        deinit {
            errorWords.deallocate()
        }

        /// Why the transfer failed: libcurl's own words when it gave some, else the code's.
        func reason(_ code: CURLcode) -> String {
            errorWords.pointee != 0 ? String(cString: errorWords) : curl.words(code)
        }
    }

    public init(loop: EventLoop) {
        self.loop = loop
        state = Confined(State(), on: loop)
        multi = Mutex(nil)
    }

    deinit {
        // Handles exist only once libcurl is loaded.
        guard case .success(let curl) = LibCurl.loaded else { return }
        for kept in keptHandles.withLock({ $0.values }) { curl.easyCleanup(kept.handle) }
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
        let kept = reusing ? reuseKey.flatMap(takeKept) : nil
        guard let multi = multiHandle(curl), let handle = kept ?? curl.easyInit() else {
            return done(.failure(.unanswered("libcurl could not start a request")), false)
        }
        let transfer = Transfer(curl: curl, handle: handle, largestBody: settings.largestBody)
        if settings.username != nil { transfer.credentialsServer = ServerAddress.origin(of: request.url) }
        transfer.reuseKey = reuseKey
        let wasReused = kept != nil
        transfer.done = { response in done(response, wasReused) }
        state.value.next += 1
        let number = state.value.next
        if let problem = configure(transfer, number: number, request: request, settings: settings) {
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

    /// Sets the request's options; why not, when one is refused. A kept handle still has its
    /// last request's options: those that differ between requests on one handle (the method, the
    /// body, the redirects) are set for every request; the credentials and the authority file
    /// are the same for every request on it (``reuseKey(_:settings:)``).
    private func configure(_ transfer: Transfer, number: UInt, request: WebRequest, settings: WebSettings) -> String? {
        let handle = transfer.handle, curl = transfer.curl
        var failure: CURLcode = CURLE_OK
        func long(_ option: CURLoption, _ value: Int) {
            if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_long(curl.easySetopt, handle, option, value) }
        }
        func text(_ option: CURLoption, _ value: String) {
            // libcurl copies every string it is given (since 7.17).
            if failure == CURLE_OK { failure = value.withCString { geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, option, $0) } }
        }
        text(CURLOPT_URL, request.url)
        // Without a body below, a kept handle's last one is not sent again.
        long(CURLOPT_HTTPGET, 1)
        text(CURLOPT_CUSTOMREQUEST, request.method)
        text(CURLOPT_PROTOCOLS_STR, "http,https")
        text(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // A read follows a redirect with its method and body (by default libcurl sends a 301's,
        // 302's or 303's again without the body: a PROPFIND that asks nothing, a REPORT of nothing).
        // A write does not: a PUT would go without its body, and a 303 says the write is done
        // and points elsewhere, where a DELETE must not go. Its 3xx is its answer, for the caller
        // to follow or not.
        long(CURLOPT_FOLLOWLOCATION, request.followsRedirects ? 1 : 0)
        long(CURLOPT_POSTREDIR, Int(CURL_REDIR_POST_301 | CURL_REDIR_POST_302 | CURL_REDIR_POST_303))
        long(CURLOPT_MAXREDIRS, 5)
        long(CURLOPT_NOSIGNAL, 1)
        long(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        long(CURLOPT_TIMEOUT_MS, Int(settings.timeout.components.seconds * 1000))
        long(CURLOPT_CONNECTTIMEOUT_MS, 15_000)
        // A response that trickles for ever: under 10 bytes a second for 30 s ends it.
        long(CURLOPT_LOW_SPEED_LIMIT, 10)
        long(CURLOPT_LOW_SPEED_TIME, max(1, min(30, Int(settings.timeout.components.seconds))))
        long(CURLOPT_SSL_VERIFYPEER, 1)
        long(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = settings.caFile { text(CURLOPT_CAINFO, caFile) }
        if let username = settings.username {
            text(CURLOPT_USERNAME, username)
            text(CURLOPT_PASSWORD, settings.password ?? "")
            long(CURLOPT_HTTPAUTH, settings.digest ? geoalarm_curl_auth_digest() : geoalarm_curl_auth_basic())
        }
        text(CURLOPT_ACCEPT_ENCODING, "")
        // The server's log says who asked.
        text(CURLOPT_USERAGENT, "geoalarm")
        // A body (PUT, PROPFIND, REPORT), copied by libcurl, with its size.
        if !request.body.isEmpty || request.method == "PUT" {
            if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_offset(curl.easySetopt, handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)) }
            if failure == CURLE_OK {
                failure = (request.body.isEmpty ? [0] : request.body).withUnsafeBytes {
                    geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress)
                }
            }
        }
        var headers: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers { headers = curl.slistAppend(headers, "\(name): \(value)") }
        // No "Expect: 100-continue" wait before a body.
        headers = curl.slistAppend(headers, "Expect:")
        transfer.headerList = headers
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_HTTPHEADER, UnsafeRawPointer(headers)) }
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_ERRORBUFFER, transfer.errorWords) }
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_write(curl.easySetopt, handle, CURLOPT_WRITEFUNCTION, receiveBody) }
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_WRITEDATA, context) }
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_write(curl.easySetopt, handle, CURLOPT_HEADERFUNCTION, receiveHeader) }
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_HEADERDATA, context) }
        if failure == CURLE_OK {
            failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_PRIVATE, UnsafeRawPointer(bitPattern: number))
        }
        return failure == CURLE_OK ? nil : curl.words(failure)
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
                response = .failure(.unanswered("the answer's headers are larger than \(DisplayText.size(Self.largestHeaders)): no server's are"))
            } else if result == CURLE_OUT_OF_MEMORY, transfer.body.isEmpty {
                // libcurl's word for a header over its bound (100 KB), before any of the body came.
                response = .failure(.unanswered("the answer has a header larger than libcurl takes (100 KB): no server's is"))
            } else if result != CURLE_OK {
                response = .failure(.unanswered(transfer.reason(result)))
            } else {
                var status = 0
                _ = geoalarm_curl_easy_getinfo_long(curl.easyGetinfo, handle, CURLINFO_RESPONSE_CODE, &status)
                var headers = transfer.headers
                headers[WebResponse.reachedKey] = Self.reached(by: transfer)
                response = Self.credentialsLeftBehind(transfer, status: status)
                    ?? .response(status: status, headers: headers, body: transfer.body)
            }
            count(handle, curl)
            finish(transfer, number: number, with: response, multi: multi)
        }
    }

    /// Adds a finished transfer's requests and bytes to ``traffic``.
    private func count(_ handle: UnsafeMutableRawPointer, _ curl: LibCurl) {
        var requestBytes = 0, headerBytes = 0, redirects = 0
        var uploaded: curl_off_t = 0, downloaded: curl_off_t = 0
        _ = geoalarm_curl_easy_getinfo_long(curl.easyGetinfo, handle, CURLINFO_REQUEST_SIZE, &requestBytes)
        _ = geoalarm_curl_easy_getinfo_long(curl.easyGetinfo, handle, CURLINFO_HEADER_SIZE, &headerBytes)
        _ = geoalarm_curl_easy_getinfo_long(curl.easyGetinfo, handle, CURLINFO_REDIRECT_COUNT, &redirects)
        _ = geoalarm_curl_easy_getinfo_offset(curl.easyGetinfo, handle, CURLINFO_SIZE_UPLOAD_T, &uploaded)
        _ = geoalarm_curl_easy_getinfo_offset(curl.easyGetinfo, handle, CURLINFO_SIZE_DOWNLOAD_T, &downloaded)
        counted.withLock { traffic in
            traffic.requests += 1 + redirects
            traffic.sent += requestBytes + Int(uploaded)
            traffic.received += headerBytes + Int(downloaded)
        }
    }

    /// A read redirected to another server and refused there (401), where libcurl sends no
    /// credentials: said as such, rather than as the credentials refused; nil otherwise.
    private static func credentialsLeftBehind(_ transfer: Transfer, status: Int) -> WebResponse? {
        guard status == 401, let server = transfer.credentialsServer, let address = reached(by: transfer),
              !ServerAddress.isSameServer(address, server)
        else { return nil }
        return .failure(.refusedElsewhere(address))
    }

    /// The address a finished transfer ended at, after the redirects it followed.
    private static func reached(by transfer: Transfer) -> String? {
        var reached: UnsafeMutablePointer<CChar>?
        guard geoalarm_curl_easy_getinfo_text(transfer.curl.easyGetinfo, transfer.handle, CURLINFO_EFFECTIVE_URL, &reached) == CURLE_OK, let reached
        else { return nil }
        return String(cString: reached)
    }

    private func finish(_ transfer: Transfer, number: UInt, with response: WebResponse, multi: UnsafeMutableRawPointer?) {
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
    private func keep(_ transfer: Transfer, answered response: WebResponse) -> Bool {
        guard let key = transfer.reuseKey, case .response(let status, _, _) = response, status != 401,
              let server = transfer.credentialsServer, let address = Self.reached(by: transfer),
              ServerAddress.isSameServer(address, server)
        else { return false }
        // What pointed into the transfer, freed once it is done, points nowhere while the handle waits.
        for option in [CURLOPT_ERRORBUFFER, CURLOPT_HTTPHEADER, CURLOPT_WRITEDATA, CURLOPT_HEADERDATA] {
            guard geoalarm_curl_easy_setopt_pointer(transfer.curl.easySetopt, transfer.handle, option, nil) == CURLE_OK else { return false }
        }
        precondition(loop.isCurrent, "a libcurl handle kept off the loop's thread")
        let handle = KeptHandle(handle: transfer.handle)
        return keptHandles.withLock { kept in
            guard kept[key] == nil else { return false }
            kept[key] = handle
            return true
        }
    }

    // MARK: What arrives

    fileprivate static func take(body pointer: UnsafeMutablePointer<CChar>, count: Int, into transfer: Transfer) -> Int {
        guard transfer.body.count + count <= transfer.largestBody else {
            transfer.tooLarge = true
            return 0
        }
        transfer.body += UnsafeRawBufferPointer(start: pointer, count: count)
        return count
    }

    /// The most bytes of headers one answer may have, all together (libcurl bounds each one).
    static let largestHeaders = 64 << 10

    fileprivate static func take(header pointer: UnsafeMutablePointer<CChar>, count: Int, into transfer: Transfer) -> Int {
        let line = String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
        // A new response (after a redirect, or a 401 before the credentials) starts afresh.
        if line.hasPrefix("HTTP/") {
            transfer.headers = [:]
            transfer.body = []
            transfer.headerBytes = 0
        }
        transfer.headerBytes += count
        guard transfer.headerBytes <= largestHeaders else {
            transfer.headersTooLarge = true
            return 0
        }
        if !line.hasPrefix("HTTP/"), let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace()
            // A header given twice (WWW-Authenticate for each scheme) is one, as HTTP joins them.
            transfer.headers[name] = transfer.headers[name].map { "\($0), \(value)" } ?? value
        }
        return count
    }
}

private func receiveBody(_ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let pointer, let context else { return 0 }
    let transfer = Unmanaged<AnyObject>.fromOpaque(context).takeUnretainedValue()
    return CurlClient.receive(body: pointer, count: size * count, transfer: transfer)
}

private func receiveHeader(_ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let pointer, let context else { return 0 }
    let transfer = Unmanaged<AnyObject>.fromOpaque(context).takeUnretainedValue()
    return CurlClient.receive(header: pointer, count: size * count, transfer: transfer)
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

extension CurlClient {
    fileprivate static func receive(body pointer: UnsafeMutablePointer<CChar>, count: Int, transfer: AnyObject) -> Int {
        take(body: pointer, count: count, into: transfer as! Transfer)
    }

    fileprivate static func receive(header pointer: UnsafeMutablePointer<CChar>, count: Int, transfer: AnyObject) -> Int {
        take(header: pointer, count: count, into: transfer as! Transfer)
    }
}
