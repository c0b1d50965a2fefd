import FoundationEssentials

/// Which crossings of its circle a reminder announces.
public enum Trigger: String, Sendable, CaseIterable {
    case arrive, leave, both

    /// Reads "arrive", "leave" or "both", and the aliases "enter" and "exit", RFC 9074's and
    /// Apple's "depart", and the Reminders app's "arriving" and "leaving"; nil for anything else.
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "arrive", "enter", "arriving": self = .arrive
        case "leave", "exit", "depart", "leaving": self = .leave
        case "both": self = .both
        default: return nil
        }
    }

    /// Whether an event of this kind is announced. An approach is announced whatever `when`
    /// says: a reminder has one only when `approach_within` or `approach_eta` asks for it.
    public func announces(_ kind: EventKind) -> Bool {
        switch (self, kind) {
        case (_, .approach): true
        case (.both, let kind): kind != .alarm
        case (.arrive, let kind): kind == .arrive
        case (.leave, let kind): kind == .leave
        }
    }
}

/// What an event announces: arriving at or leaving a place, coming close to it (an
/// approach), or a time alarm's time coming.
public enum EventKind: String, Sendable {
    case arrive, leave, approach, alarm
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

/// A fence's circle (or its area's number) and timing, small and free of references: the
/// engine's packed copy of a ``FenceGeometry`` for its per-fix loop.
struct FenceShape: Sendable, Equatable {
    /// A circle's centre; an area's middle.
    var center: Coordinate
    /// Metres from the centre that count as inside; 0 for an area.
    var radius: Double
    /// Radius plus hysteresis: beyond it a fix counts as outside. For an area, the hysteresis:
    /// metres beyond its edge.
    var reach: Double
    /// Seconds a streak inside must last before "arrive", kept in 32 bits (whole seconds are
    /// exact up to 194 days) so that the shape, with its area number, stays 40 bytes: the
    /// per-fix loop of a million fences reads them.
    private var dwellSeconds: Float
    /// The area's number in the engine's list of areas; -1 for a circle.
    var areaNumber: Int32

    /// Seconds a streak inside must last before "arrive".
    var dwell: Double { Double(dwellSeconds) }

    /// The shape of `geometry` with `hysteresis` metres of margin; an area is numbered by
    /// `number(area)`, its place in the engine's list of areas.
    init(_ geometry: FenceGeometry, hysteresis: Double, dwell: Double, number: (Area) -> Int32) {
        center = geometry.center
        dwellSeconds = Float(dwell)
        switch geometry {
        case .circle(_, let radius):
            self.radius = radius
            reach = radius + hysteresis
            areaNumber = -1
        case .area(let area):
            radius = 0
            reach = hysteresis
            areaNumber = number(area)
        }
    }

    /// What a fix `distance` metres from a circle's centre says of it.
    @inline(__always)
    func circleEvidence(distance: Double) -> FenceEvidence {
        distance <= radius ? .inside : distance > reach ? .outside : .margin
    }
}

/// A location-based reminder: a place (a circle or an area), a message, and which crossings to announce.
public struct Reminder: Sendable, Equatable, Identifiable {
    /// Unique within a config; a slug of the title unless given.
    public var id: String
    public var title: String
    /// Free text for the notification body.
    public var notes: String?
    /// Where the fence is: a circle, or an area.
    public var geometry: FenceGeometry
    /// The `[places]` name the centre came from, if any.
    public var placeName: String?
    /// Extra metres beyond the fence's edge before a fix counts as outside.
    public var hysteresis: Double
    /// Seconds a fix must keep staying inside before "arrive" is confirmed (0: no dwell).
    public var dwell: Double
    public var trigger: Trigger
    /// Disabled reminders are listed but never tracked.
    public var isEnabled: Bool
    public var alert: ReminderAlert
    /// When it may announce (repeat, active hours, due, starts).
    public var schedule: ReminderSchedule
    /// When it speaks before you arrive (`approach_within`, `approach_eta`); empty: never.
    public var approach: ApproachRule
    /// A task's reminder: the key its state is kept under (its task's UID, with `-2`... for its
    /// other places), which no rename of its list, move of the task or other member's task
    /// changes, as its id may. What a button on its pop-up names. Nil for a config's reminder.
    public var taskKey: String?

