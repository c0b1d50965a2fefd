import Foundation

/// Settings that apply to every reminder an engine tracks.
public struct EngineSettings: Sendable, Equatable {
    /// Fixes whose horizontal error estimate exceeds this many metres are ignored; nil accepts all.
    public var maxError: Double?
    /// Consecutive fixes of evidence needed to confirm a new side.
    public var confirmations: Int
    /// Whether the first confirmed side after start is announced (inside as "arrive", outside as "leave").
    public var announceInitial: Bool

    public static let defaultConfirmations = 2

    public init(maxError: Double? = 100, confirmations: Int = defaultConfirmations, announceInitial: Bool = false) {
        self.maxError = maxError
        self.confirmations = confirmations
        self.announceInitial = announceInitial
    }
}

/// An arrival or departure, stamped with the time of the fix that confirmed it.
public struct GeofenceEvent: Sendable, Equatable {
    public var kind: EventKind
    public var reminder: Reminder
    /// The fix that confirmed the crossing.
    public var fix: Fix
    /// Metres from that fix to the reminder's centre.
    public var distance: Double
    /// True for the announced start state (`announce_initial`), false for a real crossing.
    public var isInitial: Bool

    public init(kind: EventKind, reminder: Reminder, fix: Fix, distance: Double, isInitial: Bool = false) {
        self.kind = kind
        self.reminder = reminder
        self.fix = fix
        self.distance = distance
        self.isInitial = isInitial
    }
}

/// Why the engine set a fix aside.
public enum FixRejection: String, Sendable, CaseIterable {
    /// Mode below 2D, or coordinates out of range.
    case noFix = "no fix"
    /// Horizontal error estimate above `max_error`.
    case inaccurate
    /// The same time as the last accepted fix (gpsd sends a TPV per sentence of an epoch).
    case repeated = "repeated time"
    /// Time before the last accepted fix.
    case outOfOrder = "out of order"
}

/// A reminder's confirmed side changed (announced or not): what a state store keeps.
public struct PresenceChange: Sendable, Equatable {
    public var reminderID: String
    public var presence: Presence
    /// Fix time of the confirming fix.
    public var time: Date?

    public init(reminderID: String, presence: Presence, time: Date?) {
        self.reminderID = reminderID
        self.presence = presence
        self.time = time
    }
}

/// What the engine made of one fix.
public enum FixOutcome: Sendable, Equatable {
    /// Used: the events announced for it, and every confirmed change of side it caused.
    case accepted([GeofenceEvent], changes: [PresenceChange])
    case rejected(FixRejection)

    /// The events announced for this fix (none when rejected).
    public var events: [GeofenceEvent] {
        if case .accepted(let events, _) = self { return events }
        return []
    }

    /// The changes of side this fix confirmed (none when rejected).
    public var changes: [PresenceChange] {
        if case .accepted(_, let changes) = self { return changes }
        return []
    }
}

/// Tracks every reminder's inside/outside state from a time-ordered stream of fixes.
///
/// Per fix it visits only the fences near the fix (from a ``GridIndex``) and the trackers that
/// are not settled outside (inside, undecided, or in the middle of a streak); a fence that is
/// settled outside and out of reach cannot change, so it is never touched.
public struct GeofenceEngine: Sendable {
    /// The enabled reminders, in config order.
    public let reminders: [Reminder]
    public let settings: EngineSettings
    private var trackers: [FenceTracker]
    /// Each reminder's circle, apart from its text, so that the per-fix loop reads little memory.
    private let shapes: [FenceShape]
    private let index: GridIndex
    private var unsettled: Set<Int32>
    /// Time of the last accepted fix.
    public private(set) var lastFixTime: Date?

    /// Tracks the enabled ones of `reminders`, all starting undecided.
    public init(reminders: [Reminder], settings: EngineSettings = EngineSettings()) {
        let reminders = reminders.filter(\.isEnabled)
        self.reminders = reminders
        self.settings = settings
        trackers = Array(repeating: FenceTracker(), count: reminders.count)
        shapes = reminders.map(\.shape)
        index = GridIndex(fences: reminders)
        unsettled = Set((0..<reminders.count).map { Int32($0) })
    }

