/// A position written in degrees as map apps and pages show it for people to copy: each angle
/// decimal or in degrees, minutes and seconds, with its hemisphere letter before or after it
/// (`38.7105° N, 9.1366° W`, `38°42'37.8"N 9°08'11.8"W`, `N 38° 42.630' W 9° 08.196'`), or
/// signed where it has no letter (`38°42'37.8", -9°08'11.8"`). Typographic primes and quotes
/// (′ ″ ’ ”) stand for the ASCII marks. The letters say which angle is which, in either order.
enum HemispherePosition {
    /// The coordinate `text` writes; nil where `text` is not written this way at all (no
    /// hemisphere letter nor degree sign, or a character no such position has).
    static func read(_ text: String) -> Result<Coordinate, ReminderRules.LocationError>? {
        guard let tokens = tokens(text),
              tokens.contains(where: { if case .hemisphere = $0 { true } else { $0 == .mark(.degrees) } })
        else { return nil }
        guard let angles = angles(tokens), angles.count == 2 else { return .failure(.unreadable(text)) }
        var latitude: Double?
        var longitude: Double?
        for (index, angle) in angles.enumerated() {
            let isLatitude = angle.hemisphere.map { $0 == "N" || $0 == "S" } ?? (index == 0)
            let value: Double
            do {
                value = try angle.degrees()
            } catch {
                return .failure(isLatitude ? .latitude(error.reason) : .longitude(error.reason))
            }
            if isLatitude, latitude == nil {
                latitude = value
            } else if !isLatitude, longitude == nil {
                longitude = value
            } else {
                return .failure(.unreadable(text))
            }
        }
        guard let latitude, let longitude else { return .failure(.unreadable(text)) }
        return ReminderRules.checked(Coordinate(latitude: latitude, longitude: longitude))
    }

    /// What a part of an angle is.
    enum Unit: Int, Comparable {
        case degrees, minutes, seconds

        static func < (left: Unit, right: Unit) -> Bool { left.rawValue < right.rawValue }

        var name: String { ["degrees", "minutes", "seconds"][rawValue] }
    }

    enum Token: Equatable {
        /// Digits with at most one decimal point (`whole` without one); never signed.
        case number(Double, whole: Bool)
        /// °, ' or ": the unit of the number before it.
        case mark(Unit)
        /// N, S, E or W, in upper case.
        case hemisphere(Character)
        case minus
        /// A comma or semicolon: between two angles.
        case comma
    }

    /// The text as tokens (white space parts them and is dropped); nil at a character no
    /// position in degrees has.
    static func tokens(_ text: String) -> [Token]? {
        var tokens: [Token] = []
        var digits = ""
        func endNumber() -> Bool {
            defer { digits = "" }
            guard !digits.isEmpty else { return true }
            guard digits.first != ".", digits.last != ".", let value = Double(digits) else { return false }
            tokens.append(.number(value, whole: !digits.contains(".")))
            return true
        }
        for character in text {
            if character.isASCII, character.isNumber || character == "." {
                digits.append(character)
                continue
            }
            guard endNumber() else { return nil }
            switch character {
            case "°", "º", "˚": tokens.append(.mark(.degrees))
            case "'", "′", "’", "‘":
                // Two apostrophes are a seconds mark.
                if tokens.last == .mark(.minutes) { tokens[tokens.count - 1] = .mark(.seconds) } else { tokens.append(.mark(.minutes)) }
            case "\"", "″", "”", "“": tokens.append(.mark(.seconds))
            case "N", "n", "S", "s", "E", "e", "W", "w": tokens.append(.hemisphere(Character(character.uppercased())))
            case "-", "−": tokens.append(.minus)
            case ",", ";": tokens.append(.comma)
            default:
                guard character.isWhitespace else { return nil }
            }
        }
        return endNumber() ? tokens : nil
    }

    /// One angle as written: its parts with their units where marked, its letter or sign.
    struct Angle {
        var parts: [(value: Double, whole: Bool, unit: Unit?)] = []
        var hemisphere: Character?
        var negative = false

        /// Why the parts make no angle ("has 75 minutes, where 59 is the most").
        struct Problem: Error {
            var reason: String
        }

        /// The signed decimal degrees.
        func degrees() throws(Problem) -> Double {
            guard parts.count <= 3 else { throw Problem(reason: "has \(parts.count) numbers") }
            var total = 0.0
            var previous: (unit: Unit, whole: Bool)?
            for part in parts {
                // A part without its mark is the unit after the one before: 38° 42.630 is degrees and minutes.
                let unit = part.unit ?? previous.map { Unit(rawValue: $0.unit.rawValue + 1) ?? .seconds } ?? .degrees
                if let previous {
                    guard unit > previous.unit else { throw Problem(reason: "has its degrees, minutes and seconds out of order") }
                    guard previous.whole else { throw Problem(reason: "has a fraction before its last part") }
                } else if unit != .degrees {
                    throw Problem(reason: "has \(unit.name) but no degrees")
                }
                if unit != .degrees, part.value >= 60 {
                    throw Problem(reason: "has \(ReminderRules.plain(part.value)) \(unit.name), where 59 is the most")
                }
                total += part.value / (unit == .degrees ? 1 : unit == .minutes ? 60 : 3600)
                previous = (unit, part.whole)
            }
            let southOrWest = hemisphere == "S" || hemisphere == "W"
            return negative != southOrWest ? -total : total
        }
    }

    /// The angles the tokens write: with letters, each letter and the numbers on its side (all
    /// before, or all after, as the first token says); without, the numbers either side of one
    /// comma, each with its own sign. Nil where the tokens make no angles of either kind.
    static func angles(_ tokens: [Token]) -> [Angle]? {
        let lettered = tokens.contains { if case .hemisphere = $0 { true } else { false } }
        let leading: Bool
        if case .hemisphere = tokens.first { leading = true } else { leading = false }
        var angles: [Angle] = []
        var current = Angle()
        /// Whether `current` has a number yet.
        var started = false
        func endAngle() {
            angles.append(current)
            current = Angle()
            started = false
        }
        for token in tokens {
            switch token {
            case .number(let value, let whole):
                current.parts.append((value, whole, nil))
                started = true
            case .mark(let unit):
                guard let last = current.parts.last, last.unit == nil else { return nil }
                current.parts[current.parts.count - 1].unit = unit
            case .hemisphere(let letter):
                if leading {
                    if started { endAngle() }
                    guard current.hemisphere == nil else { return nil }
                    current.hemisphere = letter
                } else {
                    guard started else { return nil }
                    current.hemisphere = letter
                    endAngle()
                }
            case .minus:
                guard !lettered, !started, !current.negative else { return nil }
                current.negative = true
            case .comma:
                // Between two angles, never inside one (where the letters come after, the angle
                // before it has ended with its letter).
                guard lettered ? leading || !started : started else { return nil }
                if started { endAngle() }
            }
        }
        if started || current.hemisphere != nil || current.negative { endAngle() }
        guard !angles.contains(where: { $0.parts.isEmpty || lettered && $0.hemisphere == nil }) else { return nil }
        return angles
    }
}
