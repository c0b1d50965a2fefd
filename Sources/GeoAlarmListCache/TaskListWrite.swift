/// A change to a task on a server, waiting to be made: made again on the object as the server
/// has it when it goes out (so that another device's edit meanwhile survives).
public struct TaskListWrite: Sendable, Equatable {
    /// Its place in the queue (0 for one not queued yet).
    public var number: Int64
    /// The list's name.
    public var list: String
    public var kind: Kind
    public var uid: String
    /// The object's address on the server.
    public var href: String
    /// When it was asked for (a completion's time).
    public var time: Double
    /// A new task's object.
    public var bytes: [UInt8]

    public enum Kind: String, Sendable {
        case complete, uncomplete, create, delete
    }

    public init(number: Int64 = 0, list: String, kind: Kind, uid: String, href: String, time: Double, bytes: [UInt8] = []) {
        self.number = number
        self.list = list
        self.kind = kind
        self.uid = uid
        self.href = href
        self.time = time
        self.bytes = bytes
    }
}
