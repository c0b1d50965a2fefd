import FoundationEssentials
import RealModule

/// Where you are heading relative to one fence: the distance to its edge, whether that
/// distance falls (towards), rises (away from) or neither (stationary), how fast it falls, and
/// the time to the edge at that pace.
public struct Proximity: Sendable, Equatable {
    /// The direction of travel. Its raw values are geoalarm's words for it (the state file,
    /// `status` and the map show them); an adapter that speaks another vocabulary (Home
    /// Assistant's, in the MQTT module) maps them.
    public enum Direction: String, Sendable {
        case towards
        case away
        case stationary
        /// Inside the fence.
        case arrived
        /// Too few fixes in the window to say.
        case unknown
    }

    /// Metres from the fence's edge (0 inside).
    public var distance: Double
    public var direction: Direction
    /// Metres per second the distance falls (negative while it rises); nil while unknown.
    public var closingSpeed: Double?
    /// Seconds to the edge at the closing speed, while heading towards it.
    public var eta: Double?

    public init(distance: Double, direction: Direction, closingSpeed: Double? = nil, eta: Double? = nil) {
        self.distance = distance
        self.direction = direction
        self.closingSpeed = closingSpeed
        self.eta = eta
    }

    /// Whether this estimate says something `shown` (the one last given out) does not: another
    /// direction, a distance 50 m or 5 % apart (whichever is more), or a time to arrival 30 s
    /// or 10 % apart. What shows proximity (the state file, Home Assistant's sensors) takes only
    /// these, so a receiver giving ten fixes a second does not make ten messages a second.
    public func differsNoticeably(from shown: Proximity?) -> Bool {
        guard let shown else { return true }
        if direction != shown.direction { return true }
        if abs(distance - shown.distance) >= max(50, shown.distance / 20) { return true }
        switch (eta, shown.eta) {
        case (nil, nil): return false
        case (let eta?, let before?): return abs(eta - before) >= max(30, before / 10)
        default: return true
        }
    }
}

/// A reminder's proximity as the state file keeps it, for `status` and what starts after the agent.
public struct SavedProximity: Sendable, Equatable {
    public var proximity: Proximity
    /// The time of the fix it was read from.
    public var time: Date
    /// The ``Reminder/fenceKey`` of the fence then: it counts only while the fence is the same.
    public var fenceKey: String

    public init(proximity: Proximity, time: Date, fenceKey: String) {
        self.proximity = proximity
        self.time = time
        self.fenceKey = fenceKey
    }
}

/// A reminder's proximity that changed noticeably (see ``Proximity/differsNoticeably(from:)``),
/// at the time of the fix that showed it.
public struct ProximityChange: Sendable, Equatable {
    public var reminderID: String
    /// The reminder's ``Reminder/fenceKey``: what the proximity was read for.
    public var fenceKey: String
    public var proximity: Proximity
    public var time: Date
    /// The tracked device (``Fix/tracker``) it is of; nil for this machine's own.
    public var device: String?

    public init(reminderID: String, fenceKey: String, proximity: Proximity, time: Date, device: String? = nil) {
        self.reminderID = reminderID
        self.fenceKey = fenceKey
        self.proximity = proximity
        self.time = time
        self.device = device
    }
}

/// The proximities that changed noticeably with one fix, in the order they were read: a
/// collection of ``ProximityChange``.
///
/// A reading of many reminders gives out a change for most of them. Kept as changes, each would
/// hold its reminder's two names, and copying and freeing them costs reference counting per
/// change (a tenth of a million-reminder engine's time a fix). So each is kept as plain values:
/// the reminder's number in one table of names shared with the engine, its proximity, the time
/// and the device (nil, this machine's, holds no reference); a change is made when read. Changes
/// kept past a reload keep the old engine's table alive until they go.
public struct ProximityChanges: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable, Equatable {
    /// What is kept of one change.
    private struct Kept: Sendable {
        /// Its reminder's place in `names`.
        var name: Int32
        var proximity: Proximity
        var time: Date
        var device: String?
    }

