import GeoAlarmScanners
import GeoAlarmTestSupport
import Testing

/// The fast decimal reader must give exactly what strtod (Swift's `Double(String)`) gives.
struct DecimalTextTests {
    static func value(_ text: String) -> Double? { DecimalText.value(Array(text.utf8)[...]) }

    @Test func randomDecimalsReadAsStrtodReadsThem() {
        var random = SplitMix(seed: 0x6E0A_1A43)
        for _ in 0..<100_000 {
            let length = Int.random(in: 1...18, using: &random)
            var text = String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &random))) })
            if random.bool() { text.insert(".", at: text.index(text.startIndex, offsetBy: Int.random(in: 0...length, using: &random))) }
            if random.bool() { text = "-" + text }
            #expect(Self.value(text) == Double(text), "\(text)")
        }
    }

    @Test func whatIsNotAPlainDecimalGoesToStrtodOrIsNoNumber() {
        #expect(Self.value("1e3") == 1000)
        #expect(Self.value("+2.5") == 2.5)
        #expect(Self.value("-0") == 0)
        #expect(Self.value("123456789012345678901234567890") == 123456789012345678901234567890.0)
        for text in ["", "-", ".", "1.2.3", "12a", " 1", "--1"] {
            #expect(Self.value(text) == nil, "\(text)")
        }
    }

    /// Whole numbers: digits only, one to eighteen of them, read as `Int(String)` reads them.
    @Test func wholeNumbersAreDigitsOnlyUpToEighteen() {
        func whole(_ text: String) -> Int? {
            Array(text.utf8).withUnsafeBufferPointer { DecimalText.wholeNumber($0[...]) }
        }
        for text in ["0", "7", "007", "2026", "999999999999999999", "123456789012345678"] {
            #expect(whole(text) == Int(text), "\(text)")
        }
        for text in ["", "1234567890123456789", "-1", "+1", "1.0", "1a", " 1", "1 ", "/", ":", "1/", "9:"] {
            #expect(whole(text) == nil, "\(text)")
        }
    }
}
