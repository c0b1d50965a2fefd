import GeoAlarmScanners
import GeoAlarmTestSupport
import Testing

/// A word's answers must be the ones a byte-at-a-time look gives, for every byte value.
struct ByteWordTests {
    /// Eight random bytes, drawn so that matches (and the bytes around 0x80 and 0xFF that a
    /// borrow or carry between bytes would disturb) are common.
    static func randomBytes(_ random: inout SplitMix, around byte: UInt8) -> [UInt8] {
        (0..<8).map { _ in
            switch Int.random(in: 0..<4, using: &random) {
            case 0: byte
            case 1: byte &+ UInt8.random(in: 0...2, using: &random) &- 1
            case 2: [0x00, 0x7F, 0x80, 0xFF].randomElement(using: &random)!
            default: UInt8.random(in: 0...255, using: &random)
            }
        }
    }

    static func word(_ bytes: [UInt8]) -> ByteWord {
        bytes.withUnsafeBufferPointer { ByteWord(at: $0.baseAddress!) }
    }

    @Test func matchesMarkExactlyTheBytesEqualToTheOneSought() {
        var random = SplitMix(seed: 0xB17E_5EED)
        for sought in 0...255 {
            let sought = UInt8(sought)
            for _ in 0..<200 {
                let bytes = Self.randomBytes(&random, around: sought)
                let mask = Self.word(bytes).matches(sought)
                let expected = bytes.indices.reduce(UInt64(0)) { mask, index in
                    bytes[index] == sought ? mask | 0x80 << (8 * UInt64(index)) : mask
                }
                #expect(mask == expected, "\(bytes) for \(sought)")
                #expect(ByteWord.firstOffset(in: mask) == (bytes.firstIndex(of: sought) ?? 8))
            }
        }
    }

    @Test func theFirstByteIsTheLowestWhateverTheAlignment() {
        let text = Array("$GPRMC,1".utf8) + Array("23519,A,".utf8)
        text.withUnsafeBufferPointer { buffer in
            for start in 0...8 {
                let word = ByteWord(at: buffer.baseAddress! + start)
                #expect(UInt8(truncatingIfNeeded: word.bits) == text[start])
                #expect(ByteWord.firstOffset(in: word.matches(UInt8(ascii: ","))) == (text[start...].firstIndex(of: 0x2C)! - start))
            }
        }
    }

    @Test func xorOfBytesIsTheChecksumOfTheWordsBytes() {
        var random = SplitMix(seed: 0xC4EC_5033)
        for _ in 0..<10_000 {
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            let words = Self.word(Array(bytes[..<8])).bits ^ Self.word(Array(bytes[8...])).bits
            #expect(ByteWord.xorOfBytes(words) == bytes.reduce(0, ^))
        }
    }
}