    /// The names of the reminders the changes are of: an engine's, by slot, or those of the
    /// changes given to ``init(_:)``.
    private var names: [ReminderNames]
    private var kept: [Kept] = []

    public init(_ changes: some Sequence<ProximityChange>) {
        names = []
        for change in changes {
            kept.append(Kept(name: Int32(names.count), proximity: change.proximity, time: change.time, device: change.device))
            names.append(ReminderNames(id: change.reminderID, fenceKey: change.fenceKey))
        }
    }

    public init(arrayLiteral changes: ProximityChange...) {
        self.init(changes)
    }

    /// None yet, of the reminders that `names` names (an engine's, by slot), with room for
    /// `capacity`.
    init(names: [ReminderNames], capacity: Int) {
        self.names = names
        kept.reserveCapacity(capacity)
    }

    /// Adds the change of the reminder in `slot` of `names` (see ``init(names:capacity:)``).
    mutating func append(slot: Int, proximity: Proximity, time: Date, device: String?) {
        kept.append(Kept(name: Int32(truncatingIfNeeded: slot), proximity: proximity, time: time, device: device))
    }

    public var startIndex: Int { kept.startIndex }
    public var endIndex: Int { kept.endIndex }

    public subscript(position: Int) -> ProximityChange {
        let change = kept[position]
        let name = names[Int(change.name)]
        return ProximityChange(
            reminderID: name.id, fenceKey: name.fenceKey, proximity: change.proximity, time: change.time, device: change.device)
    }

    public static func == (left: ProximityChanges, right: ProximityChanges) -> Bool {
        left.elementsEqual(right)
    }
}

/// Flat metres east and north around one point (the latest fix): over the few kilometres a
/// minute of fixes covers, and the tens of kilometres an approach is read across, the error is
/// a small fraction of a percent, and it costs a multiplication instead of trigonometry.
public struct LocalFrame: Sendable {
    /// The origin with its latitude's cosine, which the frame scales by, and for the sphere's
    /// distances beyond the frame's reach (a reading measures every far reminder from it).
    let sphere: Haversine.Origin
    private let metresPerDegreeEast: Double

    public var origin: Coordinate { sphere.point }

    public init(at origin: Coordinate) {
        sphere = Haversine.Origin(origin)
        metresPerDegreeEast = Haversine.metresPerDegree * sphere.cosLatitude
    }

    /// East and north metres of `point` from the origin.
    public func offset(of point: Coordinate) -> (east: Double, north: Double) {
        var longitude = point.longitude - origin.longitude
        if longitude > 180 { longitude -= 360 } else if longitude < -180 { longitude += 360 }
        return (longitude * metresPerDegreeEast, (point.latitude - origin.latitude) * Haversine.metresPerDegree)
    }
}

/// How you move, from the fixes of a short window: one velocity for the device, which each
/// fence's ``Proximity`` is then read from.
///
/// The model, and its limits:
/// - The velocity is the receiver's own (speed and course), as the median of the window's
///   fixes, where every fix gives it; else the median of the slopes between fixes half the
///   window apart (each fix paired with the one half a window later). Either way a stray fix,
///   or a stop at a traffic light, moves it little.
/// - Distances are straight lines to a fence's edge, not along roads, and the time to arrival
///   is that distance at the pace it falls now.
/// - A gap longer than the window (a tunnel, a lost receiver) starts the window afresh: the
///   direction is unknown until it fills again.
public struct MotionEstimator: Sendable {
    public struct Settings: Sendable, Equatable {
        /// How far back the fixes that count go, in seconds.
        public var window: Double = 60
        /// The fewest fixes, and the least time they span (seconds), to say anything.
        public var minimumFixes = 3
        public var minimumSpan: Double = 10

        public init() {}
    }

    private struct Sample: Sendable {
        var time: Double
        var coordinate: Coordinate
        /// The receiver's own velocity (east, north m/s), NaN when it gave no speed and course.
        var reportedEast: Double
        var reportedNorth: Double
    }

    public let settings: Settings
    private var samples: [Sample] = []

