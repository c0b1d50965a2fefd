internal import CLibNotify
import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import Logging
import ServiceLifecycle
import Synchronization

/// Desktop pop-ups through libnotify, one per event: an event sink, and a service whose `run`
/// keeps a GLib main loop on a thread of its own while the agent runs.
///
/// `announce` only queues the announcement (a bounded queue: when it is full the oldest waiting
/// pop-up is dropped) and returns, so the engine and the stdout log never wait for D-Bus. The
/// GLib thread sends the notifications (libnotify blocks up to 25 s on a hung server) and runs
/// the callbacks of their "Done" and "Snooze 1 h" buttons (or as long as `[output] snooze`
/// says), which go straight to `onAction`.
/// The queue in and `onAction` out are the only ways between the agent's loop and that thread.
/// Without a session bus or notification server, the first failure is logged once and every
/// later event tries again, since the server may have started since. libnotify is loaded when
/// the service starts (``LibNotify``); without it, the agent logs why once and runs headless.
public final class DesktopNotifier: EventSink, Service, Sendable {
    /// How many pop-ups may wait while the server is slow.
    public static let queueLimit = 32
    /// The themed icon shown when a reminder names none.
    public static let defaultIcon = "mark-location"

    private let logger: Logger
    /// Seconds the snooze button silences a reminder, which its label names.
    private let snooze: Double
    private let onAction: @Sendable (ReminderButton, PressedReminder) -> Void
    private let waiting = Mutex<[Announcement]>([])
    private let dropped = Mutex(0)
    /// Reminders whose pop-ups are to be closed.
    private let closing = Mutex<[String]>([])
    /// What only the GLib thread touches (the thread that owns GLib's default context).
    private let glib = Confined(GLibState()) { if case .success(let notify) = LibNotify.loaded { notify.ownsDefaultContext } else { false } }

    private struct GLibState {
        var server: ServerState = .unknown
        var loop: OpaquePointer?
        /// Pop-ups still on screen that have buttons, by reminder id.
        var onScreen: [String: [UnsafeMutablePointer<NotifyNotification>]] = [:]
    }

    /// What the notification server was last seen doing.
    enum ServerState: Equatable {
        case unknown
        case available(actions: Bool, markup: Bool)
        case missing
    }

    /// `onAction` is called (on the GLib thread) with the button pressed and the reminder's id;
    /// the snooze button names `snooze` (seconds) as a person says it.
    public init(logger: Logger, snooze: Double, onAction: @escaping @Sendable (ReminderButton, PressedReminder) -> Void) {
        self.logger = logger
        self.snooze = snooze
        self.onAction = onAction
    }

    /// Runs the GLib loop on a thread of its own until graceful shutdown; pop-ups still on screen
    /// stay there. Announcements queued before it starts are shown once it runs.
    public func run() async throws {
        let notify: LibNotify
        switch LibNotify.loaded {
        case .success(let loaded): notify = loaded
        case .failure(let failure):
            logger.warning("no pop-ups: \(failure.reason); continuing headless")
            try? await gracefulShutdown()
            return
        }
        let (ended, end) = AsyncStream.makeStream(of: Void.self)
        try System.startThread(named: "notifications") { [self] in
            let context = notify.mainContextDefault()
            _ = notify.mainContextAcquire(context)
            NotificationServer.initialize(notify)
            let loop = notify.mainLoopNew(nil, 0)
            glib.value.loop = loop
            notify.mainLoopRun(loop)
            notify.mainLoopUnref(loop)
            glib.value.loop = nil
            notify.mainContextRelease(context)
            end.finish()
        }
        try? await gracefulShutdown()
        onLoop { notifier, notify in notifier.glib.value.loop.map { notify.mainLoopQuit($0) } }
        for await _ in ended {}
    }

    public func announce(_ announcement: Announcement) {
        let overflow = waiting.withLock { queue -> Bool in
            queue.append(announcement)
            guard queue.count > Self.queueLimit else { return false }
            queue.removeFirst()
            return true
        }
        if overflow { dropped.withLock { $0 += 1 } }
        onLoop { notifier, notify in notifier.sendWaiting(notify) }
    }

    /// Sends every queued announcement (on the GLib thread).
    private func sendWaiting(_ notify: LibNotify) {
        let announcements = waiting.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
        let lost = dropped.withLock { count in
            defer { count = 0 }
            return count
        }
        if lost > 0 { logger.warning("notification server too slow; \(lost) pop-ups dropped (the events were logged)") }
        for announcement in announcements { send(announcement, notify) }
    }

