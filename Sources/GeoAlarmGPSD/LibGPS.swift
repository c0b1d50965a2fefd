internal import CGPS
import FoundationEssentials

/// The parts of libgps that need no version switch, in Swift: the shim keeps only those that do.
enum LibGPS {
    /// A zeroed `gps_data_t` (large, and of a layout that varies between libgps versions).
    static func newData() -> UnsafeMutablePointer<gps_data_t> {
        let data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        memset(data, 0, MemoryLayout<gps_data_t>.size)
        return data
    }

    /// Starts a JSON watch of every device, or of `device` alone.
    static func watch(_ data: UnsafeMutablePointer<gps_data_t>, device: String?) -> Int32 {
        var flags = UInt32(WATCH_ENABLE | WATCH_JSON)
        guard let device, !device.isEmpty else { return gps_stream(data, flags, nil) }
        flags |= UInt32(WATCH_DEVICE)
        return device.withCString { gps_stream(data, flags, UnsafeMutableRawPointer(mutating: $0)) }
    }

    /// Whether a report's raw JSON is a TPV (the one test every libgps version allows).
    static func isTPV(_ message: UnsafePointer<CChar>) -> Bool {
        strstr(message, "\"class\":\"TPV\"") != nil
    }
}
