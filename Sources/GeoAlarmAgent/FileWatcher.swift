import Foundation
import GeoAlarmSystem
internal import CSystem

/// Tells when files change, with inotify on their folders: that also sees editors that save by
/// writing a new file and renaming it over the old one, which a watch on the file itself would
/// lose. Its thread waits in `poll` on the inotify descriptor and an eventfd that ``stop()``
/// writes: it wakes only for a change and for the stop.
final class FileWatcher: Sendable {
    private let inotify: Int32
    private let stopEvent: Int32
    /// The files watched, by folder watch descriptor and name: which events count, and what they report.
    private let watched: [Int32: [String: (events: System.FileEvents, input: AgentInput)]]

    /// One file to watch: which of its events count, and what they report.
    struct Watch {
        var path: String
        var events: System.FileEvents
        var input: AgentInput
    }

    /// Watches each file; nil when inotify cannot watch one of their folders.
    init?(_ files: [Watch]) {
        guard let inotify = try? System.inotify(), let stopEvent = try? System.eventDescriptor() else { return nil }
        var watched: [Int32: [String: (events: System.FileEvents, input: AgentInput)]] = [:]
        for file in files {
            let url = URL(fileURLWithPath: file.path).standardizedFileURL
            guard let watch = try? System.watch(inotify, folder: url.deletingLastPathComponent().path, for: file.events) else {
                System.close(inotify)
                System.close(stopEvent)
                return nil
            }
            watched[watch, default: [:]][url.lastPathComponent] = (file.events, file.input)
        }
        self.inotify = inotify
        self.stopEvent = stopEvent
        self.watched = watched
    }

    /// Starts the thread, which yields to `channel` until ``stop()``.
    func start(_ channel: AgentChannel) {
        let thread = Thread { [self] in
            defer { System.close(inotify) }
            var buffer = [UInt8](repeating: 0, count: 8192)
            var descriptors = [
                pollfd(fd: inotify, events: Int16(POLLIN), revents: 0), pollfd(fd: stopEvent, events: Int16(POLLIN), revents: 0),
            ]
            while true {
                _ = try? System.poll(&descriptors, milliseconds: -1)
                if descriptors[1].revents != 0 { return }
                guard descriptors[0].revents != 0, let count = try? System.read(inotify, into: &buffer), count > 0 else { continue }
                // One input per file changed, however many events one read brought.
                var changed: [String] = []
                for (watch, mask, name) in Self.events(in: buffer[..<count]) {
                    guard let file = watched[watch]?[name], file.events.rawValue & mask != 0, !changed.contains(name) else { continue }
                    changed.append(name)
                    channel.continuation.yield(file.input)
                }
            }
        }
        thread.name = "file watcher"
        thread.start()
    }

    func stop() {
        System.signalEvent(stopEvent)
    }

    /// The watch descriptor, mask and file name of each event in a buffer of inotify events.
    private static func events(in bytes: ArraySlice<UInt8>) -> [(Int32, UInt32, String)] {
        var events: [(Int32, UInt32, String)] = []
        var offset = bytes.startIndex
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= bytes.endIndex {
            let (watch, mask, length) = bytes.withUnsafeBytes { raw in
                (raw.loadUnaligned(fromByteOffset: offset - bytes.startIndex, as: Int32.self),
                 raw.loadUnaligned(fromByteOffset: offset - bytes.startIndex + 4, as: UInt32.self),
                 Int(raw.loadUnaligned(fromByteOffset: offset - bytes.startIndex + 12, as: UInt32.self)))
            }
            let nameBytes = bytes[(offset + header)..<min(offset + header + length, bytes.endIndex)]
            events.append((watch, mask, String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)))
            offset += header + length
        }
        return events
    }
}
