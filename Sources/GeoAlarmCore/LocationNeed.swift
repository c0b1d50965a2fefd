import FoundationEssentials

/// What the engine needs of a source that can be told how often to report (GeoClue): how far
/// the device may move from its last fix before a new one could change anything, and the size
/// of the smallest fence near it, whose sides a coarser location cannot tell apart.
///
/// A phone's GPS costs battery at every fix: far from every fence a location every kilometre
/// does, at Wi-Fi's accuracy; near a small one, every fix, from the receiver.
public struct LocationNeed: Sendable, Equatable {
    /// Metres: no fence's side, margin or approach ring is nearer than this (less the fix's
    /// error). 0 asks for every fix.
    public var distance: Double
    /// Metres: the radius of the smallest fence within ``window`` (the window itself when none
    /// is), the accuracy beyond which fixes cannot place the device on either side of it.
    public var smallestNearRadius: Double

    /// How far around the fix fences are looked for, and the most ``distance`` asks for.
    public static let window = 1000.0
    /// The most fences looked at: more than this near the fix asks for every fix.
    public static let mostFences = 4096

    public init(distance: Double, smallestNearRadius: Double) {
        self.distance = distance
        self.smallestNearRadius = smallestNearRadius
    }
}

extension GeofenceEngine {
    /// What the engine needs after `fix` (see ``LocationNeed``): the distance to the nearest line
    /// of any fence within ``LocationNeed/window`` where something could change (its edge, the
    /// edge of its margin, its approach ring), less the fix's error; 0 near a fence that waits
    /// for fixes to settle (its first side, or the confirmations of a change, which fixes
    /// anywhere give), near one with a `dwell` (which only a later fix can confirm, standing
    /// still), or among more than ``LocationNeed/mostFences``.
    public func locationNeed(at fix: Fix) -> LocationNeed {
        let window = LocationNeed.window
        let box = FenceGeometry.circle(center: fix.coordinate, radius: window).boundingBox(margin: 0)
        let (near, complete) = settledFences(in: box, limit: LocationNeed.mostFences)
        var gap = window
        var smallest = window
        if !complete || near.contains(where: { !$0.isSettled }) { gap = 0 }
        let origin = Haversine.Origin(fix.coordinate)
        for (reminder, _) in near where reminder.isEnabled {
            let beyondEdge: Double
            switch reminder.geometry {
            case .circle(let center, let radius):
                beyondEdge = origin.distance(to: center) - radius
                smallest = min(smallest, radius)
            case .area(let area):
                var tested = 0
                let edge = area.distanceToEdge(from: origin, tested: &tested)
                beyondEdge = area.contains(fix.coordinate, tested: &tested) ? -edge : edge
                smallest = min(smallest, reminder.geometry.circumradius)
            }
            if reminder.dwell > 0, beyondEdge <= reminder.hysteresis { gap = 0 }
            let lines = [0, reminder.hysteresis] + (reminder.approach.within.map { [$0] } ?? [])
            for line in lines { gap = min(gap, abs(beyondEdge - line)) }
        }
        let error = fix.horizontalError ?? 0
        return LocationNeed(distance: max(0, gap - error), smallestNearRadius: smallest)
    }
}
