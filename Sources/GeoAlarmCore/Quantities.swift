import FoundationEssentials

/// Why a length or duration written by a user could not be read.
public enum QuantityError: Error, Equatable, CustomStringConvertible {
    case empty
    case notANumber(String)
    /// "1,5km": a number with a comma, and the text with a decimal point where the comma can
    /// only be a decimal one (not three digits after it: "1,000m" may be a thousand).
    case commaInNumber(String, meant: String?)
    case unknownUnit(String, allowed: [String])
    case negative(String)
    case tooLarge(String, limit: String)

    public var description: String {
        switch self {
        case .empty: "is empty"
        case .notANumber(let text): "\"\(text)\" is not a number with a unit"
        case .commaInNumber(let text, let meant?): "\"\(text)\" has a decimal comma: write \"\(meant)\""
        case .commaInNumber(let text, nil):
            "\"\(text)\" has a comma in its number: write a decimal point, and no separator of thousands"
        case .unknownUnit(let unit, let allowed):
            "unknown unit \"\(unit)\" (use \(allowed.joined(separator: ", ")))"
        case .negative(let text): "\"\(text)\" is negative"
        case .tooLarge(let text, let limit): "\"\(text)\" is more than \(limit)"
        }
    }
}

/// A length in metres, read from "150m", "1.5km", "300 ft", "0.2mi", "50 metres" or a bare number of metres.
public enum Length {
    /// Units accepted after the number, with their size in metres.
    public static let units: [(name: String, size: Double)] = [
        ("m", 1), ("km", 1000), ("ft", 0.3048), ("mi", 1609.344),
    ]

    /// The units spelt out as people type them, British and American, and the one each is.
    static let spelledOut: [String: String] = [
        "metre": "m", "metres": "m", "meter": "m", "meters": "m", "kilometre": "km", "kilometres": "km", "kilometer": "km",
        "kilometers": "km", "foot": "ft", "feet": "ft", "mile": "mi", "miles": "mi",
    ]

    /// The longest length accepted: a circle this wide covers the whole Earth.
    public static let maximum = 20_000_000.0

    /// Reads a length; a bare number is metres.
    public static func parse(_ text: String) throws(QuantityError) -> Double {
        try checked(parseQuantity(text, units: units, spelledOut: spelledOut, bareUnit: 1), text)
    }

    /// `metres` when it is at most ``maximum``; `text` names it in the error.
    public static func checked(_ metres: Double, _ text: String) throws(QuantityError) -> Double {
        guard metres <= maximum else { throw .tooLarge(text, limit: "20000 km") }
        return metres
    }
}

/// A span of time in seconds, read from "30s", "2m", "1.5h", "1d", "1h30m", "2 hours" or a bare number of seconds.
public enum Span {
    /// "40 s", "9 min", "1 h 20 min": a time to arrival as a person says it.
    public static func spoken(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 1e12 else { return "?" }
        if seconds < 60 { return "\(Int64(seconds.rounded())) s" }
        let minutes = Int64((seconds / 60).rounded())
        if minutes < 60 { return "\(minutes) min" }
        return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }

    /// Units accepted after a number, with their size in seconds.
    public static let units: [(name: String, size: Double)] = [
        ("s", 1), ("m", 60), ("min", 60), ("h", 3600), ("d", 86400), ("w", 7 * 86400),
    ]

    /// The units spelt out as people type them ("2 hours", "90 mins"), and the one each is.
    static let spelledOut: [String: String] = [
        "sec": "s", "secs": "s", "second": "s", "seconds": "s", "mins": "min", "minute": "min", "minutes": "min",
        "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "day": "d", "days": "d", "week": "w", "weeks": "w",
    ]

    /// Reads a span; parts add up ("1h30m"); a bare number is seconds.
    public static func parse(_ text: String) throws(QuantityError) -> Double {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .empty }
        var parts: [String] = []
        var current = ""
        var sawLetter = false
        for character in trimmed where character != " " {
            if character.isLetter {
                sawLetter = true
            } else if sawLetter {
                parts.append(current)
                current = ""
                sawLetter = false
            }
            current.append(character)
        }
        parts.append(current)
        var total = 0.0
        for part in parts {
            total += try parseQuantity(part, units: units, spelledOut: spelledOut, bareUnit: 1, original: text)
        }
        return try checked(total, text)
    }

    /// A span for people, in its two largest units: "40 s", "12 min", "3 h 5 min", "2 d 4 h".
    /// Negative and non-finite spans read "0 s".
    public static func describe(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 1 else { return "0 s" }
        let whole = seconds >= Double(Int.max) ? Int.max : Int(seconds)
        let parts: [(Int, String)] = [(whole / 86400, "d"), (whole % 86400 / 3600, "h"), (whole % 3600 / 60, "min"), (whole % 60, "s")]
        guard let first = parts.firstIndex(where: { $0.0 > 0 }) else { return "0 s" }
        return parts[first...].prefix(2).filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: " ")
    }

    /// The longest span accepted (timeouts, snoozes, cooldowns, dwell, history's keep): a year.
    public static let maximum = 365 * 86400.0

    /// `seconds` when it is at most ``maximum``; `text` names it in the error.
    public static func checked(_ seconds: Double, _ text: String) throws(QuantityError) -> Double {
        guard seconds <= maximum else { throw .tooLarge(text, limit: "a year (365d)") }
        return seconds
    }
}

/// Splits "12.5km" into 12.5 and "km" and scales it, a unit in `spelledOut` read as the one it
/// names; `original` names the whole text in errors.
private func parseQuantity(
    _ text: String, units: [(name: String, size: Double)], spelledOut: [String: String], bareUnit: Double, original: String? = nil
) throws(QuantityError) -> Double {
    let shown = original ?? text
    let trimmed = text.trimmingWhitespace()
    guard !trimmed.isEmpty else { throw .empty }
    let unitStart = trimmed.firstIndex(where: { $0.isLetter }) ?? trimmed.endIndex
    let numberText = trimmed[..<unitStart].trimmingWhitespace()
    let unitText = spelledOut[trimmed[unitStart...].lowercased()] ?? trimmed[unitStart...].lowercased()
    guard let number = Double(numberText), number.isFinite else {
        let parts = numberText.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count > 1, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else {
            throw .notANumber(shown)
        }
        let isDecimal = parts.count == 2 && parts[1].count != 3
        throw .commaInNumber(shown, meant: isDecimal ? parts.joined(separator: ".") + trimmed[unitStart...] : nil)
    }
    guard number >= 0 else { throw .negative(shown) }
    if unitText.isEmpty { return number * bareUnit }
    guard let unit = units.first(where: { $0.name == unitText }) else {
        throw .unknownUnit(unitText, allowed: units.map(\.name))
    }
    return number * unit.size
}
