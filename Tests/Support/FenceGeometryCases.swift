import GeoAlarmCore

/// Tests check which shape a config or a collection file made; the product asks the geometry
/// what it needs instead, and branches on the shape only to print it.
extension FenceGeometry {
    /// A circle's radius; nil for an area.
    public var radius: Double? {
        if case .circle(_, let radius) = self { radius } else { nil }
    }

    /// The area; nil for a circle.
    public var area: Area? {
        if case .area(let area) = self { area } else { nil }
    }
}
