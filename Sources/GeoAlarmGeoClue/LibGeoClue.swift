internal import CGeoClue
import GeoAlarmSystem

/// libgeoclue-2's functions and the GLib, GObject and GIO ones the source uses, loaded from
/// `libgeoclue-2.so.0` (which brings the three) when GeoClue is first wanted, not linked: an
/// agent that gpsd feeds never maps them. Loaded once for the process and never unloaded; the
/// GLib names are looked up through libgeoclue's handle, which reaches the libraries it depends on.
struct LibGeoClue: @unchecked Sendable {
    // The signatures are the headers', as Swift imports their types; `dlsym`'s address is only
    // ever cast to the type its declaration has. GeoClue's objects and GLib's contexts and
    // variants are opaque (`OpaquePointer`).
    typealias Text = UnsafePointer<gchar>
    typealias ErrorOut = UnsafeMutablePointer<UnsafeMutablePointer<GError>?>
    typealias Source = UnsafeMutablePointer<GSource>
    /// `gclue_*_proxy_new_for_bus`: bus, flags, name, object path, cancellable, callback, its data.
    typealias ProxyNew = @convention(c) (
        GBusType, GDBusProxyFlags, Text?, Text?, UnsafeMutablePointer<GCancellable>?, GAsyncReadyCallback?, gpointer?
    ) -> Void
    /// `gclue_*_proxy_new_for_bus_finish`: the result, the error.
    typealias ProxyFinish = @convention(c) (OpaquePointer?, ErrorOut?) -> OpaquePointer?
    /// A D-Bus method's asynchronous call: the proxy, cancellable, callback, its data.
    typealias Call = @convention(c) (OpaquePointer?, UnsafeMutablePointer<GCancellable>?, GAsyncReadyCallback?, gpointer?) -> Void
    /// A location's number.
    typealias LocationNumber = @convention(c) (OpaquePointer?) -> gdouble

