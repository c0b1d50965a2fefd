import Foundation
import GeoAlarmCore

/// A fence and fixes placed by their distance from its centre, for readable engine tests.
enum Scene {
    static let centre = Coordinate(latitude: 38.7226, longitude: -9.1094)

    static func reminder(
        _ id: String = "office", radius: Double = 100, hysteresis: Double = 25, dwell: Double = 0,
        trigger: Trigger = .both, at center: Coordinate = centre
    ) -> Reminder {
        Reminder(id: id, title: id.capitalized, geometry: .circle(center: center, radius: radius), hysteresis: hysteresis,
                 dwell: dwell, trigger: trigger)
    }

    /// A fix `metres` due north of the centre at second `second` of the scene.
    static func fix(_ metres: Double, at second: Double, error: Double? = 5, mode: FixMode = .threeD) -> Fix {
        let latitude = centre.latitude + metres / Haversine.earthRadius * 180 / .pi
        return Fix(
            time: Date(timeIntervalSince1970: 1_800_000_000 + second),
            coordinate: Coordinate(latitude: latitude, longitude: centre.longitude),
            mode: mode, horizontalError: error)
    }

    /// Runs distances (one per second from `start`) through the engine; returns "second:kind:id" for each event.
    static func run(_ engine: inout GeofenceEngine, _ distances: [Double], start: Double = 0) -> [String] {
        var seen: [String] = []
        for (offset, metres) in distances.enumerated() {
            for event in engine.process(fix(metres, at: start + Double(offset))).events {
                seen.append("\(Int(start) + offset):\(event.kind.rawValue):\(event.reminder.id)")
            }
        }
        return seen
    }
}
