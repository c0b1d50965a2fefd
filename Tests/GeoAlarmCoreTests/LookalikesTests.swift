import GeoAlarmCore
import Testing

/// Ids typed with the keyboard's layout switched halfway: found, and told apart.
struct LookalikesTests {
    @Test func aWordOfMixedScriptsIsFoundWithItsStrayLetters() throws {
        let bread = try #require(Lookalikes.mixedWord(in: "bre\u{430}d"))
        #expect(bread.main == .latin && bread.strays == ["\u{430}"])
        let milk = try #require(Lookalikes.mixedWord(in: "хлеб-и-м\u{6F}локо"))
        #expect(milk.main == .cyrillic && milk.strays == ["o"])
        #expect(Lookalikes.mixedWord(in: "ψωμ\u{69}")?.strays == ["i"])
        #expect(Lookalikes.mixedWord(in: "ab\u{430}\u{431}")?.main == .latin, "a tie goes to the first letter's script")
        #expect(Lookalikes.mixedWord(in: "\u{430}\u{431}ab")?.main == .cyrillic)
        for id in ["bread", "купить-iphone", "ψωμι-bread", "café", "買牛奶", "3д-printer", "a1_б2.c3", "über-straße"] {
            #expect(Lookalikes.mixedWord(in: id) == nil, "\(id): each word is of one script")
        }
    }

    @Test func lookalikeLettersShareASkeleton() {
        #expect(Lookalikes.skeleton("bre\u{430}d") == "bread")
        #expect(Lookalikes.skeleton("\u{391}\u{392}\u{421}") == "ABC", "Greek Alpha, Beta, Cyrillic Es")
        #expect(Lookalikes.skeleton("хлеб") == "x\u{43B}e\u{431}", "х and е change; л and б, unlike any Latin letter, stay")
        #expect(Lookalikes.skeleton("bread") == "bread")
    }

    @Test func aLetterIsNamedWithItsScriptAndCode() {
        #expect(Lookalikes.describe("\u{430}") == "Cyrillic \u{430} (U+0430)")
        #expect(Lookalikes.describe("e") == "Latin e (U+0065)")
        #expect(Lookalikes.describe("\u{3BF}") == "Greek \u{3BF} (U+03BF)")
        #expect(Lookalikes.describe("\u{2014}") == "U+2014")
        #expect(Lookalikes.describe("\u{1F35E}") == "U+1F35E")
    }
}
