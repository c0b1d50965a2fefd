import FoundationEssentials
import RealModule

/// Why a polygon cannot be used as an area, worded for the user.
public enum AreaProblem: Error, Equatable, Sendable, CustomStringConvertible {
    case noPolygon
    /// A ring with fewer than 3 distinct points (`ring` 0 is the outer one; holes follow).
    case tooFewPoints(polygon: Int, ring: Int, count: Int)
    case outOfRange(polygon: Int, ring: Int, Coordinate)
    /// A point beyond ``Area/latitudeLimit``.
    case nearPole(polygon: Int, ring: Int, latitude: Double)
    /// All its points lie on one line.
    case noSurface(polygon: Int, ring: Int)
    case selfCrossing(polygon: Int, ring: Int, near: Coordinate)
    /// Two rings cross: parts of a multipolygon that overlap, or a hole across its ring.
    case ringsCross(polygon: Int, ring: Int, otherPolygon: Int, otherRing: Int, near: Coordinate)
    /// A part lies inside another part (not in one of its holes): parts must not overlap.
    case partInsidePart(polygon: Int, otherPolygon: Int)
    /// A hole outside its polygon's outer ring, or inside another of its holes.
    case holeOutside(polygon: Int, ring: Int)
    /// More points than an area may have.
    case tooManyPoints(count: Int)
    /// Wider than 180° of longitude once unwrapped.
    case tooWide(degrees: Double)
    /// An edge whose step of longitude, as written, is more than 180° but less than 270°: it
    /// could mean the long way as written or the short way across the antimeridian.
    case ambiguousEdge(polygon: Int, ring: Int, from: Double, to: Double)

    public var description: String {
        switch self {
        case .noPolygon: "an area needs at least one polygon"
        case .tooFewPoints(let polygon, let ring, let count):
            "\(Self.name(polygon, ring)) has \(count) distinct points: a ring needs at least 3"
        case .outOfRange(let polygon, let ring, let point):
            "\(Self.name(polygon, ring)) has a point out of range (\(point.latitude), \(point.longitude))"
        case .nearPole(let polygon, let ring, let latitude):
            "\(Self.name(polygon, ring)) reaches latitude \(latitude): areas must lie between \(Int(-Area.latitudeLimit)) and \(Int(Area.latitudeLimit))"
        case .noSurface(let polygon, let ring): "\(Self.name(polygon, ring)) encloses nothing (its points lie on one line)"
        case .selfCrossing(let polygon, let ring, let near): "\(Self.name(polygon, ring)) crosses itself near \(near)"
        case .ringsCross(let polygon, let ring, let otherPolygon, let otherRing, let near):
            "\(Self.name(polygon, ring)) crosses \(Self.name(otherPolygon, otherRing)) near \(near): parts must not overlap, and a hole must lie inside its ring"
        case .partInsidePart(let polygon, let otherPolygon):
            "polygon \(polygon + 1) lies inside polygon \(otherPolygon + 1): parts must not overlap (a part may lie in another's hole)"
        case .holeOutside(let polygon, let ring): "\(Self.name(polygon, ring)) is not inside its outer ring alone"
        case .tooManyPoints(let count): "the area has \(count) points: at most \(Area.mostPoints) are allowed"
        case .tooWide(let degrees): "the area spans \(Int(degrees))° of longitude: at most 180 are allowed"
        case .ambiguousEdge(let polygon, let ring, let from, let to):
            """
            \(Self.name(polygon, ring)) has an edge from longitude \(from) to \(to): \(Int(abs(to - from).rounded()))° as \
            written, \(Int((360 - abs(to - from)).rounded()))° the other way round across the antimeridian; add a point \
            between them, or write longitudes past ±180, to say which
            """
        }
    }

    private static func name(_ polygon: Int, _ ring: Int) -> String {
        let what = ring == 0 ? "the outer ring" : "hole \(ring)"
        return polygon == 0 ? what : "\(what) of polygon \(polygon + 1)"
    }
}

