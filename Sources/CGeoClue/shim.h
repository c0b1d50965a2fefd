/*
 * geoalarm's view of libgeoclue-2 (GeoClue2's D-Bus proxies) and, through it, GLib and GIO:
 * the include, and a check of the API versions. Everything is called from Swift
 * (Sources/GeoAlarmGeoClue/GeoClueSource.swift).
 */
#ifndef GEOALARM_CGEOCLUE_SHIM_H
#define GEOALARM_CGEOCLUE_SHIM_H

#include <geoclue.h>

/* g_bus_watch_name's closures and the proxies' async constructors as used need GLib 2.44
 * (the version libgeoclue-2's own headers switch on); libgeoclue-2 itself has no version macro:
 * its location's Timestamp and the client's thresholds are GeoClue 2.4's API. */
#if !GLIB_CHECK_VERSION(2, 44, 0)
#error "geoalarm needs GLib 2.44 or later"
#endif

#endif
