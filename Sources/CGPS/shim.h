/*
 * geoalarm's view of libgps: the includes, and the two calls whose shape differs
 * between libgps API versions (11 on Debian 12, 16 upstream): reading a report,
 * and copying a fix out as plain values. Everything else is called from Swift.
 */
#ifndef GEOALARM_CGPS_SHIM_H
#define GEOALARM_CGPS_SHIM_H

#include <gps.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One TPV, as plain values; NAN where gpsd did not say. */
typedef struct geoalarm_gps_fix {
    int mode;              /* 0 not seen, 1 no fix, 2 2D, 3 3D */
    int status;            /* gpsd's fix status (STATUS_*) */
    int has_time;
    long long time_seconds;
    long time_nanoseconds;
    double latitude, longitude;
    double eph, epx, epy;  /* metres */
    double speed;          /* metres per second */
    double track;          /* degrees from true north */
    char device[GPS_PATH_MAX];
} geoalarm_gps_fix;

/* Reads one report into `data`, copying the raw JSON into `message`; < 0 on error or end of stream. */
static inline int geoalarm_gps_read(struct gps_data_t *data, char *message, int message_length) {
#if GPSD_API_MAJOR_VERSION >= 7
    return gps_read(data, message, message_length);
#else
    int status = gps_read(data);
    if (message_length > 0) message[0] = '\0';
    return status;
#endif
}

/* Copies the fix part of `data` out as plain values. */
static inline void geoalarm_gps_copy_fix(const struct gps_data_t *data, geoalarm_gps_fix *out) {
    const struct gps_fix_t *fix = &data->fix;
    memset(out, 0, sizeof(*out));
    out->mode = (data->set & MODE_SET) ? fix->mode : 0;
#if GPSD_API_MAJOR_VERSION >= 10
    out->status = fix->status;
#else
    out->status = data->status;
#endif
#if GPSD_API_MAJOR_VERSION >= 9
    out->has_time = (data->set & TIME_SET) && fix->time.tv_sec > 0;
    out->time_seconds = (long long)fix->time.tv_sec;
    out->time_nanoseconds = (long)fix->time.tv_nsec;
#else
    out->has_time = (data->set & TIME_SET) && isfinite(fix->time) && fix->time > 0;
    out->time_seconds = (long long)floor(fix->time);
    out->time_nanoseconds = (long)((fix->time - floor(fix->time)) * 1e9);
#endif
    int has_position = (data->set & LATLON_SET) != 0;
    out->latitude = has_position ? fix->latitude : NAN;
    out->longitude = has_position ? fix->longitude : NAN;
    out->eph = fix->eph;
    out->epx = fix->epx;
    out->epy = fix->epy;
    out->speed = (data->set & SPEED_SET) ? fix->speed : NAN;
    out->track = (data->set & TRACK_SET) ? fix->track : NAN;
    strncpy(out->device, data->dev.path, sizeof(out->device) - 1);
}

#endif
