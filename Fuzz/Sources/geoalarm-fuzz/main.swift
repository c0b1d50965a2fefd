// geoalarm-fuzz TARGET [libFuzzer options] [corpus folders...]
//
// One libFuzzer target per parser. Each feeds the input to the parser and checks what must hold
// whatever the input: no trap (libFuzzer reports any crash), positions inside the input, and for
// the config editor that an edit changes exactly the reminder it is about.
import CLibFuzzer
import Foundation
import GeoAlarmConfig
import GeoAlarmCore
import GeoAlarmICalendar
import GeoAlarmMap
import GeoAlarmMQTT
import GeoAlarmOwnTracks
import GeoAlarmReplay
import GeoAlarmScanners
import GeoAlarmTasks
import GeoAlarmWebDAV
import GeoAlarmTOML

/// The parsers that can be fuzzed, by the name given on the command line.
enum FuzzTarget: String, CaseIterable {
    case nmea, gpsdJSON = "gpsd-json", gpx, toml, config, csv, geojson, gpxWaypoints = "gpx-waypoints", editor, owntracks, http, map, ical, webdav

    func run(_ bytes: [UInt8]) {
        switch self {
        case .nmea: checkTrack(NMEAReader.read(bytes[...]), bytes)
        case .gpsdJSON: checkTrack(GPSDJSONReader.read(bytes[...]), bytes)
        case .gpx: checkTrack(TrackReader.read(bytes), bytes)
        case .toml: checkTOML(bytes)
        // With the table the MQTT module reads, as every command reads a config.
        case .config: _ = try? ConfigLoader.parse(bytes, path: "fuzz/config.toml", sections: [MQTTSetup.self])
        case .csv: checkPlaces(bytes, .csv)
        case .geojson: checkPlaces(bytes, .geojson)
        case .gpxWaypoints: checkPlaces(bytes, .gpx)
        case .editor: checkEditor(bytes)
        case .owntracks: checkOwnTracks(bytes)
        case .http: checkHTTP(bytes)
        case .map: checkMap(bytes)
        case .ical: checkICalendar(bytes)
        case .webdav:
            checkMultistatus(bytes)
            checkChallenges(bytes)
        }
    }
}

/// An OwnTracks payload read as a location holds a usable fix of the device it was read for; the
/// input's first line, as a topic, names a device only below the subscription's prefix.
func checkOwnTracks(_ bytes: [UInt8]) {
    if case .success(.location(let fix)) = OwnTracksLocation.parse(bytes, tracker: "fuzz/device") {
        guard fix.coordinate.isValid, fix.tracker == "fuzz/device", let time = fix.time,
              time.timeIntervalSince1970 >= 946_684_800, fix.horizontalError.map({ $0.isFinite && $0 >= 0 }) ?? true,
              fix.speed.map({ $0.isFinite && $0 >= 0 }) ?? true,
              fix.trackerLabel.map({ (1...8).contains($0.count) && $0.allSatisfy { $0.isLetter || $0.isNumber } }) ?? true
        else { fatalError("kept an unusable location: \(fix)") }
    }
    let topic = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    if let tracker = OwnTracksTopics(subscription: "owntracks/+/+").tracker(of: topic) {
        guard topic == "owntracks/" + tracker else { fatalError("\(topic) named device \(tracker)") }
    }
}

/// Every problem a track reader names lies on a line of the input.
func checkTrack(_ report: TrackReport, _ bytes: [UInt8]) {
    let lines = bytes.count { $0 == UInt8(ascii: "\n") } + 1
    for problem in report.problems where problem.line < 1 || problem.line > lines {
        fatalError("problem on line \(problem.line) of a \(lines)-line input")
    }
}

