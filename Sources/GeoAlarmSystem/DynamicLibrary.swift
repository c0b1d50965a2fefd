import Glibc

/// A C library opened by its soname when a feature first needs it, not linked (libcurl for task
/// lists on servers, libmosquitto for `[mqtt]`, libsodium for OwnTracks' secrets, libnotify for
/// pop-ups, libgeoclue-2 for GeoClue), and never closed: its functions are looked up by name
/// (in it and the libraries it brings), each cast to the type its header declares, and the
/// names it lacks are said ("lacks curl_multi_socket_action: ... needs 7.85 or later").
public final class DynamicLibrary {
    public let soname: String
    private let handle: UnsafeMutableRawPointer
    /// The names looked up that the library lacks, in the order asked.
    public private(set) var missing: [String] = []

    /// Why a library cannot be had, said for the feature that needs it.
    public struct Unavailable: Error, Sendable {
        public let reason: String

        public init(_ reason: String) {
            self.reason = reason
        }
    }

    /// Opens `soname` with every symbol bound at once and kept to itself (`RTLD_NOW | RTLD_LOCAL`);
    /// when it cannot, says the loader's words and what to install for what ("cannot load
    /// libcurl.so.4 (...): install libcurl4 for task lists on servers").
    public init(soname: String, package: String, for feature: String) throws(Unavailable) {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "not found"
            throw Unavailable("cannot load \(soname) (\(why)): install \(package) for \(feature)")
        }
        self.soname = soname
        self.handle = handle
    }

    /// Why the library cannot serve: the names it lacks, and what is needed (`geoalarm needs
    /// libcurl 7.85 or later`), when said.
    public func lacking(_ need: String? = nil) -> Unavailable {
        Unavailable("\(soname) lacks \(missing.joined(separator: ", "))" + (need.map { ": " + $0 } ?? ""))
    }

    /// The address of `name`; nil (and noted in ``missing``) when the library lacks it.
    public func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        guard let address = dlsym(handle, name) else {
            missing.append(name)
            return nil
        }
        return address
    }

    /// The function `name` as `type`, which must be the C declaration's own (a
    /// `@convention(c)` function type); nil (noted in ``missing``) when the library lacks it.
    public func function<Function>(_ name: String, as type: Function.Type) -> Function? {
        symbol(name).map { unsafeBitCast($0, to: type) }
    }

    /// The function `name` as the type asked for, which must be the C declaration's own (a
    /// `@convention(c)` function type, inferred where the result goes); throws, naming it, when
    /// the library lacks it.
    public func required<Function>(_ name: String) throws(Unavailable) -> Function {
        guard let address = symbol(name) else { throw lacking() }
        return unsafeBitCast(address, to: Function.self)
    }
}
