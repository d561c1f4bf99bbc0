/* dblstore.h — the test double backend (dblstore.c), and what it saw of the seam's calls. */
#ifndef CELLFS_DBLSTORE_H
#define CELLFS_DBLSTORE_H

#include "backend.h"

extern const struct cs_backend dbl_backend;

/* What the double was last given: the flags its open saw, and the ts_end of its last scan. */
struct dbl_seen {
	unsigned open_flags;
	int64_t ts_end;
};
extern struct dbl_seen dbl_seen;

#endif
