/* Internals of libcastd-client shared by its source files. */
#ifndef CASTD_CLIENT_INTERNAL_H
#define CASTD_CLIENT_INTERNAL_H

#include "castd-client.h"

/* Sets `error` (if not NULL) to `code` and a formatted message; returns `code`. */
castd_code castd_set_error(castd_error *error, castd_code code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The client's default timeout, for the typed wrappers. */
int castd_client_timeout(const castd_client *client);

#endif
