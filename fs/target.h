/* target.h — where a write through the mount lands, and whether it may (target.c): the entry a name finds
 * (also a tool's temporary file, by its own bytes), a file's family (known under -o strict_schema, and
 * not one whose making would escape row-key segments), a version written into a column the store does
 * not have yet, and whether a directory the daemon holds is empty. Reads through the request's transaction; changes nothing in the store. */
#ifndef CELLFS_TARGET_H
#define CELLFS_TARGET_H

#include "fs.h"
#include "view.h"

/* An entry found: its identity (owned: node_id_free()) and attributes; OK once found. */
struct target_found {
	struct node_id id;
	struct view_attr a;
	bool ok;
};

/* NAME in directory DIR, in the store: *F gets a copy. Errors: -ENOENT, as view_lookup(). */
int target_find(cs_txn *txn, const struct node_id *dir, const char *name, struct target_found *f);

/* target_find(), and then, for a non-canonical NAME starting with '.' in a family directory (a tool's
 * temporary file, see ident_resolve_new), the column of NAME's own bytes if it exists. */
int target_find_any(cs_txn *txn, const struct node_id *dir, const char *name, struct target_found *f);

/* Whether a file may be written as ID (a column or a version): its family known under -o strict_schema
 * (else -EPERM), and a family a write may make (target_clash()). Errors: -EPERM, as the store. */
int target_family(struct fs *fs, cs_txn *txn, const struct node_id *id);

/* 0 if family FAMILY of TABLE exists or may be made by a write: -EPERM, logged (target_clash_log()), if a
 * row key of the table has a segment of that name, whose paths the family would change (they would read
 * %XX-escaped: name.h), so that a path once written never changes its meaning by a later write. Errors:
 * -EPERM, as the store. */
int target_clash(cs_txn *txn, const char *table, const char *family);

/* The log line of a family not made for that reason (edit_xattr_set()'s -EPERM for a family). */
void target_clash_log(const char *table, const char *family);

/* Whether the store can hold a cell at the timestamp of ID's name (a Q@TS name): -EINVAL for one that is not
 * whole milliseconds on a store without CS_CAP_TS_MICROS (Bigtable), refused when the name is made
 * (create, mknod, rename), not at close. 0 for every other ID. */
int target_version_ts(struct fs *fs, const struct node_id *id);

/* A version ID written (through its Q@TS name) into a column the store does not have yet: the bare name
 * stays absent until written itself (pending_col_add(), see pending.h). Errors: -ENOMEM. */
int target_versions_only(struct fs *fs, cs_txn *txn, const struct node_id *id);

/* Whether directory INO, held by the daemon (pending.h), is empty: 0; -ENOTEMPTY if a held directory or a
 * file being written (created, not written back yet) is in it. Errors: -ENOMEM. */
int target_dir_empty(struct fs *fs, uint64_t ino);

#endif
