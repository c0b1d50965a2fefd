import Foundation
import GeoAlarmCore

/// A named zone as Foundation (ICU's zone data) reads it: the tests' reference for the core's
/// local dates, which the product reads through the C library instead.
public struct FoundationZone: TimeZoneRules {
    public let zone: TimeZone

    /// The zone called `identifier` ("Europe/Lisbon"); a name ICU does not know stops the test.
    public init(_ identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { preconditionFailure("no time zone \(identifier)") }
        self.zone = zone
    }

    public func secondsAheadOfUTC(at moment: Date) -> Int { zone.secondsFromGMT(for: moment) }
}
