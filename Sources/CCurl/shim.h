/*
 * geoalarm's view of libcurl: the include, a check of its API version, and typed forms of
 * the calls libcurl declares variadic (curl_easy_setopt, curl_multi_setopt, curl_easy_getinfo),
 * which Swift cannot call. libcurl is not linked: it is loaded when the first request is made
 * (Sources/GeoAlarmCalDAV/LibCurl.swift), so each typed form takes the variadic function's
 * address as loaded. Everything is called from Swift (Sources/GeoAlarmCalDAV/CurlClient.swift).
 */
#ifndef GEOALARM_CCURL_SHIM_H
#define GEOALARM_CCURL_SHIM_H

#include <curl/curl.h>

typedef CURLcode (*geoalarm_curl_easy_setopt_fn)(CURL *, CURLoption, ...);
typedef CURLcode (*geoalarm_curl_easy_getinfo_fn)(CURL *, CURLINFO, ...);
typedef CURLMcode (*geoalarm_curl_multi_setopt_fn)(CURLM *, CURLMoption, ...);

/* CURLOPT_PROTOCOLS_STR and CURLOPT_REDIR_PROTOCOLS_STR need 7.85. */
#if LIBCURL_VERSION_NUM < 0x075500
#error "geoalarm needs libcurl 7.85 or later"
#endif

static inline CURLcode geoalarm_curl_easy_setopt_long(void *setopt, CURL *handle, CURLoption option, long value) {
    return ((geoalarm_curl_easy_setopt_fn)setopt)(handle, option, value);
}

static inline CURLcode geoalarm_curl_easy_setopt_offset(void *setopt, CURL *handle, CURLoption option, curl_off_t value) {
    return ((geoalarm_curl_easy_setopt_fn)setopt)(handle, option, value);
}

/* The authentication schemes (their macros cast, which Swift does not import). */
static inline long geoalarm_curl_auth_basic(void) { return (long)CURLAUTH_BASIC; }
static inline long geoalarm_curl_auth_digest(void) { return (long)CURLAUTH_DIGEST; }

static inline CURLcode geoalarm_curl_easy_setopt_pointer(void *setopt, CURL *handle, CURLoption option, const void *value) {
    return ((geoalarm_curl_easy_setopt_fn)setopt)(handle, option, value);
}

static inline CURLcode geoalarm_curl_easy_setopt_write(void *setopt, CURL *handle, CURLoption option, curl_write_callback value) {
    return ((geoalarm_curl_easy_setopt_fn)setopt)(handle, option, value);
}

static inline CURLcode geoalarm_curl_easy_getinfo_long(void *getinfo, CURL *handle, CURLINFO info, long *value) {
    return ((geoalarm_curl_easy_getinfo_fn)getinfo)(handle, info, value);
}

static inline CURLcode geoalarm_curl_easy_getinfo_offset(void *getinfo, CURL *handle, CURLINFO info, curl_off_t *value) {
    return ((geoalarm_curl_easy_getinfo_fn)getinfo)(handle, info, value);
}

static inline CURLcode geoalarm_curl_easy_getinfo_text(void *getinfo, CURL *handle, CURLINFO info, char **value) {
    return ((geoalarm_curl_easy_getinfo_fn)getinfo)(handle, info, value);
}

static inline CURLcode geoalarm_curl_easy_getinfo_pointer(void *getinfo, CURL *handle, CURLINFO info, void **value) {
    return ((geoalarm_curl_easy_getinfo_fn)getinfo)(handle, info, value);
}

static inline CURLMcode geoalarm_curl_multi_setopt_pointer(void *setopt, CURLM *multi, CURLMoption option, void *value) {
    return ((geoalarm_curl_multi_setopt_fn)setopt)(multi, option, value);
}

static inline CURLMcode geoalarm_curl_multi_setopt_socket(void *setopt, CURLM *multi, curl_socket_callback value) {
    return ((geoalarm_curl_multi_setopt_fn)setopt)(multi, CURLMOPT_SOCKETFUNCTION, value);
}

static inline CURLMcode geoalarm_curl_multi_setopt_timer(void *setopt, CURLM *multi, curl_multi_timer_callback value) {
    return ((geoalarm_curl_multi_setopt_fn)setopt)(multi, CURLMOPT_TIMERFUNCTION, value);
}

#endif
