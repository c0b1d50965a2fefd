import Foundation

/// A CalDAV server that misbehaves in one way (`Tests/Tasks/hostile_dav.py`, whose docstring
/// lists its modes), for the tests of bad servers and of what `doctor` says of them.
public enum HostileDAV {
    /// Starts one in `mode` (over TLS with `certificates`), waits until it listens, and returns
    /// it with the address of its `/tasks/`; the caller stops it.
    public static func start(_ mode: String, certificates: TestCertificates? = nil) throws -> (server: Background, tasksURL: String) {
        let tls = certificates.map { [$0.certificate, $0.key] } ?? []
        let server = try Background(
            [Command.root.appendingPathComponent("Tests/Tasks/hostile_dav.py").path, mode] + tls,
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        guard server.waitUntil({ $0.stdout.hasPrefix("listening ") }), let port = Int(server.stdoutLines.first?.dropFirst("listening ".count) ?? "")
        else {
            server.stop()
            throw POSIXError(.ECHILD)
        }
        return (server, (certificates == nil ? "http://127.0.0.1:" : "https://localhost:") + "\(port)/tasks/")
    }
}
