import Foundation
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

struct TimeAlarmTests {
    static let zone = FoundationZone("Europe/Lisbon")
    static let alarm = TimeAlarm(id: "call", title: "Call mum", at: .local(LocalDate(parsing: "2026-12-24T16:00")!))
    static func utc(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    @Test func firesOnceWhenItsTimeComes() {
        let due = Self.utc("2026-12-24T16:00:00Z")
        #expect(Self.alarm.firing(at: Self.utc("2026-12-24T15:59:59Z"), in: Self.zone, lifecycle: Lifecycle()) == nil)
        #expect(Self.alarm.firing(at: Self.utc("2026-12-24T16:00:00Z"), in: Self.zone, lifecycle: Lifecycle()) == due)
        #expect(Self.alarm.firing(at: Self.utc("2026-12-26T09:00:00Z"), in: Self.zone, lifecycle: Lifecycle()) == due,
                "missed while the agent was stopped: fires late, stamped with its time")
        #expect(Self.alarm.firing(at: Self.utc("2026-12-26T09:00:00Z"), in: Self.zone, lifecycle: Lifecycle(lastFired: due)) == nil)
    }

    @Test func aSnoozeFiresItAgainAndCompletionOrDisablingSilenceIt() {
        let due = Self.utc("2026-12-24T16:00:00Z")
        let snoozed = Lifecycle(snoozedUntil: Self.utc("2026-12-24T17:00:00Z"), lastFired: due)
        #expect(Self.alarm.firing(at: Self.utc("2026-12-24T16:30:00Z"), in: Self.zone, lifecycle: snoozed) == nil)
        #expect(Self.alarm.firing(at: Self.utc("2026-12-24T17:00:00Z"), in: Self.zone, lifecycle: snoozed) == Self.utc("2026-12-24T17:00:00Z"))
        #expect(Self.alarm.firing(at: Self.utc("2026-12-25T00:00:00Z"), in: Self.zone, lifecycle: Lifecycle(completedAt: due)) == nil)
        var off = Self.alarm
        off.isEnabled = false
        #expect(off.firing(at: Self.utc("2026-12-25T00:00:00Z"), in: Self.zone, lifecycle: Lifecycle()) == nil)
    }

    /// Its announcement is its own case: the alarm and its time, no place and no device.
    @Test func itsAnnouncementIsAnAlarmWithATimeAndNoPlace() {
        let announcement = Announcement.alarm(AlarmFiring(alarm: Self.alarm, time: Self.utc("2026-12-24T16:00:00Z")))
        #expect(announcement.kind == .alarm && announcement.id == "call" && announcement.title == Self.alarm.title)
        #expect(announcement.time == Self.utc("2026-12-24T16:00:00Z"))
        #expect(announcement.device == nil && announcement.alert == Self.alarm.alert)
        #expect(!Trigger.both.announces(.alarm))
    }
}