    /// The most fixes a window holds: beyond, every other one goes (the window keeps its span),
    /// so that a receiver giving ten fixes a second costs no more than one giving one.
    static let mostSamples = 32

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Takes a dated fix into the window (`time`: seconds on a clock the fixes share).
    public mutating func record(_ fix: Fix, time: Double) {
        if let last = samples.last, time - last.time > settings.window || time < last.time {
            samples.removeAll(keepingCapacity: true)
        }
        if samples.capacity == 0 { samples.reserveCapacity(Self.mostSamples + 1) }
        var east = Double.nan, north = Double.nan
        if let speed = fix.speed, let course = fix.course, speed.isFinite, course.isFinite, speed >= 0 {
            let radians = course * .pi / 180
            (east, north) = (speed * Double.sin(radians), speed * Double.cos(radians))
        }
        samples.append(Sample(time: time, coordinate: fix.coordinate, reportedEast: east, reportedNorth: north))
        let expired = samples.prefix { time - $0.time > settings.window }.count
        if expired > 0 { samples.removeFirst(expired) }
        if samples.count > Self.mostSamples { thin() }
    }

    /// How you move now, in `frame` (at the latest fix): nil until the window holds enough.
    public func motion(in frame: LocalFrame) -> Motion? {
        guard samples.count >= settings.minimumFixes, let first = samples.first, let last = samples.last,
              last.time - first.time >= settings.minimumSpan
        else { return nil }
        let count = samples.count
        // A reading takes four medians of the window: its times, offsets and each median's
        // values share one buffer on the stack, where arrays would make a dozen allocations.
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 4 * count) { buffer in
            let times = UnsafeMutableBufferPointer(rebasing: buffer[0..<count])
            let offsetsEast = UnsafeMutableBufferPointer(rebasing: buffer[count..<(2 * count)])
            let offsetsNorth = UnsafeMutableBufferPointer(rebasing: buffer[(2 * count)..<(3 * count)])
            let work = UnsafeMutableBufferPointer(rebasing: buffer[(3 * count)...])
            for (index, sample) in samples.enumerated() {
                times[index] = sample.time
                (offsetsEast[index], offsetsNorth[index]) = frame.offset(of: sample.coordinate)
            }
            /// The median of `value` over the samples, worked out in `work`.
            func median(_ value: (Int) -> Double) -> Double {
                for index in 0..<count { work[index] = value(index) }
                return Self.median(work)
            }
            let east, north: Double
            if samples.allSatisfy({ !$0.reportedEast.isNaN }) {
                (east, north) = (median { samples[$0].reportedEast }, median { samples[$0].reportedNorth })
            } else {
                east = Self.pairedSlope(UnsafeBufferPointer(times), UnsafeBufferPointer(offsetsEast), work: work)
                north = Self.pairedSlope(UnsafeBufferPointer(times), UnsafeBufferPointer(offsetsNorth), work: work)
            }
            // The velocity is the window's average, so it belongs to where you were in its middle:
            // the median of the fixes moved along it to that time.
            let middle = (first.time + last.time) / 2
            return Motion(
                east: east, north: north, span: last.time - first.time,
                middle: (
                    median { offsetsEast[$0] - east * (times[$0] - middle) },
                    median { offsetsNorth[$0] - north * (times[$0] - middle) }
                ))
        }
    }

    /// Keeps every other sample and the last: the window's span stays, its count halves.
    private mutating func thin() {
        let last = samples[samples.count - 1]
        var kept = 0
        for index in stride(from: 0, to: samples.count, by: 2) {
            samples[kept] = samples[index]
            kept += 1
        }
        samples.removeLast(samples.count - kept)
        if samples[kept - 1].time != last.time { samples.append(last) }
    }

    /// The median of the slopes between each point and the one half the points later (0 when
    /// there are none): every slope spans about half the window, so the fixes' noise weighs
    /// little, and a stray point spoils one slope of many. `work`, at least as long as `times`,
    /// is written over.
    static func pairedSlope(
        _ times: UnsafeBufferPointer<Double>, _ values: UnsafeBufferPointer<Double>, work: UnsafeMutableBufferPointer<Double>
    ) -> Double {
        let half = times.count / 2
        var slopes = 0
        for first in 0..<(times.count - half) where times[first + half] > times[first] {
            work[slopes] = (values[first + half] - values[first]) / (times[first + half] - times[first])
            slopes += 1
        }
        return median(UnsafeMutableBufferPointer(rebasing: work[..<slopes]))
    }

    /// The median of `values` (0 when there are none), as sorting them would give it, found by
    /// selection: they are reordered in place, and nothing is allocated.
    static func median(_ values: UnsafeMutableBufferPointer<Double>) -> Double {
        guard !values.isEmpty else { return 0 }
        let middle = values.count / 2
        select(rank: middle, in: values)
        guard values.count % 2 == 0 else { return values[middle] }
        // Every value before `middle` is now one of the smallest `middle`: their largest is the
        // other middle one.
        var below = values[0]
        for value in values[1..<middle] where value > below { below = value }
        return (below + values[middle]) / 2
    }

    /// Reorders `values` so that the value at `rank` is the one sorting would put there, with
    /// none greater before it and none less after it. Each round splits the range around a
    /// pivot into less, equal and greater (so that a window of equal values, a device at rest,
    /// takes one round) and goes on in the part that holds `rank`. Each round ends the search
    /// or shrinks the range, NaN or not: the pivot is in the equal part, as NaN is.
    private static func select(rank: Int, in values: UnsafeMutableBufferPointer<Double>) {
        var (low, high) = (values.startIndex, values.endIndex)
        while high - low > 1 {
            let pivot = values[(low + high) / 2]
            let less = partition(values, low..<high) { $0 < pivot }
            let notGreater = partition(values, less..<high) { !(pivot < $0) }
            if rank < less {
                high = less
            } else if rank >= notGreater {
                low = notGreater
            } else {
                return
            }
        }
    }

    /// Moves the values of `range` that pass `belongs` to its front and returns where the
    /// others start. Without a branch on the test (the values of a window come in no order, so
    /// a branch would be mispredicted half the time): each value is swapped to the front's end,
    /// which moves on only past one that belongs.
    private static func partition(
        _ values: UnsafeMutableBufferPointer<Double>, _ range: Range<Int>, _ belongs: (Double) -> Bool
    ) -> Int {
        var end = range.lowerBound
        for index in range {
            let value = values[index]
            values[index] = values[end]
            values[end] = value
            end += belongs(value) ? 1 : 0
        }
        return end
    }
}

