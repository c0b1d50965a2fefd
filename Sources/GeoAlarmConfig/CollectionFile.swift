import FoundationEssentials
import GeoAlarmCore
import GeoAlarmScanners
import GeoAlarmSystem

/// The formats a `[[collection]]` file can be in.
public enum CollectionFormat: String, Sendable, CaseIterable {
    case csv, gpx, geojson

    /// The format a file name's extension names (`.csv`, `.gpx`, `.geojson` or `.json`), if any.
    public init?(fileName: String) {
        switch PathParts.fileExtension(fileName).lowercased() {
        case "csv", "txt": self = .csv
        case "gpx": self = .gpx
        case "geojson", "json": self = .geojson
        default: return nil
        }
    }
}

/// A row or feature of a collection file that was skipped, and why.
public struct PlaceProblem: Sendable, Equatable {
    /// 1-based line of the file.
    public var line: Int
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }
}

/// What a collection file held: the usable places, and the rows that were skipped.
public struct PlaceList: Sendable {
    public var places: [CollectionPlace] = []
    /// The first problems found, in file order (at most ``PlaceList/keptProblems``).
    public private(set) var problems: [PlaceProblem] = []
    /// Every row skipped, also those beyond the ones kept.
    public private(set) var problemCount = 0

    /// How many problems are kept for the messages; the rest are only counted.
    public static let keptProblems = 20

    mutating func skip(line: Int, _ message: String) {
        problemCount += 1
        if problems.count < Self.keptProblems { problems.append(PlaceProblem(line: line, message: message)) }
    }

    /// Adds a place after checking its values; `radius` nil takes `defaultRadius`.
    mutating func add(
        latitude: Double?, longitude: Double?, radius: Double?, name: String, line: Int, defaultRadius: Double
    ) {
        guard let latitude else { return skip(line: line, "lat is missing or not a number") }
        guard let longitude else { return skip(line: line, "lon is missing or not a number") }
        if let problem = ReminderRules.latitudeProblem(latitude) { return skip(line: line, "lat \(problem)") }
        if let problem = ReminderRules.longitudeProblem(longitude) { return skip(line: line, "lon \(problem)") }
        if let radius, !(radius > 0 && radius.isFinite) { return skip(line: line, "radius must be a number of metres above 0") }
        places.append(CollectionPlace(
            geometry: .circle(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius ?? defaultRadius),
            name: name))
    }
}

/// Reads the places of a collection file.
public enum CollectionFile {
    /// Reads `path` as `format`; places without a radius of their own get `defaultRadius`.
    /// A file that cannot be read at all throws a message naming the cause.
    public static func read(path: String, format: CollectionFormat, defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        let bytes: [UInt8]
        do {
            bytes = try UserFile.contents(of: path, limit: UserFile.collectionLimit)
        } catch {
            throw CollectionFileError("cannot read: \(error)")
        }
        return try parse(bytes, format: format, defaultRadius: defaultRadius)
    }

    /// Reads the bytes of a collection file as `format`.
    public static func parse(_ bytes: [UInt8], format: CollectionFormat, defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        switch format {
        case .csv: return try CSVPlaces.read(bytes, defaultRadius: defaultRadius)
        case .gpx: return try GPXWaypoints.read(bytes, defaultRadius: defaultRadius)
        case .geojson: return try GeoJSONPlaces.read(bytes, defaultRadius: defaultRadius)
        }
    }
}

