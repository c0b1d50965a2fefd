import Foundation
import GeoAlarmCore
@testable import GeoAlarmNotify
import Testing

struct NotificationContentTests {
    static func event(_ kind: EventKind, alert: ReminderAlert = ReminderAlert(), place: String? = "bakery", notes: String? = "Bread & <b>rolls</b>") -> Announcement {
        .crossing(GeofenceEvent(
            kind: kind,
            reminder: Reminder(id: "bread", title: "Buy bread", notes: notes, geometry: .circle(center: Coordinate(latitude: 38.7105, longitude: -9.1366), radius: 40),
                               placeName: place, alert: alert),
            fix: Fix(time: nil, coordinate: Coordinate(latitude: 38.7106, longitude: -9.1366)), distance: 11.4))
    }

    @Test func arrivalWithDefaults() {
        let content = NotificationContent(announcement: Self.event(.arrive), markup: false)
        #expect(content.summary == "Arrived: Buy bread")
        #expect(content.body == "Bread & <b>rolls</b>\nAt bakery, 11 m from its centre")
        #expect(content.icon == "mark-location")
        #expect(content.urgency == 1)
        #expect(content.timeoutMilliseconds == -1, "the server's default")
        #expect(content.category == "x-geoalarm.arrive")
    }

    @Test func departureEscapesMarkupWhereTheServerRendersIt() {
        let content = NotificationContent(announcement: Self.event(.leave, place: nil), markup: true)
        #expect(content.summary == "Left: Buy bread")
        #expect(content.body == "Bread &amp; &lt;b&gt;rolls&lt;/b&gt;\nLeft 38.710500,-9.136600, now 11 m from its centre")
        #expect(content.category == "x-geoalarm.leave")
    }

    @Test func anAreaSaysInsideItOrHowFarBeyondItsEdge() throws {
        let park = try Area(polygons: [[[
            Coordinate(latitude: 47.0, longitude: 8.0), Coordinate(latitude: 47.0, longitude: 8.01),
            Coordinate(latitude: 47.01, longitude: 8.01), Coordinate(latitude: 47.01, longitude: 8.0),
        ]]])
        let reminder = Reminder(id: "park", title: "Walk the dog", geometry: .area(park))
        let fix = Fix(time: nil, coordinate: Coordinate(latitude: 47.005, longitude: 8.005))
        let arrived = NotificationContent(announcement: .crossing(GeofenceEvent(kind: .arrive, reminder: reminder, fix: fix, distance: 0)), markup: false)
        #expect(arrived.body == "At 47.005000,8.005000, inside it")
        let left = NotificationContent(announcement: .crossing(GeofenceEvent(kind: .leave, reminder: reminder, fix: fix, distance: 26.4)), markup: false)
        #expect(left.body == "Left 47.005000,8.005000, now 26 m beyond its edge")
    }

    /// The issue's own words: "Home in about 9 min (6.2 km)".
    @Test func anApproachSaysHowLongAndHowFar() {
        guard case .crossing(var event) = Self.event(.approach, place: "home", notes: nil) else { return }
        event.proximity = Proximity(distance: 6213, direction: .towards, closingSpeed: 11.5, eta: 540)
        let content = NotificationContent(announcement: .crossing(event), markup: false)
        #expect(content.summary == "Approaching: Buy bread")
        #expect(content.body == "Home in about 9 min (6.2 km)")
        #expect(content.category == "x-geoalarm.approach")
    }

    @Test func urgencyIconAndTimeout() {
        let low = NotificationContent(announcement: Self.event(.arrive, alert: ReminderAlert(urgency: .low, icon: "/usr/share/icons/bread.png", timeout: 7.5), notes: nil), markup: false)
        #expect(low.urgency == 0 && low.icon == "/usr/share/icons/bread.png" && low.timeoutMilliseconds == 7500)
        #expect(low.body == "At bakery, 11 m from its centre")
        let critical = NotificationContent(announcement: Self.event(.arrive, alert: ReminderAlert(urgency: .critical, timeout: 5)), markup: false)
        #expect(critical.urgency == 2 && critical.timeoutMilliseconds == 0, "critical pop-ups never expire, as the spec says")
    }

    /// 25 days of milliseconds do not fit libnotify's Int32 (the agent trapped at its first pop-up).
    @Test func aTimeoutLongerThanLibnotifyTakesIsClamped() {
        let long = NotificationContent(announcement: Self.event(.arrive, alert: ReminderAlert(timeout: 25 * 86400)), markup: false)
        #expect(long.timeoutMilliseconds == Int32.max)
    }

    /// A time alarm has no place: its pop-up says when, not where.
    @Test func aTimeAlarmsPopUpHasNoWhereabouts() {
        let alarm = TimeAlarm(
            id: "call", title: "Call mum", notes: "Her birthday", at: .local(LocalDate(parsing: "2026-12-24T16:00")!),
            alert: ReminderAlert(), isEnabled: true)
        let content = NotificationContent(announcement: .alarm(AlarmFiring(alarm: alarm, time: Date(timeIntervalSince1970: 1_798_128_000))), markup: false)
        #expect(content.summary == "Reminder: Call mum")
        #expect(content.body == "Her birthday")
        #expect(content.category == "x-geoalarm.alarm")
    }
}