/// The device's velocity over the window, in metres per second east and north.
public struct Motion: Sendable {
    public var east: Double
    public var north: Double
    /// Seconds the window's fixes span.
    public var span: Double
    /// Where you were in the middle of the window, in metres east and north of the latest fix:
    /// the place the velocity belongs to.
    public var middle: (east: Double, north: Double)

    public var speed: Double { (east * east + north * north).squareRoot() }
}

/// What makes a motion count as towards a fence.
public struct ProximityRules: Sendable, Equatable {
    /// The least fall (or rise) of the distance over the last half of the window that counts as
    /// moving, in metres.
    public var tolerance: Double = 30
    /// The least closing speed that counts as moving, in metres per second.
    public var minimumSpeed: Double = 0.5
    /// How far from the fence the way you move, held straight, may pass it (beyond the fence's
    /// own size), in metres: `crossingMargin`, or `crossingShare` of the way there if more. A
    /// road that passes 3 km off is not towards a place 8 km ahead; near the place, streets may
    /// wind.
    public var crossingMargin: Double = 1000
    public var crossingShare = 0.25

    public init() {}
}

extension Proximity {
    /// Where you are heading relative to `geometry`, at `point` (the latest fix) moving as
    /// `motion` says (see ``init(_:size:in:moving:previous:rules:)``).
    public init(
        _ geometry: FenceGeometry, at point: Coordinate, moving motion: Motion?, previous: Direction = .unknown,
        rules: ProximityRules = ProximityRules()
    ) {
        self.init(geometry, size: geometry.circumradius, in: LocalFrame(at: point), moving: motion, previous: previous, rules: rules)
    }

