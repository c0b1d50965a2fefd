import FoundationEssentials

/// Settings that apply to every reminder an engine tracks.
public struct EngineSettings: Sendable, Equatable {
    /// Fixes whose horizontal error estimate exceeds this many metres are ignored; nil accepts all.
    public var maxError: Double?
    /// Consecutive fixes of evidence needed to confirm a new side.
    public var confirmations: Int
    /// Whether the first confirmed side after start is announced (inside as "arrive", outside as "leave").
    public var announceInitial: Bool

    public static let defaultConfirmations = 2

    /// Whether a fix's horizontal error estimate is within `maxError`; a fix without an
    /// estimate (or with no limit set) is admitted.
    public func admitsError(of fix: Fix) -> Bool {
        guard let maxError, let error = fix.horizontalError else { return true }
        return !(error > maxError)
    }

    public init(maxError: Double? = 100, confirmations: Int = defaultConfirmations, announceInitial: Bool = false) {
        self.maxError = maxError
        self.confirmations = confirmations
        self.announceInitial = announceInitial
    }
}

/// An arrival, a departure or an approach, stamped with the time of the fix that confirmed it.
public struct GeofenceEvent: Sendable, Equatable {
    public var kind: EventKind
    public var reminder: Reminder
    /// The fix that confirmed the crossing.
    public var fix: Fix
    /// Metres from that fix to the reminder's centre, or to its area's edge (0 inside).
    public var distance: Double
    /// True for the announced start state (`announce_initial`), false for a real crossing.
    public var isInitial: Bool
    /// An approach's estimate (distance to the edge, direction, time to arrival); nil for a crossing.
    public var proximity: Proximity?

    public init(kind: EventKind, reminder: Reminder, fix: Fix, distance: Double, isInitial: Bool = false, proximity: Proximity? = nil) {
        self.kind = kind
        self.reminder = reminder
        self.fix = fix
        self.distance = distance
        self.isInitial = isInitial
        self.proximity = proximity
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
    /// Time more than the engine's ``GeofenceEngine/futureTolerance`` ahead of the clock the fix
    /// was received by (a receiver's bad date, a phone's bad clock): used, it would make every
    /// true fix after it "out of order".
    case future = "in the future"
    /// A position without a time from a source whose positions carry times (set by the fix
    /// pipeline, not the engine): the receiver does not know the date yet.
    case noDate = "no date yet"
}

/// A reminder's or collection place's confirmed side changed: the truth of where the device is,
/// whatever the reminder's announcement policy. Every crossing is one, and so is the first side
/// learnt for a fence (at start, after a reload that changed it, for a new reminder), which is
/// not a crossing (``isInitial``); a collection place's first "outside" is not one (with a
/// million places it would be a million changes). A state store keeps them; outputs that show
/// where the device is follow them.
public struct PresenceChange: Sendable, Equatable {
    /// The reminder, or the collection place (as its collection's reminder, see ``ReminderCollection/member(_:)``).
    public var reminder: Reminder
    public var presence: Presence
    /// The fix that confirmed the side.
    public var fix: Fix
    /// Metres from that fix to the reminder's centre, or to its area's edge (0 inside).
    public var distance: Double
    /// True for the first side learnt for the fence, false for a crossing.
    public var isInitial: Bool

    /// The fence the side was confirmed for (``Reminder/fenceKey``).
    public var fenceKey: String

    /// A change of `reminder`'s side; `fenceKey` is its ``Reminder/fenceKey`` when already made
    /// (an engine makes each once: it formats three numbers, and a fleet's state holds one for
    /// every device and reminder).
    public init(reminder: Reminder, presence: Presence, fix: Fix, distance: Double, isInitial: Bool, fenceKey: String? = nil) {
        self.reminder = reminder
        self.presence = presence
        self.fix = fix
        self.distance = distance
        self.isInitial = isInitial
        self.fenceKey = fenceKey ?? reminder.fenceKey
    }

    public var reminderID: String { reminder.id }
    /// Fix time of the confirming fix.
    public var time: Date? { fix.time }
}

/// What names a reminder in a change of its side or proximity: its id, and its
/// ``Reminder/fenceKey``, made once (it formats three numbers).
struct ReminderNames: Sendable {
    var id: String
    var fenceKey: String
}

/// A side confirmed earlier (kept by a state store), with the fence it was confirmed for.
public struct SavedPresence: Sendable, Equatable {
    public var presence: Presence
    public var time: Date?
    /// The ``Reminder/fenceKey`` of the fence then: the side is restored only if it still matches.
    public var fenceKey: String

