/* xattr.h — the extended attributes the tree shows: a table directory's schema, and the whole name of an
 * entry shown under its short form. Setting them is the daemon's (fs_setxattr, through edit.h). No FUSE. */
#ifndef CELLFS_XATTR_H
#define CELLFS_XATTR_H

#include <stddef.h>

#include "cellstore.h"
#include "node.h"

/* Extended attribute "user.cellfs.name" of an entry whose name is a short form (a key segment or a
 * qualifier whose name would be longer than NAME_MAX, rule 6 of name.h): its whole bytes, which cp -a,
 * tar --xattrs and rsync -X carry; a restore sets it on the entry it made with the short form. */
#define XATTR_NAME "user.cellfs.name"

/* The schema's extended attributes of a table directory: its delimiter, and one per family F (XATTR_FAMILY
 * followed by F) whose value is the family's GC policy (and type). edit_xattr_set() sets them. */
#define XATTR_DELIM "user.cellfs.delimiter"
#define XATTR_FAMILY "user.cellfs.family."

/* The names of ID's extended attributes, NUL-separated, into *BUF (caller frees; NULL and *LEN 0 for
 * none): on a table directory "user.cellfs.delimiter" and one "user.cellfs.family.F" per family, on an
 * entry shown under a short form XATTR_NAME. Errors: -ENOENT, -ENOMEM, as the store. */
int xattr_list(cs_txn *txn, const struct node_id *id, char **buf, size_t *len);

/* The value of ID's extended attribute NAME into *VAL (caller frees) and *LEN: the table's delimiter byte;
 * family F's GC policy, then ":TYPE" for an aggregate family; an entry's whole name. Errors: -ENODATA (no
 * such attribute on ID), -ENOENT, -ENOMEM, as the store. */
int xattr_get(cs_txn *txn, const struct node_id *id, const char *name, char **val, size_t *len);

#endif
