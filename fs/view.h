/* view.h — how the store looks as a tree: lookup, attributes, streaming directory listings and file
 * contents. Uses only the store's public API and the name codec; knows nothing of FUSE, so the daemon's
 * handlers stay thin and this logic can be tested alone. The identity a new name gets is ident.h's, the
 * extended attributes xattr.h's. */
#ifndef CELLFS_VIEW_H
#define CELLFS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"
#include "name.h"
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
	int64_t resume_ts; /* a family's listing: the timestamp of the last entry given (after resume) */
	uint64_t extra;   /* phase 2: entries the caller has added after the store's (the daemon's own) */
};
void view_pos_release(struct view_pos *pos); /* frees what POS holds and resets it */

/* The attributes of ID. Errors: -ENOENT (it no longer exists), as the store. */
int view_getattr(cs_txn *txn, const struct node_id *id, struct view_attr *a);
/* Whether ID exists: 1, 0, or an error. As view_getattr() finds it, but without the attributes, so
 * cheaper: a family directory is one cell, not a pass over its columns for the newest time. */
int view_exists(cs_txn *txn, const struct node_id *id);

/* Find NAME in directory DIR: calls FOUND once with the child. Errors: -ENOENT, -ENOTDIR,
 * -ENAMETOOLONG, as the store. */
int view_lookup(cs_txn *txn, const struct node_id *dir, const char *name, view_emit_fn found, void *arg);

/* Produce DIR's entries from POS on, advancing POS past each entry taken. Returns 0 when EMIT asked to
 * stop or the listing is complete (POS->phase == 2), or an error. */
int view_list(cs_txn *txn, const struct node_id *dir, struct view_pos *pos, view_emit_fn emit, void *arg);

/* FN (or NULL) is called with each table a listing or the attributes of the root leave out because
 * cellfs's rules refuse its name (a Bigtable instance may hold one another client made): for the daemon
 * to log it. Process-wide, as fuse_log's own handler is; set it before requests run. FN may be called
 * from any request thread, again for the same table each time the root is read. */
void view_set_skip_hook(void (*fn)(const char *table));

/* The value of file ID. *BUF is the caller's (free()). Errors: -ENOENT, -EISDIR, as the store. */
int view_read(cs_txn *txn, const struct node_id *id, void **buf, size_t *len);
/* The same, and its attributes into *A. */
int view_read_attr(cs_txn *txn, const struct node_id *id, void **buf, size_t *len, struct view_attr *a);

/* ---- what ident.c and xattr.c share with lookup ---- */

/* A table's schema as the names need it: INFO (owned: cs_table_info_free(T->info)) and the segment
 * context over it. */
struct view_table {
	cs_table_info *info;
	name_segctx seg;
};
/* Loads table TABLE's schema into *T. Errors: -ENOENT (no such table), as the store. */
int view_table_load(cs_txn *txn, const char *table, struct view_table *t);

/* Whether the N bytes at NAME name a family of INFO (a cs_table_info *), as name_segctx.is_family asks. */
bool view_is_family(const void *info, const char *name, size_t n);

/* Whether key directory D is below its table: it has segments, so its listing's prefix is K<delim> even
 * when K is empty (keys starting with the delimiter). */
bool view_below_table(const struct node_id *d);

/* The row key of the segment of N bytes at B in key directory DIR of table T: DIR's key, the delimiter
 * (below the table), B; into *KEY (caller frees) and *KEYN. Errors: -ENAMETOOLONG (over CS_MAX_ROW_KEY:
 * no room for another segment), -ENOMEM. */
int view_child_key(const struct view_table *t, const struct node_id *dir, const void *b, size_t n, uint8_t **key,
		   size_t *keyn);

/* A file name NAME in family directory DIR as the identity of a column or a cell, into *ID (pointing into
 * *RES, NAME or DIR; ID->qual is unset for a short form, RES->partial). Returns 0, 1 for a tool's
 * temporary file (a non-canonical name starting with '.', rsync's .Q@TS.XXXXXX: the column of the name's
 * own bytes, see ident_resolve_new), or an error of name_decode() (-ENOENT: not a canonical name). */
int view_column_name(const struct node_id *dir, const char *name, struct node_id *id, name_result *res);

/* The qualifier a short-form name RES stands for in family directory DIR: the first column, in key order,
 * whose name it is (name.h, rule 6), into *Q (caller frees) and *QN. Errors: -ENOENT, as the store. */
int view_find_qualifier(cs_txn *txn, const struct node_id *dir, const name_result *res, uint8_t **q, size_t *qn);

/* Find NAME in DIR by listing DIR (for a short form: only names over NAME_MAX bytes have one): calls
 * FOUND once with the entry listed under NAME. Errors: -ENOENT, FOUND's, as view_list(). */
int view_lookup_listed(cs_txn *txn, const struct node_id *dir, const char *name, view_emit_fn found, void *arg);

#endif
