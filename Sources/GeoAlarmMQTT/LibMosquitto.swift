internal import CMosquitto
import GeoAlarmSystem

/// libmosquitto's functions, loaded from `libmosquitto.so.1` when the first client connects, not
/// linked: an agent with no `[mqtt]` never maps libmosquitto, nor OpenSSL's libssl and libcrypto,
/// which it brings (about 1.7 MB resident on the demo walk). Loaded once for the process and never
/// unloaded; `mosquitto_lib_init` is called right after.
struct LibMosquitto: @unchecked Sendable {
    /// A callback of a client and its context, with a code (connect, publish).
    typealias CodeCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void
    typealias MessageCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?) -> Void
    typealias SubscribeCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<Int32>?) -> Void
    typealias LogCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void
    typealias PasswordCallback = @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32

    // The signatures are mosquitto.h's, as Swift imports its types (`struct mosquitto *` and
    // `mosquitto_property *` are opaque); `dlsym`'s address is only ever cast to its declaration's.
    let new: @convention(c) (UnsafePointer<CChar>?, Bool, UnsafeMutableRawPointer?) -> OpaquePointer?
    let destroy: @convention(c) (OpaquePointer?) -> Void
    let intOption: @convention(c) (OpaquePointer?, mosq_opt_t, Int32) -> Int32
    let threadedSet: @convention(c) (OpaquePointer?, Bool) -> Int32
    let usernamePasswordSet: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let tlsSet: @convention(c) (
        OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, PasswordCallback?
    ) -> Int32
    let willSet: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32
    let connect: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, Int32) -> Int32
    let connectBindV5: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, Int32, UnsafePointer<CChar>?, OpaquePointer?) -> Int32
    let disconnect: @convention(c) (OpaquePointer?) -> Int32
    let publish: @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32
    let subscribe: @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32) -> Int32
    let loopRead: @convention(c) (OpaquePointer?, Int32) -> Int32
    let loopWrite: @convention(c) (OpaquePointer?, Int32) -> Int32
    let loopMisc: @convention(c) (OpaquePointer?) -> Int32
    let socket: @convention(c) (OpaquePointer?) -> Int32
    let wantWrite: @convention(c) (OpaquePointer?) -> Bool
    let connectCallbackSet: @convention(c) (OpaquePointer?, CodeCallback?) -> Void
    let publishCallbackSet: @convention(c) (OpaquePointer?, CodeCallback?) -> Void
    let messageCallbackSet: @convention(c) (OpaquePointer?, MessageCallback?) -> Void
    let subscribeCallbackSet: @convention(c) (OpaquePointer?, SubscribeCallback?) -> Void
    let logCallbackSet: @convention(c) (OpaquePointer?, LogCallback?) -> Void
    let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let connackString: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let propertyAddInt32: @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, Int32, UInt32) -> Int32
    let propertyFreeAll: @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void

    /// The library's soname, as Debian's libmosquitto1 installs it.
    static let soname = "libmosquitto.so.1"

    /// The process's libmosquitto, or why it cannot be had, loaded on first use.
    static let loaded = Result<LibMosquitto, DynamicLibrary.Unavailable> { () throws(DynamicLibrary.Unavailable) in try load() }

    /// The library once loaded; nil before (no client has connected) or when it cannot be had. A
    /// client handle exists only once it is loaded, so whatever holds one finds it here.
    static var library: LibMosquitto? { try? loaded.get() }

    private static func load() throws(DynamicLibrary.Unavailable) -> LibMosquitto {
        let library = try DynamicLibrary(soname: soname, package: "libmosquitto1", for: "[mqtt]")
        typealias Handle = OpaquePointer?
        typealias Text = UnsafePointer<CChar>?
        guard
            let libInit = library.function("mosquitto_lib_init", as: (@convention(c) () -> Int32).self),
            let new = library.function("mosquitto_new", as: (@convention(c) (Text, Bool, UnsafeMutableRawPointer?) -> Handle).self),
            let destroy = library.function("mosquitto_destroy", as: (@convention(c) (Handle) -> Void).self),
            let intOption = library.function("mosquitto_int_option", as: (@convention(c) (Handle, mosq_opt_t, Int32) -> Int32).self),
            let threadedSet = library.function("mosquitto_threaded_set", as: (@convention(c) (Handle, Bool) -> Int32).self),
            let usernamePasswordSet = library.function("mosquitto_username_pw_set", as: (@convention(c) (Handle, Text, Text) -> Int32).self),
            let tlsSet = library.function("mosquitto_tls_set", as: (@convention(c) (Handle, Text, Text, Text, Text, PasswordCallback?) -> Int32).self),
            let willSet = library.function("mosquitto_will_set", as: (@convention(c) (Handle, Text, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32).self),
            let connect = library.function("mosquitto_connect", as: (@convention(c) (Handle, Text, Int32, Int32) -> Int32).self),
            let connectBindV5 = library.function("mosquitto_connect_bind_v5", as: (@convention(c) (Handle, Text, Int32, Int32, Text, Handle) -> Int32).self),
            let disconnect = library.function("mosquitto_disconnect", as: (@convention(c) (Handle) -> Int32).self),
            let publish = library.function(
                "mosquitto_publish", as: (@convention(c) (Handle, UnsafeMutablePointer<Int32>?, Text, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32).self),
            let subscribe = library.function("mosquitto_subscribe", as: (@convention(c) (Handle, UnsafeMutablePointer<Int32>?, Text, Int32) -> Int32).self),
            let loopRead = library.function("mosquitto_loop_read", as: (@convention(c) (Handle, Int32) -> Int32).self),
            let loopWrite = library.function("mosquitto_loop_write", as: (@convention(c) (Handle, Int32) -> Int32).self),
            let loopMisc = library.function("mosquitto_loop_misc", as: (@convention(c) (Handle) -> Int32).self),
            let socket = library.function("mosquitto_socket", as: (@convention(c) (Handle) -> Int32).self),
            let wantWrite = library.function("mosquitto_want_write", as: (@convention(c) (Handle) -> Bool).self),
            let connectCallbackSet = library.function("mosquitto_connect_callback_set", as: (@convention(c) (Handle, CodeCallback?) -> Void).self),
            let publishCallbackSet = library.function("mosquitto_publish_callback_set", as: (@convention(c) (Handle, CodeCallback?) -> Void).self),
            let messageCallbackSet = library.function("mosquitto_message_callback_set", as: (@convention(c) (Handle, MessageCallback?) -> Void).self),
            let subscribeCallbackSet = library.function("mosquitto_subscribe_callback_set", as: (@convention(c) (Handle, SubscribeCallback?) -> Void).self),
            let logCallbackSet = library.function("mosquitto_log_callback_set", as: (@convention(c) (Handle, LogCallback?) -> Void).self),
            let strerror = library.function("mosquitto_strerror", as: (@convention(c) (Int32) -> Text).self),
            let connackString = library.function("mosquitto_connack_string", as: (@convention(c) (Int32) -> Text).self),
            let propertyAddInt32 = library.function(
                "mosquitto_property_add_int32", as: (@convention(c) (UnsafeMutablePointer<OpaquePointer?>?, Int32, UInt32) -> Int32).self),
            let propertyFreeAll = library.function("mosquitto_property_free_all", as: (@convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void).self)
        else {
            throw library.lacking("geoalarm needs libmosquitto 1.6 or later")
        }
        guard libInit() == MOSQ_ERR_SUCCESS.rawValue else { throw DynamicLibrary.Unavailable("libmosquitto could not be initialised") }
        return LibMosquitto(
            new: new, destroy: destroy, intOption: intOption, threadedSet: threadedSet, usernamePasswordSet: usernamePasswordSet,
            tlsSet: tlsSet, willSet: willSet, connect: connect, connectBindV5: connectBindV5, disconnect: disconnect, publish: publish,
            subscribe: subscribe, loopRead: loopRead, loopWrite: loopWrite, loopMisc: loopMisc, socket: socket, wantWrite: wantWrite,
            connectCallbackSet: connectCallbackSet, publishCallbackSet: publishCallbackSet, messageCallbackSet: messageCallbackSet,
            subscribeCallbackSet: subscribeCallbackSet, logCallbackSet: logCallbackSet, strerror: strerror, connackString: connackString,
            propertyAddInt32: propertyAddInt32, propertyFreeAll: propertyFreeAll)
    }
}
