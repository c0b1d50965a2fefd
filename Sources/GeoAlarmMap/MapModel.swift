import FoundationEssentials
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmStore
import Logging
import Synchronization

/// The map's data and the pages that watch it live. Read again when the config or the state
/// file changes, whoever changed it (the agent, a command, this map).
///
/// What the page draws comes in two parts, each with a version that grows when its text
/// changes: the reminders (shapes, titles; an area may have 200,000 points) and the state
/// (sides, position, history). The live feed carries only the two versions, a few bytes
/// whatever the config holds; the page fetches a part again when its version moved, so an
/// area's points cross once per change of the config, not with every fix.
final class MapModel: Sendable {
    let configPath: String
    /// The state file, writable when it can be (the map completes and snoozes reminders as the
    /// commands do); nil when there is none and none can be made.
    let store: StateStore?
    private let logger: Logger
    private let shown: Mutex<Shown>

    /// One part of what the page draws, as JSON, and its version.
    struct Part: Sendable, Equatable {
        var version = 0
        var text = ""

        /// Takes `text`; whether it differed from the one held.
        mutating func update(_ text: String) -> Bool {
            guard text != self.text else { return false }
            self.text = text
            version += 1
            return true
        }

        /// `{"version": N, ...}`: the part with its version first.
        var reply: String { "{\"version\":\(version)," + text.dropFirst() }
    }

    private struct Shown {
        var data: MapData
        var reminders = Part()
        var state = Part()
        var next = 0
        var watching: [Int: @Sendable (String) -> Void] = [:]

        /// The live feed's event: both parts' versions.
        var notice: String { "{\"reminders\":\(reminders.version),\"state\":\(state.version)}" }
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
        var shown = Shown(data: data)
        _ = shown.reminders.update(data.remindersJSON())
        _ = shown.state.update(data.stateJSON(now: Date()))
        self.shown = Mutex(shown)
    }

    var current: MapData { shown.withLock { $0.data } }

    /// The reminders part, with its version.
    var reminders: Part { shown.withLock { $0.reminders } }

    /// The state part as of now (a snooze may have ended since the files changed), with its version.
    func state(now: Date) -> Part {
        shown.withLock { shown in
            _ = shown.state.update(shown.data.stateJSON(now: now))
            return shown.state
        }
    }

    /// Loads the config file again; keeps the one loaded before when the file is now invalid
    /// (saying why), as the agent does.
    func reloadConfig() {
        let config: Config
        do {
            config = try ConfigLoader.load(path: configPath, taskCache: store?.taskLists)
        } catch {
            logger.error("\(configPath) changed but cannot be used, the map keeps showing the last good one:")
            logger.error("\(error)")
            return
        }
        var fresh = MapData(config: config)
        publish(configChanged: true) { data in
            fresh.state = data.state
            data = fresh
        }
    }

    /// Reads the state file again (and the task lists on servers, whose copies it holds).
    func reloadState() {
        guard let store else { return }
        if !current.config.serverTaskLists.isEmpty { reloadConfig() }
        let state: MapData.SavedState
        do {
            state = try MapData.read(store)
        } catch {
            logger.error("\(error)")
            return
        }
        publish(configChanged: false) { $0.state = state }
    }

    /// Changes the data with `change`, then tells every page the new versions when a part changed.
    private func publish(configChanged: Bool, _ change: (inout MapData) -> Void) {
        let now = Date()
        let (notice, receivers): (String, [@Sendable (String) -> Void]) = shown.withLock { shown in
            change(&shown.data)
            let remindersChanged = configChanged && shown.reminders.update(shown.data.remindersJSON())
            let stateChanged = shown.state.update(shown.data.stateJSON(now: now))
            guard remindersChanged || stateChanged else { return ("", []) }
            return (shown.notice, Array(shown.watching.values))
        }
        for receiver in receivers { receiver(notice) }
    }

    /// Sends one page the versions at every change, the current ones now; returns what ends it when the page goes.
    func subscribe(_ send: @escaping @Sendable (String) -> Void) -> @Sendable () -> Void {
        let (number, notice) = shown.withLock { shown in
            shown.next += 1
            shown.watching[shown.next] = send
            return (shown.next, shown.notice)
        }
        send(notice)
        return { [weak self] in _ = self?.shown.withLock { $0.watching.removeValue(forKey: number) } }
    }
}
