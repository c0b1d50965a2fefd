/*
 * geoalarm's view of libnotify (and through it GLib): the include, and a check of its API
 * version. Everything is called from Swift (Sources/GeoAlarmNotify/DesktopNotifier.swift).
 */
#ifndef GEOALARM_CLIBNOTIFY_SHIM_H
#define GEOALARM_CLIBNOTIFY_SHIM_H

#include <libnotify/notify.h>

/* notify_notification_new without a GtkWidget, and actions with a free function, need 0.7. */
#if !NOTIFY_CHECK_VERSION(0, 7, 0)
#error "geoalarm needs libnotify 0.7 or later"
#endif

#endif
