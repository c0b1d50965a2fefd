import FoundationEssentials
import GeoAlarmCore
import GeoAlarmListCache
import Logging
import Synchronization

/// Keeps an engine's state in a ``StateStore``, and keeps going when the file fails.
///
/// The agent's memory is the truth, the file its copy: every write is first noted in memory (the
/// proximities, last fix and lifecycles the agent holds, and every write the file has not taken
/// yet), then made. A write that fails (a full disk: SQLite's `SQLITE_FULL`) is kept and made
/// again, in order, with the next write, once the file takes writes again; beyond so many, the
/// oldest go, but the sides they set are kept. A state file that was deleted, or replaced by
/// another (a command made a new one after the deletion, a backup was put back), is noticed
/// before each write and when another process writes: a store is opened at the path again (made
/// and brought up to date when needed), and what the agent holds is carried over into it, with
/// every device's sides read from the file that left (still open); a lifecycle the new file
/// already has (`geoalarm complete` wrote it) is kept and read. Each trouble is said once, and its
/// end too. (The sides are not mirrored in memory: a fleet's are every device's side of every
/// reminder.)
///
/// Used from one loop at a time (the agent's, or replay's); a lock keeps it safe all the same.
public final class StateKeeper: StateLedger {
    private let file: StateFile
    /// The tracked device whose sides this keeper keeps; nil for this machine's own.
    public let device: String?

    /// Opens the store at `path` (none: memory only). A store that cannot be opened is logged
    /// with its file and cause, and opened again with the next write.
    public init(path: String?, logger: Logger) {
        file = StateFile(path: path, logger: logger)
        device = nil
    }

    private init(file: StateFile, device: String) {
        self.file = file
        self.device = device
    }

    /// A keeper of a tracked device's sides in the same store (lifecycles are one for every device).
    public func scoped(to device: String) -> any StateLedger {
        StateKeeper(file: file, device: device)
    }

    /// Whether state is being written to disk (its file is open now).
    public var isPersisting: Bool { file.store != nil }

    /// Runs `body` on the store open now (another one once the file was replaced); nil when the
    /// keeper runs in memory: for a sink that keeps more in the file (the MQTT outbox).
    public func withStore<T>(_ body: (StateStore) throws(StoreError) -> T) throws(StoreError) -> T? {
        guard let store = file.store else { return nil }
        return try body(store)
    }

    /// The copies of the task lists on servers and the writes waiting for them: in the state
    /// file while it is open (so that they outlast the agent), else in memory.
    public var taskListCache: any TaskListCache { KeptTaskLists(file: file) }

    /// Follows task lists' reminders to their ids now: the state of one whose id changed is
    /// renamed in the file (and in what the keeper holds).
    public func follow(taskKeys keys: [String: String]) {
        file.follow(keys)
    }

    /// The saved sides of this keeper's device's fences (none in memory).
    public func savedPresence() -> [String: SavedPresence] {
        file.readSides(of: device)
    }

    /// This machine's saved proximity of each reminder (none in memory).
    public func savedProximities() -> [String: SavedProximity] {
        guard device == nil else { return [:] }
        return file.read([:]) { store throws(StoreError) in try store.sides.proximities() }
    }

    /// Logs how many fences took up their saved side.
    public func restored(_ count: Int) {
        if count > 0, let path = file.path { file.logger.info("restored the state of \(DisplayText.counted(count, "reminder")) from \(path)") }
    }

    /// Whether it keeps a file (which `status` and the map read), even one it cannot write now.
    public var keepsProximities: Bool { file.path != nil && device == nil }

    /// Deletes history older than `keep` seconds before `now` (nothing when `keep` is nil).
    public func pruneHistory(keep: Double?, now: Date) {
        guard let keep, let path = file.path else { return }
        let removed = file.read(0) { store throws(StoreError) in try store.history.prune(before: now.addingTimeInterval(-keep)) }
        if removed > 0 { file.logger.info("pruned \(DisplayText.counted(removed, "event")) older than the history's keep from \(path)") }
    }

    /// Whether another process wrote the store since the last call (true the first time, and
    /// when the path holds another file than before): the agent's own writes do not count, so a
    /// change of the file that it made itself is not read back.
    public func changedByOthers() -> Bool {
        file.changedByOthers()
    }

