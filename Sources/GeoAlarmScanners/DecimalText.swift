import FoundationEssentials

/// Reads decimal numbers from bytes, as the text readers (NMEA, JSON, collection files) need
/// them by the million.
public enum DecimalText {
    /// The number the bytes spell, or nil. A plain "-123.4567" of up to 15 digits is read
    /// directly: the digits as an integer divided by a power of ten, both exact, is the correctly
    /// rounded value, as strtod gives. Anything else (a `+`, exponents, a sixteenth digit) goes to
    /// strtod.
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
        guard let (value, length) = plainPrefix(bytes), length == bytes.count else { return nil }
        return value
    }

    /// The plain decimal that `bytes` start with (an optional `-`, then digits with at most one
    /// `.` among them, 15 digits at most) and how many bytes it took; nil when they start with
    /// none, or with more digits than 15. A reader that finds a number's end as it goes (JSON)
    /// reads it in this one pass, and checks what follows.
    public static func plainPrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> (value: Double, length: Int)? {
        let negative = bytes.first == UInt8(ascii: "-")
        var index = negative ? 1 : 0
        var mantissa: Int64 = 0
        // Wrapping arithmetic: a number of more digits than the mantissa holds is refused once
        // they are counted, before its value is used.
        func readDigits() {
            while index < bytes.count, bytes[index] &- 0x30 < 10 {
                mantissa = mantissa &* 10 &+ Int64(bytes[index] &- 0x30)
                index += 1
            }
        }
        readDigits()
        var digits = index - (negative ? 1 : 0)
        var decimals = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fraction = index
            readDigits()
            decimals = index - fraction
            digits += decimals
        }
        guard digits > 0, digits <= 15 else { return nil }
        let magnitude = Double(mantissa) / powerOfTen(decimals)
        return (negative ? -magnitude : magnitude, index)
    }

    /// The whole number that `bytes`, 1 to 18 ASCII digits and nothing else, spell; nil for
    /// anything else (18 digits cannot overflow). Inlinable: the time fields of every NMEA
    /// sentence and gpsd report are read with it.
    @inlinable public static func wholeNumber(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            let digit = byte &- 0x30
            guard digit < 10 else { return nil }
            value = value &* 10 &+ Int(digit)
        }
        return value
    }

    /// 10 to the power `exponent`, 0 to 15: each exact in a Double (every power of ten up to 1e22 is).
    @inline(__always)
    private static func powerOfTen(_ exponent: Int) -> Double {
        switch exponent {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        default: 1e15
        }
    }
}
