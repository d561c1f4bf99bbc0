/* fsutil.h — what the cmocka tests of fs/'s core (test_fs_*.c) share: paths of the mount walked through
 * view_lookup() as the daemon's lookups walk them, listings as one string, values read back, and the
 * identity a new name gets (ident_resolve_new), each in a read transaction of its own. No FUSE: the
 * tests call the modules as the handlers (fs/ops.c, fs/wops.c) do. Helpers assert through cmocka. */
#ifndef CELLFS_FSUTIL_H
#define CELLFS_FSUTIL_H

#include "testutil.h"

#include "node.h"
#include "view.h"

/* Table NAME with row-key delimiter DELIM (0: the default '#') and the NULL-terminated families. */
void fu_table(cs_store *st, const char *name, char delim, ...);

/* Set one cell (row key and qualifier as N bytes each) in its own committed transaction. */
void fu_put(cs_store *st, const char *table, const void *row, size_t rown, const char *family, const void *q,
	    size_t qn, int64_t ts, const char *value);

/* Walk PATH ("" is the root, "t/a/b/F/q" below it: components as the mount names them) from the root
 * with view_lookup(), as the kernel's lookups do. Returns 0 with *ID (owned: node_id_free(); may be NULL)
 * and *A (may be NULL) of the last component, or the error of the component that failed. */
int fu_walk(cs_store *st, const char *path, struct node_id *id, struct view_attr *a);

/* The listing of directory PATH (view_list, a few entries per call so that listings resume): names in
 * order, separated by one space, a directory's with a trailing '/'. Caller frees. NULL if the walk or the
 * listing failed (*RC, if not NULL, gets the error). */
char *fu_list(cs_store *st, const char *path, int *rc);
/* The same, with each entry's attributes: "name/ mtime" for directories, "name size mtime" for files,
 * one per line. */
char *fu_list_attrs(cs_store *st, const char *path);

/* The value of file PATH (view_read), NUL-terminated; caller frees. NULL if it could not be read (*RC
 * gets why, if not NULL). */
char *fu_read(cs_store *st, const char *path, int *rc);

/* ident_resolve_new() of NAME in directory DIRPATH (walked as fu_walk). Its result; *OUT owned. */
int fu_resolve(cs_store *st, const char *dirpath, const char *name, bool want_dir, struct node_id *out);

/* A node_id's key (or qualifier) compared with a string: assert equal. */
void fu_assert_bytes(const void *b, size_t n, const char *want);

#endif