    public init(presence: Presence, time: Date?, fenceKey: String) {
        self.presence = presence
        self.time = time
        self.fenceKey = fenceKey
    }
}

/// What the engine made of one fix.
public enum FixOutcome: Sendable, Equatable {
    /// Used: the events announced for it, every confirmed change of side it caused, and the
    /// reminders' proximities that changed noticeably with it.
    case accepted([GeofenceEvent], changes: [PresenceChange], proximities: ProximityChanges = [])
    case rejected(FixRejection)

    /// The events announced for this fix (none when rejected).
    public var events: [GeofenceEvent] {
        if case .accepted(let events, _, _) = self { return events }
        return []
    }

    /// The changes of side this fix confirmed (none when rejected).
    public var changes: [PresenceChange] {
        if case .accepted(_, let changes, _) = self { return changes }
        return []
    }

    /// The proximities that changed noticeably with this fix (none when rejected).
    public var proximities: ProximityChanges {
        if case .accepted(_, _, let proximities) = self { return proximities }
        return []
    }
}

/// Tracks every reminder's and collection place's inside/outside state from a time-ordered stream of fixes.
///
/// Every fence has a slot: the enabled reminders first, then each enabled collection's places.
/// Per fix the engine visits only the fences near the fix (from a ``GridIndex``) and the
/// trackers that are not settled outside (inside, undecided, or in the middle of a streak);
/// a fence that is settled outside and out of reach cannot change, so it is never touched.
public struct GeofenceEngine: Sendable {
    /// The enabled reminders, in config order.
    public let reminders: [Reminder]
    /// The enabled collections, in config order.
    public let collections: [ReminderCollection]
    public let settings: EngineSettings
    private var trackers: FenceStates
    /// Each fence's geometry and timing packed, apart from its text, so that the per-fix loop
    /// reads little memory: a cache of the reminders' and places' ``FenceGeometry``.
    private let shapes: [FenceShape]
    /// The areas of the fences that are areas, by their shape's ``FenceShape/areaNumber``.
    private let areas: [Area]
    private let index: GridIndex
    /// The cell of the last fix and its fences: consecutive fixes mostly fall in the same cell,
    /// whose fences are otherwise a hash lookup away. Cell -1 (no cell has it) before the first fix.
    private var lastCell: (number: Int, candidates: ArraySlice<Int32>) = (-1, [])
    /// How far the fixes may go before each fence of `lastCell` could come within reach.
    private var margins = CellMargins()
    private var unsettled: UnsettledSlots
    /// The slot of each reminder's id.
    private let reminderSlots: [String: Int]
    /// The first slot of each collection's places.
    private let collectionStarts: [Int]
    /// Time of the last accepted fix.
    public private(set) var lastFixTime: Date?
    /// How far ahead of the receiving clock a fix's time may be: ``receiverFutureTolerance``, or
    /// ``trackedFutureTolerance`` for a tracked device's engine. Kept by a reload.
    public var futureTolerance: TimeInterval = GeofenceEngine.receiverFutureTolerance
    /// How many fences kept a known side from the engine or the saved state this one started from.
    public private(set) var keptStates = 0
    /// How many area edges the fixes so far were tested against (for the benchmarks).
    public private(set) var edgesTested = 0
    /// Each reminder's names, by slot, side by side so that a change of side reads one place in
    /// memory rather than the reminder's whole value; every proximity change shares them.
    private let names: [ReminderNames]
    /// The reminders' proximities and approaches (collection places have neither).
    private var approachTracker: ApproachTracker

