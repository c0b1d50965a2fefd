/// A link to a place on a web map, as a browser's address bar or a phone's Share button copies
/// it: OpenStreetMap, Google Maps, Apple Maps and OsmAnd. Its position is the place's pin where
/// the link has one (OpenStreetMap's marker, Google's place, Apple's `ll`, OsmAnd's `pin`), else
/// the centre of the map it shows.
public enum MapLink {
    /// Why a map link gives no position.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// `maps.app.goo.gl/...`, `osm.org/go/...`: only the site can expand it.
        case shortLink
        /// A search, a route or a map object by name: no coordinates in the link itself.
        case noPosition(site: String)

        public var description: String {
            switch self {
            case .shortLink:
                "a short link, which only its site can expand: open it and copy the address it leads to"
            case .noPosition(let site):
                "a link from \(site) without a position in it: copy the link once the map shows the place (or its coordinates)"
            }
        }
    }

    /// The position `text` links to (its range not checked); nil when `text` is no link to one of
    /// the maps read here.
    public static func read(_ text: String) -> Result<Coordinate, Problem>? {
        guard let link = Parts(text) else { return nil }
        let host = link.host
        if host == "osm.org" || host == "openstreetmap.org" {
            if link.path.hasPrefix("/go/") { return .failure(.shortLink) }
            return found(pair(link.queryValue("mlat"), link.queryValue("mlon")) ?? slashed(link.fragmentValue("map")), site: "OpenStreetMap")
        }
        if host == "osmand.net" {
            let point = link.queryValue("pin").flatMap(ReminderRules.decimalPair)
                ?? pair(link.queryValue("lat"), link.queryValue("lon")) ?? slashed(String(link.fragment))
            return found(point, site: "OsmAnd")
        }
        if host == "maps.apple.com" {
            let point = ["ll", "coordinate", "q", "sll"].lazy.compactMap { link.queryValue($0).flatMap(ReminderRules.decimalPair) }.first
            return found(point, site: "Apple Maps")
        }
        if host == "maps.app.goo.gl" || (host == "goo.gl" && link.path.hasPrefix("/maps")) { return .failure(.shortLink) }
        if isGoogle(host), host.hasPrefix("maps.") || link.path.hasPrefix("/maps") {
            return found(googlePosition(link), site: "Google Maps")
        }
        return nil
    }

    private static func found(_ point: Coordinate?, site: String) -> Result<Coordinate, Problem> {
        point.map { .success($0) } ?? .failure(.noPosition(site: site))
    }

    /// Google's place (`!3dLAT!4dLON` in the path), a position searched for (`query=`, `q=`,
    /// `ll=`, `center=`, a route's `destination=`, `/maps/place/LAT,LON`, `/maps/search/LAT,LON`),
    /// else the map's centre (`/@LAT,LON,17z`).
    private static func googlePosition(_ link: Parts) -> Coordinate? {
        let path = String(link.path)
        if let latitude = path.firstRange(of: "!3d"), let longitude = path[latitude.upperBound...].firstRange(of: "!4d") {
            func number(after index: String.Index) -> Substring { path[index...].prefix { $0 != "!" && $0 != "/" && $0 != "?" } }
            if let point = pair(String(number(after: latitude.upperBound)), String(number(after: longitude.upperBound))) { return point }
        }
        for name in ["query", "q", "ll", "center", "destination"] {
            if let point = link.queryValue(name).flatMap(ReminderRules.decimalPair) { return point }
        }
        let segments = link.path.split(separator: "/")
        if let kind = segments.firstIndex(where: { $0 == "place" || $0 == "search" }), kind + 1 < segments.count,
           let point = ReminderRules.decimalPair(GeoURI.decoded(segments[kind + 1])) {
            return point
        }
        if let view = segments.first(where: { $0.hasPrefix("@") }) {
            let numbers = view.dropFirst().split(separator: ",", omittingEmptySubsequences: false)
            if numbers.count >= 2 { return pair(String(numbers[0]), String(numbers[1])) }
        }
        return nil
    }

    /// `google.com`, `google.pt`, `google.co.uk`, `google.com.br`, with `www.` or `maps.` before it.
    private static func isGoogle(_ host: String) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let name = labels.first == "maps" ? labels.dropFirst() : labels[...]
        guard name.first == "google", (2...3).contains(name.count) else { return false }
        return name.dropFirst().allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isLetter) }
    }

    /// A latitude and a longitude given apart.
    private static func pair(_ latitude: String?, _ longitude: String?) -> Coordinate? {
        guard let latitude = latitude.flatMap(ReminderRules.decimalNumber), let longitude = longitude.flatMap(ReminderRules.decimalNumber)
        else { return nil }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    /// `ZOOM/LAT/LON`, as OpenStreetMap's `#map=` and OsmAnd's fragment write the view.
    private static func slashed(_ text: String?) -> Coordinate? {
        guard let parts = text?.split(separator: "/", omittingEmptySubsequences: false), parts.count == 3 else { return nil }
        return pair(String(parts[1]), String(parts[2]))
    }

    /// An http(s) link cut into its parts: the host (lower case, without `www.`, credentials or
    /// port), the path, the query and the fragment.
    struct Parts {
        var host: String
        var path: Substring
        var query: Substring = ""
        var fragment: Substring = ""

        init?(_ text: String) {
            guard let address = try? NetworkAddress(url: Substring(text)), address.scheme == "http" || address.scheme == "https" else {
                return nil
            }
            path = address.path
            query = address.query ?? ""
            fragment = address.fragment ?? ""
            let host = address.host.lowercased()
            self.host = host.hasPrefix("www.") ? String(host.dropFirst(4)) : host
        }

        /// The value of `name` in the query, decoded.
        func queryValue(_ name: String) -> String? {
            GeoURI.queryValue(name, in: query)
        }

        /// The value of `name` in the fragment (`map=17/38.71/-9.14&layers=N`), decoded.
        func fragmentValue(_ name: String) -> String? {
            GeoURI.queryValue(name, in: fragment)
        }
    }
}
