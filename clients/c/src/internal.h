/* Internals of libcastd-client shared by its source files. */
#ifndef CASTD_CLIENT_INTERNAL_H
#define CASTD_CLIENT_INTERNAL_H

#include "castd-client.h"

/* Sets `error` (if not NULL) to `code` and a formatted message; returns `code`. */
castd_code castd_set_error(castd_error *error, castd_code code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The client's default timeout, for the typed wrappers. */
int castd_client_timeout(const castd_client *client);

/* Sets `error` (if not NULL) from castd's non-OK `status`; returns its code (UNKNOWN for a
 * number outside castd_code). */
castd_code castd_set_error_from_status(castd_error *error, const Castd__V1__Status *status);

/* The length of the valid UTF-8 sequence at `s` (1…4), or 0 if none starts there. */
size_t castd_utf8_length(const unsigned char *s);

#endif