/// A polygon or a multipolygon, holes included, as GeoJSON (RFC 7946) describes one: rings of
/// points joined by edges that are straight in longitude and latitude.
///
/// - **Inside** is even-odd over every ring: a point is inside when a ray from it crosses the
///   rings an odd number of times, so holes (and a polygon's parts) need no special case.
/// - **Longitudes are unwrapped**: each ring is made continuous (a step of more than 270° is
///   taken the short way round the antimeridian; one of 180° to 270° could be meant either way,
///   and is refused), every ring is moved by whole turns next to the first, and a point is
///   compared at the turn nearest the area's middle. An area across the antimeridian, written
///   either way (170 to 190, or 170 to -170), works.
/// - **Near the poles** nothing is allowed: every point must lie within ±``latitudeLimit``
///   degrees, since a ring of longitudes around a pole encloses the pole on the globe but not
///   in longitude and latitude.
/// - **Distance to the edge** is measured in an equirectangular projection centred on the
///   point itself (east-west degrees scaled by the cosine of the point's latitude), in which
///   the edges stay straight. Its relative error is about tan|φ|·d/R (φ the point's latitude,
///   d the distance, R the earth's radius): under 0.03% for 1 km at 60° N, centimetres at the
///   few tens of metres where hysteresis decides.
///
/// Large rings are cut into latitude bands, so a test reads only the edges of the point's band
/// (and, for a distance, of the bands near it). Immutable, so shared freely (a class: a
/// collection place holds one by reference).
public final class Area: Sendable, Equatable, CustomStringConvertible {
    /// Points beyond this latitude, north or south, are refused.
    public static let latitudeLimit = 85.0

    /// The polygons as given: each an outer ring, then its holes; each ring's points in order,
    /// without a closing repeat of the first.
    public let polygons: [[[Coordinate]]]
    /// The middle of its bounding box, longitude within ±180: where it is listed.
    public let center: Coordinate
    /// The bounding box in degrees; `west` and `east` are unwrapped around ``center`` and
    /// may pass ±180.
    public let south: Double, north: Double, west: Double, east: Double
    /// Every edge as four numbers (longitude, latitude of its start, then of its end), longitudes unwrapped.
    private let edges: [Double]
    private let bands: EdgeBands?
    /// A digest of the geometry: equal for equal rings, so that a state confirmed for an area
    /// is kept across a reload only when its rings did not change.
    public let key: String

    /// How many edges all its rings have together.
    public var edgeCount: Int { edges.count / 4 }

    /// The most points an area may have, all rings together: checking a ring and answering a
    /// fix cost time in proportion to its points.
    public static let mostPoints = 200_000

    /// A step of longitude, as written, of at least this many degrees is taken the short way
    /// across the antimeridian (a step of 180° to this is refused as ambiguous).
    static let clearlyAcross = 270.0

    /// Rings with fewer than this many edges are scanned whole, without bands.
    static let bandThreshold = 32

    public static func == (lhs: Area, rhs: Area) -> Bool { lhs === rhs || lhs.polygons == rhs.polygons }

    public var description: String {
        let rings = polygons.reduce(0) { $0 + $1.count }
        let parts = polygons.count == 1 ? DisplayText.counted(rings, "ring") : "\(polygons.count) polygons"
        return "area of \(parts), \(edgeCount) edges"
    }

