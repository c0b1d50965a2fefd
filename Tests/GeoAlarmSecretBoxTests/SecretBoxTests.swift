import Foundation
import GeoAlarmSecretBox
import Testing

/// OwnTracks' payload encryption (libsodium's secretbox, the key the secret's bytes padded with
/// zeros): what one box seals the same secret opens, and nothing else does.
struct SecretBoxTests {
    @Test(arguments: ["", "{\"_type\":\"location\",\"lat\":47,\"lon\":8,\"tst\":1}", String(repeating: "é", count: 5000)])
    func whatIsSealedOpensWithTheSameSecret(plain: String) throws {
        let box = SecretBox(secret: "correct horse")
        let sealed = try #require(box.seal(Array(plain.utf8)))
        #expect(try SecretBox(secret: "correct horse").open(sealed) == Array(plain.utf8))
        // A fresh nonce each time: the same text never seals the same way twice.
        #expect(box.seal(Array(plain.utf8)) != sealed)
    }

    @Test func anotherSecretOrAChangedByteIsNotAuthentic() throws {
        let sealed = try #require(SecretBox(secret: "ana's").seal(Array("at home".utf8)))
        #expect(throws: SecretBox.OpenError.notAuthentic) { try SecretBox(secret: "bob's").open(sealed) }
        var bytes = [UInt8](try #require(Data(base64Encoded: sealed)))
        bytes[bytes.count - 1] ^= 1
        #expect(throws: SecretBox.OpenError.notAuthentic) { try SecretBox(secret: "ana's").open(Data(bytes).base64EncodedString()) }
    }

    @Test func whatCannotBeSealedDataSaysWhy() {
        let box = SecretBox(secret: "s")
        #expect(throws: SecretBox.OpenError.notBase64) { try box.open("%%%") }
        #expect(throws: SecretBox.OpenError.tooShort(3)) { try box.open("AAAA") }
    }

    /// The key is the secret's first 32 bytes: a longer secret's tail does not count, as in OwnTracks.
    @Test func onlyTheSecretsFirst32BytesAreItsKey() throws {
        let long = String(repeating: "k", count: 32)
        let sealed = try #require(SecretBox(secret: long + "one tail").seal(Array("x".utf8)))
        #expect(try SecretBox(secret: long + "another").open(sealed) == Array("x".utf8))
    }
}