func checkPlaces(_ bytes: [UInt8], _ format: CollectionFormat) {
    guard let list = try? CollectionFile.parse(bytes, format: format, defaultRadius: 100) else { return }
    let lines = bytes.count { $0 == UInt8(ascii: "\n") } + 1
    for problem in list.problems where problem.line < 1 || problem.line > lines {
        fatalError("problem on line \(problem.line) of a \(lines)-line input")
    }
    for place in list.places {
        guard place.geometry.center.isValid else { fatalError("kept a place that is not valid: \(place)") }
        let area: Area
        switch place.geometry {
        case .circle(_, let radius):
            if !(radius > 0) { fatalError("kept a circle without a radius: \(place)") }
            continue
        case .area(let kept):
            area = kept
        }
        // An area kept has at least a triangle, lies within the latitude limit, and answers
        // inside and distance for its middle and a point beyond its box.
        guard area.edgeCount >= 3, area.south >= -Area.latitudeLimit, area.north <= Area.latitudeLimit,
              area.east - area.west <= 180
        else { fatalError("kept an area that is not valid: \(area)") }
        var tested = 0
        for point in [area.center, Coordinate(latitude: min(area.north + 1, 90), longitude: area.center.longitude)] {
            _ = area.contains(point, tested: &tested)
            let distance = area.distanceToEdge(from: Haversine.Origin(point), tested: &tested)
            if !(distance >= 0) { fatalError("distance \(distance) to the edge of \(area)") }
        }
    }
}

/// Every span the TOML reader keeps lies in the input, and every table's extent is ordered.
func checkTOML(_ bytes: [UInt8]) {
    guard let document = try? TOML.parse(bytes) else { return }
    var pending = [document.root]
    while let table = pending.popLast() {
        guard table.extent.lowerBound >= 0, table.extent.upperBound <= bytes.count, table.start <= bytes.count else {
            fatalError("table span \(table.extent) outside \(bytes.count) bytes")
        }
        for key in table.keys {
            guard let value = table[key] else { fatalError("key \(key) listed but missing") }
            guard value.keyOffset < bytes.count else { fatalError("key offset past the end") }
            if let inner = value.table { pending.append(inner) }
            for element in value.array ?? [] { if let inner = element.table { pending.append(inner) } }
        }
    }
}

/// A request the map's server reads takes no more than the bytes it was given, its body is the
/// length it declared, and the bytes it took read again as the same request.
func checkHTTP(_ bytes: [UInt8]) {
    let largestBody = 1024
    guard case .complete(let request, let length) = HTTPRequestReader.read(bytes, largestBody: largestBody) else { return }
    guard length <= bytes.count, request.body.count <= largestBody, request.path.utf8.first == UInt8(ascii: "/"),
          request.body.count == Int(request.headers["content-length"] ?? "0")
    else { fatalError("a request read past its bytes or its length") }
    guard HTTPRequestReader.read(Array(bytes[..<length]), largestBody: largestBody) == .complete(request, length: length) else {
        fatalError("the bytes of a request read as something else")
    }
}

/// Places on both sides of the antimeridian, near a pole and elsewhere, for the map target's views.
let mapEngine: GeofenceEngine = {
    let points = [(-17.8, 179.9), (-17.8, -179.9), (89.9, 0.0), (38.7, -9.1), (0, 0)]
    let places = points.map { CollectionPlace(geometry: .circle(center: Coordinate(latitude: $0.0, longitude: $0.1), radius: 500)) }
    let template = Reminder(id: "p", title: "{name}", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 1))
    return GeofenceEngine(reminders: [], collections: [ReminderCollection(id: "p", template: template, places: places)])
}()

/// A request to the map: its query read as a view is one (latitudes in range, south not above
/// north, at most one turn of longitude), and the index answers it within its limit; its body
/// (or the whole input, a page's JSON) read as a change is within its bound, its point "LAT,LON".
func checkMap(_ bytes: [UInt8]) {
    var bodies = [bytes]
    if case .complete(let request, _) = HTTPRequestReader.read(bytes, largestBody: MapChange.largestBody) {
        bodies.append(request.body)
        if case .success(let view) = MapView.parse(request.query) {
            let box = view.box
            guard (-90...90).contains(box.south), (-90...90).contains(box.north), box.south <= box.north,
                  box.everyLongitude || (box.west >= -180 && box.west < 180 && box.east >= box.west && box.east - box.west < 360),
                  (1...5000).contains(view.limit)
            else { fatalError("a view that is none: \(view)") }
            let found = mapEngine.fences(in: box, limit: view.limit)
            guard found.fences.count <= view.limit else { fatalError("more places than the limit") }
        }
    }
    for body in bodies {
        guard let change = try? MapChange.parse(body) else { continue }
        guard body.count <= MapChange.largestBody else { fatalError("a change read past its bound") }
        if let location = change.location, location.split(separator: ",").count != 2 { fatalError("a location of another shape: \(location)") }
    }
}

