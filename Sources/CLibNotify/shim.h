/*
 * geoalarm's view of libnotify and the bit of GLib it needs: flat functions taking
 * plain C values, so that Swift never handles GObject signals or GVariant (the server's
 * details, a GList of strings, are read in Swift: NotificationServer).
 */
#ifndef GEOALARM_CLIBNOTIFY_SHIM_H
#define GEOALARM_CLIBNOTIFY_SHIM_H

#include <libnotify/notify.h>

/* Called on the GLib thread when a button is pressed: the action's id and the context given at show. */
typedef void (*geoalarm_action_handler)(const char *action, void *context);

typedef struct geoalarm_action_binding {
    geoalarm_action_handler handler;
    void (*release)(void *context);
    void *context;
} geoalarm_action_binding;

static inline void geoalarm_notify_action_fired(NotifyNotification *notification, char *action, gpointer data) {
    (void)notification;
    geoalarm_action_binding *binding = (geoalarm_action_binding *)data;
    binding->handler(action, binding->context);
}

static inline void geoalarm_notify_binding_free(gpointer data) {
    geoalarm_action_binding *binding = (geoalarm_action_binding *)data;
    if (binding->release != NULL) binding->release(binding->context);
    g_free(binding);
}

static inline void geoalarm_notify_release_on_close(NotifyNotification *notification, gpointer data) {
    (void)data;
    g_object_unref(notification);
}

/*
 * Shows one notification and returns NULL, or an error message (free with g_free).
 * urgency: 0 low, 1 normal, 2 critical; timeout_ms: -1 server default, 0 never.
 * With a handler, "done" and "snooze" buttons are added and the notification is kept
 * until the server closes it, so that its buttons still work; `*shown` then holds it (for
 * geoalarm_notify_close) and `release(context)` is called when it is gone (at once when it
 * could not be shown).
 */
static inline char *geoalarm_notify_show(
    const char *summary, const char *body, const char *icon, int urgency, int timeout_ms,
    const char *category, const char *desktop_entry, geoalarm_action_handler handler,
    void (*release)(void *context), void *context, NotifyNotification **shown) {
    *shown = NULL;
    NotifyNotification *notification = notify_notification_new(summary, body, icon);
    notify_notification_set_urgency(notification, (NotifyUrgency)urgency);
    notify_notification_set_timeout(notification, timeout_ms);
    notify_notification_set_category(notification, category);
    notify_notification_set_hint(notification, "desktop-entry", g_variant_new_string(desktop_entry));
    if (handler != NULL) {
        geoalarm_action_binding *binding = g_new0(geoalarm_action_binding, 1);
        binding->handler = handler;
        binding->release = release;
        binding->context = context;
        notify_notification_add_action(notification, "done", "Done", geoalarm_notify_action_fired, binding,
                                       geoalarm_notify_binding_free);
        notify_notification_add_action(notification, "snooze", "Snooze 1 h", geoalarm_notify_action_fired, binding, NULL);
    }
    GError *error = NULL;
    if (!notify_notification_show(notification, &error)) {
        char *message = g_strdup(error != NULL ? error->message : "unknown error");
        g_clear_error(&error);
        g_object_unref(notification);
        return message;
    }
    if (handler != NULL) {
        g_signal_connect(notification, "closed", G_CALLBACK(geoalarm_notify_release_on_close), NULL);
        *shown = notification;
    } else {
        g_object_unref(notification);
    }
    return NULL;
}

/* Asks the server to take a shown notification off the screen. */
static inline void geoalarm_notify_close(NotifyNotification *notification) {
    notify_notification_close(notification, NULL);
}

/* GLib's default main loop, run on a thread of the caller's. */
static inline GMainLoop *geoalarm_main_loop_new(void) { return g_main_loop_new(NULL, FALSE); }
static inline void geoalarm_main_loop_run(GMainLoop *loop) { g_main_loop_run(loop); }
static inline void geoalarm_main_loop_quit(GMainLoop *loop) { g_main_loop_quit(loop); }

/* Runs `function(context)` on the main loop's thread until it returns 0. */
static inline void geoalarm_main_loop_call(int (*function)(void *), void *context) {
    g_idle_add((GSourceFunc)function, context);
}

#endif
