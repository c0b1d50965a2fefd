import FoundationEssentials
import GeoAlarmCore

/// What geoalarm writes into task objects: a completion and its undoing, changing only the
/// lines that say so (``ICalendarEdit``); and a new task with a place, in both forms the
/// writers read (Apple's and RFC 9074's).
public enum TaskEdits {
    /// `bytes` with the task `uid` completed at `time`, as iOS marks one done: `STATUS:COMPLETED`,
    /// `COMPLETED` and `PERCENT-COMPLETE:100`, `LAST-MODIFIED` and `DTSTAMP` now; `SEQUENCE` and
    /// every other byte kept. A task completed already (or cancelled) is left as it is: its
    /// completion's time stands.
    ///
    /// A repeating task (`RRULE`) is moved on instead, as Apple's Reminders and tasks.org do:
    /// its `DTSTART` (or, without one, its `DUE`) to the first occurrence of its rule after the
    /// one it is at that is still to come at `time` (those missed are passed over), its `DUE` and
    /// its alarms at a time (`TRIGGER;VALUE=DATE-TIME`) by as many days, its `COUNT` down by the
    /// occurrences passed; it stays open. Only when its
    /// series has ended (COUNT, UNTIL) is it completed; a time its `EXDATE` takes out is passed
    /// over. It is left as it is when it was last modified at `time`, to the second (a
    /// completion sent again, its answer lost). A rule geoalarm does not follow, `RDATE` or
    /// occurrences changed on their own are refused: its own app moves such a task on. Local
    /// times are read in `zones`.
    public static func completing(_ bytes: [UInt8], uid: String, at time: Date, zones: ICalendarZones) throws(TaskProblem) -> [UInt8] {
        let calendar = try read(bytes)
        let todo = try master(of: uid, in: calendar)
        // Completed already (or cancelled): its completion's time stands.
        if try TaskObject(todo).isClosed { return bytes }
        let now = ICalendarTime.utcText(time)
        if let rule = todo.property("RRULE") {
            if todo.property("LAST-MODIFIED")?.value == now { return bytes }
            let overridden = calendar.components("VTODO").contains { $0.property("UID")?.text == uid && $0.property("RECURRENCE-ID") != nil }
            if let moved = try movingOn(todo, rule: rule.value, overridden: overridden, in: bytes, at: time, zones: zones) { return moved }
        }
        var edit = ICalendarEdit(bytes, component: todo)
        edit.set("STATUS", "STATUS:COMPLETED")
        edit.set("COMPLETED", "COMPLETED:\(now)")
        edit.set("PERCENT-COMPLETE", "PERCENT-COMPLETE:100")
        edit.set("LAST-MODIFIED", "LAST-MODIFIED:\(now)")
        edit.set("DTSTAMP", "DTSTAMP:\(now)")
        return edit.result
    }

    /// `bytes` with the task `uid` not completed any more: `STATUS:NEEDS-ACTION`, no `COMPLETED`
    /// nor `PERCENT-COMPLETE`, `LAST-MODIFIED` and `DTSTAMP` now; every other byte kept.
    public static func uncompleting(_ bytes: [UInt8], uid: String, at time: Date) throws(TaskProblem) -> [UInt8] {
        let todo = try master(of: uid, in: read(bytes))
        let now = ICalendarTime.utcText(time)
        var edit = ICalendarEdit(bytes, component: todo)
        edit.set("STATUS", "STATUS:NEEDS-ACTION")
        edit.remove("COMPLETED")
        edit.remove("PERCENT-COMPLETE")
        edit.set("LAST-MODIFIED", "LAST-MODIFIED:\(now)")
        edit.set("DTSTAMP", "DTSTAMP:\(now)")
        return edit.result
    }