    private func send(_ announcement: Announcement, _ notify: LibNotify) {
        if glib.value.server == .unknown || glib.value.server == .missing { lookForServer(notify) }
        guard case .available(let actions, let markup) = glib.value.server else { return }
        let content = NotificationContent(announcement: announcement, markup: markup)
        let notification = notify.notificationNew(content.summary, content.body, content.icon)
        notify.setUrgency(notification, NotifyUrgency(UInt32(content.urgency)))
        notify.setTimeout(notification, content.timeoutMilliseconds)
        notify.setCategory(notification, content.category)
        notify.setHint(notification, "desktop-entry", notify.variantNewString(DesktopEntry.id))
        var binding: ActionBinding?
        if actions {
            // Both buttons share one binding, released with the notification's actions (when
            // the notification is freed: at once if it could not be shown).
            let shared = ActionBinding(notifier: self, reminder: PressedReminder(announcement))
            let context = Unmanaged.passRetained(shared).toOpaque()
            let pressed: NotifyActionCallback = { _, action, context in
                guard let action, let context,
                      let kind = ReminderButton(rawValue: String(cString: action)) else { return }
                let binding = Unmanaged<ActionBinding>.fromOpaque(context).takeUnretainedValue()
                binding.notifier.onAction(kind, binding.reminder)
            }
            notify.addAction(
                notification, ReminderButton.done.rawValue, ReminderButton.done.label(snooze: snooze), pressed, context
            ) { context in
                let binding = Unmanaged<ActionBinding>.fromOpaque(context!)
                binding.takeUnretainedValue().notifier.forget(binding.takeUnretainedValue())
                binding.release()
            }
            notify.addAction(
                notification, ReminderButton.snooze.rawValue, ReminderButton.snooze.label(snooze: snooze), pressed, context, nil)
            binding = shared
        }
        var error: UnsafeMutablePointer<GError>?
        guard notify.show(notification, &error) != 0 else {
            let reason = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            notify.clearError(&error)
            notify.objectUnref(notification)
            serverLost(reason)
            return
        }
        guard let binding else {
            notify.objectUnref(notification)
            return
        }
        // Kept until the server closes it, so that its buttons still work: "closed" calls
        // g_object_unref with the notification (and the handler's data, which it ignores, as
        // GLib's C handlers may).
        _ = notify.signalConnectData(
            notification, "closed", unsafeBitCast(notify.objectUnref, to: GCallback.self), nil, nil, GConnectFlags(0))
        binding.notification = notification
        glib.value.onScreen[announcement.id, default: []].append(notification!)
    }

    /// Takes the reminder's pop-ups off the screen (it was completed), from any thread.
    public func reminderCompleted(_ id: String) {
        closing.withLock { $0.append(id) }
        onLoop { notifier, notify in
            for id in notifier.closing.withLock({ ids in defer { ids.removeAll() }; return ids }) {
                for notification in notifier.glib.value.onScreen[id] ?? [] { _ = notify.close(notification, nil) }
            }
        }
    }

    /// Runs `work` once on the GLib thread (an idle source that removes itself); nothing without
    /// libnotify (``run()`` said why).
    private func onLoop(_ work: @escaping (DesktopNotifier, LibNotify) -> Void) {
        guard case .success(let notify) = LibNotify.loaded else { return }
        let call = Unmanaged.passRetained(LoopCall(notifier: self, notify: notify, work: work)).toOpaque()
        _ = notify.idleAdd({ context in
            let call = Unmanaged<LoopCall>.fromOpaque(context!).takeRetainedValue()
            call.work(call.notifier, call.notify)
            return 0
        }, call)
    }

    /// A pop-up is gone (closed and released): stop tracking it.
    fileprivate func forget(_ binding: ActionBinding) {
        guard let notification = binding.notification else { return }
        glib.value.onScreen[binding.reminder.id]?.removeAll { $0 == notification }
        if glib.value.onScreen[binding.reminder.id]?.isEmpty == true { glib.value.onScreen[binding.reminder.id] = nil }
    }

    private func lookForServer(_ notify: LibNotify) {
        guard let found = NotificationServer.current(notify) else {
            serverLost("nothing answers as org.freedesktop.Notifications")
            return
        }
        let wasMissing = glib.value.server == .missing
        glib.value.server = .available(actions: found.showsButtons, markup: found.capabilities.contains("body-markup"))
        if wasMissing {
            logger.info("notification server \(found.name) is back; showing pop-ups again")
        } else {
            logger.info("showing pop-ups through \(found.name)")
        }
    }

    private func serverLost(_ reason: String) {
        if glib.value.server != .missing {
            logger.warning("no notification server on the session bus (\(reason)); continuing headless")
        }
        glib.value.server = .missing
    }
}

/// Work handed to the GLib thread.
private final class LoopCall {
    let notifier: DesktopNotifier
    let notify: LibNotify
    let work: (DesktopNotifier, LibNotify) -> Void

    init(notifier: DesktopNotifier, notify: LibNotify, work: @escaping (DesktopNotifier, LibNotify) -> Void) {
        self.notifier = notifier
        self.notify = notify
        self.work = work
    }
}

/// What a pop-up's buttons call back with.
private final class ActionBinding {
    let notifier: DesktopNotifier
    let reminder: PressedReminder
    /// The pop-up, once shown.
    var notification: UnsafeMutablePointer<NotifyNotification>?

    init(notifier: DesktopNotifier, reminder: PressedReminder) {
        self.notifier = notifier
        self.reminder = reminder
    }
}
