import Foundation

/// The shared receiver captures beside the work tree (`../shared/testdata`), when present.
public enum TestData {
    /// `$GEOALARM_TESTDATA`, else `shared/testdata` beside the repository.
    public static let root: URL? = {
        if let given = ProcessInfo.processInfo.environment["GEOALARM_TESTDATA"] {
            return URL(fileURLWithPath: given)
        }
        var directory = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { directory.deleteLastPathComponent() }  // Tests/Support/TestData.swift in the repository
        let candidate = directory.appendingPathComponent("shared/testdata")
        return FileManager.default.fileExists(atPath: candidate.path) ? candidate : nil
    }()

    /// True where the folder is absent on a developer's clone elsewhere. Under CI the tests
    /// always run, and fail if the folder is missing.
    public static var isAbsent: Bool { root == nil && ProcessInfo.processInfo.environment["CI"] == nil }

    /// Whether a capture is NMEA: most of its lines that are not `#` comments are sentences (the
    /// binary captures are for gpsd, not for our reader).
    public static func isNMEA(_ log: Data) -> Bool {
        let lines = String(decoding: log, as: UTF8.self).split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") }
        return !lines.isEmpty && lines.filter { $0.hasPrefix("$") }.count * 10 >= lines.count * 9
    }

    /// The bytes of a file below the folder, e.g. `gpsd/haicom-305N.log`.
    public static func bytes(_ relative: String) throws -> [UInt8] {
        guard let root else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "../shared/testdata"]) }
        return Array(try Data(contentsOf: root.appendingPathComponent(relative)))
    }
}
