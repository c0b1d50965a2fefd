import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmTestSupport
import Testing

/// Mangled collection files: the readers must never trap, and whatever they say must point
/// into the file (a refusal names a line of it; places are valid; skipped rows name lines of it).
struct CollectionFuzzTests {
    static let gpx = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- waypoints -->
        <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1" xmlns:x="urn:x">
          <wpt lat="46.5" lon="7.9"><name>Hut &amp; caf&#233;</name><x:name>no</x:name></wpt>
          <wpt lat='-33.5' lon='151.25'><name><![CDATA[<Tom>]]></name></wpt>
          <wpt lat="0" lon="-180"/>
          <trk><trkseg><trkpt lat="1" lon="1"/></trkseg></trk>
        </gpx>

        """

    static let geojson = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [7.9, 46.5]},
           "properties": {"name": "Hut \\u00e9 \\"A\\"", "radius": 250}},
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-180, -33.5, 12]}, "properties": null},
          {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[7, 46], [8, 47]]}}
        ]}

        """

    @Test(arguments: [(CollectionFormat.gpx, gpx), (CollectionFormat.geojson, geojson)])
    func mangledFilesAreReadOrRefusedNeverTrapped(format: CollectionFormat, text: String) throws {
        let original = Array(text.utf8)
        let readable = try Self.read(original, format)
        #expect(readable.places.count >= 2, "the unmangled file must load")
        var random = SplitMix(seed: 0xF0_22ED)
        var refused = 0
        for _ in 0..<3_000 {
            var bytes = original
            for _ in 0...Int.random(in: 0...3, using: &random) { Self.mangle(&bytes, using: &random) }
            let lines = bytes.count(where: { $0 == UInt8(ascii: "\n") }) + 1
            do {
                let list = try Self.read(bytes, format)
                #expect(list.places.allSatisfy { $0.geometry.center.isValid && ($0.geometry.radius ?? 0) > 0 })
                #expect(list.problems.allSatisfy { (1...lines).contains($0.line) }, "\(String(decoding: bytes, as: UTF8.self))")
            } catch {
                refused += 1
                guard error.description.hasPrefix("line ") else {
                    // The one refusal of a whole file that no line is to blame for.
                    #expect(error.description == "has no \"features\" array (is it a FeatureCollection?)")
                    continue
                }
                let line = error.description.split(separator: " ").dropFirst().first.flatMap { Int($0.dropLast()) }
                #expect(line.map { (1...lines).contains($0) } == true, "\(error): \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(refused > 100, "mangling should break most files")
    }

    /// Deletes, duplicates, inserts (a byte that means something to XML or JSON) or truncates.
    static func mangle(_ bytes: inout [UInt8], using random: inout SplitMix) {
        guard !bytes.isEmpty else { return }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        let length = min(Int.random(in: 1...8, using: &random), bytes.count - at)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: bytes.removeSubrange(at..<(at + length))
        case 1: bytes.insert(contentsOf: bytes[at..<(at + length)], at: at)
        case 2: bytes.insert(Array("<>/&;\"'[]{},:=!?-\\#x0\n\u{FF}".utf8).randomElement(using: &random)!, at: at)
        default: bytes.removeSubrange(at...)
        }
    }

    static func read(_ bytes: [UInt8], _ format: CollectionFormat) throws(CollectionFileError) -> PlaceList {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-fuzz-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try CollectionFile.read(path: path, format: format, defaultRadius: 100)
    }
}
