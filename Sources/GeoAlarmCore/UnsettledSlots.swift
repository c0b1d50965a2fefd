/// The slots of the engine's fences whose trackers are not settled outside (inside, undecided,
/// or in a streak): a set, and for the engine's per-fix merge the same slots in order.
///
/// The ordered copy is made again only after a change. While a device stays near the same
/// fences the slots unsettled stay the same from fix to fix, and copying and sorting them on
/// every fix was a tenth of a replay's engine.
struct UnsettledSlots: Sendable {
    private var slots: Set<Int32>
    /// The slots in ascending order as they were at the last ``order()``: changes made since
    /// leave it as it was (the engine reads it while it inserts and removes).
    private(set) var ordered: [Int32] = []
    private var isOrdered = false

    /// Slots 0 to `count - 1`, every fence undecided.
    init(first count: Int) {
        slots = Set(minimumCapacity: count)
        for slot in 0..<count { slots.insert(Int32(slot)) }
    }

    mutating func insert(_ slot: Int32) {
        if slots.insert(slot).inserted { isOrdered = false }
    }

    mutating func remove(_ slot: Int32) {
        if slots.remove(slot) != nil { isOrdered = false }
    }

    /// Puts the slots in ascending order in ``ordered``, when a change since the last call left it stale.
    mutating func order() {
        // None (the usual case once the first fixes have settled every fence): an empty list,
        // and none kept that once held every fence.
        guard !slots.isEmpty else {
            if ordered.capacity > 0 { ordered = [] }
            isOrdered = true
            return
        }
        if !isOrdered {
            // A copy that once held every fence gives its room back (every fence is unsettled
            // until the first fixes settle them).
            ordered.removeAll(keepingCapacity: ordered.capacity <= 4096)
            ordered.append(contentsOf: slots)
            ordered.sort()
            isOrdered = true
        }
    }

    /// Gives back the room the first fixes needed, once most of it is empty (a set keeps its
    /// capacity as it empties).
    mutating func compact() {
        guard slots.capacity > 1024, slots.count * 16 < slots.capacity else { return }
        var compact = Set<Int32>(minimumCapacity: slots.count)
        compact.formUnion(slots)
        slots = compact
    }

    /// Calls `body` with each slot, in no set order.
    func forEach(_ body: (Int32) -> Void) {
        for slot in slots { body(slot) }
    }
}
