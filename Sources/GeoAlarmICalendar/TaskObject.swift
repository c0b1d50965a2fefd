import FoundationEssentials
import GeoAlarmCore

/// A task (VTODO) as writers keep it, read for what geoalarm needs: its words, its state, its
/// dates, and its alarms, of a place or of a time.
public struct TaskObject: Sendable, Equatable {
    public var uid: String
    public var summary: String
    public var description: String?
    /// `STATUS`, upper case; nil when not given (needs action).
    public var status: String?
    public var completed: ICalendarTime?
    public var start: ICalendarTime?
    public var due: ICalendarTime?
    /// Whether it repeats (`RRULE`).
    public var repeats: Bool
    /// `GEO`: the task's place, as tasks.org and DAVx5 keep it (without an alarm).
    public var geo: Coordinate?
    /// `LOCATION`: where it is done, in words, as todoman, Thunderbird and Nextcloud keep it.
    public var location: String?
    public var alarms: [TaskAlarm]
    /// Why alarms of it were passed over, for `check`.
    public var problems: [String]

    /// Whether it is done with: completed, or cancelled.
    public var isClosed: Bool {
        status == "COMPLETED" || status == "CANCELLED" || (status == nil && completed != nil)
    }

    /// The task in a `VTODO` component; nil with why when it has no UID.
    public init(_ todo: Component) throws(TaskProblem) {
        guard let uid = todo.property("UID")?.text, !uid.isEmpty else { throw TaskProblem("a task without a UID") }
        self.uid = uid
        summary = todo.property("SUMMARY")?.text ?? ""
        description = todo.property("DESCRIPTION")?.text
        status = todo.property("STATUS")?.value.uppercased()
        completed = todo.property("COMPLETED").flatMap(ICalendarTime.init)
        start = todo.property("DTSTART").flatMap(ICalendarTime.init)
        due = todo.property("DUE").flatMap(ICalendarTime.init)
        repeats = todo.property("RRULE") != nil
        location = todo.property("LOCATION")?.text.trimmingWhitespace()
        if location?.isEmpty == true { location = nil }
        problems = []
        geo = nil
        if let line = todo.property("GEO") {
            let parts = line.value.split(separator: ";")
            if parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
               Coordinate(latitude: latitude, longitude: longitude).isValid {
                geo = Coordinate(latitude: latitude, longitude: longitude)
            } else {
                problems.append("line \(line.line): GEO \"\(DisplayText.excerpt(line.value.utf8))\" is not LAT;LON")
            }
        }
        alarms = []
        for alarm in todo.components("VALARM") {
            let (read, problems) = TaskAlarm.read(alarm)
            if let read { alarms.append(read) }
            self.problems += problems
        }
    }
}

