/* ident.h — names as identities when writing: the identity a new name in a directory gets (it need not
 * exist yet), what a key directory stands for once its name became a family's, and the bytes and name of
 * an identity's own part (a key segment, a qualifier), which a short form (name.h, rule 6) does not show.
 * Finds what exists through view.h; knows nothing of FUSE. */
#ifndef CELLFS_IDENT_H
#define CELLFS_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"
#include "node.h"

/* The bytes of ID's own part: a key directory's last segment, a file's qualifier, into *B (pointing into
 * ID) and *N. Errors: -EINVAL (the root, a table, a family directory), store errors. */
int ident_part(cs_txn *txn, const struct node_id *id, const uint8_t **b, size_t *n);

/* The name N bytes at B would have in place of ID's own part (a segment of ID's table, a qualifier, or
 * the qualifier of a version at ID's timestamp), into OUT (NAME_BUFSZ bytes). Returns its length.
 * Errors: -EINVAL (a segment holding the delimiter; a kind without a part), store errors. */
int ident_part_name(cs_txn *txn, const struct node_id *id, const void *b, size_t n, char *out);

/* Whether ID's own part has a name only in short form (its entry carries XATTR_NAME, xattr.h): 1, or 0
 * (also for an identity without a part, and for a segment holding the delimiter). Errors: store errors. */
int ident_part_is_short(cs_txn *txn, const struct node_id *id);

/* What directory DIR, named NAME in its parent, stands for now. A key directory P<delim>X made (or looked
 * up) when X was not a family becomes family X's directory of row P once a file written in it has made X
 * a family; the kernel keeps the old inode until the watcher tells it. Returns 1 and the family's identity
 * in *OUT (owned: node_id_free()) in that case, 0 (nothing in *OUT) when DIR stands for itself, or an
 * error. */
int ident_effective(cs_txn *txn, const struct node_id *dir, const char *name, struct node_id *out);

/* The identity a new entry NAME in directory DIR would have (it need not exist, nor DIR in the store): a
 * file (WANT_DIR false) or a directory. In the root a directory is a table. In a family directory a file
 * is the column Q or the cell Q@TS (a name starting with '.' that is not canonical, as tools' temporary
 * files are, is the column of the name's own bytes). In a key directory P<delim>F a file is column F:Q of
 * row P (F becomes a family if it is not one); a directory is the next key segment, or family NAME's
 * directory of the row. *OUT is owned (node_id_free()). Returns 0, or 1 for a key segment named like a
 * family the table does not have, escaped as if it had it (rule 4 of name.h): the caller makes it a family
 * first, which is what the escape says (a backup restored in any order meets the escaped name first); or
 * IDENT_UNNAMED for a short-form name that nothing in the store holds: the entry stands for the name's own
 * bytes (for a version, its qualifier part's) until XATTR_NAME (xattr.h) gives the bytes it is the short
 * form of. Errors: -EPERM (nothing of that kind can be there: a file at the top, in a table or first-level
 * directory, or in a directory reached as an escaped key segment; a directory in a family), -EINVAL (not a
 * canonical name; not a valid table or family name), -ENAMETOOLONG (a row key or qualifier over the limit;
 * a short form holding the delimiter), -ENOTDIR, -ENOENT (no such table), store errors. */
#define IDENT_UNNAMED 2

/* The directory -o only=SPEC makes the mount's root: SPEC is TABLE or TABLE/PREFIX, PREFIX one or more key
 * segments named as the mount shows them (quotes/NASDAQ: what MOUNT/quotes/NASDAQ is). A prefix with no
 * rows (yet) is the directory mkdir would make there: empty until something is written below it. Into
 * *OUT (owned: node_id_free()) a table's directory or a key directory. Errors, each with a line in WHY
 * (WHYN bytes) naming the part of SPEC at fault: -EINVAL (an empty part; not a table name; a segment that
 * is not a canonical name or is a short form nothing holds), -ENOENT (no such table), -ENOTDIR (a segment
 * is a family's directory, not a key segment), -ENAMETOOLONG (a part over NAME_MAX, a prefix over
 * CS_MAX_ROW_KEY); store errors (WHY empty). */
int ident_root(cs_txn *txn, const char *spec, struct node_id *out, char *why, size_t whyn);
int ident_resolve_new(cs_txn *txn, const struct node_id *dir, const char *name, bool want_dir,
		      struct node_id *out);

#endif
