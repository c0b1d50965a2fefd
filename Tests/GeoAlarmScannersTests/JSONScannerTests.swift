import GeoAlarmScanners
import Testing

/// Keys are matched in place, or from their decoded escapes; values are read or passed over.
struct JSONScannerTests {
    /// The members of a one-level object, as the key each matched ("?" for none) and the number read.
    static func matched(_ text: String) throws -> [String] {
        var found: [String] = []
        try JSONScanner.scan(Array(text.utf8)[...]) { scanner throws(JSONScanner.Failure) in
            try scanner.expect(UInt8(ascii: "{"))
            try scanner.members { scanner, key throws(JSONScanner.Failure) in
                let name: String
                switch key {
                case "lat": name = "lat"
                case "lon": name = "lon"
                case "la": name = "la"
                case "": name = "(empty)"
                default: name = "?"
                }
                if let number = try scanner.numberValue() {
                    found.append("\(name)=\(number)")
                } else {
                    found.append(name)
                }
            }
            try scanner.expectEnd()
        }
        return found
    }

    @Test func keysMatchWholeAndOnlyWhole() throws {
        #expect(try Self.matched(#"{"lat": 1, "lon": 2, "la": 3, "lath": 4, "l": 5, "": 6}"#)
            == ["lat=1.0", "lon=2.0", "la=3.0", "?=4.0", "?=5.0", "(empty)=6.0"])
    }

    @Test func anEscapedKeyMatchesItsDecodedText() throws {
        #expect(try Self.matched(#"{"l\u0061t": 1, "lo\n": 2, "\u006c\u006fn": 3}"#) == ["lat=1.0", "?=2.0", "lon=3.0"])
    }

    @Test func nestedValuesArePassedOverWithTheirOwnKeys() throws {
        #expect(try Self.matched(#"{"x": {"lat": 9, "y": [1, {"lon": 2}]}, "lat": 7, "s": "lat"}"#) == ["?", "lat=7.0", "?"])
    }

    /// A plain decimal is read in the pass that finds its end; anything after it that belongs
    /// to the number (an exponent, a second point, a sixteenth digit) sends the whole to strtod.
    @Test(arguments: ["1.5e3", "-0.25", "12345678901234567", "1.", "0", "-7E-2", "3.14159265358979"])
    func numbersReadAsStrtodReadsThem(text: String) throws {
        let read = try JSONScanner.scan(Array("[\(text)]".utf8)[...]) { scanner throws(JSONScanner.Failure) in
            try scanner.expect(UInt8(ascii: "["))
            return try scanner.numberValue()
        }
        #expect(read == Double(text))
    }

    @Test func aNumberWithTwoPointsIsNoNumber() {
        #expect(throws: JSONScanner.Failure.self) {
            try JSONScanner.scan(Array("[1.5.3]".utf8)[...]) { scanner throws(JSONScanner.Failure) in
                try scanner.expect(UInt8(ascii: "["))
                return try scanner.numberValue()
            }
        }
    }

    /// Compact JSON is read without looking for blanks; the same text with blanks of every kind
    /// between its tokens reads the same, and its lines are still counted.
    @Test func blanksBetweenTokensChangeNothing() throws {
        let compact = #"{"lat":1,"x":[true,{"lon":2}],"lon":-3.5,"la":"s"}"#
        #expect(try Self.matched(compact) == ["lat=1.0", "?", "lon=-3.5", "la"])
        let blanks = [" ", "\t", "\r\n", "\n", " \n\t"]
        var spaced = ""
        for (offset, character) in compact.enumerated() {
            spaced.append(character)
            if ",:[]{}".contains(character) { spaced += blanks[offset % blanks.count] }
        }
        spaced = "\n " + spaced.replacingOccurrences(of: "\"x\"", with: "\"x\" \t")
        #expect(try Self.matched(spaced) == ["lat=1.0", "?", "lon=-3.5", "la"])
        let broken = #expect(throws: JSONScanner.Failure.self) { try Self.matched(spaced + "\n\n x") }
        #expect(broken?.line == 1 + spaced.filter { $0 == "\n" || $0 == "\r\n" }.count + 2)
    }

    @Test func aStringIsTheLiteralOnlyWhole() throws {
        func classes(_ text: String) throws -> [Bool] {
            try JSONScanner.scan(Array(text.utf8)[...]) { scanner throws(JSONScanner.Failure) in
                var found: [Bool] = []
                try scanner.expect(UInt8(ascii: "["))
                try scanner.elements { scanner throws(JSONScanner.Failure) in found.append(try scanner.stringValue(is: "TPV")) }
                return found
            }
        }
        #expect(try classes(#"["TPV", "TP", "TPVs", "tpv", "T\u0050V", 1, {"TPV": "TPV"}, ["TPV"], null, "TPV"]"#)
            == [true, false, false, false, true, false, false, false, false, true])
    }

    @Test func aBrokenObjectNamesItsLine() {
        let failure = #expect(throws: JSONScanner.Failure.self) { try Self.matched("{\"lat\": 1,\n \"lon\" 2}") }
        #expect(failure?.line == 2)
    }
}
