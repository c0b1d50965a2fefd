import Foundation

/// A private desktop for tests: a `dbus-run-session` bus, an Xvfb display and dunst on both.
public final class DesktopSession: @unchecked Sendable {
    /// DISPLAY and DBUS_SESSION_BUS_ADDRESS of the session, on top of this process's environment.
    public let environment: [String: String]
    private let bus: Background
    private let display: Background
    private var dunst: Background?

    /// `dunstConfig` is a dunstrc's text.
    public init(dunstConfig: String) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-desktop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let addressFile = scratch.appendingPathComponent("bus").path
        bus = try Background(
            ["--", "/bin/sh", "-c", "echo \"$DBUS_SESSION_BUS_ADDRESS\" > \(addressFile).tmp && mv \(addressFile).tmp \(addressFile) && exec sleep 3600"],
            executable: URL(fileURLWithPath: "/usr/bin/dbus-run-session"))
        var number = Int.random(in: 200...900)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") { number += 1 }
        display = try Background(
            [":\(number)", "-screen", "0", "1024x600x24", "-nolisten", "tcp"], executable: URL(fileURLWithPath: "/usr/bin/Xvfb"))
        let end = Date().addingTimeInterval(30)
        while Date() < end, !(FileManager.default.fileExists(atPath: addressFile)
                              && FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)")) {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let address = try String(contentsOfFile: addressFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = ":\(number)"
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        self.environment = environment
        let rc = scratch.appendingPathComponent("dunstrc").path
        try Data(dunstConfig.utf8).write(to: URL(fileURLWithPath: rc))
        dunst = try Background(["-config", rc], executable: URL(fileURLWithPath: "/usr/bin/dunst"), environment: environment)
        while Date() < end, (try? dunstctl(["count"]).status) != 0 { Thread.sleep(forTimeInterval: 0.05) }
    }

    /// Runs `dunstctl ARGUMENTS` on the session's bus.
    public func dunstctl(_ arguments: [String]) throws -> Command {
        try Command.run(arguments, environment: environment, executable: "/usr/bin/dunstctl")
    }

    /// Closes every pop-up on screen, then returns dunst's history: one dictionary per pop-up,
    /// each field's value as dunst gives it (`summary`, `body`, `appname`, `timeout` in µs...).
    public func closedNotifications() throws -> [[String: Any]] {
        _ = try dunstctl(["close-all"])
        Thread.sleep(forTimeInterval: 0.3)
        let history = try dunstctl(["history"])
        guard let object = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any],
              let data = object["data"] as? [[[String: Any]]], let list = data.first
        else { return [] }
        return list.map { entry in entry.compactMapValues { ($0 as? [String: Any])?["data"] } }
    }

    /// Kills the notification server, as a crash would.
    public func killDunst() {
        dunst?.stop()
        dunst = nil
    }

    deinit {
        dunst?.stop()
        display.stop()
        bus.stop()
    }
}
