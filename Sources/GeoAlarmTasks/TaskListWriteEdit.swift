import FoundationEssentials
import GeoAlarmICalendar
import GeoAlarmListCache

extension TaskListWrite {
    /// `bytes` (the object as cached) with this change made; nil for a deletion, which leaves none.
    /// A task that is completed already (or open already, to uncomplete) is left as it is: a
    /// change made twice (by two processes, or again after an answer that was lost) is made once
    /// (for a completion, as ``TaskEdits/completing(_:uid:at:zones:)`` does it, repeating tasks too).
    public func applied(to bytes: [UInt8]) throws(TaskProblem) -> [UInt8]? {
        switch kind {
        case .complete:
            try TaskEdits.completing(bytes, uid: uid, at: .init(timeIntervalSince1970: time), zones: .system)
        case .uncomplete:
            try TaskEdits.isClosed(bytes, uid: uid) ? TaskEdits.uncompleting(bytes, uid: uid, at: .init(timeIntervalSince1970: time)) : bytes
        case .create: self.bytes
        case .delete: nil
        }
    }
}
