import GeoAlarmCore
import GeoAlarmEncoding
import GeoAlarmSecretBox

/// The OwnTracks secrets of this machine and of the tracked devices: reads their messages as
/// fixes, opening encrypted ones with the secret of their device (or the shared one), and seals
/// what is published for them, as the apps, the Recorder and Home Assistant do.
public struct OwnTracksSecrets: Sendable {
    private let shared: SecretBox?
    private let perDevice: [String: SecretBox]

    /// `secret` is this machine's, and every tracked device's but those with one of their own in
    /// `deviceSecrets` (by `USER/DEVICE`).
    public init(secret: String?, deviceSecrets: [String: String]) {
        shared = secret.map(SecretBox.init(secret:))
        perDevice = deviceSecrets.mapValues(SecretBox.init(secret:))
    }

    /// The secret of `tracker` (nil: this machine).
    private func box(of tracker: String?) -> SecretBox? {
        tracker.flatMap { perDevice[$0] } ?? shared
    }

    /// `text` as published for `tracker` (nil: this machine): sealed in an `encrypted` message
    /// when it has a secret, else as it is; nil when it has one that cannot seal (libsodium
    /// cannot be had): what has a secret never goes in the clear.
    public func payload(_ text: String, for tracker: String?) -> [UInt8]? {
        guard let box = box(of: tracker) else { return Array(text.utf8) }
        guard let sealed = box.seal(Array(text.utf8)) else { return nil }
        var object = JSONObject()
        object.add("_type", "encrypted")
        object.add("data", sealed)
        return Array(object.text.utf8)
    }

    /// The fix in `payload`, a message of `tracker`; or why there is none. A device with a
    /// secret (its own, or the shared one) is believed only in messages sealed with it: a
    /// location in the clear could come from anyone who may publish on its topic.
    public func fix(in payload: [UInt8], tracker: String) -> Result<Fix, OwnTracksLocation.Problem> {
        switch OwnTracksLocation.parse(payload, tracker: tracker) {
        case .failure(let problem):
            return .failure(problem)
        case .success(.location(let fix)):
            guard box(of: tracker) == nil else {
                return .failure(.init(.unsealed, "a location in the clear from \(DisplayText.escaped(tracker)), which has a secret"))
            }
            return .success(fix)
        case .success(.encrypted(let data)):
            guard let box = box(of: tracker) else {
                return .failure(.init(.encryptedWithoutKey, "an encrypted message, and no secret for \(DisplayText.escaped(tracker))"))
            }
            let plain: [UInt8]
            do {
                plain = try box.open(data)
            } catch {
                return .failure(.init(.undecryptable, "an encrypted message with \(error)"))
            }
            switch OwnTracksLocation.parse(plain, tracker: tracker) {
            case .success(.location(let fix)): return .success(fix)
            case .success(.encrypted): return .failure(.init(.malformed, "an encrypted message sealing another"))
            case .failure(let problem): return .failure(.init(problem.kind, "\(problem) (decrypted)"))
            }
        }
    }
}
