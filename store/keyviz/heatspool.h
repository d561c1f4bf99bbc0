/* heatspool.h — the Key Visualizer's spool (heatspool.c): counts written beside the store, in the file
 * HSPOOL_NAME of its directory, by handles that do not commit them (a read-only handle; a writable one
 * with no commit to ride on), and taken into the store's records by the next commit that writes counts.
 * Internal to the store. Every call is safe between processes; none takes LMDB's locks. */
#ifndef CELLFS_HEATSPOOL_H
#define CELLFS_HEATSPOOL_H

#include <stdint.h>

#include "heat.h"

#define HSPOOL_NAME "heat.spool"
#define HSPOOL_MAX (16u << 20) /* the file's size at most: past it, appends are refused (-EFBIG) */
#define HSPOOL_COMMIT (1u << 20) /* a writable handle commits its counts, and takes the spool, past it */

/* Append the items of the list ITEMS (the caller keeps them) to DIR's spool, in one write.
 * Errors: -EFBIG (the spool is full), -ENOMEM, and open()'s and write()'s (-EACCES, -ENOSPC...). */
int hspool_append(const char *dir, const struct heat_item *items);

/* Take what DIR's spool holds: *OUT gets its items (free with hspool_free(); NULL when none), and the
 * spool is emptied. Nothing is taken while another process takes it. Errors (*OUT NULL, the spool
 * kept): -ENOMEM, and open()'s, read()'s, ftruncate()'s. */
int hspool_take(const char *dir, struct heat_item **out);

/* Read the items of TABLE in DIR's spool, leaving it as it is. *OUT as hspool_take()'s. */
int hspool_peek(const char *dir, const char *table, struct heat_item **out);

/* The spool's size in bytes (0 when there is none). Errors: stat()'s. */
int hspool_size(const char *dir, uint64_t *size);

void hspool_free(struct heat_item *items); /* accepts NULL */

#endif
