import Foundation

/// Which crossings of its circle a reminder announces.
public enum Trigger: String, Sendable, CaseIterable {
    case arrive, leave, both

    /// Reads "arrive", "leave" or "both", and the aliases "enter" and "exit"; nil for anything else.
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "arrive", "enter": self = .arrive
        case "leave", "exit": self = .leave
        case "both": self = .both
        default: return nil
        }
    }

    /// Whether an event of this kind is announced.
    public func announces(_ kind: EventKind) -> Bool {
        switch self {
        case .both: kind != .alarm
        case .arrive: kind == .arrive
        case .leave: kind == .leave
        }
    }
}

/// What an event announces: arriving or leaving a place, or a time alarm's time coming.
public enum EventKind: String, Sendable {
    case arrive, leave, alarm
}

/// How loudly a reminder asks for attention, as the desktop notification spec's urgency levels.
public enum Urgency: String, Sendable, CaseIterable {
    case low, normal, critical
}

/// How an event of a reminder is presented: the pop-up's look and the commands to run.
public struct ReminderAlert: Sendable, Equatable {
    public var urgency: Urgency
    /// A themed icon name or an image path; nil for the default location icon.
    public var icon: String?
    /// Seconds the pop-up stays; nil leaves it to the notification server (critical ones never expire).
    public var timeout: Double?
    /// A command (argv, never a shell string) run for every event of this reminder; empty for none.
    public var command: [String]

    public init(urgency: Urgency = .normal, icon: String? = nil, timeout: Double? = nil, command: [String] = []) {
        self.urgency = urgency
        self.icon = icon
        self.timeout = timeout
        self.command = command
    }
}

/// A fence's circle (or its area's number) and timing, small and free of references, for the
/// engine's per-fix loop.
public struct FenceShape: Sendable, Equatable {
    /// A circle's centre; an area's middle.
    public var center: Coordinate
    /// Metres from the centre that count as inside; 0 for an area.
    public var radius: Double
    /// Radius plus hysteresis: beyond it a fix counts as outside. For an area, the hysteresis:
    /// metres beyond its edge.
    public var reach: Double
    /// Seconds a streak inside must last before "arrive", kept in 32 bits (whole seconds are
    /// exact up to 194 days) so that the shape, with its area number, stays 40 bytes: the
    /// per-fix loop of a million fences reads them.
    private var dwellSeconds: Float
    /// The area's number in the engine's list of areas; -1 for a circle.
    public var areaNumber: Int32

    /// Seconds a streak inside must last before "arrive".
    public var dwell: Double { Double(dwellSeconds) }

    public init(center: Coordinate, radius: Double, hysteresis: Double, dwell: Double) {
        self.center = center
        self.radius = radius
        self.reach = radius + hysteresis
        dwellSeconds = Float(dwell)
        areaNumber = -1
    }

    /// The shape of an area fence: area number `areaNumber` of the engine's, `hysteresis` metres of margin.
    public init(area: Area, number: Int32, hysteresis: Double, dwell: Double) {
        self.init(center: area.center, radius: 0, hysteresis: hysteresis, dwell: dwell)
        areaNumber = number
    }

    /// What a fix `distance` metres from a circle's centre says of it.
    @inline(__always)
    public func circleEvidence(distance: Double) -> FenceEvidence {
        distance <= radius ? .inside : distance > reach ? .outside : .margin
    }
}

/// A location-based reminder: a circle, a message, and which crossings to announce.
public struct Reminder: Sendable, Equatable, Identifiable {
    /// Unique within a config; a slug of the title unless given.
    public var id: String
    public var title: String
    /// Free text for the notification body.
    public var notes: String?
    /// A circle's centre; an area's middle (the centre of its bounding box).
    public var center: Coordinate
    /// The `[places]` name the centre came from, if any.
    public var placeName: String?
    /// Metres from the centre that count as inside (unused for an area).
    public var radius: Double
    /// The polygon (or multipolygon) that is the fence instead of a circle, when there is one.
    public var area: Area?
    /// Extra metres beyond the radius (an area's edge) before a fix counts as outside.
    public var hysteresis: Double
    /// Seconds a fix must keep staying inside before "arrive" is confirmed (0: no dwell).
    public var dwell: Double
    public var trigger: Trigger
    /// Disabled reminders are listed but never tracked.
    public var isEnabled: Bool
    public var alert: ReminderAlert
    /// When it may announce (repeat, active hours, due, starts).
    public var schedule: ReminderSchedule

