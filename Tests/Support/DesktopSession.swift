import Foundation

/// A private desktop for tests: a `dbus-run-session` bus, an Xvfb display and dunst on both.
///
/// Each part is waited for on its own signal of readiness: the bus's address in a file put in
/// place by a rename, Xvfb's `-displayfd` (it picks a free display and writes its number when
/// it takes connections), `gdbus wait` for dunst's name on the bus. What dunst does is seen as
/// it happens: a dunst rule runs a script for every pop-up it shows, and `dbus-monitor` logs
/// the notification signals (a pop-up closed, a button pressed) and each Notify call, hints and all.
public final class DesktopSession: @unchecked Sendable {
    /// DISPLAY and DBUS_SESSION_BUS_ADDRESS of the session, on top of this process's environment.
    public let environment: [String: String]
    private let bus: Background
    private let display: Background
    private let monitor: Background
    private var dunst: Background?
    /// The summaries of the pop-ups dunst has shown, a line each, in order.
    private let shownPath: String

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// `dunstConfig` is a dunstrc's text; a rule that records every pop-up shown is added to it.
    public init(dunstConfig: String) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-desktop-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let addressFile = scratch + "/bus"
        // Debian's session.conf listens in /tmp whatever TMPDIR says; the bus's socket belongs in
        // the test's own folder, which goes when the test run's TMPDIR goes.
        let daemon = scratch + "/dbus-daemon"
        try Command.writeScript("#!/bin/sh\nexec /usr/bin/dbus-daemon \"$@\" '--address=unix:dir=\(scratch)'\n", to: daemon)
        bus = try Background(
            ["--dbus-daemon=\(daemon)", "--", "/bin/sh", "-c", "echo \"$DBUS_SESSION_BUS_ADDRESS\" > \(addressFile).tmp && mv \(addressFile).tmp \(addressFile) && exec sleep 3600"],
            executable: URL(fileURLWithPath: "/usr/bin/dbus-run-session"))
        display = try Background(
            ["-displayfd", "1", "-screen", "0", "1024x600x24", "-nolisten", "tcp"], executable: URL(fileURLWithPath: "/usr/bin/Xvfb"))
        // Watched with the bus's end too: a bus that cannot start (its socket's path too long)
        // is said at once, not at the deadline.
        var address = ""
        guard bus.waitUntil(watching: [scratch], { _ in
            address = (try? String(contentsOfFile: addressFile, encoding: .utf8)) ?? ""
            return address.hasSuffix("\n")
        }) else {
            throw StartError(description: "dbus-run-session gave no bus address: \(bus.stderr)")
        }
        guard display.waitUntil({ $0.stdout.hasSuffix("\n") }), let number = Int(display.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw StartError(description: "Xvfb did not start: \(display.stderr)")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = ":\(number)"
        environment["DBUS_SESSION_BUS_ADDRESS"] = address.trimmingCharacters(in: .whitespacesAndNewlines)
        self.environment = environment

        monitor = try Background(
            ["--session", "type='signal',interface='org.freedesktop.Notifications'",
             "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"],
            executable: URL(fileURLWithPath: "/usr/bin/dbus-monitor"), environment: environment)
        // Its first messages say that it has become a monitor: from then on it misses nothing.
        guard monitor.waitUntil({ $0.stdout.contains("member=NameLost") }) else {
            throw StartError(description: "dbus-monitor did not start: \(monitor.stderr)")
        }

        shownPath = scratch + "/shown"
        let script = scratch + "/record-shown"
        try Command.writeScript("#!/bin/sh\nprintf '%s\\n' \"$2\" >> \(shownPath)\n", to: script)
        let rc = scratch + "/dunstrc"
        try Data((dunstConfig + "\n[geoalarm-test-record-shown]\n    summary = \"*\"\n    script = \(script)\n").utf8)
            .write(to: URL(fileURLWithPath: rc))
        dunst = try Background(["-config", rc], executable: URL(fileURLWithPath: "/usr/bin/dunst"), environment: environment)
        let named = try Background(
            ["wait", "--session", "--timeout", String(Int(Deadline.failure)), "org.freedesktop.Notifications"],
            executable: URL(fileURLWithPath: "/usr/bin/gdbus"), environment: environment)
        guard named.exitStatus(within: Deadline.failure + 10) == 0 else {
            throw StartError(description: "dunst did not take its name on the bus: \(dunst?.stderr ?? "")")
        }
    }

    /// Runs `dunstctl ARGUMENTS` on the session's bus.
    /// What `dbus-monitor` saw so far: the Notify calls and the notification signals.
    public var busLog: String { monitor.stdout }

    public func dunstctl(_ arguments: [String]) throws -> Command {
        try Command.run(arguments, environment: environment, executable: "/usr/bin/dunstctl")
    }

    /// The summaries of the pop-ups dunst has shown so far, in order.
    public var shown: [String] {
        ((try? String(contentsOfFile: shownPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Waits until dunst has shown `count` pop-ups; false when `seconds` pass first.
    @discardableResult
    public func waitUntilShown(_ count: Int, seconds: Double = Deadline.failure) -> Bool {
        EventWait(folders: [URL(fileURLWithPath: shownPath).deletingLastPathComponent().path]).until(seconds: seconds) {
            shown.count >= count
        }
    }

    /// Waits until `condition` holds, looking again whenever the notification server signals
    /// something (a pop-up closed, a button pressed); false when `seconds` pass first.
    @discardableResult
    public func waitForSignals(seconds: Double = Deadline.failure, until condition: () -> Bool) -> Bool {
        monitor.waitUntil(seconds: seconds) { _ in condition() }
    }

    /// Closes every pop-up on screen (dunstctl waits for dunst's answer), then returns dunst's
    /// history: one dictionary per pop-up, each field's value as dunst gives it (`summary`,
    /// `body`, `appname`, `timeout` in µs...).
    public func closedNotifications() throws -> [[String: Any]] {
        _ = try dunstctl(["close-all"])
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
        monitor.stop()
        display.stop()
        bus.stop()
    }
}