    /// Checks and prepares the rings. A repeated closing point, and points repeated one after
    /// the other, are dropped.
    public init(polygons given: [[[Coordinate]]]) throws(AreaProblem) {
        var polygons: [[[Coordinate]]] = []
        for (number, rings) in given.enumerated() {
            var kept: [[Coordinate]] = []
            for (ringNumber, ring) in rings.enumerated() {
                var points: [Coordinate] = []
                for point in ring {
                    guard point.isValid else { throw .outOfRange(polygon: number, ring: ringNumber, point) }
                    guard abs(point.latitude) <= Self.latitudeLimit else {
                        throw .nearPole(polygon: number, ring: ringNumber, latitude: point.latitude)
                    }
                    if points.last != point { points.append(point) }
                }
                if points.count > 1, points.first == points.last { points.removeLast() }
                let distinct = Set(points).count
                guard distinct >= 3 else { throw .tooFewPoints(polygon: number, ring: ringNumber, count: distinct) }
                kept.append(points)
            }
            if !kept.isEmpty { polygons.append(kept) }
        }
        guard !polygons.isEmpty else { throw .noPolygon }
        let pointCount = polygons.joined().reduce(0) { $0 + $1.count }
        guard pointCount <= Self.mostPoints else { throw .tooManyPoints(count: pointCount) }
        self.polygons = polygons

        // Unwrap: each ring continuous, then moved by whole turns next to the first ring.
        var unwrapped: [[(longitude: Double, latitude: Double)]] = []
        /// The polygon and ring number of each ring in `unwrapped`.
        var names: [(polygon: Int, ring: Int)] = []
        var anchor: Double?
        for (number, rings) in polygons.enumerated() {
            for (ringNumber, ring) in rings.enumerated() {
                var points: [(longitude: Double, latitude: Double)] = []
                var previous = ring[0].longitude
                for (index, point) in ring.enumerated() {
                    // The step to it from the point before, the ring's last for its first.
                    let before = ring[(index + ring.count - 1) % ring.count].longitude
                    let written = abs(point.longitude - before)
                    if written > 180, written < Self.clearlyAcross {
                        throw .ambiguousEdge(polygon: number, ring: ringNumber, from: before, to: point.longitude)
                    }
                    let longitude = previous + Self.shortestTurn(point.longitude - previous)
                    points.append((longitude, point.latitude))
                    previous = longitude
                }
                let middle = (points.map(\.longitude).min()! + points.map(\.longitude).max()!) / 2
                if let anchor {
                    let shift = (anchor - middle + Self.shortestTurn(middle - anchor)) // whole turns
                    points = points.map { ($0.longitude + shift, $0.latitude) }
                } else {
                    anchor = middle
                }
                unwrapped.append(points)
                names.append((number, ringNumber))
            }
        }
        if let crossing = CrossingSweep(rings: unwrapped.map { $0.map { ($0.longitude, $0.latitude) } }).firstCrossing() {
            let near = Coordinate(latitude: crossing.at.y, longitude: Self.shortestTurn(crossing.at.x))
            let (first, second) = (names[crossing.ring], names[crossing.otherRing])
            if crossing.ring == crossing.otherRing { throw .selfCrossing(polygon: first.polygon, ring: first.ring, near: near) }
            throw .ringsCross(polygon: first.polygon, ring: first.ring, otherPolygon: second.polygon, otherRing: second.ring, near: near)
        }
        // A ring that crosses itself may enclose nothing (a symmetric bow tie): the crossing is said first.
        for (points, name) in zip(unwrapped, names) where abs(Self.shoelace(points)) <= 1e-14 {
            throw .noSurface(polygon: name.polygon, ring: name.ring)
        }
        try Self.checkNesting(unwrapped, names: names)
        let all = unwrapped.joined()
        let west = all.map(\.longitude).min()!, east = all.map(\.longitude).max()!
        guard east - west <= 180 else { throw .tooWide(degrees: east - west) }
        let south = all.map(\.latitude).min()!, north = all.map(\.latitude).max()!
        let middle = (west + east) / 2
        let turn = Self.shortestTurn(middle) - middle
        (self.south, self.north, self.west, self.east) = (south, north, west + turn, east + turn)
        center = Coordinate(latitude: (south + north) / 2, longitude: middle + turn)

        var edges: [Double] = []
        edges.reserveCapacity(all.count * 4)
        for ring in unwrapped {
            for index in ring.indices {
                let start = ring[index], end = ring[(index + 1) % ring.count]
                edges += [start.longitude + turn, start.latitude, end.longitude + turn, end.latitude]
            }
        }
        self.edges = edges
        bands = edges.count / 4 >= Self.bandThreshold ? EdgeBands(edges: edges, south: south, north: north) : nil
        key = Self.digest(polygons)
    }

