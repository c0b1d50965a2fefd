internal import CGPS
import FoundationEssentials
import GeoAlarmCore

/// Turns libgps's decoded TPV into the core's fix, reading NaNs and flags properly.
enum TPVConversion {
    /// The fix in `raw`; its mode tells whether it holds a position.
    static func fix(from raw: geoalarm_gps_fix) -> Fix {
        func value(_ number: Double) -> Double? { number.isFinite ? number : nil }
        let mode = FixMode(rawValue: Int(raw.mode)) ?? .unknown
        let time = raw.has_time != 0
            ? Date(timeIntervalSince1970: Double(raw.time_seconds) + Double(raw.time_nanoseconds) / 1e9) : nil
        let device = withUnsafeBytes(of: raw.device) { buffer in
            String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        }
        return Fix(
            time: time,
            coordinate: Coordinate(latitude: value(raw.latitude) ?? .nan, longitude: value(raw.longitude) ?? .nan),
            mode: mode,
            horizontalError: Fix.horizontalError(eph: value(raw.eph), epx: value(raw.epx), epy: value(raw.epy)),
            speed: value(raw.speed), course: value(raw.track), device: device.isEmpty ? nil : device)
    }
}

/// Decodes lines of gpsd JSON with libgps, into one `gps_data_t` kept from line to line as
/// the live path's `gps_read` does (a new one costs a large zeroed allocation).
public final class TPVDecoder {
    private let data: UnsafeMutablePointer<gps_data_t>

    public init() {
        data = LibGPS.newData()
    }

    deinit {
        data.deallocate()
    }

    /// The fix of a TPV line; nil for any other line.
    public func decode(_ line: String) -> Fix? {
        var bytes = Array(line.utf8CString)
        let status = bytes.withUnsafeMutableBufferPointer { gps_unpack($0.baseAddress, data) }
        guard status == 0, line.withCString(LibGPS.isTPV) else { return nil }
        var raw = geoalarm_gps_fix()
        geoalarm_gps_copy_fix(data, &raw)
        return TPVConversion.fix(from: raw)
    }
}