    /// The lifecycles saved in the store (none in memory), for an ``Announcer``.
    public func lifecycles() -> [String: Lifecycle] {
        file.readLifecycles()
    }

    /// Writes what fixes changed, in one transaction (with every write still waiting before it).
    public func commit(_ records: [FixRecord]) {
        var writes: [StateWrite] = []
        for record in records where !record.isEmpty { writes.append(.fix(record)) }
        guard !writes.isEmpty else { return }
        file.write(writes)
    }

    /// Writes a time alarm's firing (history and last fired).
    public func saveAlarm(_ firing: AlarmFiring) {
        file.write(.alarm(firing))
    }

    /// Writes a pop-up button's action on reminder `id`, as `geoalarm complete` and `snooze` would.
    public func apply(_ action: ReminderAction, to id: String) {
        switch action {
        case .complete(let time): file.write(.completed(id, at: time))
        case .snooze(let until): file.write(.snoozed(id, until: until))
        }
    }

    /// Tries once more to write what is still only in memory (at the agent's stop); says what
    /// could not be written.
    public func flush() {
        file.flush()
    }
}

/// The state file of a keeper and its device-scoped keepers: the store while it is open, what
/// the agent holds (to carry it into a new file), and the writes the file has not taken yet.
private final class StateFile: Sendable {
    let path: String?
    let logger: Logger
    private let held: Mutex<Held>

    /// How many writes wait in memory at most; beyond, the oldest are dropped (and counted).
    static let mostWaiting = 100_000

    fileprivate struct Held {
        var store: StateStore?
        /// SQLite's data version when ``changedByOthers()`` last looked.
        var seenVersion: Int?
        /// Writes not yet in the file, oldest first.
        var waiting: [StateWrite] = []
        /// Writes dropped from `waiting` since the trouble began.
        var dropped = 0
        /// Set while the file fails, with why (said once).
        var trouble: String?
        /// The sides set by the writes dropped from `waiting` (for each device, nil: this
        /// machine), made before the writes that wait.
        var droppedSides: [String?: [String: SavedPresence]] = [:]
        /// What the agent holds: its proximities, its last fix, the lifecycles it read and wrote.
        var proximities: [String: SavedProximity] = [:]
        var lastFix: Fix?
        var lifecycles: [String: Lifecycle] = [:]
    }

    /// Where task lists' copies go while there is no store.
    let taskListsInMemory = MemoryTaskListCache()

    init(path: String?, logger: Logger) {
        self.path = path
        self.logger = logger
        var held = Held()
        if let path {
            do {
                held.store = try StateStore(path: path, busyWait: StateStore.agentBusyWait)
            } catch {
                held.trouble = error.reason
                logger.error("\(error); running in memory until it can be written (tried again with each change)")
            }
        }
        self.held = Mutex(held)
    }

    var store: StateStore? { held.withLock { $0.store } }

    /// What `body` reads from the store; `empty` in memory, or when the store fails (said once).
    func read<Value: Sendable>(_ empty: Value, _ body: (StateStore) throws(StoreError) -> Value) -> Value {
        readIfOpen(body) ?? empty
    }

    /// What `body` reads from the store; nil in memory, or when the store fails (said once).
    private func readIfOpen<Value: Sendable>(_ body: (StateStore) throws(StoreError) -> Value) -> Value? {
        guard let store = held.withLock({ $0.store }) else { return nil }
        do {
            return try body(store)
        } catch {
            note(error)
            return nil
        }
    }

    /// The sides saved for `device` (nil: this machine).
    func readSides(of device: String?) -> [String: SavedPresence] {
        read([:]) { store throws(StoreError) in try store.sides.saved(device: device) }
    }

    /// The lifecycles saved, which the agent now holds.
    func readLifecycles() -> [String: Lifecycle] {
        guard let lifecycles = readIfOpen({ store throws(StoreError) in try store.lifecycles.all() }) else {
            return held.withLock { $0.lifecycles }
        }
        held.withLock { $0.lifecycles = lifecycles }
        return lifecycles
    }

