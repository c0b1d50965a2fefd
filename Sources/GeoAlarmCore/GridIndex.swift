import FoundationEssentials
import RealModule

/// A latitude/longitude grid that finds the fences whose reach may hold a point.
///
/// Design: every fence is filed under each cell its reach's bounding box overlaps (a circle's
/// centre ± radius plus hysteresis; an area's box widened by its hysteresis); a lookup
/// reads the one cell holding the point. A cell is twice the fences' typical reach wide (so a
/// fence lands in about four cells and a cell holds only the fences near it), at least 0.001°
/// (about 110 m). "Typical" is the median reach, or the 90th or 99th percentile or the largest
/// when a smaller one would file more than four cells per fence (plus 10,000): a few large
/// fences among many small ones are filed in many small cells rather than making every cell
/// large. Longitude cells divide 360° exactly, so boxes that cross the
/// antimeridian wrap onto the right cells; a box that reaches a pole covers every longitude.
/// Lookups return a superset of the fences within reach; the caller measures the distance.
/// Only cells that hold a fence are stored (a dictionary keyed by cell number), so the index
/// grows with the fences, not with the area they span.
///
/// Why a grid, and not a geohash/S2 cell index or an R-tree: the fences are circles that are
/// built once per config load and never move, and the question per fix is a single point.
/// A grid answers it with one hash lookup and no tree walk, builds in one pass (an R-tree
/// bulk load sorts, a geohash/S2 cover needs a cell cover per circle), and its antimeridian
/// and pole cases are two explicit rules above rather than hidden in a curve's edge cells.
/// Its weak spot is many fences of very different sizes at once, where no one cell size
/// suits all; the percentile rule above keeps that to the rare large ones.
public struct GridIndex: Sendable {
    private let cellDegrees: Double
    private let longitudeCells: Int
    private let latitudeCells: Int
    /// Each occupied cell's run in `members`: its start in the high 32 bits, its length in the low.
    private var runs: [Int: UInt64] = [:]
    /// Fence positions grouped by cell, each cell's in ascending order.
    private var members: [Int32] = []

    /// Fence positions are packed under their cell number in one 64-bit word while filing: cell
    /// numbers stay below 2^36 (360,000 × 180,000 cells of the smallest size), positions below 2^28.
    private static let positionBits = 28

    /// Files fence `i` of `count` under the cells that `box(i)` touches: the box of its reach
    /// (``FenceGeometry/boundingBox(margin:)`` with its hysteresis). At most 2^28 (268 million) fences.
    public init(count: Int, box: (Int) -> GeoBox) {
        precondition(count < 1 << Self.positionBits, "too many fences for the grid")
        // Boxes are asked for again while filing rather than kept: a million of them would be
        // 40 MB held through the build, for a few trigonometric calls saved.
        let wanted = Self.cellDegrees(forSpans: (0..<count).map { Self.span(of: box($0)) })
        longitudeCells = Int((360 / wanted).rounded(.up))
        cellDegrees = 360 / Double(longitudeCells)
        latitudeCells = Int((180 / cellDegrees).rounded(.up))
        // Filing: (cell, position) pairs packed in one word and sorted, then cut into runs. This
        // reads memory in order, where a dictionary of growing arrays would miss the cache on
        // nearly every entry of a million fences.
        var filed: [UInt64] = []
        filed.reserveCapacity(count * 4)
        var largestCell = 0
        for position in 0..<count {
            forEachCell(covering: box(position)) { cell in
                filed.append(UInt64(cell) << Self.positionBits | UInt64(position))
                largestCell = max(largestCell, cell)
                return true
            }
        }
        Self.sortByCell(&filed, largestCell: largestCell)
        members = filed.map { Int32(truncatingIfNeeded: $0 & (1 << Self.positionBits - 1)) }
        runs.reserveCapacity(count)
        var start = 0
        while start < filed.count {
            let cell = filed[start] >> Self.positionBits
            var end = start + 1
            while end < filed.count, filed[end] >> Self.positionBits == cell { end += 1 }
            runs[Int(cell)] = UInt64(start) << 32 | UInt64(end - start)
            start = end
        }
    }

    /// Positions of the fences that may hold `point`, in ascending order.
    public func candidates(near point: Coordinate) -> ArraySlice<Int32> {
        candidates(inCell: cell(of: point))
    }

    /// The number of the cell that holds `point`: cheap to tell, where reading its fences
    /// (``candidates(inCell:)``) is a hash lookup.
    public func cell(of point: Coordinate) -> Int {
        cellKey(x: column(point.longitude), y: row(point.latitude))
    }

    /// Positions of the fences filed under `cell` (``cell(of:)``), in ascending order.
    public func candidates(inCell cell: Int) -> ArraySlice<Int32> {
        guard let run = runs[cell] else { return [] }
        let start = Int(run >> 32)
        return members[start..<(start + Int(run & 0xFFFF_FFFF))]
    }

    /// Positions of the fences filed under a cell that `box` overlaps (a superset of those whose
    /// own box meets it), each once, in no set order: at most `limit`, and whether that is all
    /// of them. Reads the cells in the box, or every occupied cell when there are fewer of
    /// those (a view of a continent over small places), so a wide view costs no more than the
    /// index's size.
    public func fences(overlapping box: GeoBox, limit: Int) -> (positions: [Int32], complete: Bool) {
        var found = Set<Int32>()
        var positions: [Int32] = []
        /// Adds a cell's fences; false once the limit is passed.
        func take(_ run: UInt64) -> Bool {
            let start = Int(run >> 32)
            for position in members[start..<(start + Int(run & 0xFFFF_FFFF))] where found.insert(position).inserted {
                guard positions.count < limit else { return false }
                positions.append(position)
            }
            return true
        }
        let (rows, columns) = cells(of: box)
        if rows.count * columns.count <= runs.count {
            let complete = forEachCell(covering: box) { cell in runs[cell].map(take) ?? true }
            return (positions, complete)
        } else {
            let wrapped = columns.count >= longitudeCells
            for (cell, run) in runs {
                let (y, x) = cell.quotientAndRemainder(dividingBy: longitudeCells)
                guard rows.contains(y) else { continue }
                // The column moved by whole turns to at or east of the box's west column.
                let turned = columns.lowerBound + ((x - columns.lowerBound) % longitudeCells + longitudeCells) % longitudeCells
                guard wrapped || columns.contains(turned) else { continue }
                if !take(run) { return (positions, false) }
            }
        }
        return (positions, true)
    }

