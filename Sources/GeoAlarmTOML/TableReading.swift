import GeoAlarmCore

/// One problem found in a config file, worded for the person who wrote it.
public struct ConfigDiagnostic: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    /// 1-based line of the problem, when known; with `column` for a syntax error.
    public var line: Int?
    public var column: Int?
    /// The table the problem is in, e.g. `reminder "parcel" (#1)` or `defaults`.
    public var context: String?
    /// The key the problem is about.
    public var key: String?
    public var message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, context: String? = nil, key: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.context = context
        self.key = key
        self.message = message
    }

    /// `FILE:LINE:COL: message` for syntax errors, `FILE:LINE: context: key: message` for
    /// problems of meaning (`FILE: ...` when no line is known).
    /// Control characters from the file (in keys, values, paths) are shown escaped.
    public var description: String {
        if let line, let column {
            return DisplayText.escaped("\(file):\(line):\(column): \(message)")
        }
        let place = line.map { "\(file):\($0)" } ?? file
        let shownKey = key.map { DisplayText.shortened($0) }
        return DisplayText.escaped(([place] + [context, shownKey].compactMap { $0 } + [message]).joined(separator: ": "))
    }
}

/// A reader of a config file's tables that collects every problem rather than stopping at the
/// first: typed values with their line when of the wrong type or out of range, and unknown keys
/// with a "did you mean". The config's reader is one; an adapter that owns a table of the file
/// (`[mqtt]`) reads it with the same rules, handed the reader.
public protocol TableReading {
    /// The file's path, as problems name it.
    var file: String { get }
    /// The parsed file, for the lines problems are reported at.
    var document: TOMLDocument { get }
    /// Every problem so far.
    var diagnostics: [ConfigDiagnostic] { get set }
}

extension TableReading {
    /// Records a problem, at the line of `key` in `table` when it is there, else at the table's start.
    public mutating func report(in table: TOMLTable?, _ context: String?, _ key: String?, _ message: String) {
        diagnostics.append(diagnostic(in: table, context, key, message))
    }

    /// Records a problem at the line of a byte offset of the file, when known.
    public mutating func report(at offset: Int?, _ context: String?, _ key: String?, _ message: String) {
        diagnostics.append(diagnostic(at: offset, context, key, message))
    }

    /// A diagnostic placed as ``report(in:_:_:_:)`` places a problem, for what is not one (a warning).
    public func diagnostic(in table: TOMLTable?, _ context: String?, _ key: String?, _ message: String) -> ConfigDiagnostic {
        diagnostic(at: table.map { table in key.flatMap { table[$0]?.keyOffset } ?? table.start }, context, key, message)
    }

    /// A diagnostic at the line of a byte offset of the file, when known.
    private func diagnostic(at offset: Int?, _ context: String?, _ key: String?, _ message: String) -> ConfigDiagnostic {
        ConfigDiagnostic(file: file, line: offset.map { document.position(of: $0).line }, context: context, key: key, message: message)
    }

    /// Reports each key of `table` that is not `allowed`, with the nearest allowed one.
    public mutating func checkKeys(of table: TOMLTable, allowed: [String], context: String) {
        for key in table.keys.sorted() where !allowed.contains(key) {
            var message = "unknown key"
            if let near = Suggestion.closest(to: key, among: allowed) { message += " (did you mean \"\(near)\"?)" }
            report(in: table, context, key, message)
        }
    }

    /// The value at `key` converted by `convert`; nil when absent, reported when of another type.
    public mutating func typed<T>(
        _ table: TOMLTable, _ key: String, context: String, expected: String, _ convert: (TOMLValue) -> T?
    ) -> T? {
        guard let value = table[key] else { return nil }
        guard let converted = convert(value) else {
            report(in: table, context, key, "must be \(expected), not \(value.typeDescription)")
            return nil
        }
        return converted
    }

    /// The integer at `key` when it is in `range`; nil when absent, reported when of another
    /// type ("must be `expected`") or outside the range ("N is not LOW-HIGH").
    public mutating func integer(
        _ table: TOMLTable, _ key: String, context: String, expected: String, in range: ClosedRange<Int>
    ) -> Int? {
        guard let number = typed(table, key, context: context, expected: expected, { $0.int }) else { return nil }
        guard range.contains(number) else {
            report(in: table, context, key, "\(number) is not \(range.lowerBound)-\(range.upperBound)")
            return nil
        }
        return number
    }

    public mutating func string(_ table: TOMLTable, _ key: String, context: String) -> String? {
        typed(table, key, context: context, expected: "a string") { $0.string }
    }

    public mutating func bool(_ table: TOMLTable, _ key: String, context: String) -> Bool? {
        typed(table, key, context: context, expected: "true or false") { $0.bool }
    }

    public mutating func table(_ root: TOMLTable, _ key: String, context: String) -> TOMLTable? {
        typed(root, key, context: context, expected: "a table ([\(key)])") { $0.table }
    }

    /// An array of strings, none of them empty at its start (a program and its arguments);
    /// `example` shows one in the message when it is not.
    public mutating func command(_ table: TOMLTable, _ key: String, context: String, what: String, example: String) -> [String]? {
        guard let value = table[key] else { return nil }
        let words = value.array.map { array in (0..<array.count).compactMap { array[$0].string } }
        if let words, let count = value.array?.count, words.count == count, !words.isEmpty, !words[0].isEmpty {
            return words
        }
        report(in: table, context, key, "must be a non-empty array of strings: \(what), e.g. \(example)")
        return nil
    }

    /// A duration: seconds as a whole number, or a string such as `"90s"`, `"2m"`, `"1h"`.
    public mutating func span(_ table: TOMLTable, _ key: String, context: String) -> Double? {
        guard let value = table[key] else { return nil }
        if let int = value.int, int >= 0 {
            guard Double(int) <= Span.maximum else {
                report(in: table, context, key, "\(int) s is more than a year (365d)")
                return nil
            }
            return Double(int)
        }
        guard let text = value.string else {
            report(in: table, context, key, "must be a duration like \"90s\", \"2m\" or \"1h\", not \(value.typeDescription)")
            return nil
        }
        do {
            return try Span.parse(text)
        } catch {
            report(in: table, context, key, error.description)
            return nil
        }
    }

    /// A length: metres as a number, or a string such as `"150m"` or `"2km"`.
    public mutating func length(_ table: TOMLTable, _ key: String, context: String) -> Double? {
        guard let value = table[key] else { return nil }
        let metres: Double
        if let int = value.int {
            metres = Double(int)
        } else if let double = value.double {
            metres = double
        } else if let text = value.string {
            do {
                metres = try Length.parse(text)
            } catch {
                report(in: table, context, key, error.description)
                return nil
            }
        } else {
            report(in: table, context, key, "must be metres or a string like \"150m\", not \(value.typeDescription)")
            return nil
        }
        guard metres.isFinite, metres >= 0 else {
            report(in: table, context, key, "must not be negative")
            return nil
        }
        guard metres <= Length.maximum else {
            report(in: table, context, key, "\(metres) m is more than 20000 km")
            return nil
        }
        return metres
    }
}
