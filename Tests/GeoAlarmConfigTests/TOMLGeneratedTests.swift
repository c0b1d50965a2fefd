import Foundation
@testable import GeoAlarmConfig
import GeoAlarmTestSupport
import Testing

/// Generated TOML documents (numbers of every form, dates and times, dotted keys into implicit
/// and explicit tables, headers and arrays of tables, valid and not) read as Python's tomllib
/// reads them.
struct TOMLGeneratedTests {
    /// Makes documents from a seed: small pools of keys, so that tables meet and clash.
    struct Generator {
        var random: SplitMix

        mutating func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
        mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

        mutating func digits(_ count: Int, from alphabet: String = "0123456789", underscores: Bool = true) -> String {
            var text = ""
            for index in 0..<count {
                if underscores, index > 0, chance(15) { text += chance(10) ? "__" : "_" }
                text.append(pick(Array(alphabet)))
            }
            if underscores, chance(3) { text += "_" }
            return text
        }

        mutating func sign() -> String { pick(["", "", "+", "-"]) }

        mutating func number() -> String {
            switch random.next() % 9 {
            case 0: return sign() + (chance(10) ? "0" : "") + digits(Int(random.next() % 6) + 1)
            case 1: return "0x" + digits(Int(random.next() % 6) + 1, from: "0123456789abcdefABCDEF")
            case 2: return "0o" + digits(Int(random.next() % 5) + 1, from: "01234567")
            case 3: return "0b" + digits(Int(random.next() % 8) + 1, from: "01")
            case 4: return sign() + digits(Int(random.next() % 4) + 1) + "." + digits(Int(random.next() % 4) + 1)
            case 5:
                let mantissa = digits(Int(random.next() % 4) + 1) + (chance(50) ? "." + digits(Int(random.next() % 3) + 1) : "")
                return sign() + mantissa + pick(["e", "E"]) + pick(["", "+", "-"]) + digits(Int(random.next() % 3) + 1)
            case 6: return sign() + pick(["inf", "nan", "1.", ".5", "1e", "1.e5", "0.0", "-0.0", "00.1", "1e-0"])
            case 7: return date()
            default: return time()
            }
        }

        mutating func twoDigits(upTo limit: Int) -> String {
            let value = Int(random.next() % UInt64(limit + 2))
            return value < 10 ? "0\(value)" : "\(value)"
        }

        mutating func time() -> String {
            var text = twoDigits(upTo: 24) + ":" + twoDigits(upTo: 60) + ":" + twoDigits(upTo: 60)
            if chance(30) { text += "." + digits(Int(random.next() % 4) + 1, underscores: false) }
            return text
        }

        mutating func date() -> String {
            var text = digits(4, underscores: false) + "-" + twoDigits(upTo: 12) + "-" + twoDigits(upTo: 31)
            if chance(60) {
                text += pick(["T", "t", " "]) + time()
                if chance(60) { text += pick(["Z", "z", "+01:00", "-07:30", "+25:00"]) }
            }
            return text
        }

        mutating func value() -> String {
            switch random.next() % 6 {
            case 0: return "[" + (0..<Int(random.next() % 3)).map { _ in number() }.joined(separator: ", ") + "]"
            case 1: return "{ " + key() + " = " + number() + " }"
            case 2: return "\"text\""
            default: return number()
            }
        }

        mutating func key() -> String {
            (0..<Int(random.next() % 3 + 1)).map { _ in pick(["a", "b", "c", "d", "\"b\"", "'c'"]) }.joined(separator: ".")
        }

        mutating func document() -> String {
            var lines: [String] = []
            for _ in 0..<Int(random.next() % 8 + 1) {
                switch random.next() % 6 {
                case 0: lines.append("[" + key() + "]")
                case 1: lines.append("[[" + key() + "]]")
                default: lines.append(key() + " = " + value())
                }
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    /// tomllib's reading of every file named on the command line, a line each.
    static let pythonRenderAll = TOMLTests.pythonRender
        .replacingOccurrences(of: "try:\n    print(r(tomllib.load(open(sys.argv[1], \"rb\"))))\nexcept tomllib.TOMLDecodeError:\n    print(\"invalid\")", with: """
            for name in sys.argv[1:]:
                try:
                    print(r(tomllib.load(open(name, "rb"))))
                except tomllib.TOMLDecodeError:
                    print("invalid")
            """)

    @Test func generatedDocumentsReadAsTomllibReadsThem() throws {
        #expect(Self.pythonRenderAll.contains("for name in sys.argv[1:]"), "the script reads every file")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toml-generated-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = folder.appendingPathComponent("render.py")
        try Data(Self.pythonRenderAll.utf8).write(to: script)
        var generator = Generator(random: SplitMix(seed: 0x7031_5EED))
        var documents: [String] = []
        for _ in 0..<4000 {
            documents.append(generator.document())
        }
        var paths: [String] = []
        for (index, text) in documents.enumerated() {
            let file = folder.appendingPathComponent("\(index).toml")
            try Data(text.utf8).write(to: file)
            paths.append(file.path)
        }
        let python = try Command.run([script.path] + paths, executable: "/usr/bin/python3")
        let theirs = python.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(theirs.count >= documents.count, "\(python.stderr)")
        var agreed = 0, valid = 0
        for (index, text) in documents.enumerated() {
            let ours = (try? TOMLTests.parse(text)).map { TOMLTests.render($0.root) } ?? "invalid"
            if ours == theirs[index] { agreed += 1 } else { Issue.record("\(text)\nours:   \(ours)\ntheirs: \(theirs[index])") }
            if theirs[index] != "invalid" { valid += 1 }
        }
        #expect(agreed == documents.count)
        #expect(valid >= documents.count / 5, "\(valid) of \(documents.count) documents valid")
    }
}