    /// `bytes` with the repeating task `todo` moved on to its next occurrence still to come at
    /// `time`; nil when its series has none (it ends). `overridden`: the object holds
    /// occurrences of it changed on their own.
    private static func movingOn(
        _ todo: Component, rule text: String, overridden: Bool, in bytes: [UInt8], at time: Date, zones: ICalendarZones
    ) throws(TaskProblem) -> [UInt8]? {
        func refused(_ words: String) -> TaskProblem {
            TaskProblem("it repeats, \(words): geoalarm does not move it on; complete it in its own app")
        }
        if todo.property("RDATE") != nil { throw refused("with RDATE") }
        if todo.properties("RRULE").count > 1 { throw refused("by more than one RRULE") }
        // Times taken out of the series (an occurrence deleted in Thunderbird or Evolution): the
        // days of those that are days, the moments of the others, each read once.
        var excluded: [ICalendarTime] = []
        var exclusions = 0
        for line in todo.properties("EXDATE") {
            for value in line.value.split(separator: ",") {
                exclusions += 1
                guard exclusions <= mostExclusions else { throw refused("with more than \(mostExclusions) EXDATE times") }
                guard let time = ICalendarTime(value: String(value), zone: line.parameter("TZID")) else {
                    throw refused("with an EXDATE that is no time (\(DisplayText.escaped(String(value))))")
                }
                excluded.append(time)
            }
        }
        if overridden { throw refused("with occurrences changed on their own (RECURRENCE-ID)") }
        let rule: RecurrenceRule
        do {
            rule = try RecurrenceRule(text)
        } catch {
            throw refused(error.description)
        }
        let startLine = todo.property("DTSTART"), dueLine = todo.property("DUE")
        let start = startLine.flatMap(ICalendarTime.init), due = dueLine.flatMap(ICalendarTime.init)
        guard let reference = start ?? due else { throw refused("without a DTSTART or DUE to repeat from") }
        // A day takes out its whole day (of a series of days or of times); a time, its moment.
        var excludedDays: Set<Int> = [], excludedMoments: Set<Date> = []
        for time in excluded {
            if case .date = time { excludedDays.insert(time.wallClock.day) } else if case .date = reference {
                excludedDays.insert(time.wallClock.day)
            } else {
                excludedMoments.insert(time.moment(in: zones))
            }
        }
        let first = reference.wallClock.day
        var occurrence = 1
        var next: ICalendarTime?
        // Two days before `time`'s day in UTC, before it in every zone: the occurrences before are passed over unseen.
        let daysBefore = Int((time.timeIntervalSince1970 / 86_400).rounded(.down)) - 2
        rule.forEachDay(after: first, from: daysBefore) { day in
            occurrence += 1
            if let count = rule.count, occurrence > count { return false }
            let candidate = reference.moved(byDays: day - first)
            // Taken out, it still counts as one of COUNT's (RFC 5545, 3.8.5.1).
            if excludedDays.contains(day) || excludedMoments.contains(candidate.moment(in: zones)) { return true }
            if let until = rule.until {
                let beyond = if case .date = until {
                    candidate.wallClock.day > until.wallClock.day
                } else {
                    candidate.moment(in: zones) > until.moment(in: zones)
                }
                if beyond { return false }
            }
            guard candidate.moment(in: zones) > time else { return true }
            next = candidate
            return false
        }
        guard let next else { return nil }
        let days = next.wallClock.day - first
        let now = ICalendarTime.utcText(time)
        var edit = ICalendarEdit(bytes, component: todo)
        /// `time` moved on, if RFC 5545 can write it (its year at most 9999).
        func moved(_ time: ICalendarTime) throws(TaskProblem) -> String {
            let moved = time.moved(byDays: days)
            guard LocalTime.date(daysSince1970: moved.wallClock.day).year <= 9999 else {
                throw refused("and its next time would be past the year 9999, which iCalendar cannot write")
            }
            return moved.valueText
        }
        if let startLine, let start { edit.set("DTSTART", head(of: startLine, in: bytes) + (try moved(start))) }
        if let dueLine, let due { edit.set("DUE", head(of: dueLine, in: bytes) + (try moved(due))) }
        // An alarm at a time of its own (not Apple's placeholder of a place) goes along with it.
        for alarm in todo.components("VALARM") {
            guard let trigger = alarm.property("TRIGGER"), trigger.parameter("VALUE")?.uppercased() == "DATE-TIME",
                  trigger.value.uppercased() != TaskAlarm.applePlaceholder, let at = ICalendarTime(trigger)
            else { continue }
            edit.replace(trigger, with: head(of: trigger, in: bytes) + (try moved(at)))
        }
        if let count = rule.count { edit.set("RRULE", "RRULE:" + rule.text(count: count - (occurrence - 1))) }
        if todo.property("STATUS") != nil { edit.set("STATUS", "STATUS:NEEDS-ACTION") }
        edit.remove("COMPLETED")
        edit.remove("PERCENT-COMPLETE")
        edit.set("LAST-MODIFIED", "LAST-MODIFIED:\(now)")
        edit.set("DTSTAMP", "DTSTAMP:\(now)")
        return edit.result
    }

