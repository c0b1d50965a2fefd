import GeoAlarmCore
import GeoAlarmReplay

/// The Point features of a GeoJSON FeatureCollection (RFC 7946): `coordinates` are
/// `[lon, lat]`, `properties.name` (or `title`) names the place and `properties.radius`
/// (metres) sizes it. Features of other geometries are skipped with their line.
///
/// Read with ``JSONScanner`` (GeoAlarmReplay): it knows the line of every feature (which
/// Foundation's JSONSerialization does not tell) and holds one feature at a time, not the file.
enum GeoJSONPoints {
    static func read(_ bytes: [UInt8], defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        var scanner = JSONScanner(bytes[...])
        var list = PlaceList()
        var sawFeatures = false
        do throws(JSONScanner.Failure) {
            try scanner.expect(UInt8(ascii: "{"))
            try scanner.members { scanner, key throws(JSONScanner.Failure) in
                guard key == "features" else { return try scanner.skipValue() }
                sawFeatures = true
                try scanner.expect(UInt8(ascii: "["))
                try scanner.elements { scanner throws(JSONScanner.Failure) in
                    let line = scanner.line
                    add(try scanner.value(), line: line, to: &list, defaultRadius: defaultRadius)
                }
            }
        } catch {
            throw CollectionFileError("line \(error.line): \(error.message)")
        }
        guard sawFeatures else { throw CollectionFileError("has no \"features\" array (is it a FeatureCollection?)") }
        return list
    }

    private static func add(_ feature: JSONValue, line: Int, to list: inout PlaceList, defaultRadius: Double) {
        guard case .object(let members) = feature else { return list.skip(line: line, "a feature must be an object") }
        guard case .object(let geometry)? = members["geometry"] else {
            return list.skip(line: line, "feature without a geometry")
        }
        guard case .string(let type)? = geometry["type"], type == "Point" else {
            return list.skip(line: line, "geometry is not a Point")
        }
        guard case .array(let position)? = geometry["coordinates"], position.count >= 2,
              case .number(let longitude) = position[0], case .number(let latitude) = position[1]
        else { return list.skip(line: line, "a Point needs coordinates [lon, lat]") }
        var name = ""
        var radius: Double?
        if case .object(let properties)? = members["properties"] {
            if case .string(let text)? = properties["name"] ?? properties["title"] { name = text }
            switch properties["radius"] {
            case .number(let metres)?: radius = metres
            case nil, .null?: break
            default: return list.skip(line: line, "properties.radius must be a number of metres")
            }
        }
        list.add(latitude: latitude, longitude: longitude, radius: radius, name: name, line: line, defaultRadius: defaultRadius)
    }
}

