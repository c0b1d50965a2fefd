import FoundationEssentials

/// Reads decimal numbers from bytes, as the text readers (NMEA, JSON, collection files) need
/// them by the million.
public enum DecimalText {
    /// The number the bytes spell, or nil. A plain "-123.4567" of up to 15 digits is read
    /// directly: the digits as an integer divided by a power of ten, both exact, is the correctly
    /// rounded value, as strtod gives. Anything else (a `+`, exponents, more digits) goes to
    /// strtod, before a sixteenth digit could overflow the integer.
    public static func value(_ bytes: ArraySlice<UInt8>) -> Double? {
        bytes.withUnsafeBufferPointer(value)
    }

    /// ``value(_:)-(ArraySlice<UInt8>)`` of bytes a reader holds in a buffer.
    public static func value(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        plainDecimal(bytes) ?? (bytes.isEmpty ? nil : Double(String(decoding: bytes, as: UTF8.self)))
    }

    /// The value of an optional `-`, then digits with at most one `.` among them, 15 digits at
    /// most; nil for anything else.
    private static func plainDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var digits = 0
        var mantissa: Int64 = 0
        var decimals = -1
        let negative = bytes.first == UInt8(ascii: "-")
        for byte in bytes[(negative ? 1 : 0)...] {
            if byte &- 0x30 < 10 {
                guard digits < 15 else { return nil }
                mantissa = mantissa &* 10 &+ Int64(byte &- 0x30)
                digits += 1
                if decimals >= 0 { decimals += 1 }
            } else if byte == UInt8(ascii: "."), decimals < 0 {
                decimals = 0
            } else {
                return nil
            }
        }
        guard digits > 0 else { return nil }
        let magnitude = Double(mantissa) / powersOfTen[max(decimals, 0)]
        return negative ? -magnitude : magnitude
    }

    /// 1 to 1e15, each exact in a Double (every power of ten up to 1e22 is).
    private static let powersOfTen: [Double] = (1...15).reduce(into: [1]) { powers, _ in powers.append(powers[powers.count - 1] * 10) }
}
