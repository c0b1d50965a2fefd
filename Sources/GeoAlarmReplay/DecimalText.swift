import Foundation

/// Reads decimal numbers from bytes, as the text readers (NMEA, JSON, collection files) need
/// them by the million.
public enum DecimalText {
    /// The number the bytes spell, or nil. A plain "-123.4567" of up to 15 digits is read
    /// directly: the digits as an integer divided by a power of ten, both exact, is the correctly
    /// rounded value, as strtod gives. Anything else (a `+`, exponents, more digits) goes to
    /// strtod, before a sixteenth digit could overflow the integer.
    public static func value(_ bytes: ArraySlice<UInt8>) -> Double? {
        var digits = 0
        var mantissa: Int64 = 0
        var decimals = -1
        var index = bytes.startIndex
        let negative = index < bytes.endIndex && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        while index < bytes.endIndex {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "."), decimals < 0 {
                decimals = 0
            } else if (0x30...0x39).contains(byte), digits < 15 {
                mantissa = mantissa * 10 + Int64(byte - 0x30)
                digits += 1
                if decimals >= 0 { decimals += 1 }
            } else {
                digits = 99
                break
            }
        }
        guard digits > 0, digits <= 15 else { return bytes.isEmpty ? nil : Double(String(decoding: bytes, as: UTF8.self)) }
        let magnitude = Double(mantissa) / powersOfTen[max(decimals, 0)]
        return negative ? -magnitude : magnitude
    }

    private static let powersOfTen: [Double] = (0...15).map { pow(10, Double($0)) }
}
