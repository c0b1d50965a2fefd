import Foundation
import GeoAlarmCore

/// A made-up journey as an NMEA 0183 log, for routes no capture has: one GGA and one RMC a
/// second, the RMC with the speed and course a receiver reports.
public enum NMEADrive {
    /// Where the journey is at one second.
    public struct Point: Sendable {
        public var coordinate: Coordinate
        /// Metres per second, and degrees clockwise from north.
        public var speed: Double
        public var course: Double

        public init(coordinate: Coordinate, speed: Double, course: Double) {
            self.coordinate = coordinate
            self.speed = speed
            self.course = course
        }
    }

    /// The point `north` and `east` metres from `origin` (flat: fine over tens of kilometres).
    public static func point(_ origin: Coordinate, north: Double, east: Double = 0) -> Coordinate {
        let metresPerDegree = Haversine.earthRadius * .pi / 180
        return Coordinate(
            latitude: origin.latitude + north / metresPerDegree,
            longitude: origin.longitude + east / (metresPerDegree * cos(origin.latitude * .pi / 180)))
    }

    /// Parked `parked` seconds `distance` metres south of `place`, then north at `speed` (m/s)
    /// to its centre and stopped there: `seconds` fixes in all, each up to 3 m off, the speed
    /// and course a receiver reports with them.
    public static func straightIn(
        to place: Coordinate, from distance: Double, speed: Double, parked: Int = 30, seconds: Int, seed: UInt64 = 7
    ) -> [Point] {
        var random = SplitMix(seed: seed)
        return (0..<seconds).map { second in
            let driven = Double(max(0, second - parked)) * speed
            let moving = second >= parked && driven < distance
            let north = -distance + min(distance, driven)
            return Point(
                coordinate: point(place, north: north + random.double(in: -3...3), east: random.double(in: -3...3)),
                speed: moving ? speed + random.double(in: -0.3...0.3) : 0,
                course: moving ? (360 + random.double(in: -2...2)).truncatingRemainder(dividingBy: 360) : 0)
        }
    }

    /// The log of `points`, the first at `start` (UTC) and one a second after it.
    public static func log(_ points: [Point], start: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var text = ""
        for (second, point) in points.enumerated() {
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: start.addingTimeInterval(Double(second)))
            let time = String(format: "%02d%02d%02d.00", parts.hour!, parts.minute!, parts.second!)
            let date = String(format: "%02d%02d%02d", parts.day!, parts.month!, parts.year! % 100)
            let latitude = angle(point.coordinate.latitude, degreeDigits: 2, positive: "N", negative: "S")
            let longitude = angle(point.coordinate.longitude, degreeDigits: 3, positive: "E", negative: "W")
            text += sentence("GPGGA,\(time),\(latitude),\(longitude),1,09,0.9,40.0,M,50.0,M,,")
            let knots = String(format: "%.2f", point.speed * 3600 / 1852)
            let course = String(format: "%.1f", point.course)
            text += sentence("GPRMC,\(time),A,\(latitude),\(longitude),\(knots),\(course),\(date),,,A")
        }
        return text
    }

    /// "3842.8347,N": degrees and decimal minutes, then the hemisphere.
    private static func angle(_ value: Double, degreeDigits: Int, positive: String, negative: String) -> String {
        let degrees = Int(abs(value))
        let minutes = (abs(value) - Double(degrees)) * 60
        return String(format: "%0\(degreeDigits)d%07.4f", degrees, minutes) + "," + (value < 0 ? negative : positive)
    }

    /// `$BODY*CS` and a line end, CS the XOR of the body's bytes.
    private static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0), ^)
        return "$\(body)*\(String(format: "%02X", checksum))\r\n"
    }
}

/// The drive home the approach tests share: parked 30 s 12 km south of home, then home at
/// 50 km/h, under a reminder that speaks 10 minutes and 2 km before.
public enum DriveHome {
    public static let home = Coordinate(latitude: 38.7369, longitude: -9.1427)
    public static let speed = 50 / 3.6
    /// 2026-11-21T08:00:00Z.
    public static let start = Date(timeIntervalSince1970: 1_795_248_000)

    /// The first `seconds` of the drive, as an NMEA log file.
    public static func log(seconds: Int) throws -> String {
        let points = NMEADrive.straightIn(to: home, from: 12_000, speed: speed, seconds: seconds)
        return try Command.temporaryFile(NMEADrive.log(points, start: start), named: "drive-\(seconds).nmea")
    }

    /// A config with the one reminder, `heating`, at home.
    public static func config() throws -> String {
        try Command.temporaryFile("""
            [[reminder]]
            id = "heating"
            title = "Turn the heating on"
            lat = \(home.latitude)
            lon = \(home.longitude)
            radius = "100m"
            approach_eta = "10m"
            approach_within = "2km"

            """)
    }
}
