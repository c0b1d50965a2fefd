import GeoAlarmCore
import GeoAlarmScanners
import GeoAlarmReplay

/// The Point features of a GeoJSON FeatureCollection (RFC 7946): `coordinates` are
/// `[lon, lat]`, `properties.name` (or `title`) names the place and `properties.radius`
/// (metres) sizes it. Features of other geometries are skipped with their line.
///
/// Read with ``JSONScanner`` (GeoAlarmReplay): it knows the line of every feature (which
/// Foundation's JSONSerialization does not tell), and a feature's members are read as they
/// come, in any order, without building the feature or holding the file as values.
enum GeoJSONPoints {
    static func read(_ bytes: [UInt8], defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        var scanner = JSONScanner(bytes[...])
        var list = PlaceList()
        var sawFeatures = false
        do throws(JSONScanner.Failure) {
            try scanner.expect(UInt8(ascii: "{"))
            try scanner.members { scanner, key throws(JSONScanner.Failure) in
                guard case "features" = key else { return try scanner.skipValue() }
                sawFeatures = true
                try scanner.expect(UInt8(ascii: "["))
                try scanner.elements { scanner throws(JSONScanner.Failure) in
                    let line = scanner.line
                    switch try feature(&scanner) {
                    case .failure(let problem): list.skip(line: line, problem.rawValue)
                    case .success(let point):
                        list.add(
                            latitude: point.latitude, longitude: point.longitude, radius: point.radius,
                            name: point.name, line: line, defaultRadius: defaultRadius)
                    }
                }
            }
            try scanner.expectEnd()
        } catch {
            throw CollectionFileError("line \(error.line): \(error.message)")
        }
        guard sawFeatures else { throw CollectionFileError("has no \"features\" array (is it a FeatureCollection?)") }
        return list
    }

    /// Why a feature is not a place; the raw value is the message.
    enum Problem: String, Error {
        case notAnObject = "a feature must be an object"
        case noGeometry = "feature without a geometry"
        case notAPoint = "geometry is not a Point"
        case noPosition = "a Point needs coordinates [lon, lat]"
        case badRadius = "properties.radius must be a number of metres"
    }

    /// A Point feature's place, as written (range checks are ``PlaceList``'s).
    struct Point {
        var latitude: Double
        var longitude: Double
        var radius: Double?
        var name: String
    }

    /// Reads the feature at the scanner, passing over the members a place does not need.
    private static func feature(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> Result<Point, Problem> {
        var geometry: Geometry?
        var properties = Properties()
        let isObject = try scanner.membersIfObject { scanner, key throws(JSONScanner.Failure) in
            switch key {
            case "geometry": geometry = try Geometry(&scanner)
            case "properties": properties = try Properties(&scanner)
            default: try scanner.skipValue()
            }
        }
        guard isObject else { return .failure(.notAnObject) }
        guard let geometry else { return .failure(.noGeometry) }
        guard geometry.isPoint else { return .failure(.notAPoint) }
        guard let longitude = geometry.position.0, let latitude = geometry.position.1 else {
            return .failure(.noPosition)
        }
        guard !properties.radiusIsNotANumber else { return .failure(.badRadius) }
        return .success(Point(
            latitude: latitude, longitude: longitude, radius: properties.radius,
            name: properties.name ?? properties.title ?? ""))
    }

    /// A feature's `geometry`: nil when it is not an object.
    struct Geometry {
        var isPoint = false
        /// The first two numbers of `coordinates` (lon, lat); nil where either is missing or not a number.
        var position: (Double?, Double?) = (nil, nil)

        init?(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) {
            var isPoint = false
            var position: (Double?, Double?) = (nil, nil)
            let isObject = try scanner.membersIfObject { scanner, key throws(JSONScanner.Failure) in
                switch key {
                case "type": isPoint = try scanner.stringValue() == "Point"
                case "coordinates": position = try Self.position(&scanner)
                default: try scanner.skipValue()
                }
            }
            guard isObject else { return nil }
            self.isPoint = isPoint
            self.position = position
        }

        private static func position(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> (Double?, Double?) {
            var numbers: (Double?, Double?) = (nil, nil)
            var index = 0
            _ = try scanner.elementsIfArray { scanner throws(JSONScanner.Failure) in
                switch index {
                case 0: numbers.0 = try scanner.numberValue()
                case 1: numbers.1 = try scanner.numberValue()
                default: try scanner.skipValue()
                }
                index += 1
            }
            return numbers
        }
    }

    /// What a feature's `properties` say of the place (nothing when they are not an object).
    struct Properties {
        var name: String?
        var title: String?
        var radius: Double?
        /// `radius` is there and neither a number nor null.
        var radiusIsNotANumber = false

        init() {}

        init(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) {
            var properties = Properties()
            _ = try scanner.membersIfObject { scanner, key throws(JSONScanner.Failure) in
                switch key {
                case "name": properties.name = try scanner.stringValue()
                case "title": properties.title = try scanner.stringValue()
                case "radius":
                    properties.radius = nil
                    properties.radiusIsNotANumber = false
                    if try scanner.nullValue() { break }
                    properties.radius = try scanner.numberValue()
                    properties.radiusIsNotANumber = properties.radius == nil
                default: try scanner.skipValue()
                }
            }
            self = properties
        }
    }
}