    /// Where you are heading relative to `geometry`, at the origin of `frame` (the latest fix)
    /// moving as `motion` says. `size` is the geometry's ``FenceGeometry/circumradius`` (an
    /// area's takes a pass over its points: the caller keeps it).
    ///
    /// Towards means the distance to the edge fell over the last half of the window (by
    /// `tolerance` or more, at `minimumSpeed` or more) *and* the way you move, held straight,
    /// passes near the fence (see ``ProximityRules``): a road that passes the place by is not
    /// towards it even while the distance falls.
    /// Both ends of that half are the window's fit, not single fixes, so a stray fix moves
    /// neither; the distance shown and the time to arrival are from the latest fix. An area's
    /// fall is read from its middle (its edge is measured once, from the latest fix).
    ///
    /// Going on as `previous` (the direction the reading before gave) asks half the fall and
    /// half the speed: a pace right at a threshold does not make the direction flicker.
    public init(
        _ geometry: FenceGeometry, size: Double, in frame: LocalFrame, moving motion: Motion?, previous: Direction = .unknown,
        rules: ProximityRules = ProximityRules()
    ) {
        switch geometry {
        case .circle(let center, let radius):
            self.init(circle: center, radius: radius, in: frame, moving: motion, previous: previous, rules: rules)
        case .area(let area):
            self.init(area: area, size: size, in: frame, moving: motion, previous: previous, rules: rules)
        }
    }

    /// The proximity of the circle around `center` (see ``init(_:size:in:moving:previous:rules:)``),
    /// for a caller that keeps its fences packed rather than as geometries.
    init(
        circle center: Coordinate, radius: Double, in frame: LocalFrame, moving motion: Motion?, previous: Direction,
        rules: ProximityRules = ProximityRules()
    ) {
        let centre = frame.offset(of: center)
        let range = (centre.east * centre.east + centre.north * centre.north).squareRoot()
        // Far off, the flat frame's error would show: measured on the sphere there.
        let distance = max(0, (range < 20_000 ? range : frame.sphere.distance(to: center)) - radius)
        self.init(distance: distance, centre: centre, radius: radius, size: radius, moving: motion, previous: previous, rules: rules)
    }

    /// The proximity of `area`, whose ``FenceGeometry/circumradius`` is `size` (see
    /// ``init(_:size:in:moving:previous:rules:)``).
    init(area: Area, size: Double, in frame: LocalFrame, moving motion: Motion?, previous: Direction, rules: ProximityRules = ProximityRules()) {
        var tested = 0
        let distance = area.distance(from: frame.sphere, tested: &tested)
        self.init(
            distance: distance, centre: frame.offset(of: area.center), radius: 0, size: size, moving: motion, previous: previous,
            rules: rules)
    }

    /// The direction read from the fence's `distance` (from the latest fix, the frame's origin),
    /// its centre's offset in the frame, and its radius (0 for an area, read from its middle).
    private init(
        distance: Double, centre: (east: Double, north: Double), radius: Double, size: Double, moving motion: Motion?,
        previous: Direction, rules: ProximityRules
    ) {
        guard distance > 0 else {
            self.init(distance: 0, direction: .arrived)
            return
        }
        guard let motion else {
            self.init(distance: distance, direction: .unknown)
            return
        }
        let half = motion.span / 2
        let now = (east: motion.middle.east + motion.east * half, north: motion.middle.north + motion.north * half)
        func edge(from point: (east: Double, north: Double)) -> Double {
            let (east, north) = (centre.east - point.east, centre.north - point.north)
            return max(0, (east * east + north * north).squareRoot() - radius)
        }
        let fall = edge(from: motion.middle) - edge(from: now)
        let closing = fall / half
        let goingOn = previous == (closing > 0 ? .towards : .away)
        let (tolerance, minimumSpeed) = goingOn ? (rules.tolerance / 2, rules.minimumSpeed / 2) : (rules.tolerance, rules.minimumSpeed)
        guard abs(fall) >= tolerance, abs(closing) >= minimumSpeed else {
            self.init(distance: distance, direction: .stationary, closingSpeed: closing)
            return
        }
        guard closing > 0 else {
            self.init(distance: distance, direction: .away, closingSpeed: closing)
            return
        }
        // Where the way you move, held straight, passes the fence's centre: ahead of you, and
        // near enough.
        let (east, north) = (centre.east - now.east, centre.north - now.north)
        let ahead = (east * east + north * north).squareRoot()
        let speed = motion.speed
        let along = speed > 0 ? (east * motion.east + north * motion.north) / speed : 0
        let across = speed > 0 ? abs(east * motion.north - north * motion.east) / speed : ahead
        guard along > 0, across <= size + max(rules.crossingMargin, rules.crossingShare * ahead) else {
            self.init(distance: distance, direction: .stationary, closingSpeed: closing)
            return
        }
        self.init(distance: distance, direction: .towards, closingSpeed: closing, eta: distance / closing)
    }
}