    /// Renames the state of task reminders whose id changed, in the file and in memory.
    func follow(_ keys: [String: String]) {
        guard let renamed = readIfOpen({ store throws(StoreError) in try store.follow(taskKeys: keys) }), !renamed.isEmpty else { return }
        held.withLock { held in
            for device in held.droppedSides.keys { ReminderCollection.rename(&held.droppedSides[device, default: [:]], by: renamed) }
            ReminderCollection.rename(&held.proximities, by: renamed)
            ReminderCollection.rename(&held.lifecycles, by: renamed)
        }
        logger.info("followed \(renamed.count) task reminders to their new ids (a list renamed, or tasks moved)")
    }

    func changedByOthers() -> Bool {
        guard path != nil else { return false }
        // Another file at the path (a command made it after the first was deleted) is one to read.
        if reopenIfMoved() { return true }
        guard let version = readIfOpen({ store throws(StoreError) in try store.dataVersion() }) else { return false }
        return held.withLock { held in
            defer { held.seenVersion = version }
            return version != held.seenVersion
        }
    }

    /// Notes `write` in what the agent holds, then makes it, with every write still waiting
    /// before it; what the file does not take waits for the next write.
    func write(_ write: StateWrite) {
        self.write([write])
    }

    /// Notes `writes` in what the agent holds, then makes them in one transaction, with every
    /// write still waiting before them.
    func write(_ writes: [StateWrite]) {
        guard path != nil else { return }
        held.withLock { held in
            for write in writes {
                held.remember(write)
                held.waiting.append(write)
            }
            if held.waiting.count > Self.mostWaiting {
                let excess = held.waiting.count - Self.mostWaiting
                for write in held.waiting.prefix(excess) { held.keepSides(of: write) }
                held.waiting.removeFirst(excess)
                held.dropped += excess
            }
        }
        if reopenIfMoved() { return }
        guard let store = held.withLock({ $0.store }) else {
            _ = openAgain()
            return
        }
        makeWaiting(in: store)
    }

    /// Makes every waiting write in `store`, in one transaction; says so when that ends a trouble.
    private func makeWaiting(in store: StateStore) {
        let (kept, writes) = held.withLock { held in
            (held.droppedSides.map { StateWrite.sides(device: $0.key, $0.value) }, held.waiting)
        }
        guard !kept.isEmpty || !writes.isEmpty else { return }
        do {
            try store.apply(kept + writes)
        } catch {
            note(error)
            return
        }
        let (trouble, dropped) = held.withLock { held in
            defer {
                held.waiting.removeFirst(min(writes.count, held.waiting.count))
                held.droppedSides = [:]
                held.trouble = nil
                held.dropped = 0
            }
            return (held.trouble, held.dropped)
        }
        guard trouble != nil else { return }
        let lost = dropped == 0 ? "" : dropped == 1
            ? "; 1 older one did not fit in memory and is lost, but for the sides it set"
            : "; \(dropped) older ones did not fit in memory and are lost, but for the sides they set"
        let written = DisplayText.counted(writes.count, "write")
        logger.info("state file \(store.path) is written again: what was kept in memory meanwhile (\(written)) is in it\(lost)")
    }

    /// Tries once more to write what waits; says what could not be written.
    func flush() {
        guard let store = held.withLock({ $0.store }) else { return }
        makeWaiting(in: store)
        let left = held.withLock { $0.waiting.count }
        if left > 0 {
            logger.error("""
                \(DisplayText.counted(left, "write")) could not be made to \(store.path) before the stop; the events among them are \
                only in the log
                """)
        }
    }

    /// When the file this store opened is no longer at the path (deleted, or another file put
    /// there): says so once, opens the path again (a new file made there, brought up to date)
    /// and carries over what the agent holds. Whether it did.
    private func reopenIfMoved() -> Bool {
        guard let store = held.withLock({ $0.store }), !store.isStillAtItsPath else { return false }
        logger.warning("""
            state file \(store.path) was deleted or replaced while the agent ran: writing to the file now at that path, \
            with the sides, proximities, last fix and lifecycles the agent holds carried over (a lifecycle set in that file stays)
            """)
        // Read from the file that left, still open: every device's sides it holds.
        var sides: [String?: [String: SavedPresence]] = [:]
        do {
            sides = try store.sides.every()
        } catch {
            logger.error("\(error); the sides it held are not carried over")
        }
        held.withLock { held in
            held.store = nil
            held.seenVersion = nil
        }
        return openAgain(carrying: sides) != nil
    }

