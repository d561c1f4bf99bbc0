/* remote.h — finding the backend of a remote store's name and loading its module (remote.c); the
 * backend's table: backend.h. */
#ifndef CELLFS_REMOTE_H
#define CELLFS_REMOTE_H

#include <stdbool.h>

#include "backend.h"

/* Whether NAME names a remote store (it has a scheme: "SCHEME://..."). */
bool remote_is_name(const char *name);

/* Whether NAME, not a remote store's name, may be a directory: 0, or -EINVAL (cs_last_error() says why)
 * when it starts like a store URL without being one: a scheme ([A-Za-z][A-Za-z0-9+.-]*) and ':' followed
 * by '/' (bigtable:/p/i, s3:/b, HTTP://h), or any name whose scheme is "bigtable" in any case
 * (bigtable:p/i). A colon without a slash after it (backup:2024) is a directory's, as is every path
 * starting with "./" or "/". */
int remote_check_name(const char *name);

/* 0 if BE's functions agree with its caps and its required functions are there, else -EINVAL and
 * *WHY (static) names the first that does not. */
int backend_check(const struct cs_backend *be, const char **why);

/* The backend for remote store NAME's scheme: its module, found ($CELLFS_MODULE_DIR, beside the
 * program in a build tree, then where `meson install` puts it) and loaded on first use, stays loaded.
 * Errors: -EPROTONOSUPPORT (no such module, or it does not load: cs_last_error() says which). */
int remote_backend(const char *name, const struct cs_backend **out);

/* BE's open of a store failed: keep WHY (or, if NULL, BE's own last error) for cs_last_error(). */
void remote_open_failed(const struct cs_backend *be, const char *why);

#endif
