import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmPipeline
import GeoAlarmStore
import Logging
import Synchronization
import Testing

/// The pipeline gives sinks two streams: every presence change (the engine's truth), then the
/// announcements the reminders' policies let through.
struct TwoStreamsTests {
    /// What a sink was given, in order: "presence ID SIDE" (with " initial") or "announce KIND ID".
    final class Recorder: EventSink {
        let seen = Mutex<[String]>([])
        let announcements = Mutex<[Announcement]>([])
        func announce(_ announcement: Announcement) {
            seen.withLock { $0.append("announce \(announcement.kind.rawValue) \(announcement.id)") }
            announcements.withLock { $0.append(announcement) }
        }
        func presenceChanged(_ change: PresenceChange) {
            seen.withLock { $0.append("presence \(change.reminderID) \(change.presence)" + (change.isInitial ? " initial" : "")) }
        }
    }

    static let home = Coordinate(latitude: 38.7139, longitude: -9.1334)
    static let shop = Coordinate(latitude: 38.7105, longitude: -9.1366)
    static let between = Coordinate(latitude: 38.7122, longitude: -9.1350)

    @Test func presenceFollowsEveryCrossingAnnouncementsFollowThePolicy() {
        let reminders = [
            Reminder(id: "home", title: "Home", geometry: .circle(center: Self.home, radius: 50), trigger: .leave),
            Reminder(id: "shop", title: "Shop", geometry: .circle(center: Self.shop, radius: 50), trigger: .arrive),
        ]
        let recorder = Recorder()
        let pipeline = FixPipeline(
            watching: ReminderSet(reminders: reminders),
            state: StateKeeper(path: nil, logger: Logger(label: "test")), sinks: [recorder], timeZone: FixedOffset.utc)
        let walk = [Self.home, Self.home, Self.between, Self.between, Self.shop, Self.shop, Self.between, Self.between]
        for (second, place) in walk.enumerated() {
            pipeline.process(Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: place),
                             receivedAt: Date(timeIntervalSince1970: 1_800_000_000), undatedUsable: false)
        }
        #expect(recorder.seen.withLock { $0 } == [
            "presence home inside initial", "presence shop outside initial",
            "presence home outside", "announce leave home",
            "presence shop inside", "announce arrive shop",
            "presence shop outside",
        ])
    }

    /// A sink that reports positions, or does not, and counts the fixes it was given.
    final class PositionCounter: EventSink {
        let follows: Bool
        let fixes = Mutex<[Coordinate]>([])
        init(follows: Bool) { self.follows = follows }
        func announce(_ announcement: Announcement) {}
        var followsPositions: Bool { follows }
        func positionUsed(_ fix: Fix) { fixes.withLock { $0.append(fix.coordinate) } }
    }

    /// Every fix used goes to the sinks that follow positions, after its events; none to the others.
    @Test func onlySinksThatFollowPositionsAreGivenEveryFix() {
        let following = PositionCounter(follows: true)
        let notFollowing = PositionCounter(follows: false)
        let pipeline = FixPipeline(
            watching: ReminderSet(reminders: [Reminder(id: "home", title: "Home", geometry: .circle(center: Self.home, radius: 50))]),
            state: StateKeeper(path: nil, logger: Logger(label: "test")), sinks: [notFollowing, following], timeZone: FixedOffset.utc)
        let walk = [Self.home, Self.between, Self.shop]
        for (second, place) in walk.enumerated() {
            pipeline.process(Fix(time: Date(timeIntervalSince1970: 1_800_000_000 + Double(second)), coordinate: place),
                             receivedAt: Date(timeIntervalSince1970: 1_800_000_000), undatedUsable: false)
        }
        // Not used: out of order.
        pipeline.process(Fix(time: Date(timeIntervalSince1970: 1_799_999_999), coordinate: Self.home),
                         receivedAt: Date(timeIntervalSince1970: 1_800_000_000), undatedUsable: false)
        #expect(following.fixes.withLock { $0 } == walk)
        #expect(notFollowing.fixes.withLock { $0 }.isEmpty)
    }

    /// A time alarm is an announcement of its own: no presence change, no place, its due time.
    @Test func aTimeAlarmIsItsOwnAnnouncement() throws {
        var config = Config(path: "test", settings: EngineSettings(), places: [:], reminders: [])
        let at = try #require(LocalDate(parsing: "2026-12-24T16:00"))
        config.alarms = [TimeAlarm(id: "mum", title: "Call mum", at: .local(at))]
        let recorder = Recorder()
        let pipeline = FixPipeline(
            watching: config.reminderSet, state: StateKeeper(path: nil, logger: Logger(label: "test")), sinks: [recorder],
            timeZone: FixedOffset.utc)
        let due = at.start(in: FixedOffset.utc)
        pipeline.fireDueAlarms(now: due.addingTimeInterval(-1))
        #expect(recorder.seen.withLock { $0 }.isEmpty)
        pipeline.fireDueAlarms(now: due.addingTimeInterval(90))
        pipeline.fireDueAlarms(now: due.addingTimeInterval(120))
        #expect(recorder.seen.withLock { $0 } == ["announce alarm mum"], "once, and no presence")
        guard case .alarm(let firing) = try #require(recorder.announcements.withLock { $0.first }) else {
            Issue.record("not an alarm announcement")
            return
        }
        #expect(firing.time == due && firing.alarm.title == "Call mum")
    }
}
