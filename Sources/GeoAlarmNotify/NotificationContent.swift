import GeoAlarmCore

/// What a pop-up for an event says and how it behaves, following the desktop notification spec.
struct NotificationContent: Equatable {
    /// "Arrived: Buy bread", "Left: Buy bread", or "Reminder: Call mum" for a time alarm.
    var summary: String
    /// The reminder's notes, then where (place name or coordinates) and how far from its centre.
    var body: String
    var icon: String
    /// 0 low, 1 normal, 2 critical (libnotify's NotifyUrgency).
    var urgency: Int
    /// -1 for the server's default, 0 for never (critical pop-ups never expire), else milliseconds.
    /// libnotify's timeout: milliseconds, -1 for the server's default, 0 for never. A timeout
    /// longer than an Int32 holds (about 24.8 days) is as good as never and is clamped to it.
    var timeoutMilliseconds: Int32
    /// `x-geoalarm.arrive`, `x-geoalarm.leave` or `x-geoalarm.alarm`.
    var category: String

    /// `markup`: the server renders body markup, so `&`, `<` and `>` in the text must be escaped.
    init(event: GeofenceEvent, markup: Bool) {
        let reminder = event.reminder
        // A time alarm has no place: its centre and distance are NaN, and are never shown.
        var place: String { reminder.placeName ?? reminder.center.description }
        var distance: String {
            guard reminder.area != nil else { return "\(Metres.rounded(event.distance)) m from its centre" }
            return event.distance > 0 ? "\(Metres.rounded(event.distance)) m beyond its edge" : "inside it"
        }
        let whereabouts: String?
        switch event.kind {
        case .arrive:
            summary = "Arrived: " + reminder.title
            whereabouts = "At \(place), \(distance)"
        case .leave:
            summary = "Left: " + reminder.title
            whereabouts = "Left \(place), now \(distance)"
        case .alarm:
            summary = "Reminder: " + reminder.title
            whereabouts = nil
        }
        if let device = event.fix.tracker { summary += " (\(device))" }
        let text = [reminder.notes, whereabouts].compactMap { $0 }.joined(separator: "\n")
        body = markup ? Self.escaped(text) : text
        icon = reminder.alert.icon ?? DesktopNotifier.defaultIcon
        switch reminder.alert.urgency {
        case .low: urgency = 0
        case .normal: urgency = 1
        case .critical: urgency = 2
        }
        if reminder.alert.urgency == .critical {
            timeoutMilliseconds = 0
        } else {
            timeoutMilliseconds = reminder.alert.timeout.map { Int32(clamping: Int((min($0, Span.maximum) * 1000).rounded())) } ?? -1
        }
        category = "x-geoalarm.\(event.kind.rawValue)"
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
