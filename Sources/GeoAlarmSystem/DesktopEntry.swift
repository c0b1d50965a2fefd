/// The desktop entry geoalarm installs (`packaging/desktop/`): its basename is the id that
/// GeoClue (and its agents' dialogs, and `[id]` in geoclue.conf) and the notification server
/// (GNOME's Settings, Notifications) know geoalarm by, and its AppStream component's.
public enum DesktopEntry {
    public static let id = "io.github.geoalarm.GeoAlarm"
}