    /// An engine for a new set of reminders (a reloaded config) that keeps what `previous` knew:
    /// the tracker of every reminder whose id and fence (``Reminder/fenceKey``) are unchanged, and
    /// the time of the last fix. Any other reminder starts undecided.
    public init(reminders: [Reminder], settings: EngineSettings, carryingStateFrom previous: GeofenceEngine) {
        self.init(reminders: reminders, settings: settings)
        lastFixTime = previous.lastFixTime
        var previousSlots: [String: Int] = [:]
        for (slot, reminder) in previous.reminders.enumerated() { previousSlots[reminder.id] = slot }
        for (slot, reminder) in self.reminders.enumerated() {
            guard let old = previousSlots[reminder.id], previous.reminders[old].fenceKey == reminder.fenceKey
            else { continue }
            trackers[slot] = previous.trackers[old]
            if trackers[slot].isSettledOutside { unsettled.remove(Int32(slot)) }
        }
    }

    /// An engine that starts from sides confirmed earlier (a state store's, after a restart):
    /// `restored` maps reminder ids to a side and its fix time, and the caller gives only those
    /// whose fence is unchanged (same ``Reminder/fenceKey``). The others start undecided.
    public init(reminders: [Reminder], settings: EngineSettings, restoring restored: [String: (Presence, Date?)]) {
        self.init(reminders: reminders, settings: settings)
        for (slot, reminder) in self.reminders.enumerated() {
            guard let (presence, time) = restored[reminder.id], presence != .unknown else { continue }
            trackers[slot] = FenceTracker(presence: presence, confirmedAt: time)
            if trackers[slot].isSettledOutside { unsettled.remove(Int32(slot)) }
        }
    }

    /// How many reminders kept their state from the engine this one was made from.
    public func keptState(from previous: GeofenceEngine) -> Int {
        reminders.filter { reminder in
            previous.presence(of: reminder.id).map { $0 != .unknown && presence(of: reminder.id) == $0 } ?? false
        }.count
    }

    /// The confirmed side of the reminder with this id, or nil for an unknown id.
    public func presence(of id: String) -> Presence? {
        reminders.firstIndex { $0.id == id }.map { trackers[$0].presence }
    }

    /// Runs one fix through the accuracy and order gates, then through the trackers it can affect.
    public mutating func process(_ fix: Fix) -> FixOutcome {
        guard fix.mode >= .twoD, fix.coordinate.isValid else { return .rejected(.noFix) }
        if let maxError = settings.maxError, let error = fix.horizontalError, error > maxError {
            return .rejected(.inaccurate)
        }
        if let time = fix.time {
            if let last = lastFixTime, time <= last { return .rejected(time == last ? .repeated : .outOfOrder) }
            lastFixTime = time
        }
        // Candidates near the fix plus the unsettled trackers, each once, in reminder order.
        // (Not a copy of `unsettled`: a set that once held every fence keeps that capacity, and
        // copying it on every fix would cost as much as scanning every fence.)
        var visit = index.candidates(near: fix.coordinate)
        visit.append(contentsOf: unsettled)
        visit.sort()
        var events: [GeofenceEvent] = []
        var changes: [PresenceChange] = []
        var previous: Int32 = -1
        for position in visit where position != previous {
            previous = position
            let slot = Int(position)
            let shape = shapes[slot]
            let distance = Haversine.distance(fix.coordinate, shape.center)
            let before = trackers[slot].presence
            let changed = trackers[slot].observe(
                distance: distance, at: fix.time, fence: shape, confirmations: settings.confirmations)
            if trackers[slot].isSettledOutside {
                unsettled.remove(position)
            } else {
                unsettled.insert(position)
            }
            guard let after = changed else { continue }
            let reminder = reminders[slot]
            changes.append(PresenceChange(reminderID: reminder.id, presence: after, time: fix.time))
            let isInitial = before == .unknown
            if isInitial && !settings.announceInitial { continue }
            let kind: EventKind = after == .inside ? .arrive : .leave
            guard reminder.trigger.announces(kind) else { continue }
            events.append(GeofenceEvent(
                kind: kind, reminder: reminder, fix: fix, distance: distance, isInitial: isInitial))
        }
        if unsettled.capacity > 1024, unsettled.count * 16 < unsettled.capacity {
            // Give back the room the first fixes needed (Set(unsettled) would keep the same storage).
            var compact = Set<Int32>(minimumCapacity: unsettled.count)
            compact.formUnion(unsettled)
            unsettled = compact
        }
        return .accepted(events, changes: changes)
    }
}
