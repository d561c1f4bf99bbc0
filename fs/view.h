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
	uint64_t extra;   /* phase 2: entries the caller has added after the store's (the daemon's own) */
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
/* The same, and its attributes into *A. */
int view_read_attr(cs_txn *txn, const struct node_id *id, void **buf, size_t *len, struct view_attr *a);

/* Extended attributes (a table directory's schema): "user.cellfs.delimiter" and one
 * "user.cellfs.family.F" per family holding its GC policy. view_xattr_list writes the NUL-separated
 * names to *BUF (caller frees). Errors: -ENOENT; view_xattr_get: -ENODATA for an unknown name. */
int view_xattr_list(cs_txn *txn, const struct node_id *id, char **buf, size_t *len);
int view_xattr_get(cs_txn *txn, const struct node_id *id, const char *name, char **val, size_t *len);

/* Extended attribute "user.cellfs.name" of an entry whose name is a short form (a key segment or a
 * qualifier whose name would be longer than NAME_MAX, rule 6 of name.h): its whole bytes, which cp -a,
 * tar --xattrs and rsync -X carry; a restore sets it on the entry it made with the short form. */
#define VIEW_XA_NAME "user.cellfs.name"

/* The bytes of ID's own part: a key directory's last segment, a file's qualifier, into *B (pointing into
 * ID) and *N. Errors: -EINVAL (the root, a table, a family directory), store errors. */
int view_part(cs_txn *txn, const struct node_id *id, const uint8_t **b, size_t *n);

/* The name N bytes at B would have in place of ID's own part (a segment of ID's table, a qualifier, or
 * the qualifier of a version at ID's timestamp), into OUT (NAME_BUFSZ bytes). Returns its length.
 * Errors: -EINVAL (a segment holding the delimiter; a kind without a part), store errors. */
int view_part_name(cs_txn *txn, const struct node_id *id, const void *b, size_t n, char *out);

/* What directory DIR, named NAME in its parent, stands for now. A key directory P<delim>X made (or looked
 * up) when X was not a family becomes family X's directory of row P once a file written in it has made X
 * a family; the kernel keeps the old inode until the watcher tells it. Returns 1 and the family's identity
 * in *OUT (owned: node_id_free()) in that case, 0 (nothing in *OUT) when DIR stands for itself, or an
 * error. */
int view_effective(cs_txn *txn, const struct node_id *dir, const char *name, struct node_id *out);

/* The identity a new entry NAME in directory DIR would have (it need not exist, nor DIR in the store): a
 * file (WANT_DIR false) or a directory. In the root a directory is a table. In a family directory a file
 * is the column Q or the cell Q@TS (a name starting with '.' that is not canonical, as tools' temporary
 * files are, is the column of the name's own bytes). In a key directory P<delim>F a file is column F:Q of row P (F becomes
 * a family if it is not one); a directory is the next key segment, or family NAME's directory of the row.
 * *OUT is owned (node_id_free()). Returns 0, or 1 for a key segment named like a family the table does
 * not have, escaped as if it had it (rule 4 of name.h): the caller makes it a family first, which is
 * what the escape says (a backup restored in any order meets the escaped name first); or VIEW_UNNAMED for
 * a short-form name that nothing in the store holds: the entry stands for the name's own bytes (for a
 * version, its qualifier part's) until VIEW_XA_NAME gives the bytes it is the short form of. Errors: -EPERM (nothing of that kind can be there: a file at the top,
 * in a table or first-level directory, or in a directory reached as an escaped key segment; a
 * directory in a family), -EINVAL (not a canonical name; not a valid table or family name),
 * -ENAMETOOLONG (a row key or qualifier over the limit; a short form holding the delimiter),
 * -ENOTDIR, -ENOENT (no such table), store errors. */
#define VIEW_UNNAMED 2
int view_resolve_new(cs_txn *txn, const struct node_id *dir, const char *name, bool want_dir, struct node_id *out);

#endif