    /// Whether `point` is inside (holes excluded); `tested` counts the edges looked at.
    public func contains(_ point: Coordinate, tested: inout Int) -> Bool {
        guard point.latitude >= south, point.latitude <= north else { return false }
        let longitude = unwrap(point.longitude)
        guard longitude >= west, longitude <= east else { return false }
        var inside = false
        func cross(_ edge: Int) {
            let (x0, y0, x1, y1) = (edges[edge], edges[edge + 1], edges[edge + 2], edges[edge + 3])
            if (y0 > point.latitude) != (y1 > point.latitude),
               longitude < x0 + (point.latitude - y0) * (x1 - x0) / (y1 - y0) {
                inside.toggle()
            }
        }
        if let bands {
            let band = bands.band(of: point.latitude)
            for edge in bands.edges(in: band) { cross(Int(edge) * 4) }
            tested += bands.count(in: band)
        } else {
            for edge in stride(from: 0, to: edges.count, by: 4) { cross(edge) }
            tested += edges.count / 4
        }
        return inside
    }

    /// Metres from `origin`'s point to the area: 0 inside it, else to its nearest edge.
    public func distance(from origin: Haversine.Origin, tested: inout Int) -> Double {
        contains(origin.point, tested: &tested) ? 0 : distanceToEdge(from: origin, tested: &tested)
    }

    /// Metres from `origin`'s point to the nearest edge (whether the point is inside or not),
    /// scaled east by the cosine of its latitude that `origin` took.
    public func distanceToEdge(from origin: Haversine.Origin, tested: inout Int) -> Double {
        let point = origin.point
        let longitude = unwrap(point.longitude)
        let metresY = Haversine.metresPerDegree
        let metresX = metresY * origin.cosLatitude
        var best = Double.infinity
        func measure(_ edge: Int) {
            let ax = (edges[edge] - longitude) * metresX, ay = (edges[edge + 1] - point.latitude) * metresY
            let bx = (edges[edge + 2] - longitude) * metresX, by = (edges[edge + 3] - point.latitude) * metresY
            let (dx, dy) = (bx - ax, by - ay)
            let length = dx * dx + dy * dy
            let t = length > 0 ? min(max(-(ax * dx + ay * dy) / length, 0), 1) : 0
            let (x, y) = (ax + t * dx, ay + t * dy)
            best = min(best, (x * x + y * y).squareRoot())
        }
        guard let bands else {
            for edge in stride(from: 0, to: edges.count, by: 4) { measure(edge) }
            tested += edges.count / 4
            return best
        }
        // The point's band first, then outwards on both sides while a band could still hold a nearer edge.
        let home = bands.band(of: point.latitude)
        var step = 0
        while true {
            var reachable = false
            for band in step == 0 ? [home] : [home - step, home + step] {
                guard bands.gap(from: point.latitude, to: band) * metresY < best else { continue }
                reachable = true
                for edge in bands.edges(in: band) { measure(Int(edge) * 4) }
                tested += bands.count(in: band)
            }
            if !reachable { break }
            step += 1
        }
        return best
    }

    /// Whether `point` is farther than `margin` metres outside the bounding box: then it is
    /// outside and farther than `margin` from every edge.
    public func isBeyond(_ point: Coordinate, margin: Double) -> Bool {
        let degreesY = Self.degreesNorth(margin)
        if point.latitude < south - degreesY || point.latitude > north + degreesY { return true }
        let degreesX = Self.degreesEast(degreesY, at: max(abs(south), abs(north), abs(point.latitude)) + degreesY)
        let longitude = unwrap(point.longitude)
        return longitude < west - degreesX || longitude > east + degreesX
    }

