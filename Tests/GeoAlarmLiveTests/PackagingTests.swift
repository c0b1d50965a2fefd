import Foundation
import GeoAlarmSystem
import GeoAlarmTestSupport
import Testing

/// `make install` lays out the binary, units, man page, completions and example configs, and
/// systemd accepts the units. (`make test-package` tests the Debian package built on this layout.)
struct PackagingTests {
    /// What GeoClue and the notification server know geoalarm by: the desktop file's basename.
    static let desktopID = "io.github.geoalarm.GeoAlarm"

    /// The desktop entry and the AppStream metainfo pass their validators (desktop-file-utils,
    /// appstreamcli without the network), and name one id, icon and launcher: the entry opens the map.
    @Test func desktopEntryAndMetainfoPassTheirValidators() throws {
        let folder = "packaging/desktop"
        let entry = try Command.run(["\(folder)/\(Self.desktopID).desktop"], executable: "/usr/bin/desktop-file-validate")
        #expect(entry.status == 0 && entry.stdout.isEmpty, "\(entry.stdout)\(entry.stderr)")
        let metainfo = try Command.run(
            ["validate", "--no-net", "\(folder)/\(Self.desktopID).metainfo.xml"], executable: "/usr/bin/appstreamcli")
        #expect(metainfo.status == 0, "\(metainfo.stdout)\(metainfo.stderr)")
        let text = try String(contentsOfFile: "\(folder)/\(Self.desktopID).desktop", encoding: .utf8)
        #expect(text.contains("\nIcon=\(Self.desktopID)\n") && text.contains("\nExec=geoalarm map --open\n"), "\(text)")
        #expect(text.contains("\nX-GNOME-UsesNotifications=true\n"), "GNOME lists it under Notifications")
        let component = try String(contentsOfFile: "\(folder)/\(Self.desktopID).metainfo.xml", encoding: .utf8)
        #expect(component.contains("<id>\(Self.desktopID)</id>")
                && component.contains("<launchable type=\"desktop-id\">\(Self.desktopID).desktop</launchable>"))
        let icon = try Command.run(
            ["-c", "import sys, xml.dom.minidom; print(xml.dom.minidom.parse(sys.argv[1]).documentElement.tagName)",
             "\(folder)/\(Self.desktopID).svg"], executable: "/usr/bin/python3")
        #expect(icon.stdout == "svg\n", "the icon is well-formed SVG: \(icon.stderr)")
        #expect(DesktopEntry.id == Self.desktopID, "the id GeoClue and the pop-ups give is the file's basename")
    }

    @Test func installedUnitsPassSystemdAnalyzeVerify() throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-prefix-\(UUID().uuidString)").path
        let install = try Command.run(
            ["install", "NO_BUILD=1", "INSTALL_CONFIGURATION=debug", "PREFIX=\(prefix)"], executable: "/usr/bin/make")
        #expect(install.status == 0, "\(install.stderr)")
        for file in ["bin/geoalarm", "lib/systemd/user/geoalarm.service", "lib/systemd/system/geoalarm-headless.service",
                     "share/doc/geoalarm/example.toml", "share/doc/geoalarm/demo.toml", "share/doc/geoalarm/demo/walk.nmea",
                     "share/man/man1/geoalarm.1", "share/man/man5/geoalarm.toml.5", "share/bash-completion/completions/geoalarm",
                     "share/zsh/vendor-completions/_geoalarm", "share/fish/vendor_completions.d/geoalarm.fish",
                     "share/applications/\(Self.desktopID).desktop", "share/metainfo/\(Self.desktopID).metainfo.xml",
                     "share/icons/hicolor/scalable/apps/\(Self.desktopID).svg"] {
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
        // Hardened: systemd's own rating of the exposure, at most 1.5 for the headless unit and
        // 2.2 for the desktop's (`--threshold` is ten times the rating).
        let headlessRating = try Command.run(
            ["security", "--offline=yes", "--threshold=15", "\(prefix)/lib/systemd/system/geoalarm-headless.service"],
            environment: environment, executable: "/usr/bin/systemd-analyze")
        #expect(headlessRating.status == 0, "\(headlessRating.stdout.split(separator: "\n").last ?? "")\(headlessRating.stderr)")
        let userRating = try Command.run(
            ["--user", "security", "--offline=yes", "--threshold=22", "\(prefix)/lib/systemd/user/geoalarm.service"],
            environment: environment, executable: "/usr/bin/systemd-analyze")
        #expect(userRating.status == 0, "\(userRating.stdout.split(separator: "\n").last ?? "")\(userRating.stderr)")
        let bash = try String(contentsOfFile: "\(prefix)/share/bash-completion/completions/geoalarm", encoding: .utf8)
        #expect(bash.contains("replay") && !bash.hasPrefix("#!"), "a bash completion is sourced, never run")
        // The binary's version is the one the Debian changelog's newest entry gives the package.
        let changelog = try String(contentsOfFile: "packaging/debian/changelog", encoding: .utf8)
        let version = changelog.split(separator: "\n")[0].split(separator: "(")[1].split(separator: ")")[0]
        let installed = try Command.run(["--version"], executable: "\(prefix)/bin/geoalarm")
        #expect(installed.stdout == "\(version)\n")
    }
}
