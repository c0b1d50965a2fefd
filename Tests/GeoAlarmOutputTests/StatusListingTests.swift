import Foundation
import GeoAlarmCore
import GeoAlarmOutput
import Testing

/// `geoalarm status` as a table and as JSON lines: a side counts only while its fence is the
/// same, a collection is one row with the places the state file knows of, a time alarm has no side.
struct StatusListingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let bakery = Reminder(
        id: "bread", title: "Buy bread", geometry: .circle(center: Coordinate(latitude: 38.7105, longitude: -9.1366), radius: 50))
    static let shops = ReminderCollection(id: "shops", template: Self.bakery, places: [
        CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.71, longitude: -9.14), radius: 30), name: "Baixa"),
        CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.72, longitude: -9.15), radius: 30), name: "Rato"),
    ])

    static func listing(saved: [String: SavedPresence], lifecycles: [String: Lifecycle] = [:]) -> StatusListing {
        StatusListing(
            reminders: [bakery], collections: [shops],
            alarms: [TimeAlarm(id: "call", title: "Call", at: .instant(now.addingTimeInterval(3600)))],
            saved: saved,
            proximities: ["bread": SavedProximity(
                proximity: Proximity(distance: 412, direction: .towards, eta: 300), time: now, fenceKey: bakery.fenceKey)],
            lifecycles: lifecycles, lastFix: Fix(time: now, coordinate: Coordinate(latitude: 38.7105, longitude: -9.1400)),
            now: now, timeZone: FixedOffset.utc)
    }

    @Test func eachReminderCollectionAndAlarmIsARowAndALine() throws {
        let member = Self.shops.member(1)
        let listing = Self.listing(
            saved: ["bread": SavedPresence(presence: .outside, time: Self.now, fenceKey: Self.bakery.fenceKey),
                    member.id: SavedPresence(presence: .inside, time: Self.now, fenceKey: member.fenceKey)],
            lifecycles: ["shops": Lifecycle(snoozedUntil: Self.now.addingTimeInterval(600))])
        let table = listing.tableLines()
        #expect(table.count == 5, "header, bread, shops/*, shops/2, call: \(table)")
        #expect(table[1].hasPrefix("bread") && table[1].contains("outside") && table[1].contains("295 m") && table[1].contains("towards"))
        #expect(table[2].hasPrefix("shops/*") && table[2].contains("1 of 2 inside") && table[2].contains("snoozed until 2027-01-15T08:10:00Z"))
        #expect(table[3].hasPrefix("shops/2") && table[3].contains("Buy bread") && table[3].contains("inside"))
        #expect(table[4].hasPrefix("call") && table[4].contains("alarm"))
        let lines = listing.jsonLines()
        #expect(lines[0].contains(#""state":"outside""#) && lines[0].contains(#""direction":"towards","eta_s":300"#), "\(lines[0])")
        #expect(lines[1].contains(#""kind":"collection","inside":1,"places":2"#) && lines[1].contains(#""snoozed_until":"2027-01-15T08:10:00Z""#))
        #expect(lines[2].contains(#""id":"shops/2""#) && lines[2].contains(#""kind":"collection place""#))
        #expect(lines[3].contains(#""kind":"alarm","state":"unknown""#))
    }

    /// A side recorded for the fence as it was (moved since) is unknown now.
    @Test func aSideOfAnotherFenceIsUnknown() {
        let listing = Self.listing(saved: ["bread": SavedPresence(presence: .inside, time: Self.now, fenceKey: "another fence")])
        #expect(listing.tableLines()[1].contains("unknown"))
        #expect(listing.jsonLines()[0].contains(#""state":"unknown""#))
    }

    /// A reminder that starts later (a task not started, a repeating one moved on to its next
    /// time) says when; one that started says nothing of it.
    @Test func aReminderThatStartsLaterSaysWhen() throws {
        var later = Self.bakery
        later.schedule.starts = LocalDate(year: 2027, month: 1, day: 18)
        var started = Self.bakery
        started.schedule.starts = LocalDate(year: 2027, month: 1, day: 15)
        for (reminder, note, json) in [(later, "starts 2027-01-18", #""starts":"2027-01-18""#), (started, nil, #""starts":null"#)] {
            let listing = StatusListing(
                reminders: [reminder], collections: [], alarms: [], saved: [:], proximities: [:], lifecycles: [:], lastFix: nil,
                now: Self.now, timeZone: FixedOffset.utc)
            #expect(listing.tableLines()[1].contains("starts") == (note != nil) && note.map(listing.tableLines()[1].contains) != false,
                    "\(listing.tableLines())")
            #expect(listing.jsonLines()[0].contains(json), "\(listing.jsonLines())")
        }
        // A task at a collection's places that starts later: its collection's row says so.
        let shops = ReminderCollection(id: "shops", template: later, places: Self.shops.places)
        let listing = StatusListing(
            reminders: [], collections: [shops], alarms: [], saved: [:], proximities: [:], lifecycles: [:], lastFix: nil,
            now: Self.now, timeZone: FixedOffset.utc)
        #expect(listing.tableLines()[1].contains("starts 2027-01-18") && listing.jsonLines()[0].contains(#""starts":"2027-01-18""#))
    }
}