    public init(
        id: String, title: String, notes: String? = nil, geometry: FenceGeometry, placeName: String? = nil,
        hysteresis: Double = 0, dwell: Double = 0, trigger: Trigger = .arrive,
        isEnabled: Bool = true, alert: ReminderAlert = ReminderAlert(), schedule: ReminderSchedule = ReminderSchedule(),
        approach: ApproachRule = ApproachRule()
    ) {
        self.id = id
        self.title = title
        self.notes = notes
        self.geometry = geometry
        self.placeName = placeName
        self.hysteresis = hysteresis
        self.dwell = dwell
        self.trigger = trigger
        self.isEnabled = isEnabled
        self.alert = alert
        self.schedule = schedule
        self.approach = approach
    }

    /// A circle's centre; an area's middle (the centre of its bounding box).
    public var center: Coordinate { geometry.center }

    /// The fence's geometry as text (centre and radius, or the area's digest; and the
    /// hysteresis): a side confirmed for one fence is kept for another only when their keys are
    /// equal, so editing the place, the radius or the area resets that reminder and nothing else.
    public var fenceKey: String { "\(geometry.key);\(hysteresis)" }

    /// Metres from `point` to the fence: to a circle's centre, or to an area's edge (0 inside it).
    public func distance(from point: Coordinate) -> Double { geometry.distance(from: point) }

    /// The id for a new reminder titled `title`: its slug, numbered ("buy-bread-2", "-3" ...)
    /// when one of `taken` has it; "reminder" (numbered likewise) for a title without letters or
    /// digits, which has no slug.
    public static func newID(titled title: String, taken: Set<String>) -> String {
        let slug = slug(title)
        let base = slug.isEmpty ? "reminder" : slug
        var id = base
        var number = 2
        while taken.contains(id) {
            id = "\(base)-\(number)"
            number += 1
        }
        return id
    }

    /// A lowercase identifier made of the title's letters and digits joined by dashes ("Buy bread!" → "buy-bread").
    public static func slug(_ title: String) -> String {
        var words: [String] = []
        var word = ""
        for character in withoutDiacritics(title) {
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

    /// `text` with its accents and other marks taken off: combining marks dropped, and a Latin
    /// or Greek letter that carries them ("LATIN SMALL LETTER E WITH ACUTE", "GREEK SMALL LETTER
    /// ALPHA WITH TONOS", as Unicode names them) made its plain letter. Other characters stay as
    /// they are: ß, and the letters of other scripts, where a mark often makes another letter
    /// (Cyrillic й, қ).
    public static func withoutDiacritics(_ text: String) -> String {
        var plain = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark: continue
            default: break
            }
            plain.append(plainLetter(of: scalar) ?? scalar)
        }
        return String(plain)
    }

    /// The plain letter of a Latin or Greek letter with marks ("LATIN CAPITAL LETTER O WITH
    /// ACUTE" → O, "GREEK SMALL LETTER IOTA WITH DIALYTIKA AND TONOS" → ι); nil for any other.
    private static func plainLetter(of scalar: Unicode.Scalar) -> Unicode.Scalar? {
        guard !scalar.isASCII, let name = scalar.properties.name, let with = name.firstRange(of: " WITH ") else { return nil }
        return plainLetters[String(name[..<with.lowerBound])]
    }

    /// The letters a letter with marks can be made of, by their Unicode names: ASCII's and the
    /// Greek alphabet's.
    private static let plainLetters: [String: Unicode.Scalar] = {
        let codes = Array(0x41...0x5A) + Array(0x61...0x7A) + Array(0x391...0x3A9) + Array(0x3B1...0x3C9)
        var letters: [String: Unicode.Scalar] = [:]
        for code in codes {
            guard let scalar = Unicode.Scalar(code), let name = scalar.properties.name else { continue }
            letters[name] = scalar
        }
        return letters
    }()
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

