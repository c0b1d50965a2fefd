/// Tells when files change, with inotify on their folders: that also sees editors that save by
/// writing a new file and renaming it over the old one, which a watch on the file itself would
/// lose. The caller's loop waits on the inotify descriptor: it wakes only for a change.
public final class FileWatcher<Report: Sendable>: Sendable {
    private let inotify: Int32
    /// The files watched, by folder watch descriptor and name: which events count, and what they report.
    private let watched: [Int32: [String: (events: System.FileEvents, report: Report)]]

    /// One file to watch, or every file of a folder whose name ends so: which of its events
    /// count, and what they report.
    public struct Watch {
        /// The file; or the folder, for a watch of its files.
        public var path: String
        /// For a folder's files: the ending of the names that count (`.ics`; names starting with
        /// a dot, an editor's or a sync's temporary files, never do). Nil: `path` is one file.
        public var filesEnding: String?
        public var events: System.FileEvents
        public var report: Report

        public init(path: String, events: System.FileEvents, report: Report) {
            self.path = path
            self.events = events
            self.report = report
        }

        /// The files of `folder` whose names end in `ending`.
        public init(filesOf folder: String, ending: String, events: System.FileEvents, report: Report) {
            path = folder
            filesEnding = ending
            self.events = events
            self.report = report
        }
    }

    /// A folder's files, by the watch of the folder itself.
    private let folders: [Int32: (ending: String, events: System.FileEvents, report: Report)]

    /// The paths of the watches given whose folder inotify could not watch (a folder that does
    /// not exist): nothing reports their changes.
    public let unwatched: [String]

    /// Watches each file it can (see ``unwatched``); nil when there is no inotify.
    public init?(_ files: [Watch]) {
        guard let inotify = try? System.inotify() else { return nil }
        var watched: [Int32: [String: (events: System.FileEvents, report: Report)]] = [:]
        var folders: [Int32: (ending: String, events: System.FileEvents, report: Report)] = [:]
        var unwatched: [String] = []
        for file in files {
            let (folder, name) = file.filesEnding == nil ? PathParts.split(file.path) : (file.path, "")
            guard let watch = try? System.watch(inotify, folder: folder, for: file.events) else {
                unwatched.append(file.path)
                continue
            }
            if let ending = file.filesEnding {
                folders[watch] = (ending, file.events, file.report)
            } else {
                watched[watch, default: [:]][name] = (file.events, file.report)
            }
        }
        self.inotify = inotify
        self.watched = watched
        self.folders = folders
        self.unwatched = unwatched
    }

    /// Has `loop` call `changed` on its thread for every change, until ``stop(_:on:)``.
    public func start(on loop: EventLoop, _ changed: @escaping @Sendable (Report) -> Void) -> EventLoop.Watch {
        loop.watch(inotify) { [self] _ in readChanges(changed) }
    }

    /// Ends the watch (on the loop's thread) and closes the inotify descriptor.
    public func stop(_ watch: EventLoop.Watch, on loop: EventLoop) {
        loop.unwatch(watch)
        System.close(inotify)
    }

    /// Reads what inotify has (it is non-blocking), one report per file changed however many
    /// events came, and one per folder however many of its files changed.
    private func readChanges(_ changed: (Report) -> Void) {
        var seen: Set<String> = []
        for event in System.readFileEvents(inotify) {
            if let folder = folders[event.watch] {
                guard event.name.hasSuffix(folder.ending), !event.name.hasPrefix("."), folder.events.rawValue & event.mask != 0,
                      seen.insert("\u{0}\(event.watch)").inserted else { continue }
                changed(folder.report)
                continue
            }
            guard let file = watched[event.watch]?[event.name], file.events.rawValue & event.mask != 0,
                  seen.insert(event.name).inserted else { continue }
            changed(file.report)
        }
    }
}

/// A path's folder and its last component: how inotify names a folder's files, and where a file
/// written atomically gets its temporary sibling.
public enum PathParts {
    /// `"/a/b/c"` is `("/a/b", "c")`, `"c"` is `(".", "c")`, `"/c"` is `("/", "c")`; trailing
    /// slashes are dropped first.
    public static func split(_ path: String) -> (folder: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let folder = trimmed[..<slash]
        return (folder.isEmpty ? "/" : String(folder), String(trimmed[trimmed.index(after: slash)...]))
    }

    /// Where a path written in a file points: an absolute `path` as it is, a relative one taken
    /// from the folder `file` is in (`"places.csv"` in `"/etc/geoalarm.toml"` is `"/etc/places.csv"`).
    public static func resolve(_ path: String, besides file: String) -> String {
        guard !path.hasPrefix("/"), let slash = file.lastIndex(of: "/") else { return path }
        return file[...slash] + path
    }

    /// The extension of a path's last component, without its dot (`"csv"`); empty when it has
    /// none, as for `".hidden"`.
    public static func fileExtension(_ path: String) -> String {
        let name = split(path).name
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// A path's last component without its extension (`"/srv/bakeries.csv"` is `"bakeries"`).
    public static func stem(_ path: String) -> String {
        let name = split(path).name
        let suffix = fileExtension(name)
        return suffix.isEmpty ? name : String(name.dropLast(suffix.count + 1))
    }
}
