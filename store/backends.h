/* backends.h — the backends cellfs is built with (backends.c; backend.h says what a backend's table
 * holds). */
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

#endif
