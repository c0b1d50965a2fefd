import Foundation
import GeoAlarmCore
import GeoAlarmEncoding
import Testing

struct EventFormatTests {
    static let event = GeofenceEvent(
        kind: .arrive,
        reminder: Reminder(id: "parcel", title: "Pick up the \"big\" parcel", notes: "Desk\n2", geometry: .circle(center: Coordinate(latitude: 38.7226, longitude: -9.1094), radius: 100)),
        fix: Fix(time: Date(timeIntervalSince1970: 1_795_248_390), coordinate: Coordinate(latitude: 38.72265, longitude: -9.1094)),
        distance: 5.5649)

    @Test func textLine() {
        #expect(EventFormat.text.line(for: .crossing(Self.event))
            == "2026-11-21T08:06:30Z  arrive  parcel  \"Pick up the \\\"big\\\" parcel\"  6 m")
    }

    @Test func jsonLine() {
        #expect(EventFormat.json.line(for: .crossing(Self.event)) == #"{"time":"2026-11-21T08:06:30Z","event":"arrive","reminder":"parcel","title":"Pick up the \"big\" parcel","lat":38.72265,"lon":-9.1094,"distance_m":5.6,"notes":"Desk\n2"}"#)
    }

    /// C1 controls, line separators and bidi controls are escaped in both formats: in the text
    /// log they could start a line or reorder it; in JSON they are legal but trip up readers.
    @Test func unsafeCharactersInTitlesAreEscaped() {
        var event = Self.event
        event.reminder.title = "a\u{1B}[31mb\u{85}c\u{2028}d\u{202E}e"
        #expect(EventFormat.text.line(for: .crossing(event)).contains(#""a\u001b[31mb\u0085c\u2028d\u202ee""#))
        #expect(EventFormat.json.line(for: .crossing(event)).contains(#""title":"a\u001b[31mb\u0085c\u2028d\u202ee""#))
    }

    /// An approach's distance is to the edge, and its time to arrival follows.
    @Test func anApproachLineSaysItsTimeToArrival() {
        var event = Self.event
        event.kind = .approach
        event.distance = 2012.4
        event.proximity = Proximity(distance: 2012.4, direction: .towards, closingSpeed: 13.9, eta: 144.7)
        #expect(EventFormat.text.line(for: .crossing(event))
            == "2026-11-21T08:06:30Z  approach  parcel  \"Pick up the \\\"big\\\" parcel\"  2012 m  in 2 min")
        #expect(EventFormat.json.line(for: .crossing(event)).contains(#""event":"approach""#))
        #expect(EventFormat.json.line(for: .crossing(event)).hasSuffix(#","eta_s":145}"#))
    }

    @Test func untimedFixesAndInitialEvents() {
        var event = Self.event
        event.fix.time = nil
        event.isInitial = true
        #expect(EventFormat.text.line(for: .crossing(event)).hasPrefix("-  arrive"))
        #expect(EventFormat.json.line(for: .crossing(event)).hasPrefix(#"{"time":null,"#))
        #expect(EventFormat.json.line(for: .crossing(event)).hasSuffix(#","initial":true}"#))
    }
}
