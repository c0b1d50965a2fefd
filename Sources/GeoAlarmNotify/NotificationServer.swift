internal import CLibNotify

/// The desktop notification server that answers on the session bus, as libnotify reports it.
public struct NotificationServer: Sendable, Equatable {
    /// "dunst", "gnome-shell", "Plasma"...
    public var name: String
    public var vendor: String
    public var version: String
    /// The version of the Desktop Notifications Specification it follows.
    public var specificationVersion: String
    /// What it advertises: "actions", "body", "body-markup"...
    public var capabilities: [String]

    /// Whether it shows a pop-up's buttons ("Done", "Snooze 1 h").
    public var showsButtons: Bool { capabilities.contains("actions") }

    /// Starts libnotify under geoalarm's name, once per process; false when it cannot start.
    @discardableResult
    static func initialize() -> Bool {
        notify_is_initted() != 0 || notify_init("geoalarm") != 0
    }

    /// Asks the session bus; nil when nothing answers as org.freedesktop.Notifications (no
    /// session bus, or no server on it). May block up to D-Bus's timeout on a hung server.
    public static func current() -> NotificationServer? {
        guard initialize() else { return nil }
        var name: UnsafeMutablePointer<CChar>?
        var vendor: UnsafeMutablePointer<CChar>?
        var version: UnsafeMutablePointer<CChar>?
        var specification: UnsafeMutablePointer<CChar>?
        guard notify_get_server_info(&name, &vendor, &version, &specification) != 0 else { return nil }
        let texts = [name, vendor, version, specification].map { pointer in
            defer { g_free(pointer) }
            return pointer.map { String(cString: $0) } ?? ""
        }
        var capabilities: [String] = []
        let list = notify_get_server_caps()
        var item = list
        while let node = item {
            if let text = node.pointee.data { capabilities.append(String(cString: text.assumingMemoryBound(to: CChar.self))) }
            item = node.pointee.next
        }
        g_list_free_full(list, g_free)
        return NotificationServer(
            name: texts[0], vendor: texts[1], version: texts[2], specificationVersion: texts[3], capabilities: capabilities)
    }
}
