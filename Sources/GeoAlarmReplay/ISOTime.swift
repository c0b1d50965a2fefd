import FoundationEssentials
import GeoAlarmCore
import GeoAlarmScanners

/// Reads ISO 8601 / RFC 3339 timestamps as written by gpsd and GPS loggers.
enum ISOTime {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`; a missing zone is taken as UTC, as GPX files mean it.
    static func parse(_ text: Substring) -> Date? {
        var text = text
        return text.withUTF8(parse)
    }

    /// ``parse(_:)-(Substring)`` of UTF-8 `bytes` held in a buffer (a gpsd report's, read
    /// without making a String).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count >= 19, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54 || bytes[10] == 0x20,
              bytes[13] == 0x3A, bytes[16] == 0x3A,
              let year = digits(bytes, 0, 4), let month = digits(bytes, 5, 2), let day = digits(bytes, 8, 2),
              let hour = digits(bytes, 11, 2), let minute = digits(bytes, 14, 2), let second = digits(bytes, 17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            var scale = 0.1
            while index < bytes.count, let digit = digit(bytes[index]) {
                fraction += Double(digit) * scale
                scale /= 10
                index += 1
            }
        }
        var offset = 0
        if index < bytes.count {
            switch bytes[index] {
            case 0x5A, 0x7A:
                index += 1
            case 0x2B, 0x2D:
                guard bytes.count >= index + 6, bytes[index + 3] == 0x3A,
                      let hours = digits(bytes, index + 1, 2), let minutes = digits(bytes, index + 4, 2)
                else { return nil }
                offset = (hours * 3600 + minutes * 60) * (bytes[index] == 0x2D ? -1 : 1)
                index += 6
            default:
                return nil
            }
        }
        guard index == bytes.count else { return nil }
        let days = LocalTime.daysSince1970(year: year, month: month, day: day)
        let seconds = Double(days * 86400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    private static func digit(_ byte: UInt8) -> Int? {
        (0x30...0x39).contains(byte) ? Int(byte - 0x30) : nil
    }

    /// The number the `count` digits from `start` spell (the caller has checked they are
    /// within `bytes`); nil unless all are digits.
    private static func digits(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int? {
        DecimalText.wholeNumber(bytes[start..<(start + count)])
    }
}
