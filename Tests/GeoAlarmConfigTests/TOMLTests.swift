import Foundation
@testable import GeoAlarmConfig
import GeoAlarmTestSupport
import Testing
import GeoAlarmTOML

/// The TOML reader: values, tables and their spans, and errors with their positions.
struct TOMLTests {
    static func parse(_ text: String) throws -> TOMLDocument { try TOML.parse(Array(text.utf8)) }

    /// The error message and 1-based line:column for `text`, or nil when it parses.
    static func error(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        do {
            _ = try TOML.parse(bytes)
            return nil
        } catch {
            let (line, column) = TOMLDocument.position(
                of: error.offset, in: bytes, lineStarts: TOMLDocument.lineStarts(of: bytes))
            return "\(line):\(column): \(error.message)"
        }
    }

    /// A document rendered as the same tagged JSON `TOMLTests.pythonRender` makes of tomllib's result.
    static func render(_ value: TOMLValue) -> String {
        switch value.content {
        case .string(let text): "s:" + text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ",")
        case .integer(let int): "i:\(int)"
        case .float(let double): double.isNaN ? "f:nan" : "f:\(double == double.rounded() && abs(double) < 1e15 ? String(Int64(double)) + ".0" : "\(double)")"
        case .boolean(let bool): "b:\(bool)"
        case .dateTime: "d"
        case .array(let array): "[" + array.elements.map(render).joined(separator: ";") + "]"
        case .table(let table): render(table)
        }
    }

    static func render(_ table: TOMLTable) -> String {
        "{" + table.keys.sorted().map { "\($0)=\(render(table[$0]!))" }.joined(separator: ";") + "}"
    }

    /// The same rendering of Python's tomllib result for a file.
    static let pythonRender = #"""
        import sys, tomllib, math, datetime
        def r(v):
            if isinstance(v, bool): return "b:" + ("true" if v else "false")
            if isinstance(v, str): return "s:" + ",".join(format(ord(c), "x") for c in v)
            if isinstance(v, int): return "i:%d" % v
            if isinstance(v, float):
                if math.isnan(v): return "f:nan"
                if math.isinf(v): return "f:" + ("-inf" if v < 0 else "inf")
                if v == int(v) and abs(v) < 1e15: return "f:%d.0" % int(v)
                return "f:" + repr(v)
            if isinstance(v, (datetime.date, datetime.time, datetime.datetime)): return "d"
            if isinstance(v, list): return "[" + ";".join(r(x) for x in v) + "]"
            return "{" + ";".join("%s=%s" % (k, r(v[k])) for k in sorted(v)) + "}"
        try:
            print(r(tomllib.load(open(sys.argv[1], "rb"))))
        except tomllib.TOMLDecodeError:
            print("invalid")
        """#

    static let documents = [
        #"a = "tab\tquote\"uni\u00e9\U0001F600""#,
        "a = 'C:\\no\\escape'\nb = '''\nfirst\n  'quoted' '' \n'''",
        "a = \"\"\"\nline one \\\n    continued\nline\"\"\"\"\"",
        "ints = [0, +17, -5, 1_000, 0xDEAD_beef, 0o755, 0b1101, 9223372036854775807, -9223372036854775808]",
        "floats = [1.5, -0.01, 5e+22, 1e06, -2E-2, 6.626e-34, 224_617.445_991, inf, -inf, nan, +0.0, -0.0]",
        "d = [1979-05-27T07:32:00Z, 1979-05-27 07:32:00.999-07:00, 1979-05-27T07:32:00, 1979-05-27, 07:32:00, 00:32:00.5]",
        "nested = [[1, 2], ['a', \"b\"], [], [{x = 1}, {}]]\nmixed = [\n  1, # one\n  \"two\",\n]",
        "name = { first = \"Tom\", last.name = 'x' }\n\"quoted key\" = 1\n'lit.key' = 2\nbare-key_1 = 3\n\"\" = 4",
        "[a.b.c]\nx = 1\n[a]\ny = 2\n[a.b]\nz = 3",
        "fruit.apple.color = \"red\"\nfruit.apple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true",
        "[[products]]\nname = \"Hammer\"\n[[products]]\n[[products]]\nname = \"Nail\"\n[products.size]\nl = 2\n[[products.tags]]\nt = 1",
        "  [ dog . \"tater.man\" ]  # comment\n  type.name = \"pug\"\r\n",
        "a = true\nb = false\n# only a comment\n\n",
    ]

    static let invalidDocuments = [
        "a = 1\na = 2", "[a]\n[a]", "a = {}\n[a]", "[a]\nb = 1\n[a.b]", "a = [1]\n[[a]]", "x = 01", "x = 1__0", "x = _1",
        "x = 0x", "x = 1.", "x = .5", "x = 1e", "x = \"\\q\"", "x = \"\\uD800\"", "x = \"a\nb\"", "x = 'a\nb'", "x = {a = 1,}",
        "x = {a = 1\n}", "x = [1 2]", "x = 1979-13-01", "x = 24:00:00", "x = 1979-02-30", "[a", "[[a]", "x = \"\"\"abc",
        "x = tru", "x", "= 1", "a.b = 1\n[a.b]", "[a]\nb.c = 1\n[a.b]", "x = 1 2", "x = \u{1}", "# \u{7F} control",
        "a = {b = 1}\na.c = 2", "[[a]]\nb = 1\n[a]", "x = 9223372036854775808", "x = \"\"\"\"\"\"\"\"\"",
    ]

    @Test func valuesMatchPythonsTomllib() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toml-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = folder.appendingPathComponent("render.py")
        try Data(Self.pythonRender.utf8).write(to: script)
        // TOML asks for an error where a 64-bit integer cannot hold the value; tomllib keeps any size.
        let beyondSixtyFourBits = "x = 9223372036854775808"
        for (index, text) in (Self.documents + Self.invalidDocuments).enumerated() where text != beyondSixtyFourBits {
            let file = folder.appendingPathComponent("\(index).toml")
            try Data(text.utf8).write(to: file)
            let python = try Command.run([script.path, file.path], executable: "/usr/bin/python3")
            let theirs = python.stdout.trimmingCharacters(in: .newlines)
            let ours = (try? Self.parse(text)).map { Self.render($0.root) } ?? "invalid"
            #expect(ours == theirs, "\(text)")
        }
    }

    @Test func everyInvalidDocumentIsAnError() {
        for text in Self.invalidDocuments {
            #expect(Self.error(text) != nil, "\(text)")
        }
    }

    @Test func errorsNameTheirLineAndColumn() {
        #expect(Self.error("[\n") == "1:2: expected a key, found the end of the line")
        #expect(Self.error("a = 1\nb = \"x\n") == "2:7: unterminated string (a basic string ends on its line)")
        #expect(Self.error("a = 1\n[[reminder]]\nb = 2\nb = 3\n") == "4:1: b is defined twice")
        #expect(Self.error("é = 1") == "1:1: expected a key, found byte 0xC3")
        #expect(Self.error("a = \"é\" x") == "1:9: expected the end of the line, found 'x'")
        #expect(Self.error("a = 1\n\u{0}b = 2\n") == "2:1: NUL byte in the file")
        do {
            _ = try TOML.parse([0x61, 0x3D, 0x22, 0xFF, 0x22])
            Issue.record("accepted invalid UTF-8")
        } catch {
            #expect(error.message == "invalid UTF-8" && error.offset == 3)
        }
    }

    /// Nesting is bounded, so that no input can run the stack out, however deep.
    @Test func deepNestingIsAnErrorNotACrash() {
        let dotted = "a" + String(repeating: ".a", count: 30_000) + " = 1"
        #expect(Self.error(dotted)?.hasSuffix("key has more than 64 parts") == true)
        let arrays = "a = " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(Self.error(arrays)?.hasSuffix("nested more than 64 levels deep") == true)
        let tables = "a = " + String(repeating: "{b = ", count: 100_000)
        #expect(Self.error(tables)?.hasSuffix("nested more than 64 levels deep") == true)
        let header = "[" + String(repeating: "a.", count: 70) + "a]"
        #expect(Self.error(header)?.hasSuffix("key has more than 64 parts") == true)
    }

    /// A table opened by a header spans its header line to its last key or sub-table, not the
    /// comments and blank lines before the next header.
    @Test func tablesKnowTheirExtent() throws {
        let text = """
            top = 1
            [[reminder]]
            id = "a"
            notes = \"""
            [[reminder]]
            \"""
            [reminder.active]
            days = ["mon"]

            # the next one
            [[ reminder ]]
            id = "b"
            """
        let document = try Self.parse(text)
        let elements = try #require(document.root["reminder"]?.array)
        #expect(elements.count == 2)
        let bytes = Array(text.utf8)
        let first = String(decoding: bytes[elements[0].table!.extent], as: UTF8.self)
        #expect(first == "[[reminder]]\nid = \"a\"\nnotes = \"\"\"\n[[reminder]]\n\"\"\"\n[reminder.active]\ndays = [\"mon\"]\n")
        let second = String(decoding: bytes[elements[1].table!.extent], as: UTF8.self)
        #expect(second == "[[ reminder ]]\nid = \"b\"")
    }
}