    /// The most `EXDATE` times a repeating task may have for geoalarm to move it on.
    public static let mostExclusions = 10_000

    /// `line` as written up to its value (`DUE;TZID=Europe/Lisbon:`), unfolded from `bytes`.
    private static func head(of line: ContentLine, in bytes: [UInt8]) -> String {
        var unfolded: [UInt8] = []
        var index = line.range.lowerBound
        while index < line.range.upperBound {
            let byte = bytes[index]
            guard byte == 0x0D || byte == 0x0A else {
                unfolded.append(byte)
                index += 1
                continue
            }
            // A line end, and the space or tab that folds the next physical line onto it.
            index += byte == 0x0D && index + 1 < line.range.upperBound && bytes[index + 1] == 0x0A ? 2 : 1
            if index < line.range.upperBound, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        }
        let value = Array(line.value.utf8)
        guard unfolded.count >= value.count, unfolded.suffix(value.count).elementsEqual(value) else {
            return line.name + (line.parameter("TZID").map { ";TZID=\($0)" } ?? "") + (line.value.count == 8 ? ";VALUE=DATE" : "") + ":"
        }
        return String(decoding: unfolded.dropLast(value.count), as: UTF8.self)
    }

    /// When the open repeating task `uid` of `bytes` comes next (its `DTSTART`, else its `DUE`);
    /// nil for a task that does not repeat, or is closed.
    public static func nextOccurrence(of uid: String, in bytes: [UInt8]) -> ICalendarTime? {
        guard let todo = try? master(of: uid, in: read(bytes)), let task = try? TaskObject(todo), task.repeats, !task.isClosed else { return nil }
        return task.start ?? task.due
    }

    /// Whether the task `uid` in `bytes` is completed or cancelled.
    public static func isClosed(_ bytes: [UInt8], uid: String) throws(TaskProblem) -> Bool {
        try TaskObject(master(of: uid, in: read(bytes))).isClosed
    }

    /// The object `bytes` holds.
    private static func read(_ bytes: [UInt8]) throws(TaskProblem) -> Component {
        do {
            return try ICalendarReader.read(bytes)
        } catch {
            throw TaskProblem("\(error)")
        }
    }

    /// The task `uid` in `calendar`: its VTODO without a `RECURRENCE-ID` (an object may hold its
    /// occurrences' overrides beside it).
    private static func master(of uid: String, in calendar: Component) throws(TaskProblem) -> Component {
        guard let todo = calendar.components("VTODO").first(where: { $0.property("UID")?.text == uid && $0.property("RECURRENCE-ID") == nil })
        else { throw TaskProblem("no task with UID \(DisplayText.escaped(uid)) in it") }
        return todo
    }

    /// What a new task says.
    public struct NewTask: Sendable {
        public var uid: String
        public var title: String
        public var notes: String?
        public var location: Location

        /// Where a new task is.
        public enum Location: Sendable {
            /// At a position (its name, when it has one, as its `LOCATION`), with location alarms
            /// for the trigger.
            case place(TaskPlace, Trigger)
            /// Words only (`LOCATION`), as a task app keeps them: a collection's name, which a list
            /// with `location_tasks` reads as any of its places.
            case words(String)
        }

