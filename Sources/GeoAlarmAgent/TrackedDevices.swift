import FoundationEssentials
import GeoAlarmCore
import GeoAlarmPipeline

/// The devices `run --source owntracks` tracks (each a ``Fix/tracker``), each through a pipeline
/// of its own made from the agent's: made when a device's first fix comes and kept only when
/// that fix is usable (a name that never sent a usable location holds no place); at most
/// ``Limits/most`` of them but the devices ``Limits/named`` (a device with a secret of its own
/// always has a place); let go after ``Limits/idle`` without a message (its state stays in the
/// state file, and comes back with its next message).
///
/// Plain values in, plain values out: the agent logs what it says, and tests drive it with a
/// fake pipeline and an in-memory ledger.
struct TrackedDevices {
    /// What bounds the devices.
    struct Limits {
        /// How many devices are tracked at most, those `named` aside.
        var most: Int
        /// The devices that always have a place.
        var named: Set<String>
        /// How long without a message before a device leaves memory.
        var idle: Duration
    }

    /// What became of a device's fix.
    enum Staging {
        /// Through its pipeline, waiting for its commit: `isNew` for a device's first kept fix.
        case staged(StagedFix, isNew: Bool)
        /// Its first fix was not usable: the device is not kept (the result says why).
        case notKept(FixResult)
        /// A new device beyond ``Limits/most``: refused (`first` for the first refusal of all).
        case refused(first: Bool)
    }

    let limits: Limits
    /// The pipeline of each device tracked.
    private(set) var pipelines: [String: FixPipeline] = [:]
    /// How many devices not `named` are tracked: those ``Limits/most`` bounds.
    private var unnamed = 0
    /// What the devices' fixes came to.
    private(set) var tally = FixTally()
    /// When each device was last heard from, by the agent's clock.
    private var lastHeard: [String: ContinuousClock.Instant] = [:]
    /// When the quietest device will have been idle for ``Limits/idle``.
    private(set) var idleDue: ContinuousClock.Instant?
    /// How many new devices were refused, and the first names (for the summary).
    private(set) var refusals = 0
    private(set) var refusedNames: [String] = []
    /// The devices whose fixes from the future were said (once each, for so many at most).
    private var aheadSaid: Set<String> = []

    /// How many refused names the summary lists.
    static let refusedShown = 50
    /// How many devices' fixes from the future are said one by one.
    static let aheadShown = 20

    init(limits: Limits) {
        self.limits = limits
    }

    var count: Int { pipelines.count }

    /// Runs `fix` of `device` through that device's pipeline (made from `base` when new), heard at `now`.
    mutating func stage(_ fix: Fix, of device: String, base: FixPipeline, receivedAt: Date, now: ContinuousClock.Instant) -> Staging {
        let known = pipelines[device]
        let named = limits.named.contains(device)
        if known == nil, !named, unnamed >= limits.most {
            refusals += 1
            if refusedNames.count < Self.refusedShown, !refusedNames.contains(device) { refusedNames.append(device) }
            return .refused(first: refusals == 1)
        }
        let pipeline = known ?? base.pipeline(forTracker: device)
        let staged = pipeline.stage(fix, receivedAt: receivedAt, undatedUsable: false)
        tally.count(staged.result)
        if known == nil {
            guard case .accepted = staged.result.outcome else { return .notKept(staged.result) }
            pipelines[device] = pipeline
            if !named { unnamed += 1 }
        }
        lastHeard[device] = now
        if idleDue == nil { idleDue = now + limits.idle }
        return .staged(staged, isNew: known == nil)
    }

    /// Whether a fix of `device` from the future is news (said once a device, for so many at most).
    mutating func isNewlyAhead(_ device: String) -> Bool {
        aheadSaid.count < Self.aheadShown && aheadSaid.insert(device).inserted
    }

    /// Lets go of the devices silent for ``Limits/idle`` at `now`; their names. Sets ``idleDue``.
    mutating func letIdleGo(now: ContinuousClock.Instant) -> [String] {
        let quiet = lastHeard.filter { now - $0.value >= limits.idle }.map(\.key).sorted()
        for device in quiet {
            if pipelines.removeValue(forKey: device) != nil, !limits.named.contains(device) { unnamed -= 1 }
            lastHeard[device] = nil
            aheadSaid.remove(device)
        }
        idleDue = lastHeard.values.min().map { $0 + limits.idle }
        return quiet
    }
}
