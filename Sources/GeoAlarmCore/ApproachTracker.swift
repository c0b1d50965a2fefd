import FoundationEssentials

/// The engine's second machine, beside the fences' crossings: how the device moves, each
/// reminder's ``Proximity`` read from that motion, and the approaches (`approach_within`,
/// `approach_eta`) that fire on those readings. The engine owns one and hands it every dated
/// fix after the crossings.
///
/// Which proximities a fix reads:
/// - those of the reminders with an approach, at every dated fix;
/// - at a *reading*, every ``readingInterval`` of fix time: with up to ``readsAllUpTo``
///   reminders, all of them; with more, those the engine's grid index files near the fix (the
///   fences whose reach's box covers the fix's cell: every one the fix is inside, and those
///   within about twice a typical fence's reach) and the next ``farTurn`` of the others in turn.
///
/// So what shows proximity (the state file, `status`, Home Assistant) is at most one reading old
/// for every reminder of a usual config and for a place at the fix, and for another among very
/// many at most `ceil(count / farTurn)` readings old: its distance then is off by at most the
/// way travelled since. A million reminders cost a fix a fraction of a microsecond.
struct ApproachTracker: Sendable {
    /// Seconds of fix time between readings. What shows proximity lags by this much at most
    /// (Home Assistant's own proximity follows a phone's reports, minutes apart).
    static let readingInterval: TimeInterval = 10
    /// Up to this many reminders, a reading reads every one.
    static let readsAllUpTo = 1_000
    /// How many of the other reminders a reading reads, in turn.
    static let farTurn = 8

    /// What is kept of one reminder's proximity: plain values, so that a million of them copy
    /// as one block of memory.
    struct Entry: Sendable {
        /// The direction its last reading gave.
        var direction = Proximity.Direction.unknown
        /// Its proximity as last given out as a ``ProximityChange``; nil before its first reading.
        var shown: Proximity?
    }

    /// How many reminders there are (the slots `0..<count` of the engine's fences).
    private let count: Int
    /// The ``FenceGeometry/circumradius`` of each reminder's area (a pass over its points), by
    /// the area's number in the engine (its reminders' areas are numbered first); a circle's is
    /// its radius.
    private let areaSizes: [Double]
    /// The slots of the reminders with an approach, in order.
    private let approachSlots: [Int]
    /// Their approaches: one watch a threshold (`approach_within`, `approach_eta`), in slot order.
    private var approaches: [(slot: Int, watch: ApproachWatch)]
    /// Every reminder's entry by slot, or, where proximity is not shown, only those of
    /// `approachSlots`, in their order.
    private(set) var entries: [Entry]
    /// Whether proximity changes are given out: this machine's engine does; a tracked device's
    /// does not (nothing shows them), and reads proximities only for its approaches.
    private(set) var showsProximity = true
    private var motion = MotionEstimator()
    private var lastReading: Date?
    /// The slot the next turn of far reminders starts at.
    private var nextInTurn = 0

    /// `shapes` are the engine's fences, the reminders' first.
    init(reminders: [Reminder], shapes: [FenceShape]) {
        count = reminders.count
        var areaSizes: [Double] = []
        for (slot, reminder) in reminders.enumerated() where shapes[slot].areaNumber >= 0 {
            areaSizes.append(reminder.geometry.circumradius)
            assert(areaSizes.count == Int(shapes[slot].areaNumber) + 1, "the reminders' areas come first, in slot order")
        }
        self.areaSizes = areaSizes
        approachSlots = reminders.indices.filter { !reminders[$0].approach.isEmpty }
        approaches = approachSlots.flatMap { slot in
            [reminders[slot].approach.within.map(ApproachWatch.Threshold.distance), reminders[slot].approach.eta.map(ApproachWatch.Threshold.eta)]
                .compactMap { $0.map { (slot: slot, watch: ApproachWatch($0)) } }
        }
        entries = Array(repeating: Entry(), count: reminders.count)
    }

    /// The proximity shown for the reminder in `slot`, where proximity is shown.
    func shown(at slot: Int) -> Proximity? {
        showsProximity ? entries[slot].shown : nil
    }

    /// No fix seen: every reminder's direction unknown, nothing shown, every approach learning;
    /// proximity given out or not as `showsProximity` says.
    mutating func reset(showingProximity showsProximity: Bool) {
        self.showsProximity = showsProximity
        entries = Array(repeating: Entry(), count: showsProximity ? count : approachSlots.count)
        approaches = approaches.map { (slot: $0.slot, watch: ApproachWatch($0.watch.threshold)) }
        motion = MotionEstimator()
        lastReading = nil
        nextInTurn = 0
    }

    /// Goes on with the motion and the readings of `previous` (the engine's before a reload).
    mutating func adoptMotion(from previous: ApproachTracker) {
        motion = previous.motion
        lastReading = previous.lastReading
    }

    /// Takes what `previous` knew of the reminder in its `old` slot, now in `slot` with the same
    /// fence: its direction, the proximity shown, and each approach whose threshold is unchanged.
    mutating func adopt(_ old: Int, of previous: ApproachTracker, at slot: Int) {
        if let from = previous.position(of: old), let to = position(of: slot) {
            entries[to].direction = previous.entries[from].direction
            if showsProximity, previous.showsProximity { entries[to].shown = previous.entries[from].shown }
        }
        for index in approaches.indices where approaches[index].slot == slot {
            if let kept = previous.approaches.first(where: { $0.slot == old && $0.watch.threshold == approaches[index].watch.threshold }) {
                approaches[index].watch = kept.watch
            }
        }
    }

