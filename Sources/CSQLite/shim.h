/*
 * geoalarm's view of SQLite: the include, and a check of its version.
 * Everything is called from Swift (Sources/GeoAlarmStore/SQLite.swift).
 */
#ifndef GEOALARM_CSQLITE_SHIM_H
#define GEOALARM_CSQLITE_SHIM_H

#include <sqlite3.h>

/* UPSERT (INSERT ... ON CONFLICT DO UPDATE) needs 3.24; Debian 12 has 3.40. */
#if SQLITE_VERSION_NUMBER < 3024000
#error "geoalarm needs SQLite 3.24 or later"
#endif

#endif
