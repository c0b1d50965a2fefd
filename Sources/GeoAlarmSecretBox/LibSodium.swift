internal import CSodium
import GeoAlarmSystem

/// libsodium's secretbox functions, loaded from `libsodium.so.23` when OwnTracks' encryption is
/// first used, not linked: an agent with no `secret_file` never maps libsodium. Loaded once for
/// the process and never unloaded; `sodium_init` is called right after.
struct LibSodium: @unchecked Sendable {
    // The signatures are sodium.h's; `dlsym`'s address is only ever cast to its declaration's.
    // The sizes of a key, a nonce and a tag are its constants (SecretBox).
    /// `crypto_secretbox_easy` and `crypto_secretbox_open_easy`: out, in, its length, nonce, key.
    typealias Box = @convention(c) (
        UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?
    ) -> Int32
    let seal: Box
    let open: Box
    let random: @convention(c) (UnsafeMutableRawPointer?, Int) -> Void

    /// The library's soname: what Debian's libsodium23 installs.
    static let soname = "libsodium.so.23"

    /// The process's libsodium, or why it cannot be had, loaded on first use.
    static let loaded = Result<LibSodium, DynamicLibrary.Unavailable> { () throws(DynamicLibrary.Unavailable) in try load() }

    private static func load() throws(DynamicLibrary.Unavailable) -> LibSodium {
        let library = try DynamicLibrary(soname: soname, package: "libsodium23", for: "OwnTracks' encryption")
        guard
            let initialise = library.function("sodium_init", as: (@convention(c) () -> Int32).self),
            let seal = library.function("crypto_secretbox_easy", as: Box.self),
            let open = library.function("crypto_secretbox_open_easy", as: Box.self),
            let random = library.function("randombytes_buf", as: (@convention(c) (UnsafeMutableRawPointer?, Int) -> Void).self)
        else {
            throw library.lacking()
        }
        // 0 set up, 1 set up already; -1 failed.
        guard initialise() >= 0 else { throw DynamicLibrary.Unavailable("libsodium could not be initialised") }
        return LibSodium(seal: seal, open: open, random: random)
    }
}
