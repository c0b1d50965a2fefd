import FoundationEssentials
import GeoAlarmCore

/// What geoalarm writes into task objects: a completion and its undoing, changing only the
/// lines that say so (``ICalendarEdit``); and a new task with a place, in both forms the
/// writers read (Apple's and RFC 9074's).
public enum TaskEdits {
    /// `bytes` with the task `uid` completed at `time`, as iOS marks one done: `STATUS:COMPLETED`,
    /// `COMPLETED` and `PERCENT-COMPLETE:100`, `LAST-MODIFIED` and `DTSTAMP` now; `SEQUENCE` and
    /// every other byte kept. A repeating task (`RRULE`) is refused: completing it is moving it to
    /// its next occurrence, which its own app does.
    public static func completing(_ bytes: [UInt8], uid: String, at time: Date) throws(TaskProblem) -> [UInt8] {
        let todo = try master(of: uid, in: bytes)
        guard todo.property("RRULE") == nil else {
            throw TaskProblem("it repeats (RRULE): geoalarm does not complete a repeating task; complete it in its own app")
        }
        let now = ICalendarTime.utcText(time)
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
        let todo = try master(of: uid, in: bytes)
        let now = ICalendarTime.utcText(time)
        var edit = ICalendarEdit(bytes, component: todo)
        edit.set("STATUS", "STATUS:NEEDS-ACTION")
        edit.remove("COMPLETED")
        edit.remove("PERCENT-COMPLETE")
        edit.set("LAST-MODIFIED", "LAST-MODIFIED:\(now)")
        edit.set("DTSTAMP", "DTSTAMP:\(now)")
        return edit.result
    }

    /// Whether the task `uid` in `bytes` is completed or cancelled.
    public static func isClosed(_ bytes: [UInt8], uid: String) throws(TaskProblem) -> Bool {
        try TaskObject(master(of: uid, in: bytes)).isClosed
    }

    /// The task `uid` in `bytes`: its VTODO without a `RECURRENCE-ID` (an object may hold its
    /// occurrences' overrides beside it).
    static func master(of uid: String, in bytes: [UInt8]) throws(TaskProblem) -> Component {
        let calendar: Component
        do {
            calendar = try ICalendarReader.read(bytes)
        } catch {
            throw TaskProblem("\(error)")
        }
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
