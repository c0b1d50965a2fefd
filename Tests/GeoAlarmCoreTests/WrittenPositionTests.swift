import Foundation
import GeoAlarmCore
import PropertyBased
import Testing

/// Positions as people copy them from maps and pages: every form reads as the same point, and
/// a form that looks like a position but is not one is refused with why.
struct WrittenPositionTests {
    static let bakery = Coordinate(latitude: 38.7105, longitude: -9.1366)

    @Test(arguments: [
        "38.7105,-9.1366", "38.7105, -9.1366", " 38.7105 , -9.1366 ", "38.7105 -9.1366", "38.7105,-9.1366,45",
        "geo:38.7105,-9.1366", "GEO:38.7105,-9.1366;u=35", "geo:38.7105,-9.1366?z=17", "geo:38.7105,-9.1366;crs=wgs84;u=5?z=17",
        // Android's share of a place: the point is in q.
        "geo:0,0?q=38.7105,-9.1366(Bakery)", "geo:0,0?q=38.7105%2C-9.1366", "geo:0,0?z=3&q=38.7105,+-9.1366",
        // Apple's, copied out of a task: the comma escaped as iCalendar writes it.
        "geo:38.7105\\,-9.1366",
        // Google Maps' and Apple Maps' copies, Wikipedia's typography, geocaching's DDM.
        #"38°42'37.8"N 9°08'11.76"W"#, "38.7105° N, 9.1366° W", "38.7105N, 9.1366W", "38.7105n 9.1366w",
        "38°42′37.8″N 9°08′11.76″W", "38°42'37.8'' N, 9°08'11.76'' W", "N 38° 42.630' W 9° 08.196'", "N 38° 42.630 W 009° 08.196",
        "N38.7105 W9.1366", "9.1366° W, 38.7105° N", #"38°42'37.8", -9°08'11.76""#, "38.7105°, -9.1366°", "38º 42' 37.8\" N 9º 8' 11.76\" W",
        // Links copied from web maps: the place's pin wins over the map's centre (38.7, -9.1 here).
        "https://www.openstreetmap.org/#map=17/38.7105/-9.1366", "http://openstreetmap.org/?mlat=38.7105&mlon=-9.1366#map=17/38.7/-9.1",
        "https://www.openstreetmap.org/?mlat=38.7105&mlon=-9.1366&zoom=17&layers=M",
        "https://www.google.com/maps/@38.7105,-9.1366,17z", "https://maps.google.com/?q=38.7105,-9.1366",
        "https://www.google.pt/maps/place/Padaria/@38.7,-9.1,17z/data=!3m1!4b1!4m6!3m5!1s0xd19:0x4!8m2!3d38.7105!4d-9.1366!16s%2Fg",
        "https://www.google.com/maps/search/?api=1&query=38.7105%2C-9.1366", "https://www.google.co.uk/maps/place/38.7105+-9.1366/@38.7,-9.1,15z",
        "HTTPS://WWW.GOOGLE.COM/maps?ll=38.7105,-9.1366&z=17", "https://www.google.com/maps/dir/?api=1&destination=38.7105%2C-9.1366",
        "https://maps.apple.com/?ll=38.7105,-9.1366&q=Bakery", "https://maps.apple.com/place?coordinate=38.7105%2C-9.1366&name=Bakery",
        "https://maps.apple.com/?q=38.7105,-9.1366", "https://osmand.net/map?pin=38.7105,-9.1366#17/38.7/-9.1",
        "https://osmand.net/go?lat=38.7105&lon=-9.1366&z=16", "https://osmand.net/map#17/38.7105/-9.1366",
    ])
    func everyFormReadsAsTheSamePoint(text: String) throws {
        let point = try ReminderRules.parseLocation(text).get()
        #expect(abs(point.latitude - Self.bakery.latitude) < 1e-9 && abs(point.longitude - Self.bakery.longitude) < 1e-9, "\(point)")
    }

