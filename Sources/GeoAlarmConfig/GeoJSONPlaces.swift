import GeoAlarmCore
import GeoAlarmScanners

/// The features of a GeoJSON file (RFC 7946) as places: a Point (`coordinates` `[lon, lat]`)
/// is a circle, sized by `properties.radius` (metres); a Polygon or MultiPolygon (rings of
/// `[lon, lat]` that end where they start, the outer ring first, then its holes) is an area.
/// `properties.name` (or `title`) names the place.
///
/// Read with ``JSONScanner``: it knows the line of every feature (which Foundation's
/// JSONSerialization does not tell), and a feature's members are read as they come, in any
/// order, without holding the file as values.
enum GeoJSONPlaces {
    /// A `[[collection]]` file: a FeatureCollection whose Point and (Multi)Polygon features are
    /// places; other features, and bad geometry, are skipped with their line.
    static func read(_ bytes: [UInt8], defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        var list = PlaceList()
        try features(bytes, requireCollection: true) { feature in
            switch feature.place() {
            case .failure(let problem): list.skip(line: feature.line, problem.message)
            case .success(.point(let latitude, let longitude)):
                guard !feature.radiusIsNotANumber else { return list.skip(line: feature.line, Problem.badRadius.message) }
                list.add(
                    latitude: latitude, longitude: longitude, radius: feature.radius, name: feature.label,
                    line: feature.line, defaultRadius: defaultRadius)
            case .success(.area(let area)):
                list.places.append(CollectionPlace(geometry: .area(area), name: feature.label))
            }
        }
        return list
    }

    /// The area features of a reminder's `area` file (a FeatureCollection, one Feature, or a
    /// bare Polygon or MultiPolygon), each with what names it and its area or what is wrong with it.
    static func areas(_ bytes: [UInt8]) throws(CollectionFileError) -> [(feature: Feature, area: Result<Area, FeatureProblem>)] {
        var found: [(Feature, Result<Area, FeatureProblem>)] = []
        try features(bytes, requireCollection: false) { feature in
            if let geometry = feature.geometry, geometry.isArea { found.append((feature, geometry.area())) }
        }
        return found
    }

    /// Why a feature is not a place, worded for the user.
    struct FeatureProblem: Error, ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
        var message: String

        init(stringLiteral message: String) {
            self.message = message
        }