/// A server's multistatus answer: what is read of it comes from the input (no text longer than
/// it, objects together no larger), and a refusal names a line of the input.
func checkMultistatus(_ bytes: [UInt8]) {
    let answer: Multistatus
    do {
        answer = try Multistatus.parse(bytes)
    } catch {
        let lines = bytes.count { $0 == UInt8(ascii: "\n") } + 1
        if error.description.hasPrefix("line "), let line = Int(error.description.dropFirst(5).prefix { $0.isNumber }), !(1...lines).contains(line) {
            fatalError("a problem on line \(line) of a \(lines)-line answer")
        }
        return
    }
    var objectBytes = 0
    for response in answer.responses {
        objectBytes += response.calendarData?.count ?? 0
        let texts = [response.href, response.etag, response.ctag, response.syncToken, response.displayName, response.principal, response.calendarHome]
        for text in texts.compactMap({ $0 }) where text.utf8.count > bytes.count {
            fatalError("read a text longer than the answer")
        }
        if let status = response.status, !(100...599).contains(status) { fatalError("a status of \(status)") }
    }
    guard objectBytes <= bytes.count else { fatalError("objects of \(objectBytes) bytes from a \(bytes.count)-byte answer") }
    // Each href is taken only as a member of the collection, on its server, written one way
    // (taken again, the same); and Done on each object is refused, or made with only the
    // completion's lines changed (the ical target's checks).
    let collection = "https://dav.example/ana/tasks/"
    for response in answer.responses {
        if let member = ServerAddress.member(response.href, of: collection) {
            let name = member.dropFirst("/ana/tasks/".count)
            guard member.hasPrefix("/ana/tasks/"), !name.isEmpty, !name.contains("/"), name != ".", name != "..",
                  ServerAddress.member(member, of: collection) == member
            else { fatalError("\(response.href.debugDescription) taken as \(member.debugDescription), no member of \(collection)") }
        }
        if let data = response.calendarData { checkICalendar(data) }
    }
}

/// A refusal's `WWW-Authenticate`, as a server sends it: each scheme named is a token of the
/// input (no space, no `=`), and the scheme answered is Digest exactly where one is named Digest.
func checkChallenges(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let names = AuthScheme.schemeNames(text)
    for name in names where name.isEmpty || name.contains(where: { $0 == " " || $0 == "\t" || $0 == "=" }) {
        fatalError("a scheme named \(name.debugDescription)")
    }
    guard names.count <= text.utf8.count / 2 + 1 else { fatalError("\(names.count) schemes in \(text.utf8.count) bytes") }
    let scheme = AuthScheme(challenges: text)
    guard (scheme == .digest) == names.contains("digest"), (scheme == .basic) == (!names.contains("digest") && names.contains("basic")) else {
        fatalError("\(String(describing: scheme)) answered to \(names)")
    }
}

