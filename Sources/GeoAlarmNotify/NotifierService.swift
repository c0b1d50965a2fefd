import ServiceLifecycle

/// The pop-ups' GLib loop as a service of the agent: it runs only when pop-ups are on, and ends
/// at shutdown, after the pipeline (which gives it events) has stopped.
public struct NotifierService: Service {
    private let notifier: DesktopNotifier

    public init(notifier: DesktopNotifier) {
        self.notifier = notifier
    }

    public func run() async throws {
        try? await gracefulShutdown()
        notifier.quitLoop()
    }
}
