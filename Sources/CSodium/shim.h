/*
 * geoalarm's view of libsodium: the include, and a check of its version.
 * Everything is called from Swift (Sources/GeoAlarmSecretBox/SecretBox.swift).
 */
#ifndef GEOALARM_CSODIUM_SHIM_H
#define GEOALARM_CSODIUM_SHIM_H

#include <sodium.h>

/* crypto_secretbox_easy and crypto_secretbox_open_easy came with 0.6 (library version 7). */
#if SODIUM_LIBRARY_VERSION_MAJOR < 7
#error "geoalarm needs libsodium 0.6 or later"
#endif

#endif
