internal import CSodium
import FoundationEssentials

/// The encryption of OwnTracks payloads: libsodium's secretbox (XSalsa20 with a Poly1305
/// tag), the one place libsodium is called from (``LibSodium``, loaded on first use).
///
/// The apps, the Recorder and Home Assistant make the 32-byte key from a shared secret the same
/// way: its UTF-8 bytes, cut at 32 or padded with zero bytes; and they carry a sealed message as
/// the base64 text of the random 24-byte nonce followed by the ciphertext, in the `data` member
/// of a `{"_type":"encrypted"}` message.
public struct SecretBox: Sendable {
    private let key: [UInt8]

    /// Why a sealed text cannot be opened.
    public enum OpenError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not base64 text.
        case notBase64
        /// Shorter than a nonce and a tag.
        case tooShort(Int)
        /// The tag does not match: another key sealed it, or it was changed on the way.
        case notAuthentic
        /// libsodium cannot be loaded or initialised: why.
        case unavailable(String)

        public var description: String {
            switch self {
            case .notBase64: "data that is not base64"
            case .tooShort(let count): "data of \(count) bytes, too short to be sealed"
            case .notAuthentic: "data that the key does not open (another key, or changed on the way)"
            case .unavailable(let reason): reason
            }
        }
    }

    /// The lengths of secretbox's key, nonce and tag (sodium.h's constants: only the header is
    /// read here, the library is loaded when a message is first sealed or opened).
    private static let keyLength = Int(crypto_secretbox_KEYBYTES)
    private static let nonceLength = Int(crypto_secretbox_NONCEBYTES)
    private static let tagLength = Int(crypto_secretbox_MACBYTES)

    /// A box keyed from `secret` as OwnTracks makes its key.
    public init(secret: String) {
        let bytes = Array(secret.utf8.prefix(Self.keyLength))
        key = bytes + [UInt8](repeating: 0, count: Self.keyLength - bytes.count)
    }

    /// Why libsodium cannot be had, once it was tried; nil while it works (or was not needed yet).
    public static var unavailability: String? {
        if case .failure(let failure) = LibSodium.loaded { failure.reason } else { nil }
    }

    /// The plaintext sealed in `text` (base64 of nonce and ciphertext).
    public func open(_ text: some StringProtocol) throws(OpenError) -> [UInt8] {
        let sodium: LibSodium
        switch LibSodium.loaded {
        case .success(let loaded): sodium = loaded
        case .failure(let failure): throw .unavailable(failure.reason)
        }
        guard let data = Data(base64Encoded: String(text), options: .ignoreUnknownCharacters) else { throw .notBase64 }
        let sealed = [UInt8](data)
        let nonceLength = Self.nonceLength, tagLength = Self.tagLength
        guard sealed.count >= nonceLength + tagLength else { throw .tooShort(sealed.count) }
        let nonce = Array(sealed.prefix(nonceLength))
        let cipher = Array(sealed.dropFirst(nonceLength))
        var plain = [UInt8](repeating: 0, count: cipher.count - tagLength)
        let result = sodium.open(&plain, cipher, UInt64(cipher.count), nonce, key)
        guard result == 0 else { throw .notAuthentic }
        return plain
    }

    /// `plain` sealed with a new random nonce, as base64 text; nil when libsodium is unavailable.
    public func seal(_ plain: [UInt8]) -> String? {
        guard case .success(let sodium) = LibSodium.loaded else { return nil }
        var nonce = [UInt8](repeating: 0, count: Self.nonceLength)
        sodium.random(&nonce, nonce.count)
        var cipher = [UInt8](repeating: 0, count: plain.count + Self.tagLength)
        guard sodium.seal(&cipher, plain, UInt64(plain.count), nonce, key) == 0 else { return nil }
        return Data(nonce + cipher).base64EncodedString()
    }
}