    /// Shows `proximity` for the reminder in `slot` until its next reading (one kept from before a restart).
    mutating func show(_ proximity: Proximity, at slot: Int) {
        if showsProximity { entries[slot].shown = proximity }
    }

    /// Where `slot`'s entry is in `entries`; nil when it has none.
    private func position(of slot: Int) -> Int? {
        if showsProximity { return slot }
        var (low, high) = (0, approachSlots.count)
        while low < high {
            let middle = (low + high) / 2
            if approachSlots[middle] < slot { low = middle + 1 } else { high = middle }
        }
        return low < approachSlots.count && approachSlots[low] == slot ? low : nil
    }

    /// Moves the motion on with a dated fix and reads the proximities due (see the type's note),
    /// and, where proximity is shown, gives out in `changes` (empty when called) those that
    /// changed noticeably; returns the approaches fired.
    /// `reminders`, `names`, `shapes` and `areas` are the engine's (its reminders' names, its
    /// fences' packed shapes, their areas by number): a reading reads the packed shapes, not the
    /// reminders, and its changes share the names rather than copy them. `candidates` are the
    /// fences its grid index files under the fix's cell, in ascending order (the index files the
    /// reminders first, by slot, and the places of collections after them): the engine has them
    /// at hand for the crossings.
    mutating func observe(
        _ fix: Fix, at time: Date, reminders: [Reminder], names: [ReminderNames], shapes: [FenceShape], areas: [Area],
        candidates: ArraySlice<Int32>, changes: inout ProximityChanges
    ) -> [GeofenceEvent] {
        guard !reminders.isEmpty, showsProximity || !approachSlots.isEmpty else { return [] }
        motion.record(fix, time: time.timeIntervalSince1970)
        let isReading = showsProximity
            && lastReading.map { time.timeIntervalSince($0) >= Self.readingInterval || time < $0 } ?? true
        guard isReading || !approachSlots.isEmpty else { return [] }
        var slots = approachSlots
        if isReading {
            lastReading = time
            slots = slotsOfReading(near: candidates)
        }
        let frame = LocalFrame(at: fix.coordinate)
        let moving = motion.motion(in: frame)
        var events: [GeofenceEvent] = []
        var nextApproach = approaches.startIndex
        for (number, slot) in slots.enumerated() {
            // Without proximity shown, the slots are the approaches' and the entries theirs.
            let position = showsProximity ? slot : number
            let shape = shapes[slot]
            let previous = entries[position].direction
            let proximity = shape.areaNumber < 0
                ? Proximity(circle: shape.center, radius: shape.radius, in: frame, moving: moving, previous: previous)
                : Proximity(
                    area: areas[Int(shape.areaNumber)], size: areaSizes[Int(shape.areaNumber)], in: frame, moving: moving,
                    previous: previous)
            entries[position].direction = proximity.direction
            if showsProximity, proximity.differsNoticeably(from: entries[position].shown) {
                entries[position].shown = proximity
                // The names are taken with the fix's first change: a fix that changes none holds none.
                if changes.isEmpty { changes = ProximityChanges(names: names, capacity: slots.count - number) }
                changes.append(slot: slot, proximity: proximity, time: time, device: fix.tracker)
            }
            // Both the slots and the approaches are in slot order.
            while nextApproach < approaches.endIndex, approaches[nextApproach].slot <= slot {
                if approaches[nextApproach].slot == slot, approaches[nextApproach].watch.update(proximity) {
                    events.append(GeofenceEvent(
                        kind: .approach, reminder: reminders[slot], fix: fix, distance: proximity.distance, proximity: proximity))
                }
                nextApproach += 1
            }
        }
        return events
    }

    /// The slots a reading reads, in order: every one, or (among many) those with an approach,
    /// those among the fix's cell's `candidates` and the next turn of the others, each once. The
    /// three are each in slot order, so one pass merges them.
    private mutating func slotsOfReading(near candidates: ArraySlice<Int32>) -> [Int] {
        guard count > Self.readsAllUpTo else { return Array(0..<count) }
        let near = candidates.prefix { Int($0) < count }
        let turnEnd = nextInTurn + Self.farTurn
        // The turn wraps past the last slot: its start, then its end.
        let inTurn = turnEnd <= count ? Array(nextInTurn..<turnEnd) : Array(0..<(turnEnd - count)) + Array(nextInTurn..<count)
        nextInTurn = turnEnd % count
        var slots: [Int] = []
        slots.reserveCapacity(approachSlots.count + near.count + inTurn.count)
        var (approach, nearby, turn) = (approachSlots.startIndex, near.startIndex, inTurn.startIndex)
        while true {
            let next = min(
                approach < approachSlots.endIndex ? approachSlots[approach] : .max,
                nearby < near.endIndex ? Int(near[nearby]) : .max,
                turn < inTurn.endIndex ? inTurn[turn] : .max)
            guard next < .max else { return slots }
            slots.append(next)
            if approach < approachSlots.endIndex, approachSlots[approach] == next { approach += 1 }
            if nearby < near.endIndex, Int(near[nearby]) == next { nearby += 1 }
            if turn < inTurn.endIndex, inTurn[turn] == next { turn += 1 }
        }
    }
}