/// A task object: every property's bytes lie in the input; a task read from it gives reminders
/// with valid places and radii; completing it changes only its completion's lines (the others'
/// bytes stay) and reads back completed; uncompleting reads back open.
func checkICalendar(_ bytes: [UInt8]) {
    guard let calendar = try? ICalendarReader.read(bytes) else { return }
    var pending = [calendar]
    while let component = pending.popLast() {
        guard component.range.upperBound <= bytes.count, component.endLineStart >= component.range.lowerBound else {
            fatalError("a component outside the input")
        }
        for property in component.properties where property.range.upperBound > bytes.count || property.range.isEmpty {
            fatalError("a property outside the input: \(property.name)")
        }
        pending += component.components
    }
    // A task's LOCATION read too: against places and collections of the config, or as a position.
    let settings = TaskListSettings(name: "Fuzz", folder: "/fuzz", geoTasks: .both, locationTasks: .arrive)
    let template = Reminder(id: "", title: "", geometry: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 1))
    let shops = ReminderCollection(id: "shops", template: template, places: [
        CollectionPlace(geometry: .circle(center: Coordinate(latitude: 38.71, longitude: -9.14), radius: 30), name: "Baixa"),
    ])
    let defaults = TaskLists.Defaults(
        template: template, radius: 100, zones: .utc,
        places: ["bakery": Coordinate(latitude: 38.7105, longitude: -9.1366), "post_office": Coordinate(latitude: 38.7079, longitude: -9.1365)],
        collections: [shops])
    let load = TaskLists.read([("/fuzz/a.ics", bytes)], settings: settings, defaults: defaults)
    for reminder in load.reminders {
        guard reminder.center.isValid, case .circle(_, let radius) = reminder.geometry, radius > 0, radius <= Length.maximum else {
            fatalError("a reminder that is not valid: \(reminder)")
        }
    }
    for collection in load.collections {
        guard collection.places == shops.places, load.origin(of: collection.member(0).id) != nil else {
            fatalError("a task at a collection's places that is not its task's: \(collection.id)")
        }
    }
    for todo in calendar.components("VTODO") where todo.property("RECURRENCE-ID") == nil && todo.property("RRULE") == nil {
        guard let uid = todo.property("UID")?.text, !uid.isEmpty, calendar.components("VTODO").filter({ $0.property("UID")?.text == uid }).count == 1
        else { continue }
        let moment = Date(timeIntervalSince1970: 1_800_000_000)
        guard let completed = try? TaskEdits.completing(bytes, uid: uid, at: moment, zones: .utc) else {
            fatalError("a task that could not be completed")
        }
        guard let after = try? ICalendarReader.read(completed),
              let task = after.components("VTODO").first(where: { $0.property("UID")?.text == uid }).flatMap({ try? TaskObject($0) }),
              task.isClosed
        else { fatalError("completing made an object that does not read as completed") }
        let changed: Set<String> = ["STATUS", "COMPLETED", "PERCENT-COMPLETE", "LAST-MODIFIED", "DTSTAMP"]
        let newTodo = after.components("VTODO").first { $0.property("UID")?.text == uid }!
        for property in todo.properties where !changed.contains(property.name) {
            guard newTodo.properties.contains(where: { Array(completed[$0.range]) == Array(bytes[property.range]) }) else {
                fatalError("completing changed \(property.name)")
            }
        }
        guard let reopened = try? TaskEdits.uncompleting(completed, uid: uid, at: moment),
              let open = try? ICalendarReader.read(reopened).components("VTODO").first(where: { $0.property("UID")?.text == uid }),
              let back = try? TaskObject(open), !back.isClosed
        else { fatalError("uncompleting did not reopen it") }
        break
    }
    checkRepeatingTasks(bytes, calendar)
}

/// A repeating task completed is refused, completed (its series ended) or moved on: open, its
/// next time still to come, only its times, rule and completion's lines changed, and the same
/// completion made again changes nothing.
func checkRepeatingTasks(_ bytes: [UInt8], _ calendar: Component) {
    for todo in calendar.components("VTODO") where todo.property("RECURRENCE-ID") == nil && todo.property("RRULE") != nil {
        guard let uid = todo.property("UID")?.text, !uid.isEmpty, calendar.components("VTODO").filter({ $0.property("UID")?.text == uid }).count == 1,
              (try? TaskObject(todo))?.isClosed == false
        else { continue }
        let moment = Date(timeIntervalSince1970: 1_800_000_000)
        // Last modified at this very completion's time: taken as made already, and left as it is.
        if todo.property("LAST-MODIFIED")?.value == ICalendarTime.utcText(moment) { continue }
        guard let moved = try? TaskEdits.completing(bytes, uid: uid, at: moment, zones: .utc) else { continue }
        guard let after = try? ICalendarReader.read(moved),
              let newTodo = after.components("VTODO").first(where: { $0.property("UID")?.text == uid }),
              let task = try? TaskObject(newTodo)
        else { fatalError("completing a repeating task made an object that does not read") }
        guard (try? TaskEdits.completing(moved, uid: uid, at: moment, zones: .utc)) == moved else {
            fatalError("the same completion made twice moved the task twice")
        }
        if task.isClosed { break }
        guard let next = TaskEdits.nextOccurrence(of: uid, in: moved), next.moment(in: .utc) > moment else {
            fatalError("a repeating task moved on to a time that has passed")
        }
        let changed: Set<String> = ["DTSTART", "DUE", "RRULE", "STATUS", "COMPLETED", "PERCENT-COMPLETE", "LAST-MODIFIED", "DTSTAMP"]
        for property in todo.properties where !changed.contains(property.name) {
            guard newTodo.properties.contains(where: { Array(moved[$0.range]) == Array(bytes[property.range]) }) else {
                fatalError("moving a repeating task on changed \(property.name)")
            }
        }
        break
    }
}

