import FoundationEssentials
import GeoAlarmCore
import GeoAlarmListCache
import GeoAlarmTasks
import GeoAlarmWebDAV

/// Keeps one server's task list in step with its copy in a ``TaskListCache``, and sends the
/// writes waiting for it.
///
/// A look costs one small request when nothing changed (the collection's `sync-token`, else its
/// `getctag`); when something did, only what changed is fetched (RFC 6578's sync-collection where
/// the server speaks it, else the ETags of a calendar-query). Each write is made on the object
/// as the server has it: first over the ETag of the copy, and when another device changed it
/// meanwhile (412), on the object fetched again, the change made anew (at most ``tries`` times).
public struct TaskListSync: Sendable {
    public let name: String
    public let collection: CalDAVCollection
    public let cache: any TaskListCache

    /// How often a write is tried against an ETag that keeps changing.
    static let tries = 5

    public init(name: String, collection: CalDAVCollection, cache: any TaskListCache) {
        self.name = name
        self.collection = collection
        self.cache = cache
    }

    /// What a look found.
    public struct Refresh: Sendable, Equatable {
        /// Whether the copy changed.
        public var changed: Bool
        /// How many requests it took.
        public var requests: Int
        /// The tasks left out, each with why (an object over its bound).
        public var passedOver: [String] = []
    }

    /// Brings the copy up to date.
    public func refresh() async -> Result<Refresh, CalDAVProblem> {
        let cached = (try? cache.cachedList(name)).flatMap { $0?.url == collection.url ? $0 : nil }
        var requests = 1
        let own: Multistatus.Response
        switch await collection.describe() {
        case .failure(let problem):
            // A server's root may be its web pages (not found, refused as a method, or HTML),
            // its CalDAV elsewhere: what discovery finds there is named. A server in trouble
            // (5xx) is not asked more.
            switch problem {
            case .malformed, .notFound, .status(..<500), .status(501):
                if case .success(let found) = await collection.discover(), !found.isEmpty { return .failure(.notACollection(found.map(\.url))) }
            default: break
            }
            return .failure(problem)
        case .success(let found): own = found
        }
        guard own.isCalendar, own.components.isEmpty || own.components.contains("VTODO") else {
            if case .success(let found) = await collection.discover() { return .failure(.notACollection(found.map(\.url))) }
            return .failure(.notACollection([]))
        }
        if let cached {
            if let token = own.syncToken, token == cached.syncToken { return .success(Refresh(changed: false, requests: requests)) }
            if own.syncToken == nil, let ctag = own.ctag, ctag == cached.ctag { return .success(Refresh(changed: false, requests: requests)) }
        }
        var update = CachedList.Update(url: collection.url, ctag: own.ctag, syncToken: own.syncToken)
        var wanted: [String] = []
        var passedOver: [String] = []
        var incremental = false
        if let cached, let token = cached.syncToken, own.syncToken != nil {
            // A token the server no longer takes (403, 409) is looked at again whole.
            switch await changes(since: token, requests: &requests) {
            case nil: break
            case .failure(let problem): return .failure(problem)
            case .success(let changes):
                incremental = true
                update.syncToken = changes.token ?? own.syncToken
                update.removed = changes.removed
                wanted = changes.changed.filter { href, etag in etag == nil || cached.objects[href]?.etag != etag }.map(\.href)
            }
        }
        if !incremental {
            requests += 1
            let etags: [String: String?]
            switch await collection.etags() {
            case .failure(let problem): return .failure(problem)
            case .success(let found): etags = found
            }
            guard etags.count <= Vdir.mostObjects else { return .failure(.malformed("more than \(Vdir.mostObjects) tasks")) }
            let old = cached?.objects ?? [:]
            update.removed = old.keys.filter { etags[$0] == nil }
            wanted = etags.filter { href, etag in etag == nil || old[href]?.etag != etag }.map(\.key).sorted()
            update.replacing = cached == nil
        }
        if !wanted.isEmpty {
            requests += (wanted.count + CalDAVCollection.batch - 1) / CalDAVCollection.batch
            switch await collection.objects(wanted) {
            case .failure(let problem): return .failure(problem)
            // Only tasks are kept: a collection may hold events too.
            case .success(let fetched):
                update.put = fetched.objects.filter { $0.value.bytes.holdsTask }
                passedOver = fetched.tooLarge.map { "\($0.href): an object of \(DisplayText.size($0.size)), over \(DisplayText.size(Vdir.largestObject)): passed over" }
            }
        }
        // A change still waiting for the server stays made in the copy of a task fetched anew.
        for write in ((try? cache.waitingWrites()) ?? []) where write.list == name {
            guard let object = update.put[write.href] else { continue }
            if write.kind == .delete {
                update.put[write.href] = nil
                update.removed.append(write.href)
            } else if let made = try? write.applied(to: object.bytes) {
                update.put[write.href] = CachedList.Object(etag: object.etag, bytes: made)
            }
        }
        do {
            try cache.updateCachedList(name, update)
        } catch {
            return .failure(.malformed("the copy cannot be kept: \(error)"))
        }
        return .success(Refresh(
            changed: cached == nil || !update.put.isEmpty || !update.removed.isEmpty, requests: requests, passedOver: passedOver))
    }