    /// `margin` metres as the degrees of latitude ``isBeyond(_:margin:)`` widens the box by
    /// (a tenth of a percent more).
    private static func degreesNorth(_ margin: Double) -> Double {
        margin / Haversine.metresPerDegree * 1.001
    }

    /// `degreesNorth` as degrees of longitude at latitude `poleward` (taken as at most 89.9°),
    /// where they are fewest metres: how far ``isBeyond(_:margin:)`` widens the box east and west.
    private static func degreesEast(_ degreesNorth: Double, at poleward: Double) -> Double {
        degreesNorth / Double.cos(min(poleward, 89.9) * .pi / 180)
    }

    /// A lower bound of the metres a device at `origin` must travel before ``isBeyond(_:margin:)``
    /// could say no: 0 where it may already. The engine passes over a settled-outside area while
    /// its fixes have travelled less (``CellMargins``), reading nothing of the area.
    ///
    /// `isBeyond` widens the box by a longitude margin that grows with the point's latitude, but
    /// only up to that of a point `2·degreesY` poleward of the box: any point more poleward than
    /// that is beyond in latitude already. Measured from the box widened that much, which holds
    /// every box `isBeyond` widens, the way there is at least the larger of:
    /// - the latitude to go, times the earth's radius (no way is shorter than its meridian part);
    /// - in longitude, the distance to the great circle of the nearer widened edge's meridian,
    ///   which splits the sphere between the point and the box while the widened box spans less
    ///   than 180°: R·asin(cos φ·sin Δλ) ≥ R·cos φ·(Δλ - Δλ³/6), with Δλ folded to within 90°.
    func leastTravelToNear(from origin: Haversine.Origin, margin: Double) -> Double {
        let point = origin.point
        let degreesY = Self.degreesNorth(margin)
        let latitudeGap = max(south - degreesY - point.latitude, point.latitude - north - degreesY, 0)
        // Padded past any rounding that could put a point's own widening above this one.
        let degreesX = Self.degreesEast(degreesY, at: max(abs(south), abs(north)) + 2 * degreesY) * (1 + 1e-9)
        let (lower, upper) = (west - degreesX, east + degreesX)
        let longitude = unwrap(point.longitude)
        let longitudeGap = max(lower - longitude, longitude - upper, 0)
        guard longitudeGap > 0, upper - lower < 180 else { return latitudeGap * Haversine.metresPerDegree }
        let turn = min(longitudeGap, 180 - longitudeGap) * .pi / 180
        let acrossMeridian = Haversine.earthRadius * origin.cosLatitude * (turn - turn * turn * turn / 6)
        return max(latitudeGap * Haversine.metresPerDegree, acrossMeridian)
    }

    /// A lower bound of the metres a device at `origin`, `distance` from the area's nearest edge
    /// as ``distanceToEdge(from:tested:)`` measures it there, must travel before it could cross
    /// an edge, or be nearer one than `distance` less that travel, as measured from where it is
    /// then: 0 where nothing is told. The engine passes over a settled area while its fixes have
    /// travelled less than this (outside, less its reach) (``CellMargins``).
    ///
    /// In longitude and latitude (longitudes unwrapped), `distanceToEdge` from a point at
    /// latitude φ is the distance to the edges in the flat metric that scales degrees east by
    /// cos φ. Within a travel t < `distance`, every latitude is within t of the point's, so
    /// every such metric is at least the one scaled by c = cos(|φ| + `distance`): a way of
    /// length t on the sphere is at most t long in it, the distance to the edges in it is at
    /// least c / cos φ times `distance`, and so, by the triangle inequality, wherever the device
    /// is, its distance (in its own metric, larger) is at least that less t, and it crossed no
    /// edge on the way there. Nothing is told where the travel could pass a pole, or the
    /// meridian opposite the area's middle, where unwrapped longitudes jump.
    func leastTravelToEdge(from origin: Haversine.Origin, distance: Double) -> Double {
        let point = origin.point
        let farthest = abs(point.latitude) + distance / Haversine.metresPerDegree
        guard farthest < 89.9 else { return 0 }
        let cosFarthest = Double.cos(farthest * .pi / 180)
        let turn = abs(unwrap(point.longitude) - center.longitude) + distance / (cosFarthest * Haversine.metresPerDegree)
        guard turn < 180 else { return 0 }
        return distance * cosFarthest / origin.cosLatitude
    }

