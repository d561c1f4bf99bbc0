/* backends.h — the backends cellfs is built with (backends.c), and the check every backend's table passes
 * before the seam uses it (backend.h says what the table holds). */
#ifndef CELLFS_BACKENDS_H
#define CELLFS_BACKENDS_H

#include "backend.h"

/* The backends built in (backends.c): the scheme of the store names each serves ("" for a directory's
 * path) and its table, or NULL for a backend in a module of that scheme (remote.c). Ends with a NULL
 * scheme. Schemes not listed are looked for as modules too. */
struct backend_entry {
	const char *scheme;
	const struct cs_backend *be;
};
extern const struct backend_entry backends[];

/* 0 if BE's functions agree with its caps and its required functions are there, else -EINVAL and
 * *WHY (static) names the first that does not. */
int backend_check(const struct cs_backend *be, const char **why);

#endif
