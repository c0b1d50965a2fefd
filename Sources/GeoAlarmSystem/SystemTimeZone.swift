import FoundationEssentials
import GeoAlarmCore
import Glibc

/// The system's time zone, as every program on the machine reads it: `TZ` when set, else
/// `/etc/localtime`, through the C library's zone database (tzdata), daylight saving included.
public struct SystemTimeZone: TimeZoneRules {
    public init() { tzset() }

    public func secondsAheadOfUTC(at moment: Date) -> Int {
        var seconds = time_t(moment.timeIntervalSince1970.rounded(.down))
        var local = tm()
        guard localtime_r(&seconds, &local) != nil else { return 0 }
        return local.tm_gmtoff
    }
}