/// Removing a reminder leaves every other reminder as it was; adding one adds just it.
func checkEditor(_ bytes: [UInt8]) {
    let path = "fuzz/config.toml"
    guard let config = try? ConfigLoader.parse(bytes, path: path) else { return }
    let ids = config.idsInFileOrder
    if !ids.isEmpty {
        let removedID = ids[bytes.count % ids.count]
        if let edited = try? ConfigEditor.removingReminder(id: removedID, from: bytes, path: path) {
            guard let after = try? ConfigLoader.parse(edited, path: path) else {
                fatalError("removing \(removedID) made the config invalid")
            }
            guard after.idsInFileOrder == ids.filter({ $0 != removedID }),
                  after.reminders == config.reminders.filter({ $0.id != removedID })
            else { fatalError("removing \(removedID) changed other reminders") }
        }
    }
    // Moving a circle and changing its radius (as the map does) changes that reminder's place
    // and size only, wherever its keys were written.
    if !ids.isEmpty, let target = config.reminders.first(where: { $0.id == ids[(bytes.count / 2) % ids.count] }),
       case .circle = target.geometry,
       let moved = try? ConfigEditor.changingReminder(
           id: target.id, setting: [("location", "\"1,2\""), ("radius", "\"42m\"")], removing: ["place", "lat", "lon"],
           in: bytes, path: path) {
        guard let after = try? ConfigLoader.parse(moved, path: path) else { fatalError("moving \(target.id) made the config invalid") }
        guard after.idsInFileOrder == ids, after.reminders.filter({ $0.id != target.id }) == config.reminders.filter({ $0.id != target.id }),
              after.reminders.first(where: { $0.id == target.id })?.geometry == .circle(center: Coordinate(latitude: 1, longitude: 2), radius: 42)
        else { fatalError("moving \(target.id) changed something else, or not it") }
    }
    let isTableArray: Bool
    if let value = try? TOML.parse(bytes).root["reminder"], case .array(let array) = value.content {
        isTableArray = array.elements.allSatisfy { $0.table != nil } && !array.elements.isEmpty
    } else {
        isTableArray = (try? TOML.parse(bytes).root["reminder"]) == nil
    }
    guard isTableArray, !ids.contains("fuzz-added") else { return }
    let added = ConfigEditor.appendingReminder(
        [("id", "\"fuzz-added\""), ("title", "\"Added\""), ("location", "\"1,2\"")], to: bytes)
    guard let after = try? ConfigLoader.parse(added, path: path) else { fatalError("adding a reminder made the config invalid") }
    guard after.idsInFileOrder == ids + ["fuzz-added"], Array(after.reminders.dropLast()) == config.reminders else {
        fatalError("adding a reminder changed the others")
    }
    // Defining a place (add --place NAME --at LAT,LON) adds just that place, where it is allowed at all.
    if let defined = try? ConfigEditor.definingPlace("fuzz-place", at: "1,2", in: bytes, path: path) {
        guard let withPlace = try? ConfigLoader.parse(defined, path: path) else { fatalError("defining a place made the config invalid") }
        var expected = config.places
        expected["fuzz-place"] = Coordinate(latitude: 1, longitude: 2)
        guard withPlace.places == expected, withPlace.reminders == config.reminders else {
            fatalError("defining a place changed something else")
        }
    }
}

nonisolated(unsafe) var selected = FuzzTarget.nmea

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    selected.run(bytes)
    return 0
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
    FileHandle.standardError.write(Data((
        "usage: geoalarm-fuzz TARGET [libFuzzer options] [corpus folders]\ntargets: "
            + FuzzTarget.allCases.map(\.rawValue).joined(separator: " ") + "\n").utf8))
    exit(2)
}
selected = target
var driverArguments: [UnsafeMutablePointer<CChar>?] = ([arguments[0]] + arguments.dropFirst(2)).map { strdup($0) } + [nil]
var count = Int32(driverArguments.count - 1)
let status = driverArguments.withUnsafeMutableBufferPointer { buffer -> Int32 in
    var pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
    return LLVMFuzzerRunDriver(&count, &pointer, fuzzOne)
}
exit(status)
