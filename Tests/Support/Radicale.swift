import Foundation

/// A private Radicale CalDAV server on a loopback port it picks (it says which, and keeps it
/// when started again), any password taken for any user (or only `password` for ``user``), each
/// user owning their own collections, over HTTP (or HTTPS with `certificates`); with a
/// vdirsyncer pair that syncs one user's task collection `tasks` with a vdir, and the `caldav`
/// library's client and todoman as the other programs that read and write the list.
public final class Radicale: @unchecked Sendable {
    public let folder: URL
    public private(set) var port = 0
    private var server: Background?
    /// The user whose collection is synced.
    public let user = "ana"
    /// The only password taken, when one is set.
    public let password: String?
    public let certificates: TestCertificates?
    /// Requests of the runs before this one (Radicale's log, at info).
    private var earlierLog = ""

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public init(password: String? = nil, tls: Bool = false, certificateNames: String = TestCertificates.loopbackNames) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-radicale-\(UUID().uuidString)")
        self.password = password
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("vdir"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("status"), withIntermediateDirectories: true)
        certificates = tls ? try TestCertificates(in: folder.path, names: certificateNames) : nil
        try start()
    }

    /// Starts (again, on the port it had), and waits until it listens.
    public func start() throws {
        var auth = "type = none"
        if let password {
            try "\(user):\(password)\n".write(to: folder.appendingPathComponent("users"), atomically: true, encoding: .utf8)
            auth = "type = htpasswd\nhtpasswd_filename = \(folder.path)/users\nhtpasswd_encryption = plain"
        }
        let tls = certificates.map { "ssl = True\ncertificate = \($0.certificate)\nkey = \($0.key)\n" } ?? ""
        try """
            [server]
            hosts = 127.0.0.1:\(port)
            \(tls)
            [auth]
            \(auth)
            [rights]
            type = owner_only
            [storage]
            filesystem_folder = \(folder.path)/collections
            [logging]
            level = info

            """.write(to: folder.appendingPathComponent("radicale.conf"), atomically: true, encoding: .utf8)
        let server = try Background(
            ["--config", folder.appendingPathComponent("radicale.conf").path], executable: URL(fileURLWithPath: "/usr/bin/radicale"))
        self.server = server
        let said = "Listening on '[127.0.0.1]:"
        guard server.waitUntil({ $0.stderr.contains("Radicale server ready") }),
              let line = server.stderrLines.last(where: { $0.contains(said) }),
              let port = Int(line.components(separatedBy: said).last?.prefix { $0.isNumber } ?? "")
        else { throw Failure(description: "radicale did not start: \(server.stderr)") }
        self.port = port
        try writeSyncConfig()
    }

    public func stop() {
        server?.signal(SIGTERM)
        _ = server?.exitStatus(within: 30)
        earlierLog += server?.stderr ?? ""
        server?.stop()
        server = nil
    }

    /// What the server logged (each request, at info), over all its runs.
    public var log: String { earlierLog + (server?.stderr ?? "") }

    /// How many `METHOD` requests for `path` geoalarm made of the server, over all its runs.
    public func requests(_ method: String, for path: String) -> Int {
        log.components(separatedBy: "\n").filter { $0.contains("\(method) request for '\(path)'") && $0.contains("using 'geoalarm'") }.count
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    public var url: String { certificates == nil ? "http://127.0.0.1:\(port)/" : "https://localhost:\(port)/" }
    /// The address of the user's task collection.
    public var tasksURL: String { "\(url)\(user)/tasks/" }
    /// The folder vdirsyncer keeps the collection in.
    public var vdir: String { folder.appendingPathComponent("vdir").path }

    /// Runs the caldav client (Tests/Tasks/caldav_peer.py, in the venv `make tasks-deps` makes).
    public func client(_ arguments: [String]) throws -> Command {
        let python = Command.root.appendingPathComponent(".build/tasks-venv/bin/python3").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "no \(python): `make tasks-deps` makes it (caldav from PyPI)")
        }
        let script = Command.root.appendingPathComponent("Tests/Tasks/caldav_peer.py").path
        var environment = ProcessInfo.processInfo.environment
        environment["CALDAV_PASSWORD"] = password ?? "x"
        environment["CALDAV_CAFILE"] = certificates?.authority
        let run = try Command.run([script, url, user] + arguments, environment: environment, executable: python)
        guard run.status == 0 else { throw Failure(description: "caldav_peer \(arguments): \(run.stderr)") }
        return run
    }

    /// `vdirsyncer sync` (after `discover` the first time) of the collection with ``vdir``.
    public func sync() throws {
        let config = folder.appendingPathComponent("vdirsyncer.conf").path
        if !FileManager.default.fileExists(atPath: folder.appendingPathComponent("discovered").path) {
            let discover = try Command.run(["-c", config, "discover"], stdin: "y\n", executable: "/usr/bin/vdirsyncer")
            guard discover.status == 0 else { throw Failure(description: "vdirsyncer discover: \(discover.stderr)") }
            _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("discovered").path, contents: nil)
        }
        let sync = try Command.run(["-c", config, "sync"], executable: "/usr/bin/vdirsyncer")
        guard sync.status == 0 else { throw Failure(description: "vdirsyncer sync: \(sync.stdout) \(sync.stderr)") }
    }

    /// todoman's JSON list of the vdir's tasks (`--porcelain`), completed ones too.
    public func todoman() throws -> [[String: Any]] {
        let run = try Command.run(
            ["--config", folder.appendingPathComponent("todoman.py").path, "--porcelain", "list", "--status", "ANY"],
            executable: "/usr/bin/todoman")
        guard run.status == 0 else { throw Failure(description: "todoman: \(run.stderr)") }
        return try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]] ?? []
    }

    /// A vdirsyncer config keeping the collection at `url` and the folder `vdir` in step, its
    /// status in `status` (for a server that asks no password: any will do).
    public static func vdirsyncerConfig(status: String, vdir: String, url: String, user: String) -> String {
        """
        [general]
        status_path = "\(status)/"

        [pair tasks]
        a = "local"
        b = "server"
        collections = null

        [storage local]
        type = "filesystem"
        path = "\(vdir)/"
        fileext = ".ics"

        [storage server]
        type = "caldav"
        url = "\(url)"
        username = "\(user)"
        password = "x"
        item_types = ["VTODO"]

        """
    }

    private func writeSyncConfig() throws {
        try Self.vdirsyncerConfig(status: folder.path + "/status", vdir: vdir, url: "\(url)\(user)/tasks/", user: user)
            .write(to: folder.appendingPathComponent("vdirsyncer.conf"), atomically: true, encoding: .utf8)
        // todoman reads every folder the glob matches as a list: here the one vdir.
        try """
            path = "\(vdir)*"
            date_format = "%Y-%m-%d"
            time_format = "%H:%M"
            cache_path = "\(folder.path)/todoman-cache.sqlite"

            """.write(to: folder.appendingPathComponent("todoman.py"), atomically: true, encoding: .utf8)
    }
}