        init(_ message: String) {
            self.message = message
        }
    }

    /// Messages for features that are not places.
    enum Problem {
        static let notAnObject: FeatureProblem = "a feature must be an object"
        static let noGeometry: FeatureProblem = "feature without a geometry"
        static let unsupported: FeatureProblem = "geometry is not a Point, Polygon or MultiPolygon"
        static let noPosition: FeatureProblem = "a Point needs coordinates [lon, lat]"
        static let badRadius: FeatureProblem = "properties.radius must be a number of metres or a length such as \"50 m\""
    }

    /// What a feature is as a place.
    enum Place {
        case point(latitude: Double, longitude: Double)
        case area(Area)
    }

    /// Calls `body` with every feature of the file, in order.
    private static func features(
        _ bytes: [UInt8], requireCollection: Bool, _ body: (Feature) -> Void
    ) throws(CollectionFileError) {
        var sawFeatures = false
        do throws(JSONScanner.Failure) {
            try JSONScanner.scan(bytes[...]) { scanner throws(JSONScanner.Failure) in
                let top = try Feature(&scanner) { scanner throws(JSONScanner.Failure) in
                    sawFeatures = true
                    try scanner.expect(UInt8(ascii: "["))
                    try scanner.elements { scanner throws(JSONScanner.Failure) in
                        let line = scanner.line
                        body(try Feature(&scanner) ?? Feature(line: line, isObject: false))
                    }
                }
                try scanner.expectEnd()
                // One Feature, or a bare geometry, is a file of one feature.
                if !sawFeatures, !requireCollection, let top { body(top) }
            }
        } catch {
            throw CollectionFileError("line \(error.line): \(error.message)")
        }
        guard sawFeatures || !requireCollection else {
            throw CollectionFileError("has no \"features\" array (is it a FeatureCollection?)")
        }
    }

    /// One feature (or the file's top object): its line, names and geometry.
    struct Feature {
        var line: Int
        var isObject = true
        /// The object's `type`: "Feature", "FeatureCollection", or a geometry's type.
        var type: String?
        var id: String?
        var name: String?
        var title: String?
        var propertyID: String?
        var radius: Double?
        var radiusIsNotANumber = false
        var geometry: Geometry?

        init(line: Int, isObject: Bool) {
            self.line = line
            self.isObject = isObject
        }

        /// Reads an object; `features` is called on a `features` member (a FeatureCollection's).
        /// Nil, having passed over it, when the value is not an object.
        init?(
            _ scanner: inout JSONScanner,
            features: (inout JSONScanner) throws(JSONScanner.Failure) -> Void = { scanner throws(JSONScanner.Failure) in try scanner.skipValue() }
        ) throws(JSONScanner.Failure) {
            var feature = Feature(line: scanner.line, isObject: true)
            var coordinates: Nesting?
            let isObject = try scanner.membersIfObject { scanner, key throws(JSONScanner.Failure) in
                switch key {
                case "type": feature.type = try scanner.stringValue()
                case "id": feature.id = try Self.label(&scanner)
                case "geometry": feature.geometry = try Geometry(&scanner)
                case "coordinates": coordinates = try Nesting(&scanner, depth: 0)
                case "properties": try feature.readProperties(&scanner)
                case "features": try features(&scanner)
                default: try scanner.skipValue()
                }
            }
            guard isObject else { return nil }
            // A bare geometry at the top of a file carries its own type and coordinates.
            if feature.geometry == nil, let type = feature.type, Geometry.isGeometryType(type), let coordinates {
                feature.geometry = Geometry(type: type, coordinates: coordinates)
            }
            self = feature
        }

        /// The name shown for the place: `name`, else `title`, else empty.
        var label: String { name ?? title ?? "" }

        /// Whether `wanted` names this feature: its `name`, `properties.id` or `id`.
        func isNamed(_ wanted: String) -> Bool { [name, propertyID, id].contains(wanted) }

        /// The place this feature describes, or why it is none.
        func place() -> Result<Place, FeatureProblem> {
            guard isObject else { return .failure(Problem.notAnObject) }
            guard let geometry else { return .failure(Problem.noGeometry) }
            return geometry.place()
        }

        private mutating func readProperties(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) {
            var feature = self
            _ = try scanner.membersIfObject { scanner, key throws(JSONScanner.Failure) in
                switch key {
                case "name": feature.name = try scanner.stringValue()
                case "title": feature.title = try scanner.stringValue()
                case "id": feature.propertyID = try Self.label(&scanner)
                case "radius":
                    feature.radius = nil
                    feature.radiusIsNotANumber = false
                    if try scanner.nullValue() { break }
                    // A number of metres, or a length as the config writes one ("50 m", "0.1 mi").
                    if scanner.nextIsString {
                        feature.radius = try scanner.stringValue().flatMap { try? Length.parse($0) }
                    } else {
                        feature.radius = try scanner.numberValue()
                    }
                    feature.radiusIsNotANumber = feature.radius == nil
                default: try scanner.skipValue()
                }
            }
            self = feature
        }

        /// A string, or a number written as text (GeoJSON ids may be either).
        private static func label(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> String? {
            var probe = scanner
            if let value = try probe.numberValue() {
                scanner = probe
                return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
            }
            return try scanner.stringValue()
        }
    }

    /// A feature's `geometry`: its type and the nesting of its coordinates.
    struct Geometry {
        var type: String
        var coordinates: Nesting

        static func isGeometryType(_ type: String) -> Bool {
            ["Point", "Polygon", "MultiPolygon", "LineString", "MultiPoint", "MultiLineString", "GeometryCollection"].contains(type)
        }

        var isArea: Bool { type == "Polygon" || type == "MultiPolygon" }

        init(type: String, coordinates: Nesting) {
            self.type = type
            self.coordinates = coordinates
        }

        /// Nil when the value is not an object.
        init?(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) {
            var type = ""
            var coordinates = Nesting.other
            let isObject = try scanner.membersIfObject { scanner, key throws(JSONScanner.Failure) in
                switch key {
                case "type": type = try scanner.stringValue() ?? ""
                case "coordinates": coordinates = try Nesting(&scanner, depth: 0)
                default: try scanner.skipValue()
                }
            }
            guard isObject else { return nil }
            self.init(type: type, coordinates: coordinates)
        }

        func place() -> Result<Place, FeatureProblem> {
            switch type {
            case "Point":
                guard case .position(let longitude?, let latitude?) = coordinates else { return .failure(Problem.noPosition) }
                return .success(.point(latitude: latitude, longitude: longitude))
            case "Polygon", "MultiPolygon":
                return area().map(Place.area)
            default:
                return .failure(Problem.unsupported)
            }
        }

        /// A Polygon's or MultiPolygon's area, or what is wrong with it.
        func area() -> Result<Area, FeatureProblem> {
            let polygons: [Nesting]
            if type == "Polygon" {
                polygons = [coordinates]
            } else if type == "MultiPolygon", case .list(let list) = coordinates {
                polygons = list
            } else if type == "MultiPolygon" {
                return .failure("a MultiPolygon needs coordinates [[[[lon, lat], ...]]]")
            } else {
                return .failure("geometry is a \(type), not a Polygon or MultiPolygon")
            }
            var rings: [[[Coordinate]]] = []
            for (number, polygon) in polygons.enumerated() {
                switch Self.rings(polygon, polygon: polygons.count > 1 ? number + 1 : nil) {
                case .success(let found): rings.append(found)
                case .failure(let problem): return .failure(problem)
                }
            }
            do {
                return .success(try Area(polygons: rings))
            } catch {
                return .failure(FeatureProblem(error.description))
            }
        }

        /// A polygon's rings as coordinates, each checked to end where it starts.
        private static func rings(_ polygon: Nesting, polygon number: Int?) -> Result<[[Coordinate]], FeatureProblem> {
            let which = number.map { " of polygon \($0)" } ?? ""
            guard case .list(let rings) = polygon, !rings.isEmpty else {
                return .failure("a polygon\(which) needs coordinates [[[lon, lat], ...]]")
            }
            var result: [[Coordinate]] = []
            for (index, ring) in rings.enumerated() {
                let name = (index == 0 ? "the outer ring" : "hole \(index)") + which
                guard case .list(let positions) = ring else { return .failure("\(name) must be an array of [lon, lat]") }
                var points: [Coordinate] = []
                for position in positions {
                    guard case .position(let longitude?, let latitude?) = position else {
                        return .failure("\(name) has a position that is not [lon, lat]")
                    }
                    points.append(Coordinate(latitude: latitude, longitude: longitude))
                }
                guard points.count >= 4 else {
                    return .failure("\(name) has \(DisplayText.counted(points.count, "position")): a ring needs at least 4")
                }
                guard points.first == points.last else {
                    return .failure("\(name) does not end where it starts (a GeoJSON ring repeats its first position last)")
                }
                result.append(points)
            }
            return .success(result)
        }
    }

    /// How `coordinates` nest: a position (an array of numbers: its first two), or a list of
    /// nestings. At most 4 levels (a MultiPolygon's) are read; deeper is `other`.
    enum Nesting {
        case position(Double?, Double?)
        case list([Nesting])
        case other

        init(_ scanner: inout JSONScanner, depth: Int) throws(JSONScanner.Failure) {
            guard scanner.nextIsArray, depth < 4 else {
                try scanner.skipValue()
                self = .other
                return
            }
            var items: [Nesting] = []
            var numbers: (Double?, Double?) = (nil, nil)
            var isPosition = false
            var index = 0
            _ = try scanner.elementsIfArray { scanner throws(JSONScanner.Failure) in
                if index == 0 { isPosition = !scanner.nextIsArray }
                if isPosition {
                    switch index {
                    case 0: numbers.0 = try scanner.numberValue()
                    case 1: numbers.1 = try scanner.numberValue()
                    default: try scanner.skipValue()
                    }
                } else {
                    items.append(try Nesting(&scanner, depth: depth + 1))
                }
                index += 1
            }
            self = isPosition ? .position(numbers.0, numbers.1) : .list(items)
        }
    }
}
