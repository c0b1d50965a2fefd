@testable import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// The ordered list follows every change once ordered again, and stays as it was until then.
struct UnsettledSlotsTests {
    @Test func theOrderFollowsRandomChangesAsASortedSetWould() {
        var random = SplitMix(seed: 0x0A5E_771E)
        var slots = UnsettledSlots(first: 50)
        var model = Set(Int32(0)..<50)
        for _ in 0..<5_000 {
            let slot = Int32.random(in: 0..<80, using: &random)
            if random.bool() {
                slots.insert(slot)
                model.insert(slot)
            } else {
                slots.remove(slot)
                model.remove(slot)
            }
            if Int.random(in: 0..<4, using: &random) == 0 {
                slots.order()
                #expect(slots.ordered == model.sorted())
            }
        }
        var seen: [Int32] = []
        slots.forEach { seen.append($0) }
        #expect(seen.sorted() == model.sorted())
    }

    @Test func theOrderStaysAsItWasUntilOrderedAgain() {
        var slots = UnsettledSlots(first: 3)
        slots.order()
        slots.remove(1)
        slots.insert(7)
        #expect(slots.ordered == [0, 1, 2])
        slots.order()
        #expect(slots.ordered == [0, 2, 7])
        for slot: Int32 in [0, 2, 7] { slots.remove(slot) }
        #expect(slots.ordered == [0, 2, 7])
        slots.order()
        #expect(slots.ordered.isEmpty)
    }
}
