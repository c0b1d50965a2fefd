import FoundationEssentials

/// Each fence's tracker, by slot (reminders first, then each collection's places).
///
/// This machine's engine keeps them all (``dense(count:)``). A tracked device's engine keeps
/// the reminders' and only the collection places the device has been near (``sparse(reminders:collections:)``):
/// every other place of a collection has had the same story, outside on every fix, so one
/// tracker per collection stands for all of them. A device then costs memory for the places it
/// came near, not for every place of every collection.
struct FenceStates: Sendable {
    private var all: [FenceTracker]
    /// Collection places that differ from their collection's shared tracker, by slot.
    private var kept: [Int32: FenceTracker] = [:]
    /// Each collection's shared tracker (sparse only).
    private(set) var shared: [FenceTracker] = []
    /// The first slot of each collection's places (sparse only).
    private let starts: [Int]

    var isSparse: Bool { !starts.isEmpty }

    static func dense(count: Int) -> FenceStates {
        FenceStates(all: Array(repeating: FenceTracker(), count: count), starts: [])
    }

    /// `reminders` slots kept one by one, then the places of collections starting at `starts`.
    static func sparse(reminders: Int, collectionStarts starts: [Int]) -> FenceStates {
        var states = FenceStates(all: Array(repeating: FenceTracker(), count: reminders), starts: starts)
        states.shared = Array(repeating: FenceTracker(), count: starts.count)
        return states
    }

    private init(all: [FenceTracker], starts: [Int]) {
        self.all = all
        self.starts = starts
    }

    /// Every tracker undecided.
    mutating func reset() {
        for index in all.indices { all[index] = FenceTracker() }
        kept = [:]
        for index in shared.indices { shared[index] = FenceTracker() }
    }

    /// The collection a sparse slot belongs to, or nil for one kept in `all`.
    private func collection(of slot: Int) -> Int? {
        guard isSparse, slot >= all.count else { return nil }
        return starts.lastIndex { $0 <= slot }
    }

    /// A slot's tracker. Reminders' slots (every slot, dense) are read and written in `all`
    /// directly, small enough for the engine's loop to inline; a collection place's go the
    /// sparse way.
    subscript(slot: Int) -> FenceTracker {
        get { slot < all.count ? all[slot] : sparseTracker(slot) }
        set {
            if slot < all.count { all[slot] = newValue } else { setSparseTracker(slot, newValue) }
        }
    }

    /// Feeds `evidence` to a slot's tracker (``FenceTracker/observe(_:at:dwell:confirmations:)``)
    /// and returns the side it newly confirmed, if any. A tracker kept in `all` is changed where
    /// it stands: through the subscript it would be copied out and written back, and reading that
    /// copy back, just after `observe` wrote it field by field, stalled the engine's loop.
    mutating func observe(_ evidence: FenceEvidence, atSlot slot: Int, time: Date?, dwell: Double, confirmations: Int) -> Presence? {
        guard slot >= all.count else {
            return all[slot].observe(evidence, at: time, dwell: dwell, confirmations: confirmations)
        }
        var tracker = sparseTracker(slot)
        let changed = tracker.observe(evidence, at: time, dwell: dwell, confirmations: confirmations)
        setSparseTracker(slot, tracker)
        return changed
    }

    private func sparseTracker(_ slot: Int) -> FenceTracker {
        guard let collection = collection(of: slot) else { return all[slot] }
        return kept[Int32(slot)] ?? shared[collection]
    }

    private mutating func setSparseTracker(_ slot: Int, _ tracker: FenceTracker) {
        guard let collection = collection(of: slot) else { return all[slot] = tracker }
        // Settled outside like the rest of its collection: no need to keep it apart.
        if tracker.isSettledOutside, shared[collection].isSettledOutside {
            kept[Int32(slot)] = nil
        } else {
            kept[Int32(slot)] = tracker
        }
    }

    /// Whether some collection's shared tracker is still undecided or in a streak.
    var sharedUnsettled: Bool { shared.contains { !$0.isSettledOutside } }

    /// Gives every collection's shared tracker this fix's evidence for the places far from it
    /// (outside: a place out of the fix's reach is outside); `dwell` of each collection. Once a
    /// shared tracker settles, the places kept apart only for having settled too are let go.
    mutating func observeFar(at time: Date?, dwell: (Int) -> Double, confirmations: Int) {
        for collection in shared.indices where !shared[collection].isSettledOutside {
            _ = shared[collection].observe(.outside, at: time, dwell: dwell(collection), confirmations: confirmations)
            if shared[collection].isSettledOutside {
                let range = Int32(starts[collection])..<(collection + 1 < starts.count ? Int32(starts[collection + 1]) : Int32.max)
                kept = kept.filter { !(range.contains($0.key) && $0.value.isSettledOutside) }
            }
        }
    }

    /// Takes `previous`'s shared tracker of collection `old` for collection `new`.
    mutating func adoptShared(_ previous: FenceStates, from old: Int, to new: Int) {
        shared[new] = previous.shared[old]
    }

    /// The slots kept apart in a sparse engine, with their trackers.
    var keptApart: [(slot: Int, tracker: FenceTracker)] { kept.map { (Int($0.key), $0.value) } }

    /// How many trackers are stored.
    var storedCount: Int { all.count + kept.count + shared.count }
}
