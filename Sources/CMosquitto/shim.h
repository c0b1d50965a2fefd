/*
 * geoalarm's view of libmosquitto: the include, and a check of its API version.
 * libmosquitto is not linked: it is loaded when the first client connects
 * (Sources/GeoAlarmMQTT/LibMosquitto.swift). Everything is called from Swift
 * (Sources/GeoAlarmMQTT/MQTTClient.swift).
 */
#ifndef GEOALARM_CMOSQUITTO_SHIM_H
#define GEOALARM_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <mqtt_protocol.h>

/* mosquitto_int_option (the protocol chosen explicitly, a receive maximum), mosquitto_connect_bind_v5
   and mosquitto_connack_string need 1.6. */
#if LIBMOSQUITTO_VERSION_NUMBER < 1006000
#error "geoalarm needs libmosquitto 1.6 or later"
#endif

#endif