    /// The most sync-collection reports one look makes, following a server that gives its
    /// changes a part at a time: the changes of the parts read are kept, with the token they
    /// reached, and the next look goes on from there.
    static let mostSyncParts = 100

    /// Every change since `token`, its parts gathered in order (an object's last change wins),
    /// up to ``mostSyncParts``; nil when the server does not take the token (the collection is
    /// then looked at whole). Over ``Vdir/mostObjects`` objects changed is a problem.
    private func changes(since token: String, requests: inout Int) async -> Result<CalDAVCollection.Changes, CalDAVProblem>? {
        var etags: [String: String?] = [:]
        var removed = Set<String>()
        var (token, parts) = (token, 0)
        while true {
            requests += 1
            parts += 1
            guard case .success(let part) = await collection.changes(since: token) else { return nil }
            for (href, etag) in part.changed {
                etags.updateValue(etag, forKey: href)
                removed.remove(href)
            }
            for href in part.removed {
                etags.removeValue(forKey: href)
                removed.insert(href)
            }
            guard etags.count <= Vdir.mostObjects else { return .failure(.malformed("more than \(Vdir.mostObjects) tasks changed")) }
            // A part cut short is followed from its new token; one that gives none cannot be.
            guard part.isTruncated, let next = part.token, next != token, parts < Self.mostSyncParts else {
                let changed = etags.sorted { $0.key < $1.key }.map { (href: $0.key, etag: $0.value) }
                return .success(CalDAVCollection.Changes(changed: changed, removed: removed.sorted(), token: part.token, isTruncated: part.isTruncated))
            }
            token = next
        }
    }

    /// What sending the writes came to.
    public struct Sent: Sendable, Equatable {
        /// Writes made (or found made already).
        public var made = 0
        /// Writes that can never be made, dropped, with why.
        public var dropped: [String] = []
    }

    /// Sends this list's waiting writes in order; stops at the first the server cannot take now
    /// (it waits for the next look), returning why.
    public func sendWrites() async -> (Sent, CalDAVProblem?) {
        var sent = Sent()
        let writes = ((try? cache.waitingWrites()) ?? []).filter { $0.list == name }
        for write in writes {
            // Another process (a command, the agent) may have sent it meanwhile.
            guard ((try? cache.waitingWrites()) ?? []).contains(where: { $0.number == write.number }) else { continue }
            switch await send(write) {
            case .success:
                sent.made += 1
            case .failure(.notFound) where write.kind != .create:
                sent.made += 1
            case .failure(let problem) where problem.isFinal:
                sent.dropped.append("\(write.kind.rawValue) \(write.uid): \(problem)\(await undo(write))")
            case .failure(let problem):
                return (sent, problem)
            }
            try? cache.dropWrite(write.number)
        }
        return (sent, nil)
    }

