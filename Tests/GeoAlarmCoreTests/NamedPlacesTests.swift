import GeoAlarmCore
import Testing

/// `[places]` found by a name as a person writes it (a config's `place`, `add --place`, a task's LOCATION).
struct NamedPlacesTests {
    static let office = Coordinate(latitude: 38.7226, longitude: -9.1094)
    static let postOffice = Coordinate(latitude: 38.7139, longitude: -9.1334)
    static let cafe = Coordinate(latitude: 38.7105, longitude: -9.1366)

    @Test func theKeyItselfOrWordsThatDifferOnlyInCaseSpacingPunctuationAndAccents() throws {
        let places = NamedPlaces(["office": Self.office, "post_office": Self.postOffice, "Café Nicola": Self.cafe])
        #expect(try #require(places.place(named: "office")) == ("office", Self.office))
        #expect(try #require(places.place(named: "Post office")) == ("post_office", Self.postOffice))
        #expect(try #require(places.place(named: "  POST-OFFICE ")) == ("post_office", Self.postOffice))
        #expect(try #require(places.place(named: "cafe nicola")) == ("Café Nicola", Self.cafe))
        for words in ["offices", "post", "", "!!!", "postoffice"] {
            #expect(places.place(named: words) == nil, "\(words)")
        }
        #expect(places.keys == ["Café Nicola", "office", "post_office"])
    }

    @Test func ofTwoKeysAlikeTheKeyWrittenWinsThenTheFirstInOrder() throws {
        let places = NamedPlaces(["post_office": Self.postOffice, "Post-Office": Self.office])
        #expect(try #require(places.place(named: "post_office")) == ("post_office", Self.postOffice))
        #expect(try #require(places.place(named: "Post-Office")) == ("Post-Office", Self.office))
        #expect(try #require(places.place(named: "post office")) == ("Post-Office", Self.office))
    }
}