/// `approach_within` and `approach_eta`: when a reminder speaks before you arrive.
public struct ApproachRule: Sendable, Equatable {
    /// Metres before the edge (`approach_within`).
    public var within: Double?
    /// Seconds before reaching the edge (`approach_eta`).
    public var eta: Double?

    public init(within: Double? = nil, eta: Double? = nil) {
        self.within = within
        self.eta = eta
    }

    public var isEmpty: Bool { within == nil && eta == nil }
}

/// One approach of one reminder, by distance or by time: armed once you are seen not yet close,
/// it fires once when you come close while heading towards the place, and is armed again when
/// you move away beyond a band, from where it fired or from the place once you arrived. A stop
/// on the way neither fires nor re-arms it, so stop-and-go traffic fires once; nor does a walk
/// round the block from the place.
public struct ApproachWatch: Sendable, Equatable {
    public enum Threshold: Sendable, Equatable {
        /// Metres from the edge.
        case distance(Double)
        /// Seconds to the edge.
        case eta(Double)
    }

    private enum State: Sendable, Equatable {
        /// Not yet seen far enough, or slow enough, to say that a later approach is one (just
        /// started, perhaps already close): nothing fires.
        case learning
        case armed
        /// Fired this many metres from the edge, or arrived (0).
        case fired(Double)
    }

    public let threshold: Threshold
    private var state = State.learning

    public init(_ threshold: Threshold) {
        self.threshold = threshold
    }

    /// Whether this estimate fires the approach.
    public mutating func update(_ proximity: Proximity) -> Bool {
        if proximity.direction == .arrived {
            state = .fired(0)
            return false
        }
        switch state {
        case .learning:
            if arms(proximity) { state = .armed }
            return false
        case .fired(let at):
            if isGoneBeyondBand(proximity, firedAt: at) { state = .armed }
            return false
        case .armed:
            return fires(proximity) ? fire(proximity) : false
        }
    }

    private mutating func fire(_ proximity: Proximity) -> Bool {
        state = .fired(proximity.distance)
        return true
    }

    /// Seen far enough (or not heading in fast) that coming close later is an approach.
    private func arms(_ proximity: Proximity) -> Bool {
        switch threshold {
        case .distance(let within):
            return proximity.distance > within
        case .eta(let limit):
            switch proximity.direction {
            case .stationary, .away: return true
            case .towards: return (proximity.eta ?? .infinity) > limit
            case .arrived, .unknown: return false
            }
        }
    }

    private func fires(_ proximity: Proximity) -> Bool {
        guard proximity.direction == .towards, proximity.distance > 0 else { return false }
        switch threshold {
        case .distance(let within): return proximity.distance <= within
        case .eta(let limit): return (proximity.eta ?? .infinity) <= limit
        }
    }

    /// Moved away beyond the band: a tenth of the distance (at least 100 m) past the threshold
    /// for a distance, a fifth of the distance it fired at (at least 200 m) for a time.
    private func isGoneBeyondBand(_ proximity: Proximity, firedAt: Double) -> Bool {
        switch threshold {
        case .distance(let within):
            return proximity.distance > within + max(100, within / 10)
        case .eta:
            return proximity.direction == .away && proximity.distance > firedAt + max(200, firedAt / 5)
        }
    }
}