    /// One write, on the object as the server has it: first the copy's object (the change made in
    /// it already) over the copy's ETag; when the server's object changed meanwhile (412), the
    /// object fetched again with the change made anew.
    private func send(_ write: TaskListWrite) async -> Result<Void, CalDAVProblem> {
        var object = (try? cache.cachedList(name))??.objects[write.href]
        // Whether `object` is the server's own (fetched now), not the copy's.
        var fresh = false
        for _ in 0..<Self.tries {
            let result: Result<String?, CalDAVProblem>
            var sent: [UInt8]?
            switch write.kind {
            case .create:
                sent = write.bytes
                result = await collection.put(write.bytes, at: write.href, ifMatch: nil)
                // Made already (an answer lost before the queue heard of it): there is an object there.
                if case .failure(.changed) = result { return .success(()) }
            case .delete:
                result = await collection.delete(write.href, ifMatch: object?.etag).map { nil }
                if case .success = result { forget(write.href) }
            case .complete, .uncomplete:
                if object == nil {
                    switch await collection.object(write.href) {
                    case .success(let found): (object, fresh) = (found, true)
                    case .failure(let problem): return .failure(problem)
                    }
                }
                guard var current = object else { return .failure(.notFound) }
                // Without an ETag no write can be made only over what was read: the object
                // fetched now, and if the server gives none even so, the change is not sent.
                if current.etag == nil {
                    guard !fresh else { return .failure(.noSafeWrite) }
                    switch await collection.object(write.href) {
                    case .success(let found): (object, fresh, current) = (found, true, found)
                    case .failure(let problem): return .failure(problem)
                    }
                    guard current.etag != nil else { return .failure(.noSafeWrite) }
                }
                let edited: [UInt8]
                do {
                    guard let made = try write.applied(to: current.bytes) else { return .success(()) }
                    // The server's task is so already (another process sent it): nothing to send.
                    if fresh, made == current.bytes { return .success(()) }
                    edited = made
                } catch {
                    return .failure(.malformed(error.description))
                }
                sent = edited
                result = await collection.put(edited, at: write.href, ifMatch: current.etag)
            }
            switch result {
            case .success(let etag):
                if let sent { keep(write.href, CachedList.Object(etag: etag, bytes: sent)) }
                return .success(())
            case .failure(.changed):
                // Another device changed it: the change made again on the object as it is now.
                switch await collection.object(write.href) {
                case .success(let found): (object, fresh) = (found, true)
                case .failure(let problem): return .failure(problem)
                }
            case .failure(let problem):
                return .failure(problem)
            }
        }
        return .failure(.status(412))
    }

    /// Keeps an object the server took in the copy (an ETag it did not give is learnt at the next look).
    private func keep(_ href: String, _ object: CachedList.Object) {
        guard let cached = try? cache.cachedList(name) else { return }
        var update = CachedList.Update(url: cached.url, ctag: cached.ctag, syncToken: cached.syncToken)
        update.put[href] = object
        try? cache.updateCachedList(name, update)
    }

    /// Puts the object a dropped write was made on back as the server has it, so that the copy
    /// never holds a change the server refused (a Done on a read-only list would leave the task
    /// silent here and open everywhere else); what it says of the task, for the message.
    private func undo(_ write: TaskListWrite) async -> String {
        guard write.kind == .complete || write.kind == .uncomplete || write.kind == .delete else { return "" }
        switch await collection.object(write.href) {
        case .success(let object):
            keep(write.href, object)
            return "; the task stays as the server has it"
        case .failure(.notAMember):
            return ""
        case .failure:
            // Not to be had now: the copy forgets it and its tokens, so that the next look reads it again.
            guard let cached = try? cache.cachedList(name) else { return "" }
            try? cache.updateCachedList(name, CachedList.Update(url: cached.url, ctag: nil, syncToken: nil, removed: [write.href]))
            return "; the task is read again from the server at the next look"
        }
    }

    private func forget(_ href: String) {
        guard let cached = try? cache.cachedList(name) else { return }
        try? cache.updateCachedList(name, CachedList.Update(url: cached.url, ctag: cached.ctag, syncToken: cached.syncToken, removed: [href]))
    }
}

extension CalDAVProblem {
    /// Whether a write that met it can never be made, so that it is dropped rather than tried
    /// again: an object it cannot be made on, a server that does not let this account write
    /// (403), a request it will not take (4xx, but a timeout or too many requests). The server
    /// away, the credentials refused (401), a 5xx or an ETag that kept changing wait for the
    /// next look.
    var isFinal: Bool {
        switch self {
        case .malformed, .notAMember, .noSafeWrite, .refused(403): true
        case .status(let status): (400..<500).contains(status) && ![408, 412, 429].contains(status)
        default: false
        }
    }
}

extension [UInt8] {
    /// Whether the object holds a task (a `BEGIN:VTODO` line).
    var holdsTask: Bool {
        let marker = Array("BEGIN:VTODO".utf8)
        guard count >= marker.count else { return false }
        return (0...(count - marker.count)).contains { start in self[start..<(start + marker.count)].elementsEqual(marker) }
    }
}