    /// `longitude` moved by whole turns to within 180° of the area's middle.
    private func unwrap(_ longitude: Double) -> Double {
        center.longitude + Self.shortestTurn(longitude - center.longitude)
    }

    /// `degrees` moved by whole turns into -180...180: the short way round for a step between
    /// two longitudes, and a longitude in its usual range.
    static func shortestTurn(_ degrees: Double) -> Double {
        if degrees >= -180, degrees <= 180 { return degrees }
        let turned = (degrees + 180).truncatingRemainder(dividingBy: 360)
        return (turned < 0 ? turned + 360 : turned) - 180
    }

    /// Twice the signed surface of a ring in square degrees.
    private static func shoelace(_ ring: [(longitude: Double, latitude: Double)]) -> Double {
        var sum = 0.0
        for index in ring.indices {
            let a = ring[index], b = ring[(index + 1) % ring.count]
            sum += a.longitude * b.latitude - b.longitude * a.latitude
        }
        return sum
    }

    /// Refuses rings that do not cross but nest wrongly: a part inside another part (outside
    /// that part's holes), a hole outside its outer ring or inside another hole. Each ring is
    /// placed by one of its corners, counting the crossings of a ray from it with every other
    /// ring (even-odd per ring), over the edges of its latitude only.
    private static func checkNesting(_ rings: [[(longitude: Double, latitude: Double)]], names: [(polygon: Int, ring: Int)]) throws(AreaProblem) {
        guard rings.count > 1 else { return }
        // Every edge by ring, sorted by its southern end, to find those a latitude meets.
        var spans: [(south: Double, north: Double, ring: Int, index: Int)] = []
        for (number, ring) in rings.enumerated() {
            for index in ring.indices {
                let (a, b) = (ring[index].latitude, ring[(index + 1) % ring.count].latitude)
                spans.append((min(a, b), max(a, b), number, index))
            }
        }
        spans.sort { $0.south < $1.south }
        let longest = spans.map { $0.north - $0.south }.max() ?? 0
        for (number, ring) in rings.enumerated() {
            let corner = ring[0]
            // The rings around the corner: those whose edges a ray east of it crosses an odd number of times.
            var around: Set<Int> = []
            var low = 0, high = spans.count
            while low < high {
                let middle = (low + high) / 2
                if spans[middle].south < corner.latitude - longest { low = middle + 1 } else { high = middle }
            }
            for span in spans[low...] {
                if span.south > corner.latitude { break }
                guard span.ring != number else { continue }
                let edge = rings[span.ring]
                let (a, b) = (edge[span.index], edge[(span.index + 1) % edge.count])
                if (a.latitude > corner.latitude) != (b.latitude > corner.latitude),
                   corner.longitude < a.longitude + (corner.latitude - a.latitude) * (b.longitude - a.longitude) / (b.latitude - a.latitude) {
                    if !around.insert(span.ring).inserted { around.remove(span.ring) }
                }
            }
            let name = names[number]
            if name.ring == 0 {
                // A part inside another part's outer ring must be in one of that part's holes.
                for other in around where names[other].ring == 0 {
                    let holes = around.filter { names[$0].polygon == names[other].polygon && names[$0].ring > 0 }
                    if holes.isEmpty { throw .partInsidePart(polygon: name.polygon, otherPolygon: names[other].polygon) }
                }
            } else {
                let outer = around.contains { names[$0].polygon == name.polygon && names[$0].ring == 0 }
                let inHole = around.contains { names[$0].polygon == name.polygon && names[$0].ring > 0 }
                guard outer, !inHole else { throw .holeOutside(polygon: name.polygon, ring: name.ring) }
            }
        }
    }