/// Why a whole collection file could not be used.
public struct CollectionFileError: Error, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// CSV with a header naming `lat` and `lon` (also `latitude`, `lon`, `lng`, `long`, `longitude`),
/// and optionally `name` and `radius`, separated by commas or semicolons (whichever the header
/// uses; with semicolons, a number may have a decimal comma). Fields may be quoted with `"`, a
/// doubled `""` standing for a quote. Empty lines and lines starting with `#` are skipped.
enum CSVPlaces {
    static func read(_ bytes: [UInt8], defaultRadius: Double) throws(CollectionFileError) -> PlaceList {
        var list = PlaceList()
        var columns: Columns?
        var lineNumber = 0
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var fields: [ArraySlice<UInt8>] = []
        while start < bytes.count {
            lineNumber += 1
            var end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            let next = end + 1
            if end > start, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            defer { start = next }
            guard end > start, bytes[start] != UInt8(ascii: "#") else { continue }
            guard let found = columns else {
                columns = try Columns(header: String(decoding: bytes[start..<end], as: UTF8.self), lineNumber: lineNumber)
                continue
            }
            let row = bytes[start..<end]
            fields.removeAll(keepingCapacity: true)
            if row.contains(UInt8(ascii: "\"")) {
                guard split(String(decoding: row, as: UTF8.self), by: found.separator, into: &fields) else {
                    list.skip(line: lineNumber, "unterminated quoted field")
                    continue
                }
            } else {
                // The common case, without quotes: the fields are slices of the file's bytes.
                var fieldStart = row.startIndex
                while let separator = row[fieldStart...].firstIndex(of: found.separatorByte) {
                    fields.append(row[fieldStart..<separator])
                    fieldStart = separator + 1
                }
                fields.append(row[fieldStart...])
            }
            guard fields.count >= found.needed else {
                list.skip(line: lineNumber, "\(DisplayText.counted(fields.count, "field")), too few to reach lat and lon")
                continue
            }
            var radius: Double?
            if let column = found.radius, column < fields.count, !fields[column].isEmpty {
                let text = String(decoding: fields[column], as: UTF8.self)
                guard let value = number(fields[column], decimalComma: found.decimalComma)
                    ?? (try? Length.parse(found.decimalComma ? String(text.map { $0 == "," ? "." : $0 }) : text)) else {
                    list.skip(line: lineNumber, "radius \"\(text)\" is not a length")
                    continue
                }
                radius = value
            }
            list.add(
                latitude: number(fields[found.latitude], decimalComma: found.decimalComma),
                longitude: number(fields[found.longitude], decimalComma: found.decimalComma), radius: radius,
                name: found.name.flatMap { $0 < fields.count ? String(decoding: fields[$0], as: UTF8.self) : nil } ?? "",
                line: lineNumber,
                defaultRadius: defaultRadius)
        }
        guard columns != nil else { throw CollectionFileError("has no header line (it needs lat and lon columns)") }
        return list
    }

    /// The field as a number, blanks around it allowed; with `decimalComma` (a file whose
    /// fields part at semicolons, as spreadsheets write CSV where the comma is the decimal
    /// mark), "38,7105" too.
    private static func number(_ field: ArraySlice<UInt8>, decimalComma: Bool) -> Double? {
        if let value = DecimalText.value(field) { return value }
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = field.firstIndex(where: { !isBlank($0) }), let last = field.lastIndex(where: { !isBlank($0) }) else {
            return nil
        }
        let trimmed = field[first...last]
        if let value = DecimalText.value(trimmed) { return value }
        guard decimalComma, !trimmed.contains(UInt8(ascii: ".")), trimmed.count(where: { $0 == UInt8(ascii: ",") }) == 1 else { return nil }
        return DecimalText.value(trimmed.map { $0 == UInt8(ascii: ",") ? UInt8(ascii: ".") : $0 }[...])
    }

    /// Splits a line with quoted fields into the fields' UTF-8; false for an unterminated quote.
    private static func split(_ line: String, by separator: Character, into fields: inout [ArraySlice<UInt8>]) -> Bool {
        var field = ""
        var quoted = false
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            index = line.index(after: index)
            if quoted {
                if character != "\"" {
                    field.append(character)
                } else if index < line.endIndex, line[index] == "\"" {
                    field.append("\"")
                    index = line.index(after: index)
                } else {
                    quoted = false
                }
            } else if character == "\"" {
                quoted = true
            } else if character == separator {
                fields.append(Array(field.utf8)[...])
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(Array(field.utf8)[...])
        return !quoted
    }

    /// Where the header puts each column.
    private struct Columns {
        var separator: Character
        var separatorByte: UInt8 { separator == ";" ? UInt8(ascii: ";") : UInt8(ascii: ",") }
        /// Whether a number may have a decimal comma: the fields part at semicolons.
        var decimalComma: Bool { separator == ";" }
        var latitude: Int
        var longitude: Int
        var name: Int?
        var radius: Int?
        /// Fields a row needs to reach lat and lon (name and radius may be left off the end).
        var needed: Int

        init(header: String, lineNumber: Int) throws(CollectionFileError) {
            separator = header.contains(";") && !header.contains(",") ? ";" : ","
            let names = header.split(separator: separator, omittingEmptySubsequences: false).map {
                $0.trimming(while: { $0.isWhitespace || $0 == "\"" }).lowercased()
            }
            func column(_ aliases: [String]) -> Int? { names.firstIndex { aliases.contains($0) } }
            guard let latitude = column(["lat", "latitude"]), let longitude = column(["lon", "lng", "long", "longitude"]) else {
                throw CollectionFileError(
                    "line \(lineNumber): the header \"\(DisplayText.excerpt(header.utf8))\" needs lat and lon columns (separated by commas or semicolons)")
            }
            self.latitude = latitude
            self.longitude = longitude
            name = column(["name", "title"])
            radius = column(["radius"])
            needed = max(latitude, longitude) + 1
        }
    }
}