    public init(
        id: String, title: String, notes: String? = nil, center: Coordinate, placeName: String? = nil,
        radius: Double, area: Area? = nil, hysteresis: Double = 0, dwell: Double = 0, trigger: Trigger = .arrive,
        isEnabled: Bool = true, alert: ReminderAlert = ReminderAlert(), schedule: ReminderSchedule = ReminderSchedule()
    ) {
        self.id = id
        self.title = title
        self.notes = notes
        self.center = area?.center ?? center
        self.placeName = placeName
        self.radius = area == nil ? radius : 0
        self.area = area
        self.hysteresis = hysteresis
        self.dwell = dwell
        self.trigger = trigger
        self.isEnabled = isEnabled
        self.alert = alert
        self.schedule = schedule
    }

    /// How far from the centre a fix can still be not outside: radius plus hysteresis.
    public var reach: Double { radius + hysteresis }

    /// The circle and timing the tracker needs, without the text (an area's is made by the engine, which numbers them).
    public var shape: FenceShape { FenceShape(center: center, radius: radius, hysteresis: hysteresis, dwell: dwell) }

    /// The fence's geometry as text (centre and radius, or the area's digest; and the
    /// hysteresis): a side confirmed for one fence is kept for another only when their keys are
    /// equal, so editing the place, the radius or the area resets that reminder and nothing else.
    public var fenceKey: String {
        if let area { return "area:\(area.key);\(hysteresis)" }
        return "\(center.latitude),\(center.longitude);\(radius);\(hysteresis)"
    }

    /// Metres from `point` to the fence: to a circle's centre, or to an area's edge (0 inside it).
    public func distance(from point: Coordinate) -> Double {
        guard let area else { return Haversine.distance(point, center) }
        var tested = 0
        return area.distance(from: point, tested: &tested)
    }

    /// A lowercase identifier made of the title's letters and digits joined by dashes ("Buy bread!" → "buy-bread").
    public static func slug(_ title: String) -> String {
        var words: [String] = []
        var word = ""
        for character in title.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil) {
            if character.isLetter || character.isNumber {
                word.append(character)
            } else if !word.isEmpty {
                words.append(word)
                word = ""
            }
        }
        if !word.isEmpty { words.append(word) }
        return words.joined(separator: "-").lowercased()
    }
}

/// Checks of single reminder values, worded for the user; nil means the value is fine.
public enum ReminderRules {
    public static func latitudeProblem(_ value: Double) -> String? {
        guard value.isFinite else { return "must be a finite number" }
        return abs(value) <= 90 ? nil : "\(plain(value)) is out of range (-90 to 90)"
    }

    public static func longitudeProblem(_ value: Double) -> String? {
        guard value.isFinite else { return "must be a finite number" }
        return abs(value) <= 180 ? nil : "\(plain(value)) is out of range (-180 to 180)"
    }

    /// "91" rather than "91.0".
    private static func plain(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Reads a location written as "LAT,LON" or a `geo:` URI (RFC 5870; parameters such as `;u=` are ignored).
    public static func parseLocation(_ text: String) -> Result<Coordinate, LocationError> {
        var body = text.trimmingCharacters(in: .whitespaces)
        if body.lowercased().hasPrefix("geo:") { body = String(body.dropFirst(4)) }
        if let parameters = body.firstIndex(of: ";") { body = String(body[..<parameters]) }
        let parts = body.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2 || parts.count == 3,
              let latitude = Double(parts[0]), let longitude = Double(parts[1])
        else { return .failure(.unreadable(text)) }
        if let problem = latitudeProblem(latitude) { return .failure(.latitude(problem)) }
        if let problem = longitudeProblem(longitude) { return .failure(.longitude(problem)) }
        return .success(Coordinate(latitude: latitude, longitude: longitude))
    }

    /// Why a written location was refused.
    public enum LocationError: Error, Equatable, CustomStringConvertible {
        case unreadable(String)
        case latitude(String)
        case longitude(String)

        public var description: String {
            switch self {
            case .unreadable(let text): "\"\(text)\" is not \"LAT,LON\" or \"geo:LAT,LON\""
            case .latitude(let problem): "latitude \(problem)"
            case .longitude(let problem): "longitude \(problem)"
            }
        }
    }
}
