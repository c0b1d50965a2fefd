internal import CLibNotify
import GeoAlarmSystem

/// libnotify's functions and the GLib ones the pop-ups use, loaded from `libnotify.so.4` (which
/// brings GLib, GObject and GIO) when pop-ups are first wanted, not linked: a headless agent, or
/// one with `[output] notify = false`, never maps them. Loaded once for the process and never
/// unloaded; the GLib names are looked up through libnotify's handle, which reaches the
/// libraries it depends on.
struct LibNotify: @unchecked Sendable {
    // The signatures are the headers', as Swift imports their types; `dlsym`'s address is only
    // ever cast to the type its declaration has.
    typealias Notification = UnsafeMutablePointer<NotifyNotification>
    typealias Text = UnsafePointer<CChar>
    typealias TextOut = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    typealias ErrorOut = UnsafeMutablePointer<UnsafeMutablePointer<GError>?>

    let isInitted: @convention(c) () -> gboolean
    let initialise: @convention(c) (Text?) -> gboolean
    let getServerInfo: @convention(c) (TextOut?, TextOut?, TextOut?, TextOut?) -> gboolean
    let getServerCapabilities: @convention(c) () -> UnsafeMutablePointer<GList>?
    let notificationNew: @convention(c) (Text?, Text?, Text?) -> Notification?
    let setUrgency: @convention(c) (Notification?, NotifyUrgency) -> Void
    let setTimeout: @convention(c) (Notification?, gint) -> Void
    let setCategory: @convention(c) (Notification?, Text?) -> Void
    let setHint: @convention(c) (Notification?, Text?, OpaquePointer?) -> Void
    let addAction: @convention(c) (Notification?, Text?, Text?, NotifyActionCallback?, gpointer?, GFreeFunc?) -> Void
    let show: @convention(c) (Notification?, ErrorOut?) -> gboolean
    let close: @convention(c) (Notification?, ErrorOut?) -> gboolean

    let free: @convention(c) (gpointer?) -> Void
    let clearError: @convention(c) (ErrorOut?) -> Void
    let listFreeFull: @convention(c) (UnsafeMutablePointer<GList>?, GDestroyNotify?) -> Void
    let idleAdd: @convention(c) (GSourceFunc?, gpointer?) -> guint
    let mainContextDefault: @convention(c) () -> OpaquePointer?
    let mainContextAcquire: @convention(c) (OpaquePointer?) -> gboolean
    let mainContextRelease: @convention(c) (OpaquePointer?) -> Void
    let mainContextIsOwner: @convention(c) (OpaquePointer?) -> gboolean
    let mainLoopNew: @convention(c) (OpaquePointer?, gboolean) -> OpaquePointer?
    let mainLoopRun: @convention(c) (OpaquePointer?) -> Void
    let mainLoopQuit: @convention(c) (OpaquePointer?) -> Void
    let mainLoopUnref: @convention(c) (OpaquePointer?) -> Void
    let variantNewString: @convention(c) (Text?) -> OpaquePointer?
    let objectUnref: @convention(c) (gpointer?) -> Void
    let signalConnectData: @convention(c) (gpointer?, Text?, GCallback?, gpointer?, GClosureNotify?, GConnectFlags) -> gulong

    /// The library's soname: what Debian's libnotify4 installs.
    static let soname = "libnotify.so.4"

    /// The process's libnotify, or why it cannot be had, loaded on first use.
    static let loaded = Result<LibNotify, DynamicLibrary.Unavailable> { () throws(DynamicLibrary.Unavailable) in
        try LibNotify(DynamicLibrary(soname: soname, package: "libnotify4", for: "desktop pop-ups"))
    }

    private init(_ library: DynamicLibrary) throws(DynamicLibrary.Unavailable) {
        isInitted = try library.required("notify_is_initted")
        initialise = try library.required("notify_init")
        getServerInfo = try library.required("notify_get_server_info")
        getServerCapabilities = try library.required("notify_get_server_caps")
        notificationNew = try library.required("notify_notification_new")
        setUrgency = try library.required("notify_notification_set_urgency")
        setTimeout = try library.required("notify_notification_set_timeout")
        setCategory = try library.required("notify_notification_set_category")
        setHint = try library.required("notify_notification_set_hint")
        addAction = try library.required("notify_notification_add_action")
        show = try library.required("notify_notification_show")
        close = try library.required("notify_notification_close")
        free = try library.required("g_free")
        clearError = try library.required("g_clear_error")
        listFreeFull = try library.required("g_list_free_full")
        idleAdd = try library.required("g_idle_add")
        mainContextDefault = try library.required("g_main_context_default")
        mainContextAcquire = try library.required("g_main_context_acquire")
        mainContextRelease = try library.required("g_main_context_release")
        mainContextIsOwner = try library.required("g_main_context_is_owner")
        mainLoopNew = try library.required("g_main_loop_new")
        mainLoopRun = try library.required("g_main_loop_run")
        mainLoopQuit = try library.required("g_main_loop_quit")
        mainLoopUnref = try library.required("g_main_loop_unref")
        variantNewString = try library.required("g_variant_new_string")
        objectUnref = try library.required("g_object_unref")
        signalConnectData = try library.required("g_signal_connect_data")
    }

    /// Whether this thread owns GLib's default main context (the pop-ups' thread does).
    var ownsDefaultContext: Bool { mainContextIsOwner(mainContextDefault()) != 0 }
}
