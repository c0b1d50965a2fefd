internal import CCurl
import GeoAlarmSystem

/// libcurl's functions, loaded from `libcurl.so.4` when the first client is made, not linked:
/// an agent with no task list on a server never maps libcurl, nor the TLS, Kerberos, LDAP, SSH
/// and IDN libraries it brings (about 3.8 MB resident on the demo walk). Loaded once for the
/// process and never unloaded; libcurl's global set-up is made right after.
struct LibCurl: @unchecked Sendable {
    // The signatures are curl.h's, as Swift imports its types (`CURL *` and `CURLM *` are
    // `void *`); `dlsym`'s address is only ever cast to the type its declaration has.
    let easyInit: @convention(c) () -> UnsafeMutableRawPointer?
    let easyCleanup: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let easyStrerror: @convention(c) (CURLcode) -> UnsafePointer<CChar>?
    let multiInit: @convention(c) () -> UnsafeMutableRawPointer?
    let multiCleanup: @convention(c) (UnsafeMutableRawPointer?) -> CURLMcode
    let multiAddHandle: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLMcode
    let multiRemoveHandle: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLMcode
    let multiStrerror: @convention(c) (CURLMcode) -> UnsafePointer<CChar>?
    let multiSocketAction: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutablePointer<Int32>?) -> CURLMcode
    let multiInfoRead: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> UnsafeMutablePointer<CURLMsg>?
    let slistAppend: @convention(c) (UnsafeMutablePointer<curl_slist>?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<curl_slist>?
    let slistFreeAll: @convention(c) (UnsafeMutablePointer<curl_slist>?) -> Void
    /// The variadic three, for the header's typed forms (`geoalarm_curl_easy_setopt_long`...).
    let easySetopt: UnsafeMutableRawPointer
    let easyGetinfo: UnsafeMutableRawPointer
    let multiSetopt: UnsafeMutableRawPointer

    /// The library's soname: what Debian's libcurl4 (and libcurl4-gnutls's compatible builds) install.
    static let soname = "libcurl.so.4"

    /// The process's libcurl, or why it cannot be had (not installed, too old), loaded on first use.
    static let loaded = Result<LibCurl, DynamicLibrary.Unavailable> { () throws(DynamicLibrary.Unavailable) in try load() }

    private static func load() throws(DynamicLibrary.Unavailable) -> LibCurl {
        let library = try DynamicLibrary(soname: soname, package: "libcurl4", for: "task lists on servers")
        guard
            let globalInit = library.function("curl_global_init", as: (@convention(c) (Int) -> CURLcode).self),
            let easyInit = library.function("curl_easy_init", as: (@convention(c) () -> UnsafeMutableRawPointer?).self),
            let easyCleanup = library.function("curl_easy_cleanup", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
            let easyStrerror = library.function("curl_easy_strerror", as: (@convention(c) (CURLcode) -> UnsafePointer<CChar>?).self),
            let multiInit = library.function("curl_multi_init", as: (@convention(c) () -> UnsafeMutableRawPointer?).self),
            let multiCleanup = library.function("curl_multi_cleanup", as: (@convention(c) (UnsafeMutableRawPointer?) -> CURLMcode).self),
            let multiAddHandle = library.function(
                "curl_multi_add_handle", as: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLMcode).self),
            let multiRemoveHandle = library.function(
                "curl_multi_remove_handle", as: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLMcode).self),
            let multiStrerror = library.function("curl_multi_strerror", as: (@convention(c) (CURLMcode) -> UnsafePointer<CChar>?).self),
            let multiSocketAction = library.function(
                "curl_multi_socket_action",
                as: (@convention(c) (UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutablePointer<Int32>?) -> CURLMcode).self),
            let multiInfoRead = library.function(
                "curl_multi_info_read",
                as: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> UnsafeMutablePointer<CURLMsg>?).self),
            let slistAppend = library.function(
                "curl_slist_append",
                as: (@convention(c) (UnsafeMutablePointer<curl_slist>?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<curl_slist>?).self),
            let slistFreeAll = library.function("curl_slist_free_all", as: (@convention(c) (UnsafeMutablePointer<curl_slist>?) -> Void).self),
            let easySetopt = library.symbol("curl_easy_setopt"), let easyGetinfo = library.symbol("curl_easy_getinfo"),
            let multiSetopt = library.symbol("curl_multi_setopt")
        else {
            throw library.lacking("geoalarm needs libcurl 7.85 or later")
        }
        // SSL and Win32 socket set-up (CURL_GLOBAL_ALL), once, before any handle.
        let initialised = globalInit(3)
        guard initialised == CURLE_OK else {
            let words = easyStrerror(initialised).map { String(cString: $0) } ?? "error \(initialised.rawValue)"
            throw DynamicLibrary.Unavailable("libcurl could not set itself up: \(words)")
        }
        return LibCurl(
            easyInit: easyInit, easyCleanup: easyCleanup, easyStrerror: easyStrerror, multiInit: multiInit, multiCleanup: multiCleanup,
            multiAddHandle: multiAddHandle, multiRemoveHandle: multiRemoveHandle, multiStrerror: multiStrerror,
            multiSocketAction: multiSocketAction, multiInfoRead: multiInfoRead, slistAppend: slistAppend, slistFreeAll: slistFreeAll,
            easySetopt: easySetopt, easyGetinfo: easyGetinfo, multiSetopt: multiSetopt)
    }

    /// libcurl's words for `code`.
    func words(_ code: CURLcode) -> String { easyStrerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)" }

    /// libcurl's words for a multi handle's `code`.
    func words(_ code: CURLMcode) -> String { multiStrerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)" }
}