    let managerProxyNew: ProxyNew
    let managerProxyFinish: ProxyFinish
    let managerGetClient: Call
    let managerGetClientFinish: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?, OpaquePointer?, ErrorOut?) -> gboolean
    let clientProxyNew: ProxyNew
    let clientProxyFinish: ProxyFinish
    let clientSetDesktopID: @convention(c) (OpaquePointer?, Text?) -> Void
    let clientSetDistanceThreshold: @convention(c) (OpaquePointer?, guint) -> Void
    let clientSetAccuracyLevel: @convention(c) (OpaquePointer?, guint) -> Void
    let clientStart: Call
    let clientStartFinish: @convention(c) (OpaquePointer?, OpaquePointer?, ErrorOut?) -> gboolean
    let clientStop: Call
    let locationProxyNew: ProxyNew
    let locationProxyFinish: ProxyFinish
    let latitude: LocationNumber
    let longitude: LocationNumber
    let accuracy: LocationNumber
    let altitude: LocationNumber
    let speed: LocationNumber
    let heading: LocationNumber
    let timestamp: @convention(c) (OpaquePointer?) -> OpaquePointer?

    let busWatchName: @convention(c) (
        GBusType, Text?, GBusNameWatcherFlags, GBusNameAppearedCallback?, GBusNameVanishedCallback?, gpointer?, GDestroyNotify?
    ) -> guint
    let busUnwatchName: @convention(c) (guint) -> Void
    let fileNewForPath: @convention(c) (Text?) -> OpaquePointer?
    let fileMonitorFile: @convention(c) (
        OpaquePointer?, GFileMonitorFlags, UnsafeMutablePointer<GCancellable>?, ErrorOut?
    ) -> UnsafeMutablePointer<GFileMonitor>?
    let fileMonitorDirectory: @convention(c) (
        OpaquePointer?, GFileMonitorFlags, UnsafeMutablePointer<GCancellable>?, ErrorOut?
    ) -> UnsafeMutablePointer<GFileMonitor>?
    let fileMonitorCancel: @convention(c) (UnsafeMutablePointer<GFileMonitor>?) -> gboolean
    let proxySetDefaultTimeout: @convention(c) (UnsafeMutablePointer<GDBusProxy>?, gint) -> Void
    let signalConnectData: @convention(c) (gpointer?, Text?, GCallback?, gpointer?, GClosureNotify?, GConnectFlags) -> gulong
    let objectUnref: @convention(c) (gpointer?) -> Void
    let variantTypeString: @convention(c) (OpaquePointer?) -> Text?
    let variantChild: @convention(c) (OpaquePointer?, gsize) -> OpaquePointer?
    let variantUInt64: @convention(c) (OpaquePointer?) -> guint64
    let variantUnref: @convention(c) (OpaquePointer?) -> Void
    let free: @convention(c) (gpointer?) -> Void
    let clearError: @convention(c) (ErrorOut?) -> Void
    let mainContextNew: @convention(c) () -> OpaquePointer?
    let mainContextUnref: @convention(c) (OpaquePointer?) -> Void
    let mainContextIsOwner: @convention(c) (OpaquePointer?) -> gboolean
    let mainContextPushThreadDefault: @convention(c) (OpaquePointer?) -> Void
    let mainContextPopThreadDefault: @convention(c) (OpaquePointer?) -> Void
    let mainContextFindSource: @convention(c) (OpaquePointer?, guint) -> Source?
    let mainLoopNew: @convention(c) (OpaquePointer?, gboolean) -> OpaquePointer?
    let mainLoopRun: @convention(c) (OpaquePointer?) -> Void
    let mainLoopQuit: @convention(c) (OpaquePointer?) -> Void
    let mainLoopUnref: @convention(c) (OpaquePointer?) -> Void
    let idleSourceNew: @convention(c) () -> Source?
    let timeoutSourceNewSeconds: @convention(c) (guint) -> Source?
    let sourceSetCallback: @convention(c) (Source?, GSourceFunc?, gpointer?, GDestroyNotify?) -> Void
    let sourceAttach: @convention(c) (Source?, OpaquePointer?) -> guint
    let sourceDestroy: @convention(c) (Source?) -> Void
    let sourceUnref: @convention(c) (Source?) -> Void

    /// The library's soname: what Debian's libgeoclue-2-0 installs.
    static let soname = "libgeoclue-2.so.0"

    /// The process's libgeoclue-2, or why it cannot be had, loaded on first use.
    static let loaded = Result<LibGeoClue, DynamicLibrary.Unavailable> { () throws(DynamicLibrary.Unavailable) in
        try LibGeoClue(DynamicLibrary(soname: soname, package: "libgeoclue-2-0", for: "fixes from GeoClue"))
    }

    private init(_ library: DynamicLibrary) throws(DynamicLibrary.Unavailable) {
        managerProxyNew = try library.required("gclue_manager_proxy_new_for_bus")
        managerProxyFinish = try library.required("gclue_manager_proxy_new_for_bus_finish")
        managerGetClient = try library.required("gclue_manager_call_get_client")
        managerGetClientFinish = try library.required("gclue_manager_call_get_client_finish")
        clientProxyNew = try library.required("gclue_client_proxy_new_for_bus")
        clientProxyFinish = try library.required("gclue_client_proxy_new_for_bus_finish")
        clientSetDesktopID = try library.required("gclue_client_set_desktop_id")
        clientSetDistanceThreshold = try library.required("gclue_client_set_distance_threshold")
        clientSetAccuracyLevel = try library.required("gclue_client_set_requested_accuracy_level")
        clientStart = try library.required("gclue_client_call_start")
        clientStartFinish = try library.required("gclue_client_call_start_finish")
        clientStop = try library.required("gclue_client_call_stop")
        locationProxyNew = try library.required("gclue_location_proxy_new_for_bus")
        locationProxyFinish = try library.required("gclue_location_proxy_new_for_bus_finish")
        latitude = try library.required("gclue_location_get_latitude")
        longitude = try library.required("gclue_location_get_longitude")
        accuracy = try library.required("gclue_location_get_accuracy")
        altitude = try library.required("gclue_location_get_altitude")
        speed = try library.required("gclue_location_get_speed")
        heading = try library.required("gclue_location_get_heading")
        timestamp = try library.required("gclue_location_get_timestamp")
        busWatchName = try library.required("g_bus_watch_name")
        busUnwatchName = try library.required("g_bus_unwatch_name")
        fileNewForPath = try library.required("g_file_new_for_path")
        fileMonitorFile = try library.required("g_file_monitor_file")
        fileMonitorDirectory = try library.required("g_file_monitor_directory")
        fileMonitorCancel = try library.required("g_file_monitor_cancel")
        proxySetDefaultTimeout = try library.required("g_dbus_proxy_set_default_timeout")
        signalConnectData = try library.required("g_signal_connect_data")
        objectUnref = try library.required("g_object_unref")
        variantTypeString = try library.required("g_variant_get_type_string")
        variantChild = try library.required("g_variant_get_child_value")
        variantUInt64 = try library.required("g_variant_get_uint64")
        variantUnref = try library.required("g_variant_unref")
        free = try library.required("g_free")
        clearError = try library.required("g_clear_error")
        mainContextNew = try library.required("g_main_context_new")
        mainContextUnref = try library.required("g_main_context_unref")
        mainContextIsOwner = try library.required("g_main_context_is_owner")
        mainContextPushThreadDefault = try library.required("g_main_context_push_thread_default")
        mainContextPopThreadDefault = try library.required("g_main_context_pop_thread_default")
        mainContextFindSource = try library.required("g_main_context_find_source_by_id")
        mainLoopNew = try library.required("g_main_loop_new")
        mainLoopRun = try library.required("g_main_loop_run")
        mainLoopQuit = try library.required("g_main_loop_quit")
        mainLoopUnref = try library.required("g_main_loop_unref")
        idleSourceNew = try library.required("g_idle_source_new")
        timeoutSourceNewSeconds = try library.required("g_timeout_source_new_seconds")
        sourceSetCallback = try library.required("g_source_set_callback")
        sourceAttach = try library.required("g_source_attach")
        sourceDestroy = try library.required("g_source_destroy")
        sourceUnref = try library.required("g_source_unref")
    }
}