    /// The URI as task lists write it: Apple's escaped comma, the uncertainty, and each way a
    /// URI gives no place told apart (a latitude alone is a value a server cut at its comma).
    @Test func geoURIsAsTaskListsWriteThem() throws {
        #expect(try GeoURI.parse("geo:46.141813\\,8.917549").get() == GeoURI(coordinate: Coordinate(latitude: 46.141813, longitude: 8.917549)))
        #expect(try GeoURI.parse("geo:1,2,30;crs=wgs84;u=12.5").get().uncertainty == 12.5)
        #expect(try GeoURI.parse("geo:-33.4489,-70.6693").get().coordinate == Coordinate(latitude: -33.4489, longitude: -70.6693),
                "south and west of zero")
        #expect(GeoURI.parse("geo:46.141813") == .failure(.noLongitude), "a server cut it at its comma: never longitude 0")
        #expect(GeoURI.parse("geo:91,0") == .failure(.outOfRange(Coordinate(latitude: 91, longitude: 0))))
        #expect(GeoURI.parse("geo:a,b") == .failure(.notNumbers))
        #expect(GeoURI.parse("geo:abc") == .failure(.notNumbers), "a word is not a cut latitude")
        #expect(GeoURI.parse("geo:1,2;u=-1") == .failure(.notNumbers))
        #expect(GeoURI.parse("http://x") == .failure(.notGeo))
        #expect(try GeoURI.parse("geo:0,0?q=46.1,8.9(Bakery)").get().coordinate == Coordinate(latitude: 46.1, longitude: 8.9))
        #expect(GeoURI.parse("geo:0,0?q=Bakery") == .failure(.namedOnly))
        #expect(GeoURI.parse("geo:1,2;CRS=WGS84").map(\.coordinate) == .success(Coordinate(latitude: 1, longitude: 2)))
        #expect(GeoURI.parse("geo:4500000,500000;crs=EPSG:32633") == .failure(.otherCoordinateSystem("EPSG:32633")),
                "metres of a projection are no latitude")
        #expect(GeoURI(coordinate: Coordinate(latitude: 46.1, longitude: 8.9), uncertainty: 100).text == "geo:46.100000,8.900000;u=100")
    }

    @Test(arguments: [
        ("north", "\"north\" is not a position"),
        ("38.7105", "\"38.7105\" is not a position"),
        ("geo:0,0?q=Bakery+Lisbon", "\"geo:0,0?q=Bakery+Lisbon\" is a geo: URI of a place's name, without its position"),
        ("geo:38.7105", "is a geo: URI without a longitude"),
        ("geo:4500000,500000;crs=EPSG:32633", "is a geo: URI in another coordinate system than WGS 84 (crs=EPSG:32633)"),
        ("38 N 9 N", "is not a position"),
        ("N 38, 42", "is not a position"),
        ("-38.7105° S, 9° W", "is not a position"),
        ("38°N 9°W 12°E", "is not a position"),
        ("38° 42' 10' N 9 W", "latitude has its degrees, minutes and seconds out of order"),
        ("38°75'N 9°W", "latitude has 75 minutes, where 59 is the most"),
        ("38°7'60\"N 9°W", "latitude has 60 seconds, where 59 is the most"),
        ("38.5°30'N 9W", "latitude has a fraction before its last part"),
        ("38°N 9°2\"1'W", "longitude has its degrees, minutes and seconds out of order"),
        ("38°N 9\"W", "longitude has seconds but no degrees"),
        ("38°N 9°1'2\"3W", "longitude has 4 numbers"),
        ("91°N 9°W", "latitude 91 is out of range (-90 to 90)"),
        ("38°N 181°E", "longitude 181 is out of range (-180 to 180)"),
        ("geo:91,0", "latitude 91 is out of range"),
        ("0x26,-0x9", "is not a position"),
        ("nan,1", "is not a position"),
        ("https://maps.app.goo.gl/Xyz123", "is a short link, which only its site can expand"),
        ("https://goo.gl/maps/Xyz123", "is a short link"),
        ("https://osm.org/go/b5crq_", "is a short link"),
        ("https://www.openstreetmap.org/node/21", "is a link from OpenStreetMap without a position in it"),
        ("https://www.google.com/maps/search/bakery+lisbon", "is a link from Google Maps without a position in it"),
        ("https://maps.apple.com/?q=Bakery", "is a link from Apple Maps without a position in it"),
        ("https://maps.apple.com/?ll=95,10", "latitude 95 is out of range"),
        // Another site's link, or one dressed as Google's, is no map link.
        ("https://example.com/maps/@38.7105,-9.1366,17z", "is not a position"),
        ("https://google.com.example.org/maps/@38.7105,-9.1366,17z", "is not a position"),
        ("https://", "is not a position"),
    ])
    func aPositionThatIsNoneSaysWhy(text: String, reason: String) {
        #expect(throws: ReminderRules.LocationError.self) { try ReminderRules.parseLocation(text).get() }
        if case .failure(let error) = ReminderRules.parseLocation(text) {
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    /// Any point written in degrees, minutes and seconds (to a hundredth of a second), or in
    /// degrees and decimal minutes, with its letters in either place and order, reads back
    /// within what the text holds.
    @Test func anyPointInDegreesMinutesAndSecondsReadsBack() async {
        await propertyCheck(
            count: 500, input: Gen.double(in: -90...90), Gen.double(in: -180...180), Gen.int(in: 0...3)
        ) { latitude, longitude, style in
            let north = Self.written(latitude, letters: ("N", "S"), style: style)
            let east = Self.written(longitude, letters: ("E", "W"), style: style)
            let text = style == 3 ? "\(east), \(north)" : "\(north) \(east)"
            let point = try? ReminderRules.parseLocation(text).get()
            #expect(point.map { abs($0.latitude - latitude) < 1e-5 && abs($0.longitude - longitude) < 1e-5 } == true, "\(text)")
        }
    }

    /// A URI geoalarm writes (into a task's VLOCATION) reads back as its point and radius, and so
    /// does Apple's form of it, the comma escaped.
    @Test func aGeoURIWrittenReadsBack() async {
        await propertyCheck(
            count: 500, input: Gen.double(in: -90...90), Gen.double(in: -180...180), Gen.int(in: 1...20_000)
        ) { latitude, longitude, metres in
            let written = GeoURI(coordinate: Coordinate(latitude: latitude, longitude: longitude), uncertainty: Double(metres))
            let read = try? GeoURI.parse(written.text).get()
            #expect(read?.uncertainty == Double(metres), "\(written.text)")
            #expect(read.map { abs($0.coordinate.latitude - latitude) <= 5e-7 && abs($0.coordinate.longitude - longitude) <= 5e-7 } == true,
                    "six decimals: \(written.text)")
            #expect(written.appleText.contains("\\,") && !written.appleText.contains(";"), "\(written.appleText)")
            #expect((try? GeoURI.parse(written.appleText).get().coordinate) == read?.coordinate, "\(written.appleText)")
        }
    }

    /// `angle` in a style: 0 D°M'S.ss"X, 1 X D° M.mmmm', 2 D.dddddd° X, 3 as 0 with typographic marks.
    private static func written(_ angle: Double, letters: (Character, Character), style: Int) -> String {
        let letter = angle < 0 ? letters.1 : letters.0
        let hundredths = Int((abs(angle) * 360_000).rounded())
        let (degrees, minutes, seconds) = (hundredths / 360_000, hundredths / 6_000 % 60, Double(hundredths % 6_000) / 100)
        switch style {
        case 0: return "\(degrees)°\(minutes)'\(String(format: "%.2f", seconds))\"\(letter)"
        case 1:
            let tenThousandths = Int((abs(angle) * 600_000).rounded())
            return "\(letter) \(tenThousandths / 600_000)° \(String(format: "%.4f", Double(tenThousandths % 600_000) / 10_000))'"
        case 2: return "\(String(format: "%.6f", abs(angle)))° \(letter)"
        default: return "\(degrees)°\(minutes)′\(String(format: "%.2f", seconds))″\(letter)"
        }
    }
}