    /// A number in as few digits as it needs: "91" rather than "91.0", "12.5".
    public static func plain(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Reads a location: "LAT,LON" (decimal degrees, a third number, the altitude, passed
    /// over; or "LAT LON"), a ``GeoURI`` (its parameters such as `;u=` and a query passed over;
    /// Android's `geo:0,0?q=LAT,LON(label)` is the position in `q`), or degrees as maps show
    /// them for copying (``HemispherePosition``: `38°42'37.8"N 9°08'11.8"W`, `38.7105° N, 9.1366° W`).
    public static func parseLocation(_ text: String) -> Result<Coordinate, LocationError> {
        let trimmed = text.trimmingWhitespace()
        switch GeoURI.parse(trimmed) {
        case .success(let uri): return .success(uri.coordinate)
        case .failure(.outOfRange(let point)): return checked(point)
        case .failure(.notGeo):
            switch MapLink.read(trimmed) {
            case .success(let point)?: return checked(point)
            case .failure(let problem)?: return .failure(.mapLink(text, problem))
            case nil: return decimalPair(trimmed).map(checked) ?? HemispherePosition.read(trimmed) ?? .failure(.unreadable(text))
            }
        case .failure(let problem): return .failure(.uri(text, problem))
        }
    }

    /// "LAT,LON" or "LAT,LON,ALT" in decimal degrees, white space allowed around each, or
    /// "LAT LON"; anything from a `;` on passed over; nil for any other text. The ranges are not
    /// checked.
    static func decimalPair(_ text: some StringProtocol) -> Coordinate? {
        let body = String(text.prefix { $0 != ";" })
        let separated = body.contains(",")
        let parts = separated
            ? body.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
            : body.split(whereSeparator: \.isWhitespace).map(String.init)
        guard parts.count == 2 || separated && parts.count == 3,
              let latitude = decimalNumber(parts[0]), let longitude = decimalNumber(parts[1])
        else { return nil }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    /// A number of degrees as positions write one: digits, a point and a sign (not `0x10`, `1e2`
    /// nor `nan`), white space around it passed over.
    public static func decimalNumber(_ text: some StringProtocol) -> Double? {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty, trimmed.utf8.count <= 32,
              trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-" || $0 == "+") }),
              let value = Double(trimmed), value.isFinite
        else { return nil }
        return value
    }

    /// `point`, or why its latitude or longitude is out of range.
    static func checked(_ point: Coordinate) -> Result<Coordinate, LocationError> {
        if let problem = latitudeProblem(point.latitude) { return .failure(.latitude(problem)) }
        if let problem = longitudeProblem(point.longitude) { return .failure(.longitude(problem)) }
        return .success(point)
    }

    /// Why a written location was refused.
    public enum LocationError: Error, Equatable, CustomStringConvertible {
        case unreadable(String)
        /// A `geo:` URI that gives no position, and why.
        case uri(String, GeoURI.Problem)
        /// A link to a web map that gives no position, and why.
        case mapLink(String, MapLink.Problem)
        case latitude(String)
        case longitude(String)

        public var description: String {
            switch self {
            case .unreadable(let text):
                #""\#(text)" is not a position: LAT,LON (38.7105,-9.1366), a geo: URI, a link from OpenStreetMap, Google Maps, Apple Maps or OsmAnd, or degrees with N/S and E/W (38°42'37.8"N 9°08'11.8"W)"#
            case .uri(let text, let problem): #""\#(text)" is \#(problem)"#
            case .mapLink(let text, let problem): #""\#(text)" is \#(problem)"#
            case .latitude(let problem): "latitude \(problem)"
            case .longitude(let problem): "longitude \(problem)"
            }
        }
    }
}
