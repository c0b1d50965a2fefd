/// gpsd's end-of-cycle detector for NMEA (as in gpsd 3.22), which decides when gpsd sends a
/// fix to its clients. Replay follows it so that it sees the fixes the live agent sees.
///
/// - A sentence that times the cycle with a new time of day starts a cycle; the type of the
///   timed sentence before it is then learnt as a cycle ender, and the end counts as known.
/// - A timed sentence of an ender type reports.
/// - While no end is known, every sentence that changes the position or mode reports.
/// - Once a depth sounder's DBT has been seen, every untimed sentence becomes the ender in
///   place of the last timed one, and so reports.
/// - An RMC or GGA without a time reports at once, and the known end is forgotten.
struct CycleDetector {
    /// A sentence type as gpsd's table names it: the three letters after the talker, or a
    /// proprietary tag whole (its first eight bytes).
    struct SentenceType: Hashable, Comparable {
        private let bytes: UInt64

        static func < (left: SentenceType, right: SentenceType) -> Bool { left.bytes < right.bytes }

        init(_ type: some Collection<UInt8>) {
            var packed: UInt64 = 0
            for byte in type.prefix(8) { packed = packed << 8 | UInt64(byte) }
            bytes = packed
        }
    }

    /// The sentence types gpsd 3.22 decodes, with the fewest fields (the tag included) it
    /// decodes them from. A report on any other sentence (one gpsd only passes over, like VTG's
    /// neighbours AAM or RMB) carries no data, so gpsd sends no fix for it. Sorted by type, for a
    /// binary search (hashing the type cost more than the search, for every sentence).
    private static let decodedTypes: [(type: SentenceType, fields: Int)] = [
        ("DBT", 7), ("DTM", 2), ("GBS", 7), ("GGA", 13), ("GLL", 7), ("GNS", 13), ("GSA", 18),
        ("GST", 8), ("GSV", 0), ("HDG", 0), ("HDT", 1), ("MWD", 0), ("MWV", 0), ("RMC", 8),
        ("TXT", 5), ("VTG", 5), ("ZDA", 4), ("PGLOR", 2), ("PGRME", 7), ("PGRMF", 15),
        ("PGRMM", 2), ("PGRMZ", 4), ("OHPR", 18), ("PASHR", 3), ("PMGNST", 8), ("PMTK001", 3),
        ("PMTK424", 3), ("PMTK705", 3), ("PSRFEPE", 7), ("PTNTHTM", 9), ("PTNTA", 8), ("PSTI", 2),
    ].map { (SentenceType($0.0.utf8), $0.1) }.sorted { $0.type < $1.type }

    /// Whether gpsd sends a fix when it reports on a sentence of `type` with `fields` fields.
    static func carriesData(type: SentenceType, fields: Int) -> Bool {
        var (low, high) = (0, decodedTypes.count)
        while low < high {
            let middle = (low + high) / 2
            if decodedTypes[middle].type < type { low = middle + 1 } else { high = middle }
        }
        return low < decodedTypes.count && decodedTypes[low].type == type && fields >= decodedTypes[low].fields
    }

    /// The types learnt as ending a cycle, each once: one or two in a receiver's stream, so a
    /// list is searched faster than a set is hashed.
    private var enders: [SentenceType] = []
    /// The type of the last sentence that timed the cycle.
    private var lastTimedType: SentenceType?
    /// The time of day of that sentence.
    private var lastTime: Double?
    private var endIsKnown = false
    /// Set for good once a DBT is seen.
    var continuesCycles = false

    /// Whether a sentence timed at `time` starts a new cycle (more than 10 ms from the last).
    mutating func isNewCycle(at time: Double) -> Bool {
        defer { lastTime = time }
        guard let lastTime, abs(time - lastTime) <= 0.01 else {
            if let lastTimedType, !enders.contains(lastTimedType), !continuesCycles {
                enders.append(lastTimedType)
                endIsKnown = true
            }
            return true
        }
        return false
    }

    /// Whether gpsd reports after a sentence of `type`, which timed the cycle or not, forced a
    /// report or not, and changed the position or mode or not.
    mutating func reports(type: SentenceType, timed: Bool, forced: Bool, changesFix: Bool) -> Bool {
        if forced { endIsKnown = false }
        if !timed, continuesCycles {
            enders.removeAll { $0 == lastTimedType || $0 == type }
            enders.append(type)
            endIsKnown = true
        }
        var reports = forced || ((timed || continuesCycles) && enders.contains(type))
        if timed { lastTimedType = type }
        if !endIsKnown, changesFix { reports = true }
        return reports
    }
}
