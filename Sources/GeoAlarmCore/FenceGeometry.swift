import FoundationEssentials
import RealModule

/// Where a fence is: a circle around a point, or an area (polygons with holes).
///
/// Everything outside the core asks the geometry, never which shape it is, except to print
/// it (a circle's radius, an area's edge count). The engine keeps its own packed copy of each
/// fence for its per-fix loop.
public enum FenceGeometry: Sendable, CustomStringConvertible {
    /// Everything within `radius` metres of `center`.
    case circle(center: Coordinate, radius: Double)
    /// Everything inside the area's rings (and not in a hole).
    case area(Area)

    /// A circle's centre; an area's middle (the centre of its bounding box): where it is listed.
    public var center: Coordinate {
        switch self {
        case .circle(let center, _): center
        case .area(let area): area.center
        }
    }

    /// Whether `point` is inside the fence (on a circle's edge counts as inside).
    public func contains(_ point: Coordinate) -> Bool {
        evidence(at: point, hysteresis: 0) == .inside
    }

    /// Metres from `point` to the fence as events report it: to a circle's centre, or to an
    /// area's nearest edge (0 inside it).
    public func distance(from point: Coordinate) -> Double {
        distance(from: Haversine.Origin(point))
    }

    /// ``distance(from:)`` of many fences from one point, whose trigonometry `origin` did once.
    public func distance(from origin: Haversine.Origin) -> Double {
        switch self {
        case .circle(let center, _):
            return origin.distance(to: center)
        case .area(let area):
            var tested = 0
            return area.distance(from: origin, tested: &tested)
        }
    }

    /// Metres from ``center`` to the fence's farthest point: the radius of the smallest circle
    /// around the centre that holds it (a circle's own radius). For those who know only circles
    /// (OwnTracks' regions).
    public var circumradius: Double {
        switch self {
        case .circle(_, let radius):
            radius
        case .area(let area):
            area.polygons.lazy.joined().joined().map { Haversine.distance(area.center, $0) }.max() ?? 0
        }
    }

    /// What a fix at `point` says of the fence: inside it, outside by more than `hysteresis`
    /// metres, or in the margin between.
    public func evidence(at point: Coordinate, hysteresis: Double) -> FenceEvidence {
        switch self {
        case .circle(let center, let radius):
            let distance = Haversine.distance(point, center)
            return distance <= radius ? .inside : distance > radius + hysteresis ? .outside : .margin
        case .area(let area):
            var tested = 0
            if area.contains(point, tested: &tested) { return .inside }
            return area.distanceToEdge(from: Haversine.Origin(point), tested: &tested) > hysteresis ? .outside : .margin
        }
    }

    /// The box that holds the fence and every point within `margin` metres of it.
    public func boundingBox(margin: Double) -> GeoBox {
        switch self {
        case .circle(let center, let radius):
            GeoBox(south: center.latitude, north: center.latitude, west: center.longitude, east: center.longitude,
                   widenedBy: radius + margin)
        case .area(let area):
            GeoBox(south: area.south, north: area.north, west: area.west, east: area.east, widenedBy: margin)
        }
    }

    /// Text that is equal for equal geometries: a circle's centre and radius, an area's digest.
    public var key: String {
        switch self {
        case .circle(let center, let radius): "\(center.latitude),\(center.longitude);\(radius)"
        case .area(let area): "area:\(area.key)"
        }
    }

    public var description: String {
        switch self {
        case .circle(let center, let radius): "circle of \(radius) m around \(center)"
        case .area(let area): "\(area) around \(area.center)"
        }
    }
}

extension FenceGeometry: Equatable {
    /// Circles by centre and radius; areas by their digest (cheap, where comparing rings is not).
    public static func == (lhs: FenceGeometry, rhs: FenceGeometry) -> Bool {
        switch (lhs, rhs) {
        case (.circle(let a, let r), .circle(let b, let s)): a == b && r == s
        case (.area(let a), .area(let b)): a === b || a.key == b.key
        default: false
        }
    }
}

