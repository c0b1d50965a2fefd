/// A `geo:` URI (RFC 5870): how Apple Reminders and RFC 9074 write a task's place
/// (`geo:46.14,8.91;u=100`, Apple escaping the comma: `geo:46.14\,8.91`), and how map apps
/// share one (`geo:38.71,-9.14?z=17`; Android's `geo:0,0?q=38.71,-9.14(Bakery)`, the position
/// in the query).
public struct GeoURI: Sendable, Equatable {
    public var coordinate: Coordinate
    /// `u=`: the uncertainty in metres, when given.
    public var uncertainty: Double?

    public init(coordinate: Coordinate, uncertainty: Double? = nil) {
        self.coordinate = coordinate
        self.uncertainty = uncertainty
    }

    /// Why a URI gives no place.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case notGeo, noLongitude, notNumbers
        /// Read, but off the globe: the numbers as written, for a message naming the one at fault.
        case outOfRange(Coordinate)
        /// `geo:0,0?q=Bakery`: a place shared by its name, with no position.
        case namedOnly
        /// `;crs=` other than WGS 84, the one RFC 5870 defines: its numbers are not latitude and
        /// longitude.
        case otherCoordinateSystem(String)

        public var description: String {
            switch self {
            case .notGeo: "not a geo: URI"
            case .noLongitude: "a geo: URI without a longitude (a server cut it at its comma)"
            case .notNumbers: "a geo: URI whose coordinates are not numbers"
            case .outOfRange: "a geo: URI out of range"
            case .namedOnly: "a geo: URI of a place's name, without its position"
            case .otherCoordinateSystem(let name): "a geo: URI in another coordinate system than WGS 84 (crs=\(name))"
            }
        }
    }

    /// Reads `text`: the scheme in any case, a third coordinate (the altitude) and parameters
    /// other than `u` and `crs` passed over, white space around a number allowed.
    public static func parse(_ text: String) -> Result<GeoURI, Problem> {
        guard text.utf8.count >= 4, text.prefix(4).lowercased() == "geo:" else { return .failure(.notGeo) }
        var body = Substring(text.dropFirst(4).replacing("\\,", with: ","))
        var query: Substring = ""
        if let mark = body.firstIndex(of: "?") { (body, query) = (body[..<mark], body[body.index(after: mark)...]) }
        let parts = body.split(separator: ";", omittingEmptySubsequences: false)
        var point: Coordinate
        switch pair(parts[0]) {
        case .success(let read): point = read
        case .failure(let problem): return .failure(problem)
        }
        if point == Coordinate(latitude: 0, longitude: 0), let shared = queryValue("q", in: query) {
            guard case .success(let read) = pair(Substring(shared.prefix { $0 != "(" })) else { return .failure(.namedOnly) }
            point = read
        }
        var uncertainty: Double?
        for parameter in parts.dropFirst() {
            let named = parameter.split(separator: "=", maxSplits: 1)
            guard named.count == 2 else { continue }
            switch named[0].lowercased() {
            case "u":
                guard let metres = ReminderRules.decimalNumber(named[1]), metres >= 0 else { return .failure(.notNumbers) }
                uncertainty = metres
            case "crs" where named[1].lowercased() != "wgs84":
                return .failure(.otherCoordinateSystem(String(named[1].prefix(40))))
            default:
                continue
            }
        }
        guard point.isValid else { return .failure(.outOfRange(point)) }
        return .success(GeoURI(coordinate: point, uncertainty: uncertainty))
    }

    /// "LAT,LON" or "LAT,LON,ALT"; the ranges are not checked.
    private static func pair(_ text: Substring) -> Result<Coordinate, Problem> {
        let coordinates = text.split(separator: ",", omittingEmptySubsequences: false)
        guard coordinates.count >= 2 else { return .failure(ReminderRules.decimalNumber(coordinates[0]) == nil ? .notNumbers : .noLongitude) }
        guard coordinates.count <= 3, let latitude = ReminderRules.decimalNumber(coordinates[0]), let longitude = ReminderRules.decimalNumber(coordinates[1]) else {
            return .failure(.notNumbers)
        }
        return .success(Coordinate(latitude: latitude, longitude: longitude))
    }

    /// The value of `name` in a URI's query (`q=38.7%2C-9.1&z=17`), its %-escapes and `+` read.
    static func queryValue(_ name: String, in query: Substring) -> String? {
        guard let pair = query.split(separator: "&").first(where: { $0.hasPrefix(name + "=") }) else { return nil }
        return decoded(pair.dropFirst(name.count + 1))
    }

    /// `text` with its %-escapes and `+` (a space) read.
    static func decoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var rest = text.utf8[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "%"), rest.count >= 2,
               let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                rest = rest.dropFirst(2)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `geo:LAT\,LON`, six decimals, as Apple writes it (the comma escaped, no `u=`: its radius
    /// is a parameter of its own).
    public var appleText: String {
        "geo:" + coordinate.description.replacing(",", with: "\\,")
    }

    /// `geo:LAT,LON` (with `;u=METRES` when given), six decimals.
    public var text: String {
        "geo:\(coordinate)" + (uncertainty.map { ";u=\(ReminderRules.plain($0))" } ?? "")
    }
}