    /// FNV-1a over the coordinates' bits and the ring structure: stable from run to run.
    private static func digest(_ polygons: [[[Coordinate]]]) -> String {
        var hash = StableHash()
        for rings in polygons {
            hash.mix(UInt64(rings.count))
            for ring in rings {
                hash.mix(UInt64(ring.count))
                for point in ring {
                    hash.mix(point.latitude.bitPattern)
                    hash.mix(point.longitude.bitPattern)
                }
            }
        }
        return String(hash.value, radix: 16)
    }
}

/// A large area's edges filed by latitude band: an edge is listed in every band its latitudes
/// span, so a point's band holds every edge a horizontal ray from it can cross.
struct EdgeBands: Sendable {
    let south: Double
    let height: Double
    let bandCount: Int
    /// Band `b`'s edges are `members[starts[b]..<starts[b + 1]]` (edge numbers).
    private let starts: [Int32]
    private let members: [Int32]

    init(edges: [Double], south: Double, north: Double) {
        let edgeCount = edges.count / 4
        // Fewer bands while edges spanning many of them would file more than 8 entries an edge
        // (a comb of tall teeth): memory stays linear in the edges whatever the shape.
        var bandCount = max(1, min(edgeCount / 4, 4096))
        while bandCount > 1 {
            let height = max((north - south) / Double(bandCount), 1e-9)
            var entries = 0
            for edge in 0..<edgeCount {
                let (y0, y1) = (edges[edge * 4 + 1], edges[edge * 4 + 3])
                entries += Self.band(of: max(y0, y1), south: south, height: height, count: bandCount)
                    - Self.band(of: min(y0, y1), south: south, height: height, count: bandCount) + 1
            }
            if entries <= 8 * edgeCount { break }
            bandCount /= 2
        }
        let height = max((north - south) / Double(bandCount), 1e-9)
        (self.bandCount, self.south, self.height) = (bandCount, south, height)
        var counts = [Int32](repeating: 0, count: bandCount + 1)
        let finalCount = bandCount
        func span(_ edge: Int) -> ClosedRange<Int> {
            let (y0, y1) = (edges[edge * 4 + 1], edges[edge * 4 + 3])
            return Self.band(of: min(y0, y1), south: south, height: height, count: finalCount)
                ... Self.band(of: max(y0, y1), south: south, height: height, count: finalCount)
        }
        for edge in 0..<edgeCount { for band in span(edge) { counts[band + 1] += 1 } }
        for band in 0..<bandCount { counts[band + 1] += counts[band] }
        starts = counts
        var next = Array(counts.dropLast())
        var members = [Int32](repeating: 0, count: Int(counts[bandCount]))
        for edge in 0..<edgeCount {
            for band in span(edge) {
                members[Int(next[band])] = Int32(edge)
                next[band] += 1
            }
        }
        self.members = members
    }

    private static func band(of latitude: Double, south: Double, height: Double, count: Int) -> Int {
        let raw = ((latitude - south) / height).rounded(.down)
        guard raw.isFinite else { return 0 }
        return Int(min(max(raw, 0), Double(count - 1)))
    }

    /// The band holding `latitude` (the nearest one for a latitude beyond the box).
    func band(of latitude: Double) -> Int { Self.band(of: latitude, south: south, height: height, count: bandCount) }

    func edges(in band: Int) -> ArraySlice<Int32> { members[Int(starts[band])..<Int(starts[band + 1])] }

    func count(in band: Int) -> Int { Int(starts[band + 1] - starts[band]) }

    /// Degrees of latitude from `latitude` to the nearest point of `band` (0 inside it); infinity for no band.
    func gap(from latitude: Double, to band: Int) -> Double {
        guard band >= 0, band < bandCount else { return .infinity }
        let low = south + Double(band) * height, high = low + height
        if latitude < low { return low - latitude }
        if latitude > high { return latitude - high }
        return 0
    }
}
