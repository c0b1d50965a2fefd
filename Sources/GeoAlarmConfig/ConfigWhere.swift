import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import GeoAlarmTOML

/// Where a reminder is: `lat`/`lon`, a `[places]` name, a `location` text, a GeoJSON `area` or an inline `polygon`.
extension ConfigReader {
    /// Where a reminder is: a point (with the key of the `[places]` entry it came from), or an area (its
    /// `center` is the area's middle).
    mutating func reminderCenter(
        _ table: TOMLTable, context: String, places: NamedPlaces
    ) -> (Coordinate?, String?, Area?) {
        let given = ["lat/lon": table["lat"] != nil || table["lon"] != nil,
                     "place": table["place"] != nil, "location": table["location"] != nil,
                     "area": table["area"] != nil, "polygon": table["polygon"] != nil]
            .filter(\.value).map(\.key).sorted()
        if table["area_feature"] != nil, table["area"] == nil {
            report(in: table, context, "area_feature", "only applies with area = \"FILE.geojson\"")
        }
        guard given.count == 1 else {
            if given.isEmpty {
                report(in: table, context, "location", "missing: give lat and lon, place, location, area or polygon")
            } else {
                report(in: table, context, given.joined(separator: ", "), "give only one of lat/lon, place, location, area or polygon")
            }
            return (nil, nil, nil)
        }
        switch given[0] {
        case "place":
            guard let name = string(table, "place", context: context) else { return (nil, nil, nil) }
            guard let place = places.place(named: name) else {
                let known = places.keys
                var message = "unknown place \"\(name)\""
                if let near = Suggestion.closest(to: name, among: known) {
                    message += " (did you mean \"\(near)\"?)"
                } else if known.isEmpty {
                    message += " (there is no [places] table)"
                }
                report(in: table, context, "place", message)
                return (nil, nil, nil)
            }
            return (place.coordinate, place.key, nil)
        case "location":
            guard let text = string(table, "location", context: context) else { return (nil, nil, nil) }
            return (location(text, at: table["location"]?.keyOffset, context: context, key: "location"), nil, nil)
        case "area":
            let area = areaFromFile(table, context: context)
            return (area?.center, nil, area)
        case "polygon":
            let area = inlinePolygon(table, context: context)
            return (area?.center, nil, area)
        default:
            return (coordinate(table, context: context, required: true), nil, nil)
        }
    }

    /// `polygon = [[lat, lon], ...]`: one ring, closed by itself, no holes.
    mutating func inlinePolygon(_ table: TOMLTable, context: String) -> Area? {
        let shape = "an array of [lat, lon] pairs, such as [[38.71, -9.14], [38.72, -9.14], [38.72, -9.13]]"
        guard let pairs = table["polygon"]?.array else {
            report(in: table, context, "polygon", "must be \(shape)")
            return nil
        }
        var ring: [Coordinate] = []
        for index in pairs.indices {
            let pair = pairs[index].array ?? []
            guard pair.count == 2, let latitude = Self.degrees(pair[0]), let longitude = Self.degrees(pair[1]) else {
                report(at: pairs[index].keyOffset, context, "polygon", "point \(index + 1) is not [lat, lon]: it must be \(shape)")
                return nil
            }
            ring.append(Coordinate(latitude: latitude, longitude: longitude))
        }
        do {
            return try Area(polygons: [[ring]])
        } catch {
            report(in: table, context, "polygon", error.description)
            return nil
        }
    }

    /// A number of degrees written as a float or an integer.
    static func degrees(_ value: TOMLValue) -> Double? {
        value.double ?? value.int.map(Double.init)
    }

    /// `area = "FILE.geojson"` (relative to the config's folder), and `area_feature` to pick
    /// one of several Polygon or MultiPolygon features by its name or id.
    mutating func areaFromFile(_ table: TOMLTable, context: String) -> Area? {
        guard let path = string(table, "area", context: context) else { return nil }
        let wanted = string(table, "area_feature", context: context)
        let resolved = PathParts.resolve(path, besides: file)
        let features: [(feature: GeoJSONPlaces.Feature, area: Result<Area, GeoJSONPlaces.FeatureProblem>)]
        do {
            features = try GeoJSONPlaces.areas(try UserFile.contents(of: resolved, limit: UserFile.collectionLimit))
        } catch let error as CollectionFileError {
            report(in: table, context, "area", "\(resolved): \(error)")
            return nil
        } catch {
            report(in: table, context, "area", "\(resolved): cannot read: \(error)")
            return nil
        }
        let names = features.map { $0.feature.name ?? $0.feature.propertyID ?? $0.feature.id ?? "line \($0.feature.line)" }
        let listed = names.prefix(10).map { "\"\($0)\"" }.joined(separator: ", ") + (names.count > 10 ? "..." : "")
        let chosen: (feature: GeoJSONPlaces.Feature, area: Result<Area, GeoJSONPlaces.FeatureProblem>)
        if let wanted {
            guard let match = features.first(where: { $0.feature.isNamed(wanted) }) else {
                let known = features.isEmpty ? "it has none" : "it has \(listed)"
                report(in: table, context, "area_feature", "no Polygon or MultiPolygon feature named \"\(wanted)\" in \(resolved) (\(known))")
                return nil
            }
            chosen = match
        } else {
            guard features.count == 1 else {
                report(in: table, context, "area", features.isEmpty
                    ? "\(resolved) has no Polygon or MultiPolygon feature"
                    : "\(resolved) has \(features.count) areas: choose one with area_feature (\(listed))")
                return nil
            }
            chosen = features[0]
        }
        switch chosen.area {
        case .success(let area):
            return area
        case .failure(let problem):
            let name = chosen.feature.name.map { " \"\($0)\"" } ?? ""
            report(in: table, context, "area", "\(resolved):\(chosen.feature.line): feature\(name): \(problem.message)")
            return nil
        }
    }
}
