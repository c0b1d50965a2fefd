import GeoAlarmCore
import Testing

struct QuantityTests {
    @Test(arguments: [
        ("150m", 150.0), ("1.5km", 1500), ("300 ft", 91.44), ("0.5mi", 804.672), ("12", 12), (" 40 M ", 40), ("0", 0),
        ("50 metres", 50), ("50 Meters", 50), ("1 kilometre", 1000), ("300 feet", 91.44), ("1 foot", 0.3048), ("2 miles", 3218.688),
    ])
    func lengths(text: String, metres: Double) throws {
        #expect(abs(try Length.parse(text) - metres) < 1e-9)
    }

    @Test func lengthErrorsSayWhatIsWrong() {
        #expect(throws: QuantityError.unknownUnit("furlongs", allowed: ["m", "km", "ft", "mi"])) {
            try Length.parse("5 furlongs")
        }
        #expect(throws: QuantityError.negative("-5m")) { try Length.parse("-5m") }
        #expect(throws: QuantityError.notANumber("abc")) { try Length.parse("abc") }
        #expect(throws: QuantityError.empty) { try Length.parse("  ") }
        #expect(throws: QuantityError.notANumber("nanm")) { try Length.parse("nanm") }
        // As much of Europe writes it: said so, with the length meant. Three digits after the
        // comma may be thousands ("1,000m"): no length is suggested then.
        #expect(throws: QuantityError.commaInNumber("1,5 km", meant: "1.5km")) { try Length.parse("1,5 km") }
        #expect(QuantityError.commaInNumber("1,5km", meant: "1.5km").description == #""1,5km" has a decimal comma: write "1.5km""#)
        #expect(throws: QuantityError.commaInNumber("0,25h", meant: "0.25h")) { try Span.parse("0,25h") }
        #expect(throws: QuantityError.commaInNumber("1,000m", meant: nil)) { try Length.parse("1,000m") }
        #expect(throws: QuantityError.commaInNumber("1,000,000m", meant: nil)) { try Length.parse("1,000,000m") }
        #expect(QuantityError.commaInNumber("1,000m", meant: nil).description
            == #""1,000m" has a comma in its number: write a decimal point, and no separator of thousands"#)
        #expect(throws: QuantityError.notANumber("1,m")) { try Length.parse("1,m") }
        #expect(QuantityError.unknownUnit("yd", allowed: ["m", "km"]).description == "unknown unit \"yd\" (use m, km)")
    }

    @Test(arguments: [("90s", 90.0), ("2m", 120), ("2min", 120), ("1.5h", 5400), ("1h30m", 5400), ("1d", 86400), ("2w", 1_209_600), ("1w2d", 777_600), ("45", 45),
        ("2 hours", 7200), ("1 hour 30 mins", 5400), ("90 Minutes", 5400), ("1 day", 86400), ("2 weeks", 1_209_600), ("5 secs", 5), ("3hrs", 10800)])
    func spans(text: String, seconds: Double) throws {
        #expect(try Span.parse(text) == seconds)
    }

    @Test func spanErrors() {
        #expect(throws: QuantityError.self) { try Span.parse("2 fortnights") }
        #expect(throws: QuantityError.self) { try Span.parse("-3s") }
        #expect(throws: QuantityError.self) { try Span.parse("h") }
        #expect(throws: QuantityError.unknownUnit("hourz", allowed: Span.units.map(\.name))) { try Span.parse("2 hourz") }
    }

    @Test func triggersAndAliases() {
        #expect(Trigger(parsing: "enter") == .arrive)
        #expect(Trigger(parsing: "EXIT") == .leave)
        #expect(Trigger(parsing: "depart") == .leave && Trigger(parsing: "Leaving") == .leave && Trigger(parsing: "arriving") == .arrive)
        #expect(Trigger(parsing: "both") == .both)
        #expect(Trigger(parsing: "sometimes") == nil)
        #expect(Trigger.leave.announces(.leave) && !Trigger.leave.announces(.arrive))
    }

    @Test func locationsAndSlugs() throws {
        #expect(try ReminderRules.parseLocation("38.7226,-9.1094").get() == Coordinate(latitude: 38.7226, longitude: -9.1094))
        #expect(try ReminderRules.parseLocation("geo:38.7226,-9.1094;u=35").get() == Coordinate(latitude: 38.7226, longitude: -9.1094))
        #expect(try ReminderRules.parseLocation("geo:1,2,30").get() == Coordinate(latitude: 1, longitude: 2))
        #expect(throws: ReminderRules.LocationError.self) { try ReminderRules.parseLocation("38.7").get() }
        #expect(throws: ReminderRules.LocationError.latitude("91 is out of range (-90 to 90)")) {
            try ReminderRules.parseLocation("91,0").get()
        }
        #expect(Reminder.slug("Pick up the parcel!") == "pick-up-the-parcel")
        #expect(Reminder.slug("Café  Ólá 2") == "cafe-ola-2")
        #expect(Reminder.slug("!!!") == "")
        #expect(Reminder.slug("Smørrebrød in Łódź, Straße") == "smorrebrod-in-lodz-straße")
        #expect(Reminder.slug("Ψωμί ΆΈΪ ἄρτος") == "ψωμι-αει-αρτος", "Greek accents and breathings go, as Latin ones do")
        #expect(Reminder.slug("Ёлка, йод, қала") == "ёлка-йод-қала", "a Cyrillic mark makes another letter: kept")
    }

    /// A new reminder's id is its title's slug, numbered past every id taken; a title without
    /// letters or digits is a "reminder".
    @Test func aNewReminderTakesTheFirstFreeNumberedSlug() {
        #expect(Reminder.newID(titled: "Buy milk", taken: []) == "buy-milk")
        #expect(Reminder.newID(titled: "Buy milk", taken: ["buy-milk"]) == "buy-milk-2")
        #expect(Reminder.newID(titled: "Buy milk!", taken: ["buy-milk", "buy-milk-2", "buy-milk-4"]) == "buy-milk-3")
        #expect(Reminder.newID(titled: "🍞", taken: []) == "reminder")
        #expect(Reminder.newID(titled: "🍞", taken: ["reminder"]) == "reminder-2")
        #expect(Reminder.newID(titled: "Buy milk", taken: ["buy-milk-2"]) == "buy-milk", "only the id itself counts")
    }

    @Test func spansAreDescribedInTheirTwoLargestUnits() {
        #expect(Span.describe(0.4) == "0 s")
        #expect(Span.describe(-5) == "0 s")
        #expect(Span.describe(.nan) == "0 s")
        #expect(Span.describe(40) == "40 s")
        #expect(Span.describe(60) == "1 min")
        #expect(Span.describe(725) == "12 min 5 s")
        #expect(Span.describe(3 * 3600 + 5 * 60 + 59) == "3 h 5 min")
        #expect(Span.describe(3 * 3600 + 59) == "3 h", "an empty middle unit is left out, not the one after it")
        #expect(Span.describe(2 * 86400 + 4 * 3600 + 30) == "2 d 4 h")
        #expect(Span.describe(1e300).hasPrefix("106751991167300 d "), "a huge span does not trap")
    }

    /// Names quoted in messages: whole when short, their first characters and "…" when long.
    /// Terminal columns: two for CJK, Hangul, fullwidth forms and emoji pictures, one for Latin
    /// letters with or without marks, the escapes of control characters counted as written.
    @Test func textIsMeasuredInTerminalColumns() {
        #expect(DisplayText.columns("Buy bread") == 9)
        #expect(DisplayText.columns("Café") == 4 && DisplayText.columns("Cafe\u{301}") == 4)
        #expect(DisplayText.columns("買牛奶") == 6 && DisplayText.columns("パン") == 4 && DisplayText.columns("빵") == 2)
        #expect(DisplayText.columns("🍞 bread") == 8, "an emoji shown as a picture")
        #expect(DisplayText.columns("❤️") == 2 && DisplayText.columns("❤") == 1, "text form unless VS16 asks for the picture")
        #expect(DisplayText.columns("🇵🇹") == 2, "a flag is one character")
        #expect(DisplayText.columns("ＡＢ") == 4 && DisplayText.columns("ｱ") == 1, "fullwidth letters; halfwidth katakana")
        #expect(DisplayText.columns(DisplayText.escaped("a\tb")) == 4)
    }

    /// A URL refused for holding a password is shown without it; a user name, a host and a
    /// path with an @ stay as they are.
    @Test(arguments: [
        ("https://ana:s3cret@cloud.example.org/dav/", "https://ana:…@cloud.example.org/dav/"),
        ("mqtt://u:pa@ss@broker", "mqtt://u:…@broker"),
        ("https://ana@cloud.example.org/dav/", "https://ana@cloud.example.org/dav/"),
        ("https://cloud.example.org/dav/ana@example.org/", "https://cloud.example.org/dav/ana@example.org/"),
        ("https://x:y@h?q=a:b@c", "https://x:…@h?q=a:b@c"),
        ("not a url: a@b", "not a url: a@b"),
        ("mqtt://u:p\u{1b}[31m@h", "mqtt://u:…@h"),
    ])
    func aURLIsShownWithoutItsPassword(url: String, shown: String) {
        #expect(DisplayText.url(url) == shown)
    }

    @Test func shortenedKeepsShortTextAndCutsLongText() {
        #expect(DisplayText.shortened("parcel") == "parcel")
        #expect(DisplayText.shortened(String(repeating: "é", count: 60)) == String(repeating: "é", count: 60))
        #expect(DisplayText.shortened("abcdef", limit: 3) == "abc…")
        #expect(DisplayText.excerpt(Array("line\nnext".utf8), limit: 5) == "line\\n…")
    }

    /// Sizes in messages: in the largest binary unit that holds them, never "0 MB".
    @Test func sizesAreShownInTheirOwnUnit() {
        #expect(DisplayText.size(1) == "1 byte" && DisplayText.size(512) == "512 bytes")
        #expect(DisplayText.size(64 << 10) == "64 KiB" && DisplayText.size(70_000) == "68.4 KiB")
        #expect(DisplayText.size(16 << 20) == "16 MiB" && DisplayText.size(1 << 30) == "1 GiB" && DisplayText.size(3 << 29) == "1.5 GiB")
        #expect(DisplayText.size(Int.max).hasSuffix(" GiB"), "no overflow")
    }

    /// Counts in messages agree with their noun: "1 reminder", never "1 reminders".
    @Test func countsAgreeWithTheirNoun() {
        #expect(DisplayText.counted(1, "reminder") == "1 reminder")
        #expect(DisplayText.counted(0, "reminder") == "0 reminders" && DisplayText.counted(2, "reminder") == "2 reminders")
        #expect(DisplayText.counted(1, "fix", plural: "fixes") == "1 fix" && DisplayText.counted(3, "fix", plural: "fixes") == "3 fixes")
    }
}
