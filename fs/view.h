/* view.h — how the store looks as a tree: lookup, attributes, streaming directory listings, file contents
 * and the schema as extended attributes. Uses only the store's public API and the name codec; knows
 * nothing of FUSE, so the daemon's handlers stay thin and this logic can be tested alone. */
#ifndef CELLFS_VIEW_H
#define CELLFS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"
#include "node.h"

struct view_attr {
	bool dir;
	uint64_t size;     /* files: the value's exact length */
	int64_t mtime_us;  /* files: the cell's timestamp; directories: stable times (see view.c) */
	uint32_t nlink;
};

/* Called for each entry produced: NAME, its identity ID (borrowed until the call returns) and its
 * attributes. Return 0 to take it, 1 to stop before it (it will come again next time), <0 to fail. */
typedef int (*view_emit_fn)(void *arg, const char *name, const struct node_id *id, const struct view_attr *a);

/* Where a listing stands, between calls (a directory handle keeps one). Zero-initialise to start. */
struct view_pos {
	int phase;        /* 0: families of the row, 1: next key segments / columns, 2: done */
	uint64_t index;   /* entries of the phase already produced (phase 0, family directories) */
	uint8_t *resume;  /* phase 1 of a key directory: the row key to continue from */
	size_t resumen;
	bool resume_set;
};
void view_pos_release(struct view_pos *pos); /* frees what POS holds and resets it */

/* The attributes of ID. Errors: -ENOENT (it no longer exists), as the store. */
int view_getattr(cs_txn *txn, const struct node_id *id, struct view_attr *a);

/* Find NAME in directory DIR: calls FOUND once with the child. Errors: -ENOENT, -ENOTDIR,
 * -ENAMETOOLONG, as the store. */
int view_lookup(cs_txn *txn, const struct node_id *dir, const char *name, view_emit_fn found, void *arg);

/* Produce DIR's entries from POS on, advancing POS past each entry taken. Returns 0 when EMIT asked to
 * stop or the listing is complete (POS->phase == 2), or an error. */
int view_list(cs_txn *txn, const struct node_id *dir, struct view_pos *pos, view_emit_fn emit, void *arg);

/* The value of file ID. *BUF is the caller's (free()). Errors: -ENOENT, -EISDIR, as the store. */
int view_read(cs_txn *txn, const struct node_id *id, void **buf, size_t *len);

/* Extended attributes (a table directory's schema): "user.cellfs.delimiter" and one
 * "user.cellfs.family.F" per family holding its GC policy. view_xattr_list writes the NUL-separated
 * names to *BUF (caller frees). Errors: -ENOENT; view_xattr_get: -ENODATA for an unknown name. */
int view_xattr_list(cs_txn *txn, const struct node_id *id, char **buf, size_t *len);
int view_xattr_get(cs_txn *txn, const struct node_id *id, const char *name, char **val, size_t *len);

#endif
