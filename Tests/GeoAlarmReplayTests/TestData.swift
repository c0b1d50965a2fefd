import Foundation
import Testing

/// The shared receiver captures beside the work tree (`../shared/testdata`), when present.
enum TestData {
    /// `$GEOALARM_TESTDATA`, else `shared/testdata` beside the repository.
    static let root: URL? = {
        if let given = ProcessInfo.processInfo.environment["GEOALARM_TESTDATA"] {
            return URL(fileURLWithPath: given)
        }
        var directory = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { directory.deleteLastPathComponent() }
        let candidate = directory.appendingPathComponent("shared/testdata")
        return FileManager.default.fileExists(atPath: candidate.path) ? candidate : nil
    }()

    /// True where the folder is absent on a developer's clone elsewhere. Under CI the tests
    /// always run, and fail if the folder is missing.
    static var isAbsent: Bool { root == nil && ProcessInfo.processInfo.environment["CI"] == nil }

    static func bytes(_ relative: String) throws -> [UInt8] {
        let root = try #require(root)
        return Array(try Data(contentsOf: root.appendingPathComponent(relative)))
    }
}