/// A latitude/longitude box. `west` and `east` may pass ±180 (a box across the antimeridian
/// is not cut in two); a box that reaches a pole, or wider than the earth, holds every longitude.
public struct GeoBox: Sendable, Equatable {
    public var south: Double, north: Double, west: Double, east: Double
    /// Whether the box holds every longitude (it reaches a pole, or wraps the earth).
    public var everyLongitude: Bool

    /// An `east` given west of `west` is read across the antimeridian, as the longitude it is
    /// (`179...-179` is `179...181`, and so is `179...-899`).
    public init(south: Double, north: Double, west: Double, east: Double, everyLongitude: Bool = false) {
        self.south = south
        self.north = north
        self.west = west
        self.east = west + Self.eastward(from: west, to: east)
        self.everyLongitude = everyLongitude || self.east - west >= 360
    }

    /// Degrees east from `west` to `east`: as they are when `east` is not west of `west` (a turn
    /// or more: every longitude), else to `east` as a longitude, across the antimeridian.
    static func eastward(from west: Double, to east: Double) -> Double {
        guard east < west else { return east - west }
        let turned = (east - west).truncatingRemainder(dividingBy: 360)
        return turned < 0 ? turned + 360 : turned
    }

    /// A map's view as its page gives it: latitudes from -90 to 90, south not above north, any
    /// finite longitudes (a map panned round the earth gives them past ±180). A west side east of
    /// the east side is a view across the antimeridian. Nil, with why, for what cannot be a view.
    public static func view(south: Double, north: Double, west: Double, east: Double) -> Result<GeoBox, ViewProblem> {
        guard [south, north, west, east].allSatisfy(\.isFinite) else { return .failure(.notFinite) }
        guard (-90...90).contains(south), (-90...90).contains(north) else { return .failure(.latitudeOutOfRange) }
        guard south <= north else { return .failure(.southAboveNorth) }
        let width = eastward(from: west, to: east)
        // West moved by whole turns into -180..<180; the width kept (a whole turn or more: every longitude).
        let turned = (west + 180).truncatingRemainder(dividingBy: 360)
        let start = (turned < 0 ? turned + 360 : turned) - 180
        guard width.isFinite, width < 360 else { return .success(GeoBox(south: south, north: north, west: -180, east: 180, everyLongitude: true)) }
        return .success(GeoBox(south: south, north: north, west: start, east: start + width))
    }

    /// Why four numbers are not a view (``view(south:north:west:east:)``).
    public enum ViewProblem: Error, Sendable, Equatable, CustomStringConvertible {
        case notFinite, latitudeOutOfRange, southAboveNorth

        public var description: String {
            switch self {
            case .notFinite: "the view's sides are not all finite numbers"
            case .latitudeOutOfRange: "latitudes run from -90 to 90"
            case .southAboveNorth: "the view's south side is north of its north side"
            }
        }
    }

    /// Whether the two boxes share a point (across the antimeridian too).
    public func intersects(_ other: GeoBox) -> Bool {
        guard south <= other.north, other.south <= north else { return false }
        if everyLongitude || other.everyLongitude { return true }
        // The other box moved by whole turns so that its west side is at or east of this one's.
        let otherWest = west + ((other.west - west).truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360)
        let otherEast = otherWest + (other.east - other.west)
        return otherWest <= east || otherEast >= west + 360
    }

    /// The box from `south`…`north`, `west`…`east` grown by `metres` on every side (with a
    /// safety margin of 0.1%, so that it never falls short).
    init(south: Double, north: Double, west: Double, east: Double, widenedBy metres: Double) {
        let spread = Self.degrees(forMetres: metres)
        let (south, north) = (south - spread, north + spread)
        let poleward = max(abs(south), abs(north))
        guard poleward < 89.99, spread < 90 else {
            self.init(south: south, north: north, west: 0, east: 0, everyLongitude: true)
            return
        }
        let widening = spread / Double.cos(poleward * .pi / 180)
        self.init(south: south, north: north, west: west - widening, east: east + widening)
    }

    /// The angle an arc of `metres` on the earth's surface spans, in degrees, with a safety margin.
    static func degrees(forMetres metres: Double) -> Double {
        metres / Haversine.earthRadius * 180 / .pi * 1.001 + 1e-9
    }
}
