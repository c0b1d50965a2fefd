import Foundation
import GeoAlarmCore
import GeoAlarmReplay
import GeoAlarmTestSupport
import Testing

/// Reading a track as a stream, a chunk at a time, gives what reading it whole gives.
struct TrackStreamTests {
    /// The track written into a pipe by a thread, in pieces of `piece` bytes, read as a stream.
    static func streamed(_ bytes: [UInt8], piece: Int = 4096) throws -> (fixes: [Fix], report: TrackReport) {
        // The reader may stop early (a line too long): the feeder then gets EPIPE, not SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
        let (reader, writer) = (ends[0], ends[1])
        let feeder = Thread {
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset..<min(bytes.count, offset + piece)].withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                offset += count
            }
            close(writer)
        }
        feeder.start()
        defer { close(reader) }
        var fixes: [Fix] = []
        var stream = TrackStream(descriptor: reader)
        while let batch = try stream.next() { fixes += batch }
        return (fixes, stream.report)
    }

    static let captures: [String] = {
        guard let root = TestData.root else { return [] }
        let folders = ["gpsd", "gpx"]
        return folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)) ?? [])
                .filter { $0.hasSuffix(".log") || $0.hasSuffix(".chk") || $0.hasSuffix(".gpx") }.map { "\(folder)/\($0)" }
        }.sorted()
    }()

    @Test(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"))
    func everySharedCaptureStreamsAsItReadsWhole() throws {
        #expect(Self.captures.count > 300)
        for capture in Self.captures {
            let bytes = try TestData.bytes(capture)
            let whole = TrackReader.read(bytes)
            let stream = try Self.streamed(bytes, piece: 1000 + bytes.count % 3000)
            #expect(stream.fixes == whole.fixes, "\(capture)")
            #expect(stream.report.format == whole.format, "\(capture)")
            #expect(stream.report.problemCount == whole.problemCount, "\(capture)")
            #expect(stream.report.epochsWithoutFix == whole.epochsWithoutFix, "\(capture)")
        }
    }

    @Test func theDemoWalkStreamsByteByByteAsItReadsWhole() throws {
        let bytes = Array(try Data(contentsOf: Command.root.appendingPathComponent("config/demo/walk.nmea")).prefix(20_000))
        let whole = TrackReader.read(bytes)
        #expect(!whole.fixes.isEmpty)
        #expect(try Self.streamed(bytes, piece: 1).fixes == whole.fixes)
        #expect(try Self.streamed([0xEF, 0xBB, 0xBF] + bytes, piece: 2).fixes == whole.fixes, "a byte-order mark is passed over")
    }

    /// A line longer than the stream's buffer (but under the limit) grows it: the lines around
    /// it, and the line itself (as a problem), come out as a whole read gives them.
    @Test func aLineLongerThanTheBufferStreamsAsItReadsWhole() throws {
        let walk = Array(try Data(contentsOf: Command.root.appendingPathComponent("config/demo/walk.nmea")).prefix(20_000))
        let cut = walk[..<10_000].lastIndex(of: 0x0A)! + 1
        let long = Array(walk[..<cut]) + Array("$GPTXT,".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 700_000) + [0x0A] + walk[cut...]
        let whole = TrackReader.read(long)
        let stream = try Self.streamed(long, piece: 65_000)
        #expect(!whole.fixes.isEmpty)
        #expect(stream.fixes == whole.fixes)
        #expect(stream.report.problemCount == whole.problemCount)
    }

    /// GPX is read whole at the end of the stream, however it arrives.
    @Test func aGPXTrackStreamsAsItReadsWhole() throws {
        let points = (0..<2_000).map { second in
            #"<trkpt lat="\#(38.7 + Double(second) * 1e-5)" lon="-9.14"><time>2026-10-12T08:\#(String(format: "%02d:%02d", second / 60 % 60, second % 60))Z</time></trkpt>"#
        }
        let gpx = Array((#"<?xml version="1.0"?><gpx version="1.1" creator="test"><trk><trkseg>"# + points.joined(separator: "\n") + "</trkseg></trk></gpx>\n").utf8)
        let whole = TrackReader.read(gpx)
        #expect(whole.format == .gpx)
        #expect(whole.fixes.count == 2_000)
        let stream = try Self.streamed(gpx, piece: 333)
        #expect(stream.fixes == whole.fixes)
        #expect(stream.report.format == .gpx)
    }

    @Test func aLineOverOneMegabyteIsAnErrorWithItsNumber() throws {
        let long = Array("$GPGGA,1\n$GPRMC,2\n".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: (1 << 20) + 1) + [0x0A]
        #expect(throws: TrackReadError.self) { try Self.streamed(long) }
        do {
            _ = try Self.streamed(long)
        } catch {
            #expect("\(error)" == "line 3 is longer than 1 MB: not a track")
        }
        let endless = [UInt8](repeating: 0, count: 3 << 20)
        do {
            _ = try Self.streamed(endless)
            Issue.record("read 3 MB without a newline")
        } catch {
            #expect("\(error)" == "line 1 is longer than 1 MB: not a track")
        }
    }
}
