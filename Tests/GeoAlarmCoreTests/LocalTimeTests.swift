import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// The core's own Gregorian calendar against Foundation's (ICU's), in zones with daylight
/// saving, half-hour and 45-minute offsets, and a day a zone skipped.
struct LocalTimeTests {
    static let zones = [
        "Europe/Lisbon", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Apia", "America/St_Johns", "UTC",
    ]

    /// Foundation's reading of `moment` in `zone`, as a ``LocalTime``.
    static func reference(_ moment: Date, in zone: FoundationZone) -> LocalTime {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone.zone
        let parts = calendar.dateComponents([.year, .month, .day, .weekday, .hour, .minute, .second], from: moment)
        var local = LocalTime(moment, in: FixedOffset.utc)
        local.year = parts.year!
        local.month = parts.month!
        local.day = parts.day!
        local.weekday = parts.weekday!
        local.secondOfDay = parts.hour! * 3600 + parts.minute! * 60 + parts.second!
        return local
    }

    @Test(arguments: zones) func readsEveryMomentAsFoundationDoes(_ name: String) {
        let zone = FoundationZone(name)
        var seed = StableHash()
        for byte in name.utf8 { seed.mix(byte: byte) }
        var random = SplitMix(seed: seed.value)
        for _ in 0..<20_000 {
            // Whole seconds from 1900 to 2100.
            let moment = Date(timeIntervalSince1970: random.double(in: -2_208_988_800...4_102_444_800).rounded(.down))
            let local = LocalTime(moment, in: zone)
            #expect(local == Self.reference(moment, in: zone), "\(moment) in \(name)")
            let back = LocalTime.moment(year: local.year, month: local.month, day: local.day, secondOfDay: local.secondOfDay, in: zone)
            // The same local reading; the first of two when the clock showed it twice.
            #expect(LocalTime(back, in: zone) == local && back <= moment, "\(moment) in \(name) came back as \(back)")
        }
    }

    @Test func aTimeTheClockSkipsLandsAfterTheGapAndARepeatedOneIsTheFirst() {
        let lisbon = FoundationZone("Europe/Lisbon")
        // 2026-03-29: 01:00 became 02:00; 01:30 did not happen. 2026-10-25: 02:00 became 01:00 again.
        let skipped = LocalTime.moment(year: 2026, month: 3, day: 29, secondOfDay: 5400, in: lisbon)
        #expect(skipped == Date(timeIntervalSince1970: 1_774_747_800), "01:30 UTC, 02:30 on the clock")
        let twice = LocalTime.moment(year: 2026, month: 10, day: 25, secondOfDay: 5400, in: lisbon)
        #expect(twice == Date(timeIntervalSince1970: 1_792_888_200), "00:30 UTC, the first 01:30")
    }

    @Test func daysRunIntoTheNextMonthAndYear() {
        #expect(LocalTime.daysSince1970(year: 1970, month: 1, day: 1) == 0)
        #expect(LocalTime.daysSince1970(year: 2026, month: 12, day: 32) == LocalTime.daysSince1970(year: 2027, month: 1, day: 1))
        #expect(LocalTime.daysSince1970(year: 2024, month: 2, day: 30) == LocalTime.daysSince1970(year: 2024, month: 3, day: 1))
        #expect(LocalTime.daysSince1970(year: 1969, month: 12, day: 31) == -1)
    }
}
