internal import CCurl
import GeoAlarmCore

/// A request under way on one libcurl easy handle: its options, what it received, and who waits
/// for it. Made, read and finished on the loop's thread, by ``CurlClient``.
final class CurlTransfer {
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

    /// Sets the request's options; why not, when one is refused. A kept handle still has its
    /// last request's options: those that differ between requests on one handle (the method, the
    /// body, the redirects) are set for every request; the credentials and the authority file
    /// are the same for every request on it (``CurlClient``'s reuse key).
    func configure(number: UInt, request: WebRequest, settings: WebSettings) -> String? {
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
        headerList = headers
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_HTTPHEADER, UnsafeRawPointer(headers)) }
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_ERRORBUFFER, errorWords) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_write(curl.easySetopt, handle, CURLOPT_WRITEFUNCTION, receiveBody) }
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_WRITEDATA, context) }
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_write(curl.easySetopt, handle, CURLOPT_HEADERFUNCTION, receiveHeader) }
        if failure == CURLE_OK { failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_HEADERDATA, context) }
        if failure == CURLE_OK {
            failure = geoalarm_curl_easy_setopt_pointer(curl.easySetopt, handle, CURLOPT_PRIVATE, UnsafeRawPointer(bitPattern: number))
        }
        return failure == CURLE_OK ? nil : curl.words(failure)
    }

    /// The address the transfer ended at, after the redirects it followed.
    var reached: String? {
        var reached: UnsafeMutablePointer<CChar>?
        guard geoalarm_curl_easy_getinfo_text(curl.easyGetinfo, handle, CURLINFO_EFFECTIVE_URL, &reached) == CURLE_OK, let reached
        else { return nil }
        return String(cString: reached)
    }

    /// The requests and bytes of the finished transfer, as libcurl counted them.
    var traffic: CurlClient.Traffic {
        var requestBytes = 0, headerBytes = 0, redirects = 0
        var uploaded: curl_off_t = 0, downloaded: curl_off_t = 0
        _ = geoalarm_curl_easy_getinfo_long(curl.easyGetinfo, handle, CURLINFO_REQUEST_SIZE, &requestBytes)
        _ = geoalarm_curl_easy_getinfo_long(curl.easyGetinfo, handle, CURLINFO_HEADER_SIZE, &headerBytes)
        _ = geoalarm_curl_easy_getinfo_long(curl.easyGetinfo, handle, CURLINFO_REDIRECT_COUNT, &redirects)
        _ = geoalarm_curl_easy_getinfo_offset(curl.easyGetinfo, handle, CURLINFO_SIZE_UPLOAD_T, &uploaded)
        _ = geoalarm_curl_easy_getinfo_offset(curl.easyGetinfo, handle, CURLINFO_SIZE_DOWNLOAD_T, &downloaded)
        return CurlClient.Traffic(requests: 1 + redirects, sent: requestBytes + Int(uploaded), received: headerBytes + Int(downloaded))
    }

    // MARK: What arrives


    /// Part of the answer's body; 0 (libcurl ends the transfer) past ``largestBody``.
    func take(body pointer: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        guard body.count + count <= largestBody else {
            tooLarge = true
            return 0
        }
        body += UnsafeRawBufferPointer(start: pointer, count: count)
        return count
    }

    /// The most bytes of headers one answer may have, all together (libcurl bounds each one).
    static let largestHeaders = 64 << 10

    /// One header line of the answer; 0 (libcurl ends the transfer) past ``largestHeaders``.
    func take(header pointer: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        let line = String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
        // A new response (after a redirect, or a 401 before the credentials) starts afresh.
        if line.hasPrefix("HTTP/") {
            headers = [:]
            body = []
            headerBytes = 0
        }
        headerBytes += count
        guard headerBytes <= Self.largestHeaders else {
            headersTooLarge = true
            return 0
        }
        if !line.hasPrefix("HTTP/"), let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace()
            // A header given twice (WWW-Authenticate for each scheme) is one, as HTTP joins them.
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        return count
    }
}

/// libcurl's write callback: a part of the body, for the transfer its context is.
private func receiveBody(_ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let pointer, let context else { return 0 }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().take(body: pointer, count: size * count)
}

/// libcurl's header callback: a header line, for the transfer its context is.
private func receiveHeader(_ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let pointer, let context else { return 0 }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().take(header: pointer, count: size * count)
}
