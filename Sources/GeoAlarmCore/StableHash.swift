/// FNV-1a (64 bits): a digest that is the same on every run and every machine, unlike Swift's
/// seeded `Hasher`, for what is stored or published (an area's key, an id's number).
public struct StableHash {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    /// Mixes in one byte.
    public mutating func mix(byte: UInt8) {
        value ^= UInt64(byte)
        value = value &* 0x100_0000_01b3
    }

    /// Mixes in the eight bytes of `word`, lowest first.
    public mutating func mix(_ word: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { mix(byte: UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    /// The digest of `text`'s UTF-8.
    public static func of(_ text: String) -> UInt64 {
        var hash = StableHash()
        for byte in text.utf8 { hash.mix(byte: byte) }
        return hash.value
    }
}
