import Foundation
import GeoAlarmCore
@testable import GeoAlarmReplay
import GeoAlarmTestSupport
import Testing

/// Our NMEA decoder against gpsd's own decode (the `.chk` files) of the same real captures.
@Suite(.enabled(if: !TestData.isAbsent, "../shared/testdata is absent (a clone elsewhere)"))
struct GoldenCaptureTests {
    /// Captures where gpsd's regression output differs from the receiver's own words, and why.
    static let known: [String: String] = [
        "neo-m8n.log": "gpsd's regression run shifts the date by a GPS week rollover (2034 for 2015)",
        "rst39.log": "gpsd's regression run shifts the date by a GPS week rollover (2033 for 2014)",
        "tcp-torture.log": "a deliberately broken stream",
    ]

    /// Captures whose epochs the gpsd that wrote the .chk files reports and gpsd 3.22 (whose
    /// reporting replay follows) does not, and why.
    static let reportedDifferently: [String: String] = [
        "furuno_gl_ga.log": "after each RMC its GNS (mode N) and GGA (0 satellites) say no fix: 3.22 reports the epoch at its end",
    ]

    /// Every NMEA capture in the shared folder with a timed fix in gpsd's decode.
    static let nmeaCaptures: [String] = {
        guard let root = TestData.root?.appendingPathComponent("gpsd"),
              let names = try? FileManager.default.contentsOfDirectory(atPath: root.path)
        else { return [] }
        return names.filter { name in
            guard name.hasSuffix(".log"), known[name] == nil,
                  let log = FileManager.default.contents(atPath: root.appendingPathComponent(name).path),
                  TestData.isNMEA(log),
                  let check = FileManager.default.contents(atPath: root.appendingPathComponent(name + ".chk").path)
            else { return false }
            return String(decoding: check, as: UTF8.self).contains("\"time\":")
        }.sorted()
    }()

    @Test func theSharedFolderHoldsManyNMEACaptures() {
        #expect(Self.nmeaCaptures.count >= 50)
        #expect(Self.nmeaCaptures.contains("bundg_zeus_9.log"))
    }

    @Test(arguments: nmeaCaptures)
    func nmeaPositionsAndTimesMatchGpsd(log: String) throws {
        // These receivers' GLL carries the next second's time (their capture notes say so): which
        // sentence's position an epoch's fix takes depends on where gpsd's cycle detection ends
        // the epoch, and the gpsd that wrote the .chk files ends it elsewhere than 3.22, which
        // replay follows (the live tests hold replay to this machine's gpsd): metres apart.
        let gllAhead = ["bundg_zeus_9.log", "garmin48.log"].contains(log)
        let tolerance = gllAhead ? 5.0 : 0.01
        let ours = NMEAReader.read(try TestData.bytes("gpsd/\(log)")[...])
        let gpsd = GPSDJSONReader.read(try TestData.bytes("gpsd/\(log).chk")[...])
        let timed = ours.fixes.filter { $0.time != nil }
        var gpsdByTime: [Date: [Fix]] = [:]
        for fix in gpsd.fixes { if let time = fix.time { gpsdByTime[time, default: []].append(fix) } }
        // Where both report an epoch, they report the same place.
        let oursByTime = Dictionary(timed.map { ($0.time!, $0) }, uniquingKeysWith: { first, _ in first })
        for (time, theirs) in gpsdByTime {
            guard let fix = oursByTime[time] else { continue }
            let nearest = theirs.map { Haversine.distance($0.coordinate, fix.coordinate) }.min()!
            #expect(nearest < tolerance, "\(log) at \(time): \(fix.coordinate) is \(nearest) m from gpsd's")
        }
        // Which epochs are reported differs between gpsd versions at the start of a capture (while
        // the cycle end is learnt) and where a receiver's clock jumps: a few epochs at most.
        let lacking = gpsdByTime.keys.filter { oursByTime[$0] == nil }
        #expect(lacking.count <= 3 || Self.reportedDifferently[log] != nil, "\(log): \(lacking.count) epochs gpsd reports that we do not")
        if !gllAhead, let firstGpsd = gpsdByTime.keys.min() {
            let extra = timed.filter { $0.time! > firstGpsd && gpsdByTime[$0.time!] == nil }
            #expect(extra.count <= 3, "\(log): \(extra.count) epochs that gpsd does not report")
        }
    }

    @Test func errorEstimatesFollowGpsdsModel() throws {
        // quectel-L70 reports DGPS (4.75 m per HDOP), skytraq-fix plain GPS (19 m per HDOP).
        for log in ["quectel-L70.log", "skytraq-fix.log", "bundg_zeus_9.log"] {
            let ours = NMEAReader.read(try TestData.bytes("gpsd/\(log)")[...])
            let gpsd = GPSDJSONReader.read(try TestData.bytes("gpsd/\(log).chk")[...])
            let gpsdError = Dictionary(
                gpsd.fixes.compactMap { fix in fix.time.map { ($0, fix.horizontalError) } },
                uniquingKeysWith: { first, _ in first })
            var compared = 0
            for fix in ours.fixes {
                guard let time = fix.time, let theirs = gpsdError[time] ?? nil, let mine = fix.horizontalError
                else { continue }
                #expect(abs(mine - theirs) < 0.01, "\(log) at \(time): eph \(mine) vs gpsd \(theirs)")
                compared += 1
            }
            #expect(compared >= 5, "\(log): only \(compared) error estimates compared")
        }
    }

    @Test func theChkFilesReplayAsGpsdJSON() throws {
        let report = TrackReader.read(try TestData.bytes("gpsd/haicom-305N.log.chk"))
        #expect(report.format == .gpsdJSON)
        #expect(report.problemCount == 0)
        #expect(report.fixes.count > 60)
        #expect(report.fixes.allSatisfy { $0.mode >= .twoD && $0.coordinate.isValid })
    }
}
