import Foundation
@testable import GeoAlarmAgent
import GeoAlarmCore
import GeoAlarmPipeline
import GeoAlarmStore
import Logging
import Testing

/// The devices of `run --source owntracks`, apart from the agent: their limits as plain values,
/// each device's pipeline made from one base over an in-memory ledger, the agent's clock passed in.
struct TrackedDevicesTests {
    static let bakery = Coordinate(latitude: 47, longitude: 8)
    static var base: FixPipeline {
        FixPipeline(
            watching: ReminderSet(reminders: [Reminder(id: "bakery", title: "Buy bread", geometry: .circle(center: bakery, radius: 100))]),
            state: StateKeeper(path: nil, logger: Logger(label: "test")), sinks: [], timeZone: FixedOffset.utc)
    }
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    static func fix(at second: Double, usable: Bool = true) -> Fix {
        Fix(time: epoch.addingTimeInterval(second), coordinate: bakery, mode: usable ? .threeD : .noFix, horizontalError: 5)
    }

    static func devices(most: Int, named: Set<String> = [], idle: Duration = .seconds(600)) -> TrackedDevices {
        TrackedDevices(limits: .init(most: most, named: named, idle: idle))
    }

    /// What a staging came to, in a word.
    static func word(_ staging: TrackedDevices.Staging) -> String {
        switch staging {
        case .staged(_, let isNew): isNew ? "new" : "known"
        case .notKept: "not kept"
        case .refused(let first): first ? "refused first" : "refused"
        }
    }

    @Test func beyondTheLimitNewDevicesAreRefusedButANamedOneAlwaysHasAPlace() {
        var devices = Self.devices(most: 2, named: ["ana/phone"])
        let now = ContinuousClock.now
        func stage(_ device: String, _ second: Double) -> String {
            Self.word(devices.stage(Self.fix(at: second), of: device, base: Self.base, receivedAt: Self.epoch, now: now))
        }
        #expect(stage("junk/1", 0) == "new")
        #expect(stage("junk/2", 0) == "new")
        #expect(stage("junk/3", 0) == "refused first")
        #expect(stage("junk/4", 0) == "refused")
        #expect(stage("junk/3", 1) == "refused")
        #expect(stage("ana/phone", 0) == "new", "a device with a secret of its own is never locked out")
        #expect(stage("junk/1", 1) == "known")
        #expect(devices.count == 3)
        #expect(devices.refusals == 3 && devices.refusedNames == ["junk/3", "junk/4"])
        #expect(devices.tally.fixes == 4, "refused fixes are not run")
    }

    @Test func aNameThatNeverSentAUsableLocationHoldsNoPlace() {
        var devices = Self.devices(most: 1)
        let now = ContinuousClock.now
        let junk = devices.stage(Self.fix(at: 0, usable: false), of: "junk/1", base: Self.base, receivedAt: Self.epoch, now: now)
        #expect(Self.word(junk) == "not kept")
        #expect(devices.count == 0)
        let phone = devices.stage(Self.fix(at: 0), of: "ana/phone", base: Self.base, receivedAt: Self.epoch, now: now)
        #expect(Self.word(phone) == "new")
        #expect(devices.tally.fixes == 2)
    }

    @Test func aQuietDeviceIsLetGoAndComesBackWithItsNextMessage() {
        var devices = Self.devices(most: 1, idle: .seconds(60))
        let start = ContinuousClock.now
        _ = devices.stage(Self.fix(at: 0), of: "ana/phone", base: Self.base, receivedAt: Self.epoch, now: start)
        #expect(devices.idleDue == start + .seconds(60))
        let early = devices.letIdleGo(now: start + .seconds(59))
        #expect(early.isEmpty)
        let due = devices.letIdleGo(now: start + .seconds(60))
        #expect(due == ["ana/phone"])
        #expect(devices.count == 0 && devices.idleDue == nil)
        // Its place is free again: another device takes it, and it is refused until that one goes.
        let bob = devices.stage(Self.fix(at: 1), of: "bob/phone", base: Self.base, receivedAt: Self.epoch, now: start + .seconds(61))
        #expect(Self.word(bob) == "new")
        let ana = devices.stage(Self.fix(at: 2), of: "ana/phone", base: Self.base, receivedAt: Self.epoch, now: start + .seconds(62))
        #expect(Self.word(ana) == "refused first")
        #expect(devices.idleDue == start + .seconds(121))
    }

    @Test func aDeviceAheadOfTheClockIsSaidOnceForSoManyAtMost() {
        var devices = Self.devices(most: 100)
        let said = ["ana/phone", "ana/phone"] + (1..<TrackedDevices.aheadShown).map { "d\($0)" } + ["one/more"]
        let news = said.map { devices.isNewlyAhead($0) }
        #expect(news == [true, false] + Array(repeating: true, count: TrackedDevices.aheadShown - 1) + [false])
    }
}
