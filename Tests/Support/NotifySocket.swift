import Foundation
import GeoAlarmSystem

/// A socket standing where systemd's notification socket would (`NOTIFY_SOCKET`), for a test to
/// read what a `Type=notify` service tells it.
public final class NotifySocket {
    private let descriptor: Int32
    /// The value of NOTIFY_SOCKET that reaches this socket: a path, or "@name".
    public let address: String
    private let file: String?

    /// A socket at a fresh path, or with `abstract` at a fresh name in the abstract namespace.
    public init(abstract: Bool = false) throws {
        let name = "geoalarm-notify-\(UUID().uuidString)"
        file = abstract ? nil : FileManager.default.temporaryDirectory.appendingPathComponent(name).path
        address = file ?? "@" + name
        descriptor = try System.localDatagramSocket(boundTo: address)
    }

    /// The next message whose fields ("READY=1", "STATUS=...") satisfy `wanted`, those before it
    /// passed over; nil when none comes within `seconds` (a bound on a failure: each message is
    /// waited for as it arrives).
    public func next(seconds: Double = Deadline.failure, where wanted: ([String]) -> Bool) -> [String]? {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while let fields = next(seconds: Double((deadline - .now).components.seconds)) {
            if wanted(fields) { return fields }
        }
        return nil
    }

    /// The next message's fields; nil when none comes within `seconds`.
    public func next(seconds: Double = Deadline.failure) -> [String]? {
        guard seconds > 0 else { return nil }
        var waiting = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        guard let ready = try? System.poll(&waiting, milliseconds: Int32(seconds * 1000)), ready > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard let count = try? buffer.withUnsafeMutableBytes({ try System.read(descriptor, to: $0.baseAddress!, count: $0.count) }) else {
            return nil
        }
        return String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").map(String.init)
    }

    deinit {
        System.close(descriptor)
        if let file { try? FileManager.default.removeItem(atPath: file) }
    }
}