/// Why a task is not used, said with its file.
public struct TaskProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// A task's alarm: of a place (arriving or leaving), or of a time.
public struct TaskAlarm: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `PROXIMITY` or `X-APPLE-PROXIMITY`: ARRIVE or DEPART, at these places.
        case place(Trigger, [TaskPlace])
        /// `CONNECT` or `DISCONNECT` (getting into or out of a car: its Bluetooth or CarPlay), at
        /// the alarm's line: no place, so it never fires here.
        case vehicle(VehicleLink, line: Int)
        /// A `TRIGGER` of a time: a moment, or a span from the task's start or due time.
        case time(TimeTrigger)
    }

    /// When a time alarm fires.
    public enum TimeTrigger: Sendable, Equatable {
        case at(ICalendarTime)
        /// Seconds from the task's `DTSTART` (`RELATED=START`, the default) or `DUE` (`RELATED=END`).
        case fromStart(Double)
        case fromDue(Double)
    }

    /// What a vehicle alarm waits for.
    public enum VehicleLink: String, Sendable, Equatable {
        case connect = "CONNECT"
        case disconnect = "DISCONNECT"
    }

    public var kind: Kind

    /// Apple's placeholder time on a location alarm: no time at all.
    static let applePlaceholder = "19760401T005545Z"

    /// The alarm a `VALARM` holds, if any, and why parts of it were passed over.
    static func read(_ alarm: Component) -> (TaskAlarm?, [String]) {
        var problems: [String] = []
        let proximity = (alarm.property("PROXIMITY") ?? alarm.property("X-APPLE-PROXIMITY"))
        if let proximity {
            let trigger: Trigger
            switch proximity.value.uppercased() {
            case "ARRIVE": trigger = .arrive
            case "DEPART": trigger = .leave
            case let word:
                if let link = VehicleLink(rawValue: word) { return (TaskAlarm(kind: .vehicle(link, line: proximity.line)), []) }
                let value = DisplayText.excerpt(proximity.value.utf8)
                return (nil, ["line \(proximity.line): \(proximity.name) \"\(value)\" is neither ARRIVE nor DEPART: passed over"])
            }
            var places: [TaskPlace] = []
            for line in alarm.properties("X-APPLE-STRUCTURED-LOCATION") {
                switch GeoURI.parse(line.value) {
                case .success(let uri):
                    var radius = uri.uncertainty
                    if let written = line.parameter("X-APPLE-RADIUS") {
                        // Apple writes metres as a decimal number (`70.58730101326454`); anything
                        // else (`100m`, `0x10`, `1e-300`, nothing) is no radius to guess at.
                        guard let metres = ReminderRules.decimalNumber(written), metres >= TaskPlace.smallestRadius else {
                            problems.append("""
                                line \(line.line): X-APPLE-RADIUS "\(DisplayText.excerpt(written.utf8))" is no radius of \
                                \(ReminderRules.plain(TaskPlace.smallestRadius)) m or more, in metres: the place is passed over
                                """)
                            continue
                        }
                        radius = metres
                    }
                    // A title that is the place's coordinates names nothing.
                    let title = line.parameter("X-TITLE").flatMap { title -> String? in
                        guard case .failure = ReminderRules.parseLocation(title) else { return nil }
                        return title.isEmpty ? nil : title
                    }
                    places.append(TaskPlace(coordinate: uri.coordinate, radius: radius, name: title))
                case .failure(let problem):
                    problems.append("line \(line.line): X-APPLE-STRUCTURED-LOCATION: \(problem)")
                }
            }
            for location in alarm.components("VLOCATION") {
                guard let url = location.property("URL") else { continue }
                switch GeoURI.parse(url.value) {
                case .success(let uri):
                    places.append(TaskPlace(coordinate: uri.coordinate, radius: uri.uncertainty, name: location.property("NAME")?.text))
                case .failure(let problem):
                    problems.append("line \(url.line): VLOCATION URL: \(problem)")
                }
            }
            // A writer that gives both forms gives each place twice.
            var unique: [TaskPlace] = []
            for place in places where !unique.contains(where: { $0.isSamePlace(as: place) }) { unique.append(place) }
            guard !unique.isEmpty else {
                problems.append("an \(proximity.value.uppercased()) alarm without a usable place")
                return (nil, problems)
            }
            return (TaskAlarm(kind: .place(trigger, unique)), problems)
        }
        guard let trigger = alarm.property("TRIGGER") else { return (nil, []) }
        // A moment (VALUE=DATE-TIME, or a value that begins with its year's digits), else a
        // duration (`-PT15M`, `P1D`, `-P10DT12H30M15S`).
        if trigger.parameter("VALUE")?.uppercased() == "DATE-TIME" || trigger.value.utf8.first.map({ (0x30...0x39).contains($0) }) == true {
            guard trigger.value.uppercased() != applePlaceholder else { return (nil, []) }
            guard let time = ICalendarTime(trigger) else {
                return (nil, ["line \(trigger.line): TRIGGER \"\(DisplayText.excerpt(trigger.value.utf8))\" is no time"])
            }
            return (TaskAlarm(kind: .time(.at(time))), [])
        }
        guard let seconds = ICalendarDuration.seconds(trigger.value) else {
            return (nil, ["line \(trigger.line): TRIGGER \"\(DisplayText.excerpt(trigger.value.utf8))\" is no duration"])
        }
        let fromDue = trigger.parameter("RELATED")?.uppercased() == "END"
        return (TaskAlarm(kind: .time(fromDue ? .fromDue(seconds) : .fromStart(seconds))), [])
    }
}

/// A place of a location alarm.
public struct TaskPlace: Sendable, Equatable {
    public var coordinate: Coordinate
    /// Metres (`X-APPLE-RADIUS`, or the geo URI's `u=`); nil: the config's default.
    public var radius: Double?

    /// The smallest radius a task's place is taken with: a receiver tells no smaller circle.
    public static let smallestRadius = 1.0
    /// Its name (`X-TITLE`, a VLOCATION's `NAME`).
    public var name: String?

    public init(coordinate: Coordinate, radius: Double?, name: String?) {
        self.coordinate = coordinate
        self.radius = radius
        self.name = name
    }

    /// Whether two are one place written twice (within a metre, the same radius).
    public func isSamePlace(as other: TaskPlace) -> Bool {
        Haversine.distance(coordinate, other.coordinate) < 1 && radius == other.radius
    }
}
