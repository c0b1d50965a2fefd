import GeoAlarmTasks

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
