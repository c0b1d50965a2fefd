import Foundation

/// A private mosquitto broker on a loopback port reserved for it, with a generated config (never
/// the machine's 1883); it keeps its sessions across a restart on the same port.
public final class Mosquitto: @unchecked Sendable {
    private let reservation: PortReservation
    public var port: Int { reservation.port }
    /// The broker's certificate and the authority that signed it, when it speaks TLS.
    public let certificates: TestCertificates?
    private let folder: URL
    private var broker: Background?

    /// Starts a broker; `passwords` maps users to passwords (none: anonymous clients allowed);
    /// `options` are further lines of its config (`max_queued_messages 0`); with `tls`, it takes
    /// only TLS connections, to `localhost`, with a certificate made for the occasion.
    public init(passwords: [String: String] = [:], options: [String] = [], tls: Bool = false) throws {
        reservation = try PortReservation()
        let port = reservation.port
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-mosquitto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        certificates = tls ? try TestCertificates(in: folder.path) : nil
        var config = """
            listener \(port) \(tls ? "localhost" : "127.0.0.1")
            persistence true
            persistence_location \(folder.path)/
            autosave_interval 1

            """
        // Started as root, mosquitto would switch to its own user and could not read these files.
        if geteuid() == 0 { config += "user root\n" }
        if let certificates {
            config += "cafile \(certificates.authority)\ncertfile \(certificates.certificate)\nkeyfile \(certificates.key)\n"
        }
        for option in options { config += option + "\n" }
        if passwords.isEmpty {
            config += "allow_anonymous true\n"
        } else {
            let file = folder.appendingPathComponent("passwords").path
            _ = FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600])
            for (user, password) in passwords {
                let made = try Command.run(["-b", file, user, password], executable: "/usr/bin/mosquitto_passwd")
                guard made.status == 0 else { throw POSIXError(.EINVAL) }
            }
            config += "allow_anonymous false\npassword_file \(file)\n"
        }
        try config.write(to: folder.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    /// What the broker logged (its warnings: "Outgoing messages are being dropped for client ...").
    public var log: String { broker?.stderr ?? "" }

    /// Waits until the broker has logged `text` (woken by its log growing).
    public func waitUntilLogged(_ text: String, seconds: Double = Deadline.failure) -> Bool {
        broker?.waitUntil(seconds: seconds) { $0.stderr.contains(text) } ?? false
    }

    /// Waits until the broker has logged `client`'s subscription to `filter` (with `log_type
    /// subscribe`: "TIME: CLIENT QOS FILTER"), whatever the QoS: a line of this client, not of an
    /// earlier one subscribed to the same filter.
    public func waitUntilSubscribed(_ client: String, to filter: String, seconds: Double = Deadline.failure) -> Bool {
        broker?.waitUntil(seconds: seconds) { output in
            output.stderrLines.contains { line in
                line.hasSuffix(" \(filter)") && line.contains(": \(client) ")
            }
        } ?? false
    }

    /// Starts `mosquitto_pub` publishing each of `lines` as a message on `topic` at QoS 1, as
    /// fast as the broker takes them (a phone flushing its queue).
    public func publisher(_ topic: String, lines: [String]) throws -> Background {
        let file = folder.appendingPathComponent("lines-\(UUID().uuidString)").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        return try Background(
            ["-c", "exec /usr/bin/mosquitto_pub \(clientArguments.joined(separator: " ")) -q 1 -t '\(topic)' -l < '\(file)'"],
            executable: URL(fileURLWithPath: "/bin/sh"))
    }

    /// "mqtt://127.0.0.1:PORT", or "mqtts://localhost:PORT" (the name its certificate holds).
    public var url: String { certificates == nil ? "mqtt://127.0.0.1:\(port)" : "mqtts://localhost:\(port)" }

    /// How mosquitto_sub and mosquitto_pub reach it.
    private var clientArguments: [String] {
        guard let certificates else { return ["-h", "127.0.0.1", "-p", String(port)] }
        return ["-h", "localhost", "-p", String(port), "--cafile", certificates.authority]
    }

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts (again) on the same port and waits until it listens (it says "running" once every
    /// listener is open).
    public func start() throws {
        let broker = try Background(
            ["-c", folder.appendingPathComponent("mosquitto.conf").path],
            executable: URL(fileURLWithPath: "/usr/sbin/mosquitto"))
        self.broker = broker
        guard broker.waitUntil({ $0.stderr.contains(" running") }) else {
            throw StartError(description: "mosquitto did not start on port \(port): \(broker.stderr)")
        }
    }

    /// Stops it as an administrator would (SIGTERM: sessions saved), and waits for it to end.
    public func stop() {
        broker?.signal(SIGTERM)
        _ = broker?.exitStatus(within: 10)
        broker?.stop()
        broker = nil
    }

    /// A subscriber printing `TOPIC PAYLOAD` lines (retained ones included); with `session`, a
    /// persistent QoS 1 session that gets what was published while it was away.
    public func subscribe(_ filters: [String] = ["#"], session: String? = nil, user: (String, String)? = nil) throws -> Background {
        var arguments = clientArguments + ["-v", "-q", "1"]
        if let session { arguments += ["-c", "-i", session] }
        if let (name, password) = user { arguments += ["-u", name, "-P", password] }
        // mosquitto_sub says nothing once subscribed: a retained message on a topic of its own,
        // subscribed last, reaches it once every filter before it is in force.
        let probe = MQTTLines.probePrefix + UUID().uuidString
        try publish(probe, "ready", retain: true, user: user)
        for filter in filters + [probe] { arguments += ["-t", filter] }
        let subscriber = try Background(arguments, executable: URL(fileURLWithPath: "/usr/bin/mosquitto_sub"))
        guard subscriber.waitUntil({ $0.stdout.contains(probe + " ready") }) else {
            throw StartError(description: "mosquitto_sub did not subscribe: \(subscriber.stderr)")
        }
        return subscriber
    }

    /// Publishes one message with mosquitto_pub, and waits until it has.
    public func publish(_ topic: String, _ payload: String, retain: Bool = false, user: (String, String)? = nil) throws {
        var arguments = clientArguments + ["-q", "1", "-t", topic]
        // An argument can be 128 KiB at most: a longer payload goes through a file.
        if payload.utf8.count > 64 << 10 {
            arguments += ["-f", try Command.temporaryFile(payload, named: "payload")]
        } else {
            arguments += ["-m", payload]
        }
        if retain { arguments.append("-r") }
        if let (name, password) = user { arguments += ["-u", name, "-P", password] }
        // Spawned as the agent is (no Foundation Process, which adds a thread to the test process
        // that the hook tests, counting threads, would see).
        let publisher = try Background(arguments, executable: URL(fileURLWithPath: "/usr/bin/mosquitto_pub"))
        guard publisher.exitStatus() == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// A certificate authority and a certificate it signed for `localhost` (and 127.0.0.1), made
/// with openssl in a folder, as a TLS broker and its clients need them.
public struct TestCertificates: Sendable {
    /// The authority's certificate: what clients are given as `cafile`.
    public let authority: String
    public let certificate: String
    public let key: String

    /// The names a certificate made for the loopback holds.
    public static let loopbackNames = "DNS:localhost, IP:127.0.0.1"

    /// Makes them in `folder`, the certificate for `names` (an X.509 subjectAltName list).
    public init(in folder: String, names subjectNames: String = loopbackNames) throws {
        authority = folder + "/ca.crt"
        certificate = folder + "/server.crt"
        key = folder + "/server.key"
        let authorityKey = folder + "/ca.key", request = folder + "/server.csr", names = folder + "/names.ext"
        try "subjectAltName = \(subjectNames)\n".write(toFile: names, atomically: true, encoding: .utf8)
        try Self.openssl([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=geoalarm test authority",
            "-keyout", authorityKey, "-out", authority,
        ])
        try Self.openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", key, "-out", request])
        try Self.openssl([
            "x509", "-req", "-in", request, "-CA", authority, "-CAkey", authorityKey, "-CAcreateserial", "-days", "2",
            "-extfile", names, "-out", certificate,
        ])
    }

    private static func openssl(_ arguments: [String]) throws {
        let run = try Background(arguments, executable: URL(fileURLWithPath: "/usr/bin/openssl"))
        guard run.exitStatus() == 0 else { throw POSIXError(.EINVAL) }
    }
}

/// The `TOPIC PAYLOAD` lines of a `mosquitto_sub -v`, split.
public struct MQTTLines {
    public var messages: [(topic: String, payload: String)]

    /// Topics of the retained messages that tell a test its subscriber is ready: left out here.
    static let probePrefix = "geoalarm-test-ready/"

    public init(_ output: String) {
        messages = output.split(separator: "\n").filter { !$0.hasPrefix(Self.probePrefix) }.map { line in
            guard let space = line.firstIndex(of: " ") else { return (String(line), "") }
            let payload = String(line[line.index(after: space)...])
            return (String(line[..<space]), payload == "(null)" ? "" : payload)
        }
    }

    /// The payloads published on `topic`, in order.
    public func payloads(on topic: String) -> [String] {
        messages.filter { $0.topic == topic }.map(\.payload)
    }

    /// The payloads on `topic` read as JSON objects.
    public func objects(on topic: String) -> [[String: Any]] {
        payloads(on: topic).compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}
