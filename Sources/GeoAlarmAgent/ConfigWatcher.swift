import Foundation
import Synchronization

/// Tells when the config file changes, with inotify on its folder: that also sees editors that
/// save by writing a new file and renaming it over the old one, which a watch on the file
/// itself would lose.
final class ConfigWatcher: Sendable {
    private let stopping = Mutex(false)

    /// Starts watching `path`; `changed` is called (on the watcher's thread) after each write or
    /// replacement of the file. Nil when inotify cannot watch the folder.
    init?(path: String, changed: @escaping @Sendable () -> Void) {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let folder = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)
        guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        let thread = Thread { [self] in
            defer { close(descriptor) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !stopping.withLock({ $0 }) {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 200) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { continue }
                if Self.names(in: buffer[..<count]).contains(name) { changed() }
            }
        }
        thread.name = "config watcher"
        thread.start()
    }

    func stop() {
        stopping.withLock { $0 = true }
    }

    /// The file names in a buffer of inotify events.
    private static func names(in bytes: ArraySlice<UInt8>) -> [String] {
        var names: [String] = []
        var offset = bytes.startIndex
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= bytes.endIndex {
            let length = bytes.withUnsafeBytes { raw in
                Int(raw.loadUnaligned(fromByteOffset: offset - bytes.startIndex + 12, as: UInt32.self))
            }
            let nameBytes = bytes[(offset + header)..<min(offset + header + length, bytes.endIndex)]
            names.append(String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self))
            offset += header + length
        }
        return names
    }
}
