/// Eight bytes of text held as one word, so that a reader looks for a byte in all eight at once
/// (SWAR) and takes a step a word where it would take eight: NMEA's checksum and comma split.
/// The first byte is the word's lowest (as loaded on a
/// little-endian machine, and made so on a big-endian one).
public struct ByteWord {
    /// The eight bytes, the first in the lowest bits.
    public let bits: UInt64

    /// The eight bytes at `start` (any alignment); all eight must be readable.
    @inlinable public init(at start: UnsafePointer<UInt8>) {
        bits = UInt64(littleEndian: UnsafeRawPointer(start).loadUnaligned(as: UInt64.self))
    }

    /// The high bit of each byte that equals `byte` set, every other bit clear. Exact: a match
    /// never marks its neighbours (no borrow crosses from byte to byte).
    @inlinable public func matches(_ byte: UInt8) -> UInt64 {
        let lowSeven: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let difference = bits ^ (0x0101_0101_0101_0101 &* UInt64(byte))
        // A byte's high bit ends up set when any of its bits is: its low seven by the carry of
        // adding 0x7F, which cannot leave the byte; then the zero bytes are the unset ones.
        let nonZero = ((difference & lowSeven) &+ lowSeven) | difference
        return ~(nonZero | lowSeven)
    }

    /// The offset (0 to 7) of the first byte that a mask from ``matches(_:)`` marks; 8 when it
    /// marks none.
    @inlinable public static func firstOffset(in mask: UInt64) -> Int {
        mask.trailingZeroBitCount / 8
    }

    /// The XOR of the eight bytes of `bits` (of one word, or of several XORed together).
    @inlinable public static func xorOfBytes(_ bits: UInt64) -> UInt8 {
        var folded = bits ^ (bits >> 32)
        folded ^= folded >> 16
        folded ^= folded >> 8
        return UInt8(truncatingIfNeeded: folded)
    }
}