        public init(uid: String, title: String, notes: String?, location: Location) {
            self.uid = uid
            self.title = title
            self.notes = notes
            self.location = location
        }
    }

    /// A new task object (CRLF, folded). At a place: its name as its `LOCATION` (the words
    /// todoman, Thunderbird and Nextcloud Tasks show), and a location alarm for each of arriving
    /// and leaving that the trigger asks for, each in Apple's form (`X-APPLE-PROXIMITY`,
    /// `X-APPLE-STRUCTURED-LOCATION`, the 1976 placeholder `TRIGGER`) and RFC 9074's (`PROXIMITY`,
    /// a `VLOCATION` with a geo URI): iOS and the standard's clients both see the place. By words:
    /// its `LOCATION` alone.
    public static func newTask(_ task: NewTask, at time: Date) -> [UInt8] {
        let now = ICalendarTime.utcText(time)
        let end: [UInt8] = [0x0D, 0x0A]
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//geoalarm//geoalarm//EN", "BEGIN:VTODO",
            "UID:\(ICalendarText.escaped(task.uid))", "DTSTAMP:\(now)", "CREATED:\(now)", "LAST-MODIFIED:\(now)",
            "SUMMARY:\(ICalendarText.escaped(task.title))",
        ]
        if let notes = task.notes { lines.append("DESCRIPTION:\(ICalendarText.escaped(notes))") }
        lines.append("STATUS:NEEDS-ACTION")
        switch task.location {
        case .place(let place, let trigger):
            lines += placeLines(place, trigger: trigger, uid: task.uid)
        case .words(let words):
            lines.append("LOCATION:\(ICalendarText.escaped(words))")
        }
        lines += ["END:VTODO", "END:VCALENDAR"]
        return lines.flatMap { ICalendarEdit.fold($0, lineEnd: end) }
    }

    /// A place's `LOCATION` (when named) and its location alarms, in both forms.
    private static func placeLines(_ place: TaskPlace, trigger: Trigger, uid: String) -> [String] {
        var lines: [String] = []
        if let name = place.name { lines.append("LOCATION:\(ICalendarText.escaped(name))") }
        let uri = GeoURI(coordinate: place.coordinate, uncertainty: place.radius)
        let title = place.name.map(appleParameter) ?? "\"\(place.coordinate)\""
        var proximities: [String] = []
        if trigger != .leave { proximities.append("ARRIVE") }
        if trigger != .arrive { proximities.append("DEPART") }
        for (number, proximity) in proximities.enumerated() {
            var apple = "X-APPLE-STRUCTURED-LOCATION;VALUE=URI"
            if let radius = place.radius { apple += ";X-APPLE-RADIUS=\(ReminderRules.plain(radius))" }
            apple += ";X-APPLE-REFERENCEFRAME=1;X-TITLE=\(title):\(uri.appleText)"
            lines += [
                "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER;VALUE=DATE-TIME:\(TaskAlarm.applePlaceholder)",
                "UID:\(ICalendarText.escaped(uid))-\(number + 1)", "X-APPLE-PROXIMITY:\(proximity)", apple, "PROXIMITY:\(proximity)",
                "BEGIN:VLOCATION", "UID:\(ICalendarText.escaped(uid))-place-\(number + 1)",
            ]
            if let name = place.name { lines.append("NAME:\(ICalendarText.escaped(name))") }
            lines += ["URL:\(uri.text)", "END:VLOCATION", "END:VALARM"]
        }
        return lines
    }

    /// A parameter value as written: quoted (RFC 6868's carets escaping what a quote cannot hold).
    private static func appleParameter(_ text: String) -> String {
        let escaped = text.replacingCharacters { character in
            switch character {
            case "^": "^^"
            case "\"": "^'"
            case "\n", "\r\n": "^n"
            case "\r": ""
            default: nil
            }
        }
        return "\"" + escaped + "\""
    }
}
