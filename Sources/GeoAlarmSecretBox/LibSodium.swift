internal import CSodium
import GeoAlarmSystem

/// libsodium's secretbox functions, loaded from `libsodium.so.23` when OwnTracks' encryption is
/// first used, not linked: an agent with no `secret_file` never maps libsodium. Loaded once for
/// the process and never unloaded; `sodium_init` is called right after.
struct LibSodium: @unchecked Sendable {
    // The signatures are sodium.h's; `dlsym`'s address is only ever cast to its declaration's.
    let keyBytes: Int
    let nonceBytes: Int
    let macBytes: Int
    let seal: @convention(c) (
        UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?
    ) -> Int32
    let open: @convention(c) (
        UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?
    ) -> Int32
    let random: @convention(c) (UnsafeMutableRawPointer?, Int) -> Void

    /// The library's soname: what Debian's libsodium23 installs.
    static let soname = "libsodium.so.23"

    /// The process's libsodium, or why it cannot be had, loaded on first use.
    static let loaded: Result<LibSodium, SodiumLoadFailure> = load()

    private static func load() -> Result<LibSodium, SodiumLoadFailure> {
        let library: DynamicLibrary
        do {
            library = try DynamicLibrary(soname: soname)
        } catch {
            return .failure(SodiumLoadFailure(reason: "cannot load \(soname) (\(error)): install libsodium23 for OwnTracks' encryption"))
        }
        typealias Size = @convention(c) () -> Int
        typealias Box = @convention(c) (
            UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?
        ) -> Int32
        guard
            let initialise = library.function("sodium_init", as: (@convention(c) () -> Int32).self),
            let keyBytes = library.function("crypto_secretbox_keybytes", as: Size.self),
            let nonceBytes = library.function("crypto_secretbox_noncebytes", as: Size.self),
            let macBytes = library.function("crypto_secretbox_macbytes", as: Size.self),
            let seal = library.function("crypto_secretbox_easy", as: Box.self),
            let open = library.function("crypto_secretbox_open_easy", as: Box.self),
            let random = library.function("randombytes_buf", as: (@convention(c) (UnsafeMutableRawPointer?, Int) -> Void).self)
        else {
            return .failure(SodiumLoadFailure(reason: "\(soname) lacks \(library.missing.joined(separator: ", "))"))
        }
        // 0 set up, 1 set up already; -1 failed.
        guard initialise() >= 0 else { return .failure(SodiumLoadFailure(reason: "libsodium could not be initialised")) }
        return .success(LibSodium(
            keyBytes: keyBytes(), nonceBytes: nonceBytes(), macBytes: macBytes(), seal: seal, open: open, random: random))
    }
}

/// Why libsodium cannot be used: OwnTracks' sealed messages can be neither opened nor made.
struct SodiumLoadFailure: Error, Sendable {
    let reason: String
}
