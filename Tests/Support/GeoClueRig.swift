import Foundation
import GeoAlarmSystem

/// The real GeoClue daemon on a private system bus, fed NMEA by the test
/// (`Tests/GeoClue/geoclue_rig.py`, whose docstring says how), with a location agent of the
/// test's that allows, refuses or caps, or none.
public final class GeoClueRig {
    private let helper: Background
    private let commands: Int32
    private let folder: String
    private var closed = false
    /// `DBUS_SYSTEM_BUS_ADDRESS` of the private bus.
    public let busAddress: String

    /// The location agent the rig registers.
    public enum Agent: String {
        case allow, refuse, none
        /// At most street level (6: Wi-Fi's best).
        case capToStreet = "cap:6"
    }

    /// Starts the bus, GeoClue (its config refusing the desktop id `denied`, when given) and the
    /// agent, all in `folder` (the bus's socket is `folder/bus`; a new folder when none is
    /// given); returns once GeoClue is on the bus (and the agent registered).
    public init(agent: Agent, denied: String? = nil, folder given: String? = nil) throws {
        folder = given ?? FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-geoclue-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let (read, write) = try System.pipe()
        defer { System.close(read) }
        commands = write
        helper = try Background(
            [Command.root.appendingPathComponent("Tests/GeoClue/geoclue_rig.py").path, folder, agent.rawValue] + (denied.map { [$0] } ?? []),
            executable: URL(fileURLWithPath: "/usr/bin/python3"), stdin: read)
        guard helper.waitUntil({ $0.stdoutLines.contains("ready") }),
              let bus = helper.stdoutLines.first(where: { $0.hasPrefix("bus ") })?.dropFirst(4)
        else {
            let said = helper.stderr + ((try? String(contentsOfFile: folder + "/geoclue.log", encoding: .utf8)) ?? "")
            System.close(write)
            helper.stop()
            throw POSIXError(.ECHILD, userInfo: [NSLocalizedDescriptionKey: "the GeoClue rig did not start: \(said)"])
        }
        busAddress = String(bus)
    }

    /// The environment of a process that is to find this GeoClue on its system bus.
    public func environment(_ base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        base.merging(["DBUS_SYSTEM_BUS_ADDRESS": busAddress]) { $1 }
    }

    /// Writes `count` epochs of `file` from `first` on to GeoClue (once it reads the socket: a
    /// client has started it) and waits until all are written; false when they were not.
    @discardableResult
    public func play(_ file: String, first: Int = 0, count: Int = 1_000_000) -> Bool {
        let before = helper.stdoutLines.filter { $0.hasPrefix("played ") }.count
        send("play \(file) \(first) \(count)")
        return helper.waitUntil { $0.stdoutLines.filter { $0.hasPrefix("played ") }.count > before }
    }

    /// The seconds the last play moved its file's times of day on (0 for most: see the rig's
    /// `play`), which GeoClue's fixes carry and a replay of the file does not.
    public var lastShift: Double {
        helper.stdoutLines.last { $0.hasPrefix("played ") }.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// Stops GeoClue and starts it again (as a restart or an upgrade does); waits until it is back.
    public func restartGeoClue() -> Bool {
        let before = helper.stdoutLines.filter { $0 == "restarted" }.count
        send("restart")
        return helper.waitUntil { $0.stdoutLines.filter { $0 == "restarted" }.count > before }
    }

    /// The questions GeoClue asked the agent: "geoalarm 8" (its desktop id, the level asked).
    public var authorizations: [String] {
        helper.stdoutLines.filter { $0.hasPrefix("authorize ") }.map { String($0.dropFirst("authorize ".count)) }
    }

    /// What GeoClue logged.
    public var geoclueLog: String { (try? String(contentsOfFile: folder + "/geoclue.log", encoding: .utf8)) ?? "" }

    private func send(_ line: String) {
        try? System.writeAll(commands, Array((line + "\n").utf8))
    }

    /// Stops GeoClue, the agent and the bus.
    public func close() {
        guard !closed else { return }
        closed = true
        System.close(commands)
        _ = helper.exitStatus(within: 10)
        helper.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit {
        close()
    }
}
