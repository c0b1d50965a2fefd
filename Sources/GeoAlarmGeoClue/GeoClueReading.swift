import FoundationEssentials
import GeoAlarmCore

/// One location as GeoClue2 gives it (the properties of `org.freedesktop.GeoClue2.Location`),
/// before it is a ``Fix``: the plain values, so that what each sentinel means is tested apart
/// from D-Bus.
public struct GeoClueReading: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    /// Metres; GeoClue 2.6 gives 0 for every NMEA fix (2.7.1 gives the receiver's estimate).
    public var accuracy: Double
    /// Metres above sea level; -Double.greatestFiniteMagnitude when unknown.
    public var altitude: Double
    /// Metres per second; -1 when unknown.
    public var speed: Double
    /// Degrees from north; -1 when unknown.
    public var heading: Double
    /// Seconds and microseconds since 1970 (UTC) when the location was taken; 2.6 gives whole
    /// seconds for NMEA.
    public var seconds: UInt64
    public var microseconds: UInt64

    public init(
        latitude: Double, longitude: Double, accuracy: Double, altitude: Double = -.greatestFiniteMagnitude, speed: Double = -1,
        heading: Double = -1, seconds: UInt64, microseconds: UInt64 = 0
    ) {
        (self.latitude, self.longitude, self.accuracy, self.altitude) = (latitude, longitude, accuracy, altitude)
        (self.speed, self.heading, self.seconds, self.microseconds) = (speed, heading, seconds, microseconds)
    }

    /// The fix it gives: unknown is unknown (an accuracy of 0 or less, a speed or heading below
    /// 0, an altitude of -DBL_MAX are not given, never taken as values); nil, with why, when it
    /// names no place on Earth. The time is its timestamp (nil when 0: no time given).
    public func fix() -> Result<Fix, Unusable> {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else {
            return .failure(Unusable(description: "a location at latitude \(latitude), longitude \(longitude): no place on Earth"))
        }
        let time = seconds == 0 ? nil : Date(timeIntervalSince1970: Double(seconds) + Double(min(microseconds, 999_999)) / 1_000_000)
        let hasAltitude = altitude.isFinite && altitude > -1e300
        return .success(Fix(
            time: time, coordinate: Coordinate(latitude: latitude, longitude: longitude), mode: hasAltitude ? .threeD : .twoD,
            horizontalError: accuracy.isFinite && accuracy > 0 ? accuracy : nil,
            speed: speed.isFinite && speed >= 0 ? speed : nil,
            course: heading.isFinite && heading >= 0 && heading <= 360 ? heading.truncatingRemainder(dividingBy: 360) : nil))
    }

    /// Why a location cannot be used.
    public struct Unusable: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }
}
