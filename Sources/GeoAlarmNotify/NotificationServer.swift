internal import CLibNotify
import GeoAlarmSystem

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
    static func initialize(_ notify: LibNotify) -> Bool {
        notify.isInitted() != 0 || notify.initialise("geoalarm") != 0
    }

    /// Asks the session bus, loading libnotify (``LibNotify``) first: `.failure` says why it
    /// cannot be had; nil when nothing answers as org.freedesktop.Notifications (no session bus,
    /// or no server on it). May block up to D-Bus's timeout on a hung server.
    public static func current() -> Result<NotificationServer?, DynamicLibrary.Unavailable> {
        LibNotify.loaded.map { notify in current(notify) }
    }

    /// ``current()`` with libnotify loaded.
    static func current(_ notify: LibNotify) -> NotificationServer? {
        guard initialize(notify) else { return nil }
        var name: UnsafeMutablePointer<CChar>?
        var vendor: UnsafeMutablePointer<CChar>?
        var version: UnsafeMutablePointer<CChar>?
        var specification: UnsafeMutablePointer<CChar>?
        guard notify.getServerInfo(&name, &vendor, &version, &specification) != 0 else { return nil }
        let texts = [name, vendor, version, specification].map { pointer in
            defer { notify.free(pointer) }
            return pointer.map { String(cString: $0) } ?? ""
        }
        var capabilities: [String] = []
        let list = notify.getServerCapabilities()
        var item = list
        while let node = item {
            if let text = node.pointee.data { capabilities.append(String(cString: text.assumingMemoryBound(to: CChar.self))) }
            item = node.pointee.next
        }
        notify.listFreeFull(list, notify.free)
        return NotificationServer(
            name: texts[0], vendor: texts[1], version: texts[2], specificationVersion: texts[3], capabilities: capabilities)
    }
}
