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
    init(announcement: Announcement, markup: Bool) {
        let whereabouts: String?
        switch announcement {
        case .crossing(let event):
            let reminder = event.reminder
            let place = reminder.placeName ?? reminder.center.description
            let distance: String
            switch reminder.geometry {
            case .circle:
                distance = "\(Metres.rounded(event.distance)) m from its centre"
            case .area:
                distance = event.distance > 0 ? "\(Metres.rounded(event.distance)) m beyond its edge" : "inside it"
            }
            if event.kind == .approach {
                // "Approaching: Turn the heating on" / "Home in about 9 min (6.2 km)".
                summary = "Approaching: " + reminder.title
                let away = Metres.spoken(event.proximity?.distance ?? event.distance)
                let named = place.prefix(1).uppercased() + place.dropFirst()
                whereabouts = event.proximity?.eta.map { "\(named) in about \(Span.spoken($0)) (\(away))" } ?? "\(named), \(away) away"
            } else if event.kind == .leave {
                summary = "Left: " + reminder.title
                whereabouts = "Left \(place), now \(distance)"
            } else {
                summary = "Arrived: " + reminder.title
                whereabouts = "At \(place), \(distance)"
            }
            if let device = event.fix.tracker { summary += " (\(device))" }
        case .alarm(let firing):
            summary = "Reminder: " + firing.alarm.title
            whereabouts = nil
        }
        let alert = announcement.alert
        let text = [announcement.notes, whereabouts].compactMap { $0 }.joined(separator: "\n")
        body = markup ? Self.escaped(text) : text
        icon = alert.icon ?? DesktopNotifier.defaultIcon
        switch alert.urgency {
        case .low: urgency = 0
        case .normal: urgency = 1
        case .critical: urgency = 2
        }
        if alert.urgency == .critical {
            timeoutMilliseconds = 0
        } else {
            timeoutMilliseconds = alert.timeout.map { Int32(clamping: Int((min($0, Span.maximum) * 1000).rounded())) } ?? -1
        }
        category = "x-geoalarm.\(announcement.kind.rawValue)"
    }

    static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;")
    }
}
