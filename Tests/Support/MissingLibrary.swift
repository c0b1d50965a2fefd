import Foundation

/// A shared library of a library's name that has none of its functions, in a folder of its own:
/// first on `LD_LIBRARY_PATH`, it is what a program finds in place of a library it loads on use,
/// as on a machine where that library cannot be had. ``remove()`` takes the folder away.
public struct MissingLibrary {
    /// The folder to put first on `LD_LIBRARY_PATH`.
    public let folder: String

    /// Builds the empty library `soname` (`cc -shared` of no code).
    public init(_ soname: String) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-missing-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let built = try Command.run(["cc", "-shared", "-o", "\(folder)/\(soname)", "-x", "c", "/dev/null"], executable: "/usr/bin/env")
        guard built.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: built.stderr]) }
    }

    /// Removes the folder and the library.
    public func remove() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// This process's environment with the folder as `LD_LIBRARY_PATH`.
    public var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["LD_LIBRARY_PATH": folder]) { $1 }
    }
}
