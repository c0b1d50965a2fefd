/// A server's task list as last fetched.
public struct CachedList: Sendable, Equatable {
    /// The collection's address.
    public var url: String
    /// The collection's `getctag` and `sync-token` when fetched: unchanged, nothing to fetch.
    public var ctag: String?
    public var syncToken: String?
    /// Each object by its address on the server: its ETag and its bytes.
    public var objects: [String: Object]

    public struct Object: Sendable, Equatable {
        public var etag: String?
        public var bytes: [UInt8]

        public init(etag: String?, bytes: [UInt8]) {
            self.etag = etag
            self.bytes = bytes
        }
    }

    public init(url: String, ctag: String? = nil, syncToken: String? = nil, objects: [String: Object] = [:]) {
        self.url = url
        self.ctag = ctag
        self.syncToken = syncToken
        self.objects = objects
    }

    /// A change of the copy: the collection's new state, objects put or removed; with `replacing`,
    /// every object not put goes.
    public struct Update: Sendable, Equatable {
        public var url: String
        public var ctag: String?
        public var syncToken: String?
        public var put: [String: Object]
        public var removed: [String]
        public var replacing: Bool

        public init(url: String, ctag: String?, syncToken: String?, put: [String: Object] = [:], removed: [String] = [], replacing: Bool = false) {
            self.url = url
            self.ctag = ctag
            self.syncToken = syncToken
            self.put = put
            self.removed = removed
            self.replacing = replacing
        }
    }
}
