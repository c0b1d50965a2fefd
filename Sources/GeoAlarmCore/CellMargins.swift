import FoundationEssentials

/// How far the fixes may still go before each fence of the current grid cell could come within
/// its reach, or, for one the fix is within, leave it: the engine passes over a fence settled
/// on either side with one comparison while that margin lasts, instead of measuring it again on
/// every fix.
///
/// Each circle measured leaves two thresholds: the distance the fixes had travelled by then
/// plus how far beyond its reach it was, and plus how far within. A lower bound of the distance
/// (trigonometry-free) gives the first only; the haversine gives both. An area leaves the first
/// from a lower bound of the way to its box widened by its reach
/// (``Area/leastTravelToNear(from:margin:)``) or, measured outside it, to its edges
/// (``Area/leastTravelToEdge(from:distance:)``); inside it, the second from the way to its
/// edges (crossing none, the fix stays inside). Travel is summed from
/// fix to fix with ``Haversine/Origin/distanceUpperBound(to:)``, so it is never less than how
/// far the fix has moved since: while it stays below a threshold, the fix is still on the same
/// side of the reach (the triangle inequality). A tracker settled outside would have been fed
/// "outside" there, and one settled inside "inside" or "in the margin" (which holds it
/// inside): neither changes anything. The margins are shaved (by 1e-8 of the distance and a
/// micrometre) more than the haversine's rounding, and each step of travel rounded up by ten
/// nanometres, more than the rounding of its bound (a nanometre or two: latitudes differenced in
/// radians) and of the sum while it stays under ``restartDistance``.
///
/// A "beyond" is kept only while its fence's tracker is settled outside (the engine forgets it,
/// ``forgetBeyond(_:)``, when a fix leaves the tracker otherwise, and starts the cell again
/// when it sets trackers apart from fixes), so that ``isBeyondReach(_:)`` alone says a fence
/// cannot change: the engine passes over it without reading its shape or tracker. Otherwise only
/// geometry is kept: any engine whose fixes follow one another here may use the margins, a
/// tracked device's copy of an engine included.
struct CellMargins: Sendable {
    /// The travel up to which a candidate stays beyond its reach, and within it.
    private struct Thresholds {
        var beyond: Double
        var within: Double
        static let none = Thresholds(beyond: -.infinity, within: -.infinity)
    }

    /// Per candidate of the cell, in the cell's order.
    private var thresholds: [Thresholds] = []
    /// Metres travelled since the cell was entered, or the sum restarted, as an upper bound.
    private var travelled = 0.0
    /// The last fix measured from.
    private var last: Haversine.Origin?
    /// Travel beyond which the sum starts again (every margin measured anew): below it, the
    /// rounding of an addition is a thousandth of a nanometre.
    private static let restartDistance = 100_000.0

    /// Starts the `count` candidates of a new cell, none measured.
    mutating func enter(candidates count: Int) {
        thresholds.removeAll(keepingCapacity: true)
        thresholds.append(contentsOf: repeatElement(.none, count: count))
        travelled = 0
        last = nil
    }

    /// Adds the way from the last fix to `origin`'s, the fix now being looked at (nothing to
    /// add up in a cell without fences).
    mutating func advance(to origin: Haversine.Origin) {
        guard !thresholds.isEmpty else { return }
        if let last {
            travelled += last.distanceUpperBound(to: origin.point) + 1e-8
            if travelled > Self.restartDistance { enter(candidates: thresholds.count) }
        }
        last = origin
    }

    /// Whether candidate `number` of the cell is still certainly beyond its reach.
    func isBeyondReach(_ number: Int) -> Bool {
        thresholds[number].beyond > travelled
    }

    /// Whether the fix is still certainly within the reach of candidate `number` of the cell.
    func isWithinReach(_ number: Int) -> Bool {
        thresholds[number].within > travelled
    }

    /// Keeps how far beyond `reach` candidate `number` is, `distance` being a lower bound of its
    /// distance from the fix (which says nothing of how far within).
    mutating func record(_ number: Int, atLeast distance: Double, reach: Double) {
        thresholds[number] = Thresholds(beyond: travelled + (distance * (1 - 1e-8) - 1e-6 - reach), within: -.infinity)
    }

    /// Drops what was kept of how far beyond its reach candidate `number` is (its tracker is
    /// no longer settled outside).
    mutating func forgetBeyond(_ number: Int) {
        thresholds[number].beyond = -.infinity
    }

    /// Keeps that the fix stays inside candidate `number` (an area) for at least `travel`.
    mutating func record(_ number: Int, insideFor travel: Double) {
        thresholds[number] = Thresholds(beyond: -.infinity, within: travelled + (travel * (1 - 1e-8) - 1e-6))
    }

    /// Keeps how far beyond or within `reach` candidate `number` is, at `distance` (the
    /// haversine) from the fix.
    mutating func record(_ number: Int, measured distance: Double, reach: Double) {
        thresholds[number] = Thresholds(
            beyond: travelled + (distance * (1 - 1e-8) - 1e-6 - reach),
            within: travelled + (reach - distance * (1 + 1e-8) - 1e-6))
    }
}
