/// Finds where two edges of a set of rings cross, if any, with Shamos and Hoey's sweep: the
/// edges sorted by their first end along the sweep axis, and the edges the sweep line meets
/// kept in order across it, so that each edge is tested only against its neighbours there (the
/// first crossing, if there is one, is between edges that are neighbours at some moment).
///
/// Edges that share a ring corner (one after the other in a ring) and edges that only touch at
/// an end do not cross. The sweep runs along whichever axis the edges are shorter across, so a
/// comb of long teeth keeps few edges on the sweep line at once.
struct CrossingSweep {
    /// A point as (x, y): longitude and latitude, unwrapped.
    typealias Point = (x: Double, y: Double)

    /// Two edges that cross, by ring and by place in it, and where.
    struct Crossing {
        var ring: Int, edge: Int
        var otherRing: Int, otherEdge: Int
        var at: Point
    }

    private let rings: [[Point]]
    /// Every edge as (ring, index of its first point).
    private let edges: [(ring: Int, index: Int)]
    /// Whether x and y are swapped for the sweep.
    private let swapped: Bool

    init(rings: [[Point]]) {
        var edges: [(ring: Int, index: Int)] = []
        var spanX = 0.0, spanY = 0.0
        for (number, ring) in rings.enumerated() {
            for index in ring.indices {
                edges.append((number, index))
                let (a, b) = (ring[index], ring[(index + 1) % ring.count])
                spanX += abs(b.x - a.x)
                spanY += abs(b.y - a.y)
            }
        }
        self.rings = rings
        self.edges = edges
        swapped = spanX > spanY
    }

    /// An edge's ends in sweep coordinates, the first one first along the sweep.
    private func ends(_ edge: Int) -> (Point, Point) {
        let (ring, index) = edges[edge]
        var a = rings[ring][index], b = rings[ring][(index + 1) % rings[ring].count]
        if swapped { (a, b) = ((a.y, a.x), (b.y, b.x)) }
        return (a.x, a.y) <= (b.x, b.y) ? (a, b) : (b, a)
    }

    /// Where the edge is across the sweep line at `x` (its first end's for an edge along it).
    private func height(_ edge: Int, at x: Double) -> Double {
        let (a, b) = ends(edge)
        guard b.x != a.x else { return a.y }
        return a.y + (x - a.x) * (b.y - a.y) / (b.x - a.x)
    }

    /// Whether `edge` lies below `other` on the sweep line at `x`; a tie is decided by slope,
    /// then by number, so that the order is total.
    private func below(_ edge: Int, _ other: Int, at x: Double) -> Bool {
        let (h1, h2) = (height(edge, at: x), height(other, at: x))
        if h1 != h2 { return h1 < h2 }
        let (s1, s2) = (slope(edge), slope(other))
        if s1 != s2 { return s1 < s2 }
        return edge < other
    }

    private func slope(_ edge: Int) -> Double {
        let (a, b) = ends(edge)
        return b.x == a.x ? .infinity : (b.y - a.y) / (b.x - a.x)
    }

    /// Whether two edges follow each other in one ring (they share a corner by construction).
    private func consecutive(_ edge: Int, _ other: Int) -> Bool {
        let (first, second) = (edges[edge], edges[other])
        guard first.ring == second.ring else { return false }
        let count = rings[first.ring].count
        let apart = abs(first.index - second.index)
        return apart == 1 || apart == count - 1
    }

    /// The first crossing the sweep meets, or nil when no two edges cross.
    func firstCrossing() -> Crossing? {
        // Each edge comes onto the sweep line at its first end and leaves it at its last.
        var events: [(x: Double, y: Double, leaving: Bool, edge: Int)] = []
        events.reserveCapacity(edges.count * 2)
        for edge in edges.indices {
            let (a, b) = ends(edge)
            events.append((a.x, a.y, false, edge))
            events.append((b.x, b.y, true, edge))
        }
        events.sort { ($0.x, $0.y, $0.leaving ? 1 : 0, $0.edge) < ($1.x, $1.y, $1.leaving ? 1 : 0, $1.edge) }
        var line: [Int] = []
        line.reserveCapacity(64)
        for event in events {
            if event.leaving {
                guard let place = line.firstIndex(of: event.edge) else { continue }
                line.remove(at: place)
                if place > 0, place < line.count, let crossing = test(line[place - 1], line[place]) { return crossing }
            } else {
                var low = 0, high = line.count
                while low < high {
                    let middle = (low + high) / 2
                    if below(line[middle], event.edge, at: event.x) { low = middle + 1 } else { high = middle }
                }
                line.insert(event.edge, at: low)
                if low > 0, let crossing = test(line[low - 1], event.edge) { return crossing }
                if low + 1 < line.count, let crossing = test(event.edge, line[low + 1]) { return crossing }
            }
        }
        return nil
    }

    /// Where two edges cross at a point inside both, unless they are consecutive in a ring.
    private func test(_ edge: Int, _ other: Int) -> Crossing? {
        guard !consecutive(edge, other) else { return nil }
        let (first, second) = (edges[edge], edges[other])
        let ring = rings[first.ring], otherRing = rings[second.ring]
        let (a, b) = (ring[first.index], ring[(first.index + 1) % ring.count])
        let (c, d) = (otherRing[second.index], otherRing[(second.index + 1) % otherRing.count])
        func side(_ p: Point, _ q: Point, _ r: Point) -> Double { (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x) }
        let (d1, d2, d3, d4) = (side(c, d, a), side(c, d, b), side(a, b, c), side(a, b, d))
        guard ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) else { return nil }
        let (abx, aby) = (b.x - a.x, b.y - a.y), (cdx, cdy) = (d.x - c.x, d.y - c.y)
        let t = ((c.x - a.x) * cdy - (c.y - a.y) * cdx) / (abx * cdy - aby * cdx)
        return Crossing(ring: first.ring, edge: first.index, otherRing: second.ring, otherEdge: second.index,
                        at: (a.x + t * abx, a.y + t * aby))
    }
}
