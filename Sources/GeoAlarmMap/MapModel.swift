import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmStore
import Logging
import Synchronization

/// The map's data and the pages that watch it live. Read again when the config or the state
/// file changes, whoever changed it (the agent, a command, this map); each change is sent to
/// every page as a new snapshot, only when the snapshot differs.
final class MapModel: Sendable {
    let configPath: String
    /// The state file, writable when it can be (the map completes and snoozes reminders as the
    /// commands do); nil when there is none and none can be made.
    let store: StateStore?
    private let logger: Logger
    private let data: Mutex<MapData>
    private let pages = Mutex(Pages())

    private struct Pages {
        var next = 0
        var watching: [Int: @Sendable (String) -> Void] = [:]
        /// The snapshot sent last to the pages watching (a new page gets the current one).
        var lastSent = ""
    }

    init(config: Config, store: StateStore?, logger: Logger) {
        configPath = config.path
        self.store = store
        self.logger = logger
        var data = MapData(config: config)
        if let store {
            do {
                data.state = try MapData.read(store)
            } catch {
                logger.error("\(error)")
            }
        }
        self.data = Mutex(data)
    }

    var current: MapData { data.withLock { $0 } }

    /// Loads the config file again; keeps the one loaded before when the file is now invalid
    /// (saying why), as the agent does.
    func reloadConfig() {
        let config: Config
        do {
            config = try ConfigLoader.load(path: configPath)
        } catch {
            logger.error("\(configPath) changed but cannot be used, the map keeps showing the last good one:\n\(error)")
            return
        }
        let fresh = MapData(config: config)
        data.withLock { data in
            let state = data.state
            data = fresh
            data.state = state
        }
        publish()
    }

    /// Reads the state file again.
    func reloadState() {
        guard let store else { return }
        do {
            let state = try MapData.read(store)
            data.withLock { $0.state = state }
        } catch {
            logger.error("\(error)")
            return
        }
        publish()
    }

    /// Sends the snapshot to every page when it differs from the one sent last.
    func publish() {
        let snapshot = current.snapshot(now: Date())
        let receivers: [@Sendable (String) -> Void] = pages.withLock { pages in
            guard snapshot != pages.lastSent else { return [] }
            pages.lastSent = snapshot
            return Array(pages.watching.values)
        }
        for receiver in receivers { receiver(snapshot) }
    }

    /// Sends one page's snapshots to `send`, the current one now; returns what ends it when the page goes.
    func subscribe(_ send: @escaping @Sendable (String) -> Void) -> @Sendable () -> Void {
        let number = pages.withLock { pages in
            pages.next += 1
            pages.watching[pages.next] = send
            return pages.next
        }
        send(current.snapshot(now: Date()))
        return { [weak self] in _ = self?.pages.withLock { $0.watching.removeValue(forKey: number) } }
    }

    /// How many pages watch now.
    var watchingCount: Int { pages.withLock { $0.watching.count } }
}
