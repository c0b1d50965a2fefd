import Foundation
import GeoAlarmTestSupport
import Testing

/// `make install` lays out the binary, units, example and man page, and systemd accepts the units.
struct PackagingTests {
    @Test func installedUnitsPassSystemdAnalyzeVerify() throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-prefix-\(UUID().uuidString)").path
        let install = try Command.run(
            ["install", "NO_BUILD=1", "INSTALL_CONFIGURATION=debug", "PREFIX=\(prefix)"], executable: "/usr/bin/make")
        #expect(install.status == 0, "\(install.stderr)")
        for file in ["bin/geoalarm", "lib/systemd/user/geoalarm.service", "lib/systemd/system/geoalarm-headless.service",
                     "share/doc/geoalarm/example.toml", "share/man/man1/geoalarm.1"] {
            #expect(FileManager.default.fileExists(atPath: "\(prefix)/\(file)"), "\(file) not installed")
        }
        let headless = try String(contentsOfFile: "\(prefix)/lib/systemd/system/geoalarm-headless.service", encoding: .utf8)
        #expect(headless.contains("ExecStart=\(prefix)/bin/geoalarm run --headless"))

        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-xdg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var environment = ProcessInfo.processInfo.environment
        environment["MANPATH"] = "\(prefix)/share/man:"
        environment["XDG_RUNTIME_DIR"] = runtime.path
        let system = try Command.run(
            ["verify", "\(prefix)/lib/systemd/system/geoalarm-headless.service"],
            environment: environment, executable: "/usr/bin/systemd-analyze")
        #expect(system.status == 0, "\(system.stdout)\(system.stderr)")
        let user = try Command.run(
            ["--user", "verify", "\(prefix)/lib/systemd/user/geoalarm.service"],
            environment: environment, executable: "/usr/bin/systemd-analyze")
        #expect(user.status == 0, "\(user.stdout)\(user.stderr)")
        let installed = try Command.run(["--version"], executable: "\(prefix)/bin/geoalarm")
        #expect(installed.stdout.hasPrefix("0.1.0"))
    }
}
