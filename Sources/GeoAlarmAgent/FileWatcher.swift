import Foundation
import GeoAlarmSystem

/// Tells when files change, with inotify on their folders: that also sees editors that save by
/// writing a new file and renaming it over the old one, which a watch on the file itself would
/// lose. The agent's loop waits on the inotify descriptor: it wakes only for a change.
final class FileWatcher: Sendable {
    private let inotify: Int32
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
        guard let inotify = try? System.inotify() else { return nil }
        var watched: [Int32: [String: (events: System.FileEvents, input: AgentInput)]] = [:]
        for file in files {
            let url = URL(fileURLWithPath: file.path).standardizedFileURL
            guard let watch = try? System.watch(inotify, folder: url.deletingLastPathComponent().path, for: file.events) else {
                System.close(inotify)
                return nil
            }
            watched[watch, default: [:]][url.lastPathComponent] = (file.events, file.input)
        }
        self.inotify = inotify
        self.watched = watched
    }

    /// Has `loop` yield to `channel` for every change, until ``stop(_:on:)``.
    func start(on loop: EventLoop, _ channel: AgentChannel) -> EventLoop.Watch {
        loop.watch(inotify) { [self] _ in readChanges(into: channel) }
    }

    /// Ends the watch (on the loop's thread) and closes the inotify descriptor.
    func stop(_ watch: EventLoop.Watch, on loop: EventLoop) {
        loop.unwatch(watch)
        System.close(inotify)
    }

    /// Reads what inotify has (it is non-blocking), one input per file changed however many
    /// events came.
    private func readChanges(into channel: AgentChannel) {
        var changed: Set<String> = []
        for event in System.readFileEvents(inotify) {
            guard let file = watched[event.watch]?[event.name], file.events.rawValue & event.mask != 0,
                  changed.insert(event.name).inserted else { continue }
            channel.continuation.yield(file.input)
        }
    }
}
