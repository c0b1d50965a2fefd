import FoundationEssentials
import RealModule

/// A point on the WGS84 ellipsoid, in decimal degrees.
public struct Coordinate: Hashable, Sendable, CustomStringConvertible {
    /// Degrees north of the equator, -90 to 90.
    public var latitude: Double
    /// Degrees east of Greenwich, -180 to 180.
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// True when both parts are finite and inside their ranges.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }

    /// "38.722600,-9.109400": six decimals are about 0.1 m.
    public var description: String {
        "\(Self.format(latitude)),\(Self.format(longitude))"
    }

    private static func format(_ degrees: Double) -> String {
        // Only a corrupt value (NaN, or far outside ±180) misses the fixed-point form.
        guard degrees.isFinite, abs(degrees) < 1e9 else { return "\(degrees)" }
        let scaled = (degrees * 1_000_000).rounded()
        let sign = scaled < 0 ? "-" : ""
        let magnitude = Int64(abs(scaled))
        let fraction = String(magnitude % 1_000_000)
        return "\(sign)\(magnitude / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }
}

/// Distances on a sphere of the WGS84 mean radius.
public enum Haversine {
    /// The WGS84 mean earth radius (IUGG R1), in metres.
    public static let earthRadius = 6_371_008.8
    /// Metres in a degree of a great circle: of latitude anywhere, of longitude at the equator.
    static let metresPerDegree = earthRadius * .pi / 180

    /// Great-circle distance in metres between two coordinates.
    ///
    /// The haversine form stays accurate for short distances, across the
    /// antimeridian (longitudes are differenced, never compared) and at the poles.
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        Origin(a).distance(to: b)
    }

    /// A point to measure many distances from, with its share of the trigonometry done once.
    public struct Origin: Sendable {
        /// The point distances are measured from.
        public let point: Coordinate
        private let latitude: Double
        /// The cosine of the point's latitude.
        let cosLatitude: Double
        /// The sine of the latitude's magnitude, for ``distanceLowerBound(to:)``: taken
        /// from the cosine (a square root is cheaper than a sine, and every fix makes an
        /// origin), then rounded up by 2e-8, more than that way's error (at most 1.5e-8, near
        /// the equator), so that the bound it goes into stays a lower one.
        private let sinAbsoluteLatitude: Double

        public init(_ point: Coordinate) {
            self.point = point
            latitude = point.latitude * .pi / 180
            cosLatitude = Double.cos(latitude)
            sinAbsoluteLatitude = ((1 - cosLatitude) * (1 + cosLatitude)).squareRoot() + 2e-8
        }

        /// Great-circle distance in metres to `other`; the same value as ``Haversine/distance(_:_:)``.
        public func distance(to other: Coordinate) -> Double {
            let otherLatitude = other.latitude * .pi / 180
            let sinLat = Double.sin((otherLatitude - latitude) / 2)
            let sinLon = Double.sin((other.longitude - point.longitude) * .pi / 180 / 2)
            let h = sinLat * sinLat + cosLatitude * Double.cos(otherLatitude) * sinLon * sinLon
            return 2 * earthRadius * Double.asin(min(1, h.squareRoot()))
        }

        /// A lower bound of the great-circle distance in metres to `other`, told without
        /// trigonometry: the engine passes over a settled fence that it puts beyond the fence's
        /// reach. A lower bound of the haversine, from sin x ≥ x - x³/6 (so sin² x ≥ x²(1 - x²/3)
        /// for 0 ≤ x ≤ π/2), asin y ≥ y, and for the cosine of `other`'s latitude,
        /// cos(|φ| + Δ) ≥ cos|φ| (1 - Δ²/2) - Δ sin|φ| (never below 0): within half a percent of
        /// the true distance for the ten kilometres around a fix up to 60° of latitude, looser
        /// towards the poles.
        func distanceLowerBound(to other: Coordinate) -> Double {
            let (latitudeApart, longitude) = separation(from: other)
            let otherCosLatitude = max(0, cosLatitude * (1 - latitudeApart * latitudeApart / 2) - latitudeApart * sinAbsoluteLatitude)
            let halfLatitude = latitudeApart / 2
            let halfLongitude = longitude * .pi / 180 / 2
            let h = halfLatitude * halfLatitude * (1 - halfLatitude * halfLatitude / 3)
                + cosLatitude * otherCosLatitude * halfLongitude * halfLongitude * (1 - halfLongitude * halfLongitude / 3)
            return 2 * earthRadius * h.squareRoot()
        }

        /// An upper bound of the great-circle distance in metres to `other`, told without
        /// trigonometry: the length of a way there along this point's parallel, then along the
        /// meridian, which no shortest way exceeds.
        func distanceUpperBound(to other: Coordinate) -> Double {
            let (latitudeApart, longitude) = separation(from: other)
            return earthRadius * (latitudeApart + cosLatitude * longitude * .pi / 180)
        }

        /// How far `other` is from this point in latitude (radians) and in longitude (degrees,
        /// the short way round), for the two bounds.
        private func separation(from other: Coordinate) -> (latitude: Double, longitude: Double) {
            var longitude = abs(other.longitude - point.longitude)
            if longitude > 180 { longitude = 360 - longitude }
            return (abs(other.latitude * .pi / 180 - latitude), longitude)
        }
    }
}

/// Whole metres for messages and tables.
public enum Metres {
    /// `value` rounded to whole metres, or "?" for a value that is not a finite distance
    /// (a time alarm's, or one read from a corrupt state file).
    public static func rounded(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "?" }
        return String(Int64(value.rounded()))
    }

    /// "850 m", "6.2 km", "42 km": a distance as a person says it.
    public static func spoken(_ value: Double) -> String {
        guard value.isFinite, value >= 0, value < 1e15 else { return "?" }
        if value < 1000 { return "\(Int64(value.rounded())) m" }
        if value < 10_000 {
            let tenths = Int64((value / 100).rounded())
            return "\(tenths / 10).\(tenths % 10) km"
        }
        return "\(Int64((value / 1000).rounded())) km"
    }
}