    /// Tracks the enabled ones of `reminders` and `collections`, all starting undecided.
    public init(reminders: [Reminder], collections: [ReminderCollection] = [], settings: EngineSettings = EngineSettings()) {
        let reminders = reminders.filter(\.isEnabled)
        let collections = collections.filter(\.template.isEnabled)
        self.reminders = reminders
        self.collections = collections
        self.settings = settings
        var areas: [Area] = []
        func shape(_ geometry: FenceGeometry, of template: Reminder) -> FenceShape {
            FenceShape(geometry, hysteresis: template.hysteresis, dwell: template.dwell) { area in
                areas.append(area)
                return Int32(areas.count - 1)
            }
        }
        var shapes = reminders.map { shape($0.geometry, of: $0) }
        var starts: [Int] = []
        for collection in collections {
            starts.append(shapes.count)
            shapes.append(contentsOf: collection.places.lazy.map { shape($0.geometry, of: collection.template) })
        }
        self.shapes = shapes
        self.areas = areas
        collectionStarts = starts
        reminderSlots = Dictionary(reminders.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        trackers = .dense(count: shapes.count)
        index = GridIndex(count: shapes.count) { slot in
            let (geometry, hysteresis) = Self.geometry(atSlot: slot, reminders: reminders, collections: collections, starts: starts)
            return geometry.boundingBox(margin: hysteresis)
        }
        unsettled = UnsettledSlots(first: shapes.count)
        names = reminders.map { ReminderNames(id: $0.id, fenceKey: $0.fenceKey) }
        approachTracker = ApproachTracker(reminders: reminders, shapes: shapes)
    }

    /// An engine for a new set of reminders and collections (a reloaded config) that keeps what
    /// `previous` knew: the tracker of every fence whose id and circle (``Reminder/fenceKey``) are
    /// unchanged, and the time of the last fix. Any other fence starts undecided.
    public init(
        reminders: [Reminder], collections: [ReminderCollection] = [], settings: EngineSettings,
        carryingStateFrom previous: GeofenceEngine, renamed: [String: String] = [:]
    ) {
        self.init(reminders: reminders, collections: collections, settings: settings)
        if !previous.showsProximity { approachTracker.reset(showingProximity: false) }
        adoptState(from: previous, renamed: renamed)
    }

    /// An engine that starts from sides confirmed earlier (a state store's, after a restart):
    /// `saved` maps fence ids to a side, restored where the fence is unchanged (same
    /// ``Reminder/fenceKey``). The others start undecided.
    public init(
        reminders: [Reminder], collections: [ReminderCollection] = [], settings: EngineSettings,
        restoring saved: [String: SavedPresence]
    ) {
        self.init(reminders: reminders, collections: collections, settings: settings)
        restore(saved)
    }

    /// A copy tracking the same fences for a tracked device (``Fix/tracker``), restored from
    /// `saved`: its collection places are kept sparse (see ``FenceStates``), and its fixes may be
    /// ``trackedFutureTolerance`` ahead of the clock.
    public func copyForTrackedDevice(restoring saved: [String: SavedPresence]) -> GeofenceEngine {
        var copy = self
        copy.trackers = .sparse(reminders: reminders.count, collectionStarts: collectionStarts)
        copy.futureTolerance = Self.trackedFutureTolerance
        copy.reset(showingProximity: false)
        copy.restore(saved)
        return copy
    }

    /// A copy tracking the same fences for the device `previous` tracked (after a reload), keeping
    /// what it knew as ``init(reminders:collections:settings:carryingStateFrom:)`` does (sparse
    /// when `previous` was), and sharing the fences, their index and areas with this engine.
    public func freshCopy(carryingStateFrom previous: GeofenceEngine, renamed: [String: String] = [:]) -> GeofenceEngine {
        var copy = self
        if previous.trackers.isSparse {
            copy.trackers = .sparse(reminders: reminders.count, collectionStarts: collectionStarts)
        }
        copy.reset(showingProximity: previous.approachTracker.showsProximity)
        copy.adoptState(from: previous, renamed: renamed)
        return copy
    }

    /// Whether this engine gives out proximity changes: this machine's does where something keeps
    /// or shows them; a tracked device's never does. Either way it reads the proximities its
    /// reminders' approaches need.
    public var showsProximity: Bool { approachTracker.showsProximity }

    /// Gives out proximity changes, or not, from now on (before the first fix: a change starts
    /// the motion estimate and the approaches afresh).
    public mutating func showProximity(_ shows: Bool) {
        guard shows != approachTracker.showsProximity else { return }
        approachTracker.reset(showingProximity: shows)
    }

    /// How many fence trackers this engine stores (all of them, or for a tracked device those
    /// it keeps apart): for the tests and benchmarks of memory.
    public var storedTrackers: Int { trackers.storedCount }

    /// Every fence undecided, no fix seen; proximity shown or not.
    private mutating func reset(showingProximity: Bool) {
        trackers.reset()
        // The margins kept say which fences are settled outside: none is now.
        lastCell = (-1, [])
        // A sparse engine's places far from every fix follow their collection's shared tracker.
        let visited = trackers.isSparse ? reminders.count : shapes.count
        unsettled = UnsettledSlots(first: visited)
        lastFixTime = nil
        keptStates = 0
        edgesTested = 0
        approachTracker.reset(showingProximity: showingProximity)
    }

    /// `renamed` gives, by new id, the id a reminder or collection had in `previous` (a task whose list was renamed).
    private mutating func adoptState(from previous: GeofenceEngine, renamed: [String: String]) {
        lastFixTime = previous.lastFixTime
        futureTolerance = previous.futureTolerance
        approachTracker.adoptMotion(from: previous.approachTracker)
        for (slot, reminder) in self.reminders.enumerated() {
            guard let old = previous.reminderSlots[renamed[reminder.id] ?? reminder.id], previous.names[old].fenceKey == names[slot].fenceKey
            else { continue }
            approachTracker.adopt(old, of: previous.approachTracker, at: slot)
            keep(previous.trackers[old], at: slot)
        }
        for (number, collection) in self.collections.enumerated() {
            let oldID = renamed[collection.id] ?? collection.id
            guard let oldNumber = previous.collections.firstIndex(where: { $0.id == oldID }) else { continue }
            let old = previous.collections[oldNumber]
            guard old.template.hysteresis == collection.template.hysteresis else { continue }
            func unchanged(_ place: Int) -> Bool {
                place < old.places.count && old.places[place].geometry == collection.places[place].geometry
            }
            guard trackers.isSparse else {
                for place in collection.places.indices where unchanged(place) {
                    keep(previous.trackers[previous.collectionStarts[oldNumber] + place], at: collectionStarts[number] + place)
                }
                continue
            }
            // The shared tracker goes on; a place whose geometry changed starts undecided, and
            // the places kept apart keep what they knew.
            trackers.adoptShared(previous.trackers, from: oldNumber, to: number)
            for place in collection.places.indices where !unchanged(place) {
                keep(FenceTracker(), at: collectionStarts[number] + place)
            }
            let oldStart = previous.collectionStarts[oldNumber]
            for (slot, tracker) in previous.trackers.keptApart where (oldStart..<oldStart + old.places.count).contains(slot) {
                if unchanged(slot - oldStart) { keep(tracker, at: collectionStarts[number] + slot - oldStart) }
            }
        }
    }

    private mutating func restore(_ saved: [String: SavedPresence]) {
        for (id, side) in saved where side.presence != .unknown {
            guard let slot = slot(of: id), reminder(atSlot: slot).fenceKey == side.fenceKey else { continue }
            keep(FenceTracker(presence: side.presence, confirmedAt: side.time), at: slot)
        }
    }

    /// Sets `slot`'s tracker apart from fixes: only on a new or reset engine, whose cell is not
    /// yet measured (``CellMargins`` keeps a margin beyond the reach only for a fence settled
    /// outside since it was measured).
    private mutating func keep(_ tracker: FenceTracker, at slot: Int) {
        trackers[slot] = tracker
        if tracker.presence != .unknown { keptStates += 1 }
        if tracker.isSettledOutside { unsettled.remove(Int32(slot)) } else { unsettled.insert(Int32(slot)) }
    }

    /// How far ahead of the system's clock this machine's receiver may be: a day, since the
    /// system clock may be the one that is wrong (a Raspberry Pi without a real-time clock, before
    /// it has the time).
    public static let receiverFutureTolerance: TimeInterval = 86400

    /// How far ahead of the system's clock a tracked device's fix may be: 5 minutes. The agent
    /// reading a broker has the network's time, and one phone's wrong clock must not hold that
    /// phone's true locations back for longer.
    public static let trackedFutureTolerance: TimeInterval = 300

    /// How many fences are tracked: enabled reminders plus the places of enabled collections.
    public var fenceCount: Int { shapes.count }

    /// The confirmed side of the reminder or collection place with this id, or nil for an unknown id.
    public func presence(of id: String) -> Presence? {
        slot(of: id).map { trackers[$0].presence }
    }

    /// What this engine holds, as a sink that shows state starts from it (see ``ShownState``):
    /// each reminder's side and proximity, and the collection places it is inside.
    public func shownState(lifecycles: [String: Lifecycle]) -> ShownState {
        var sides: [String: Presence] = [:]
        var proximitiesByID: [String: Proximity] = [:]
        for slot in reminders.indices {
            sides[reminders[slot].id] = trackers[slot].presence
            if let proximity = approachTracker.shown(at: slot) { proximitiesByID[reminders[slot].id] = proximity }
        }
        // A place inside is never settled outside: the unsettled ones are all there is to look at.
        var inside: [String: Reminder] = [:]
        unsettled.forEach { slot in
            guard Int(slot) >= reminders.count, trackers[Int(slot)].presence == .inside else { return }
            let place = reminder(atSlot: Int(slot))
            inside[place.id] = place
        }
        return ShownState(
            reminders: reminders, collections: collections, sides: sides, placesInside: inside, proximities: proximitiesByID,
            lifecycles: lifecycles)
    }

    /// Takes the proximities kept from before a restart, of the reminders whose fence is the same
    /// (``SavedProximity/fenceKey``): they are what the state shows until the next dated fix.
    public mutating func restoreProximities(_ saved: [String: SavedProximity]) {
        for (id, kept) in saved {
            if let slot = reminderSlots[id], kept.fenceKey == names[slot].fenceKey { approachTracker.show(kept.proximity, at: slot) }
        }
    }

    /// The reminders and collection places whose fence meets `box` (a map's view), in slot
    /// order: at most `limit`, and whether that is all of them. Asks the grid index, so a view
    /// of a town among a million places reads only the places near it.
    public func fences(in box: GeoBox, limit: Int) -> (fences: [Reminder], complete: Bool) {
        let (slots, complete) = slots(meeting: box, limit: limit)
        return (slots.map(reminder(atSlot:)), complete)
    }

    /// ``fences(in:limit:)``, each with whether its tracker is settled (it has a side and no
    /// streak toward the other: a fix on that side changes nothing), for ``locationNeed(at:)``.
    func settledFences(in box: GeoBox, limit: Int) -> (fences: [(reminder: Reminder, isSettled: Bool)], complete: Bool) {
        let (slots, complete) = slots(meeting: box, limit: limit)
        return (slots.map { (reminder(atSlot: $0), trackers[$0].isSettled) }, complete)
    }

    /// The slots of the fences that meet `box`, in order: at most `limit`, and whether that is all.
    private func slots(meeting box: GeoBox, limit: Int) -> (slots: [Int], complete: Bool) {
        // The index's cells hold more than the box: asked for more candidates until more than
        // `limit` are in it, or there are no more.
        var asked = limit * 4 + 16
        while true {
            let (candidates, indexComplete) = index.fences(overlapping: box, limit: asked)
            let inBox = Array(candidates.sorted().lazy.map(Int.init).filter { slot in
                self.geometry(atSlot: slot).0.boundingBox(margin: 0).intersects(box)
            }.prefix(limit + 1))
            if inBox.count > limit { return (Array(inBox.prefix(limit)), false) }
            if indexComplete { return (inBox, true) }
            asked *= 4
        }
    }

    /// The geometry and hysteresis of the fence in `slot`, without making its reminder.
    private func geometry(atSlot slot: Int) -> (FenceGeometry, hysteresis: Double) {
        Self.geometry(atSlot: slot, reminders: reminders, collections: collections, starts: collectionStarts)
    }

    /// The geometry and hysteresis of the fence in `slot` of these reminders and collections,
    /// whose places start at `starts`.
    private static func geometry(
        atSlot slot: Int, reminders: [Reminder], collections: [ReminderCollection], starts: [Int]
    ) -> (FenceGeometry, hysteresis: Double) {
        guard slot >= reminders.count else { return (reminders[slot].geometry, reminders[slot].hysteresis) }
        let number = starts.lastIndex { $0 <= slot }!
        return (collections[number].places[slot - starts[number]].geometry, collections[number].template.hysteresis)
    }

    /// The reminder or collection place with this id, or nil for an unknown id.
    public func reminder(id: String) -> Reminder? {
        slot(of: id).map(reminder(atSlot:))
    }

    private func slot(of id: String) -> Int? {
        if let slot = reminderSlots[id] { return slot }
        for (number, collection) in collections.enumerated() {
            if let place = collection.memberIndex(of: id) { return collectionStarts[number] + place }
        }
        return nil
    }

    /// The collection holding `slot` and the place's index in it; nil for a reminder's slot.
    private func collectionPlace(atSlot slot: Int) -> (collection: Int, place: Int)? {
        guard slot >= reminders.count else { return nil }
        let number = collectionStarts.lastIndex { $0 <= slot }!
        return (number, slot - collectionStarts[number])
    }

    private func reminder(atSlot slot: Int) -> Reminder {
        guard let (number, place) = collectionPlace(atSlot: slot) else { return reminders[slot] }
        return collections[number].member(place)
    }

    /// Runs one fix through the accuracy and order gates, then through the trackers it can affect.
    ///
    /// A collection place's first confirmed "outside" is neither announced (not even with
    /// `announce_initial`) nor among the changes: at start every place of a large collection
    /// would otherwise say "leave" and write a row, and a restart learns it again silently.
    ///
    /// `receivedAt` is the system clock's time when the fix arrived (the engine reads no clock):
    /// a fix stamped more than ``futureTolerance`` after it is rejected as in the future, and
    /// does not hold back the fixes at the true time that follow it. Nil skips that check.
    public mutating func process(_ fix: Fix, receivedAt: Date? = nil) -> FixOutcome {
        guard fix.mode >= .twoD, fix.coordinate.isValid else { return .rejected(.noFix) }
        guard settings.admitsError(of: fix) else { return .rejected(.inaccurate) }
        if let time = fix.time {
            if let receivedAt, time.timeIntervalSince(receivedAt) > futureTolerance { return .rejected(.future) }
            if let last = lastFixTime, time <= last { return .rejected(time == last ? .repeated : .outOfOrder) }
            lastFixTime = time
        }
        // Candidates near the fix (in slot order: the index files them so) merged with the
        // unsettled trackers, each once, in slot order. Unsettled ones are few once the first
        // fixes have settled every fence; their order is kept until one changes.
        let cell = index.cell(of: fix.coordinate)
        if lastCell.number != cell {
            lastCell = (cell, index.candidates(inCell: cell))
            margins.enter(candidates: lastCell.candidates.count)
        }
        unsettled.order()
        // Both lists are read where they are kept, not through local copies: a copy of each
        // would be retained and released on every fix, four atomic operations. The loop
        // changes neither (``UnsettledSlots/ordered`` stays as it was until the next ``order()``).
        var events: [GeofenceEvent] = []
        var changes: [PresenceChange] = []
        let origin = Haversine.Origin(fix.coordinate)
        margins.advance(to: origin)
        var (nextCandidate, nextOther) = (lastCell.candidates.startIndex, 0)
        while nextCandidate < lastCell.candidates.endIndex || nextOther < unsettled.ordered.count {
            let position: Int32
            var wasUnsettled = true
            // The fence's number among the cell's candidates (for `margins`); -1 for an unsettled one of another cell.
            var candidate = -1
            if nextOther == unsettled.ordered.count
                || (nextCandidate < lastCell.candidates.endIndex && lastCell.candidates[nextCandidate] <= unsettled.ordered[nextOther]) {
                position = lastCell.candidates[nextCandidate]
                candidate = nextCandidate - lastCell.candidates.startIndex
                nextCandidate += 1
                if nextOther < unsettled.ordered.count, unsettled.ordered[nextOther] == position { nextOther += 1 } else { wasUnsettled = false }
            } else {
                position = unsettled.ordered[nextOther]
                nextOther += 1
            }
            // A fence settled outside that the fix is still certainly beyond the reach of: passed
            // over before its shape and tracker are read, which among a million fences are rarely
            // in the cache (``CellMargins`` keeps "beyond" only for fences settled outside).
            if candidate >= 0, margins.isBeyondReach(candidate) { continue }
            let slot = Int(position)
            let shape = shapes[slot]
            let distance: Double
            let evidence: FenceEvidence
            if shape.areaNumber < 0 {
                // A settled-outside circle that the fix is certainly beyond the reach of cannot
                // change: its margin gone, passed over on a trigonometry-free bound (the
                // haversine's rounding is far below the 1e-9 asked beyond the reach). Nor can a
                // settled-inside one the fix is certainly within the reach of, passed over while
                // its margin lasts (an unsettled one's bookkeeping is then as it was).
                if candidate >= 0 {
                    if trackers[slot].isSettledOutside {
                        let atLeast = origin.distanceLowerBound(to: shape.center)
                        margins.record(candidate, atLeast: atLeast, reach: shape.reach)
                        if atLeast > shape.reach * (1 + 1e-9) { continue }
                    } else if wasUnsettled, trackers[slot].isSettledInside, margins.isWithinReach(candidate) {
                        continue
                    }
                }
                distance = origin.distance(to: shape.center)
                if candidate >= 0 { margins.record(candidate, measured: distance, reach: shape.reach) }
                evidence = shape.circleEvidence(distance: distance)
            } else {
                // Likewise an area: one settled outside that the fix is certainly beyond the reach
                // of, or one settled inside that it is certainly still inside, passed over while
                // its margin lasts (kept below, from its box widened by its reach or from its
                // edges) without reading the area.
                if candidate >= 0 {
                    if trackers[slot].isSettledOutside {
                        let gap = areas[Int(shape.areaNumber)].leastTravelToNear(from: origin, margin: shape.reach)
                        margins.record(candidate, atLeast: gap, reach: 0)
                        if gap > 0 { continue }
                    } else if wasUnsettled, trackers[slot].isSettledInside, margins.isWithinReach(candidate) {
                        continue
                    }
                }
                let area = areas[Int(shape.areaNumber)]
                // Outside its box by more than the hysteresis: outside, and farther than that from every edge.
                if area.isBeyond(fix.coordinate, margin: shape.reach) {
                    if trackers[slot].isSettledOutside { continue }
                    (distance, evidence) = (.infinity, .outside)
                } else if area.contains(fix.coordinate, tested: &edgesTested) {
                    (distance, evidence) = (0, .inside)
                    // Measured only for a fence that stays inside: the way to its edges is a scan of them.
                    if candidate >= 0, trackers[slot].isSettledInside {
                        let edge = area.distanceToEdge(from: origin, tested: &edgesTested)
                        margins.record(candidate, insideFor: area.leastTravelToEdge(from: origin, distance: edge))
                    }
                } else {
                    distance = area.distanceToEdge(from: origin, tested: &edgesTested)
                    evidence = distance > shape.reach ? .outside : .margin
                    if candidate >= 0 {
                        margins.record(candidate, atLeast: area.leastTravelToEdge(from: origin, distance: distance), reach: shape.reach)
                    }
                }
            }
            let before = trackers[slot].presence
            let changed = trackers.observe(
                evidence, atSlot: slot, time: fix.time, dwell: shape.dwell, confirmations: settings.confirmations)
            let isSettled = trackers[slot].isSettledOutside
            if candidate >= 0, !isSettled { margins.forgetBeyond(candidate) }
            if isSettled, wasUnsettled {
                unsettled.remove(position)
            } else if !isSettled, !wasUnsettled {
                unsettled.insert(position)
            }
            guard let after = changed else { continue }
            let isInitial = before == .unknown
            if isInitial, after == .outside, slot >= reminders.count { continue }
            let reminder = reminder(atSlot: slot)
            // An area left from beyond its box: measured now.
            let shown = distance.isFinite ? distance : reminder.distance(from: fix.coordinate)
            changes.append(
                PresenceChange(
                    reminder: reminder, presence: after, fix: fix, distance: shown, isInitial: isInitial,
                    fenceKey: slot < reminders.count ? names[slot].fenceKey : nil))
            if isInitial && !settings.announceInitial { continue }
            let kind: EventKind = after == .inside ? .arrive : .leave
            guard reminder.trigger.announces(kind) else { continue }
            events.append(GeofenceEvent(
                kind: kind, reminder: reminder, fix: fix, distance: shown, isInitial: isInitial))
        }
        if trackers.isSparse, trackers.sharedUnsettled {
            trackers.observeFar(at: fix.time, dwell: { collections[$0].template.dwell }, confirmations: settings.confirmations)
        }
        var proximityChanges: ProximityChanges = []
        if let time = fix.time {
            let approaches = approachTracker.observe(
                fix, at: time, reminders: reminders, names: names, shapes: shapes, areas: areas,
                candidates: lastCell.candidates, changes: &proximityChanges)
            // Appending nothing still costs a call and a uniqueness check, on every fix.
            if !approaches.isEmpty { events += approaches }
        }
        unsettled.compact()
        return .accepted(events, changes: changes, proximities: proximityChanges)
    }
}