    /// The cell size (degrees) for fences whose boxes span these many degrees (the larger
    /// side): see the design note above.
    private static func cellDegrees(forSpans spans: [Double]) -> Double {
        let sorted = spans.sorted()
        guard let largest = sorted.last else { return minimumCell }
        let budget = 4 * Double(sorted.count) + 10_000
        let percentiles = [0.5, 0.9, 0.99].map { sorted[Int(Double(sorted.count - 1) * $0)] } + [largest]
        let sizes = percentiles.map { min(max($0, minimumCell), 90) }
        for cell in sizes.dropLast() {
            // Cells a fence's bounding box spans, on each axis (ignoring the widening towards the poles).
            let filed = sorted.reduce(0.0) { total, span in
                let side = (span / cell).rounded(.up) + 1
                return total + side * side
            }
            if filed <= budget { return cell }
        }
        return sizes.last!
    }

    /// A box's larger side, in degrees of arc (longitudes scaled at its middle latitude).
    private static func span(of box: GeoBox) -> Double {
        let width = box.everyLongitude ? 360 : (box.east - box.west) * Double.cos(min(abs((box.south + box.north) / 2), 89) * .pi / 180)
        return max(box.north - box.south, width)
    }

    /// The smallest cell, about 110 m: smaller ones would only multiply the cells of each fence.
    private static let minimumCell = 0.001

    /// The row of a latitude; one beyond a pole (or not a number) is the pole's row.
    private func row(_ latitude: Double) -> Int {
        let clamped = latitude.isNaN ? 0 : min(max(latitude, -90), 90)
        return min(max(Int(((clamped + 90) / cellDegrees).rounded(.down)), 0), latitudeCells - 1)
    }

    /// The column of a longitude, any number of turns from the first.
    private func column(_ longitude: Double) -> Int {
        let shifted = longitude + 180
        // A longitude of -180..<180 (every fix's) is its own remainder: no division for it.
        let turned = shifted >= 0 && shifted < 360 ? shifted : longitude.isFinite ? shifted.truncatingRemainder(dividingBy: 360) : 0
        let raw = Int(((turned < 0 ? turned + 360 : turned) / cellDegrees).rounded(.down))
        return min(raw, longitudeCells - 1)
    }

    private func cellKey(x: Int, y: Int) -> Int { y * longitudeCells + x }

    /// The rows and columns of the cells `box` overlaps; columns may pass the last one (to be
    /// wrapped), and are every column for a box that holds every longitude.
    /// A box whose south side is north of its north side has no cells.
    private func cells(of box: GeoBox) -> (rows: Range<Int>, columns: Range<Int>) {
        guard box.south <= box.north else { return (0..<0, 0..<0) }
        var columns = 0..<longitudeCells
        let width = box.east - box.west
        if !box.everyLongitude, width >= 0, width < 360 {
            let west = column(box.west)
            let east = west + Int((width / cellDegrees).rounded(.up)) + 1
            if east - west < longitudeCells { columns = west..<east }
        }
        return (row(box.south)..<(row(box.north) + 1), columns)
    }

    /// Calls `body` with each cell that `box` overlaps, until it returns false; whether it went
    /// through them all.
    @discardableResult
    private func forEachCell(covering box: GeoBox, _ body: (Int) -> Bool) -> Bool {
        let (rows, columns) = cells(of: box)
        for y in rows {
            for x in columns where !body(cellKey(x: ((x % longitudeCells) + longitudeCells) % longitudeCells, y: y)) {
                return false
            }
        }
        return true
    }

    /// Sorts packed words by their cell, keeping the order of words of the same cell: a radix
    /// sort on the cell's bits, 12 at a time (words are filed in position order, so this leaves
    /// them sorted by cell, then position). A comparison sort took a seventh of the agent's start
    /// with a million places.
    private static func sortByCell(_ words: inout [UInt64], largestCell: Int) {
        let digitBits = 12
        let cellBits = Int.bitWidth - largestCell.leadingZeroBitCount
        var spare = [UInt64](repeating: 0, count: words.count)
        var counts = [Int](repeating: 0, count: 1 << digitBits)
        var shift = positionBits
        while shift < positionBits + cellBits {
            counts.withUnsafeMutableBufferPointer { counts in
                for index in counts.indices { counts[index] = 0 }
                words.withUnsafeBufferPointer { source in
                    spare.withUnsafeMutableBufferPointer { target in
                        let mask = UInt64(1 << digitBits - 1)
                        for word in source { counts[Int(word >> UInt64(shift) & mask)] += 1 }
                        var start = 0
                        for digit in counts.indices {
                            (counts[digit], start) = (start, start + counts[digit])
                        }
                        for word in source {
                            let digit = Int(word >> UInt64(shift) & mask)
                            target[counts[digit]] = word
                            counts[digit] += 1
                        }
                    }
                }
            }
            swap(&words, &spare)
            shift += digitBits
        }
    }
}