    /// Opens the store at the path again and writes into it `sides` (those of the file that
    /// left) and what the agent holds, then the writes that wait; nil (said once) when it cannot
    /// be opened.
    private func openAgain(carrying sides: [String?: [String: SavedPresence]] = [:]) -> StateStore? {
        guard let path else { return nil }
        let store: StateStore
        do {
            store = try StateStore(path: path, busyWait: StateStore.agentBusyWait)
        } catch {
            note(error)
            return nil
        }
        held.withLock { held in
            // The sides of writes dropped from memory are newer than the file's that left (that
            // file never took them): made after them, not before as `makeWaiting` would.
            var newest = sides
            for (device, dropped) in held.droppedSides { newest[device, default: [:]].merge(dropped) { _, newer in newer } }
            held.droppedSides = [:]
            var carried: [StateWrite] = newest.map { .sides(device: $0.key, $0.value) }
            carried.append(.proximities(held.proximities))
            if let fix = held.lastFix { carried.append(.lastFix(fix)) }
            carried.append(.lifecyclesWhereNone(held.lifecycles))
            held.waiting.insert(contentsOf: carried, at: 0)
            held.store = store
        }
        makeWaiting(in: store)
        return store
    }

    /// Notes a failing file: said once until it works again.
    private func note(_ error: StoreError) {
        let first = held.withLock { held in
            defer { held.trouble = error.reason }
            return held.trouble == nil
        }
        guard first else { return }
        logger.error("\(error); what it does not take is kept in memory and written with the next change it takes")
    }
}

extension StateFile.Held {
    /// Takes `write` into what the agent holds.
    mutating func remember(_ write: StateWrite) {
        switch write {
        case .fix(let record):
            for change in record.proximities {
                proximities[change.reminderID] = SavedProximity(proximity: change.proximity, time: change.time, fenceKey: change.fenceKey)
            }
            for event in record.events { lifecycles[event.reminder.id, default: Lifecycle()].lastFired = event.fix.time }
            for (id, time) in record.completed { lifecycles[id, default: Lifecycle()].completedAt = time }
            if let fix = record.lastFix { lastFix = fix }
        case .alarm(let firing):
            lifecycles[firing.alarm.id, default: Lifecycle()].lastFired = firing.time
        case .completed(let id, let time):
            lifecycles[id, default: Lifecycle()].completedAt = time
        case .snoozed(let id, let until):
            lifecycles[id, default: Lifecycle()].snoozedUntil = until
        case .lastFix(let fix):
            lastFix = fix
        case .sides, .proximities, .lifecyclesWhereNone:
            break
        }
    }

    /// Takes the sides `write` sets into ``droppedSides``: it is dropped from the writes that wait.
    mutating func keepSides(of write: StateWrite) {
        switch write {
        case .fix(let record):
            for change in record.changes {
                droppedSides[record.device, default: [:]][change.reminderID] = SavedPresence(
                    presence: change.presence, time: change.time, fenceKey: change.fenceKey)
            }
        case .sides(let device, let sides):
            droppedSides[device, default: [:]].merge(sides) { _, newer in newer }
        case .alarm, .completed, .snoozed, .lastFix, .proximities, .lifecyclesWhereNone:
            break
        }
    }
}

/// The task-list cache of a keeper's state file: the store open now (another one after the file
/// was replaced), else memory.
private struct KeptTaskLists: TaskListCache {
    let file: StateFile

    private var current: any TaskListCache { file.store?.taskLists ?? file.taskListsInMemory }

    func cachedList(_ name: String) throws -> CachedList? { try current.cachedList(name) }
    func updateCachedList(_ name: String, _ update: CachedList.Update) throws { try current.updateCachedList(name, update) }
    @discardableResult
    func enqueue(_ write: TaskListWrite, updating copy: CachedList.Update?) throws -> Int64 { try current.enqueue(write, updating: copy) }
    func waitingWrites() throws -> [TaskListWrite] { try current.waitingWrites() }
    func dropWrite(_ number: Int64) throws { try current.dropWrite(number) }
}
