import GeoAlarmSystem
import Synchronization

/// Easy handles kept between two requests, by key: a Digest request's, which holds its server's
/// last challenge, so that the next request there answers it at once. Put there and taken out
/// on the loop's thread alone (each traps elsewhere); ``freeAll(_:)``, when no request can run
/// any more, frees what is left, on whatever thread.
final class KeptCurlHandles: Sendable {
    private let loop: EventLoop
    private let handles = Mutex<[String: KeptHandle]>([:])

    /// An easy handle between two requests: Sendable only to sit in the `Mutex`, by the rule above.
    private struct KeptHandle: @unchecked Sendable {
        let handle: UnsafeMutableRawPointer
    }

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// The handle kept under `key`, taken out.
    func take(_ key: String) -> UnsafeMutableRawPointer? {
        precondition(loop.isCurrent, "a kept libcurl handle taken off the loop's thread")
        return handles.withLock { $0.removeValue(forKey: key)?.handle }
    }

    /// Keeps `handle` under `key`; false (the caller frees it) when one is kept there already.
    func keep(_ handle: UnsafeMutableRawPointer, under key: String) -> Bool {
        precondition(loop.isCurrent, "a libcurl handle kept off the loop's thread")
        return handles.withLock { kept in
            guard kept[key] == nil else { return false }
            kept[key] = KeptHandle(handle: handle)
            return true
        }
    }

    /// Frees every handle kept.
    func freeAll(_ curl: LibCurl) {
        for kept in handles.withLock({ $0.values }) { curl.easyCleanup(kept.handle) }
    }
}
