/* move.h — renames, and the naming of an entry made under a short form (move.c): what moves in the store
 * (through edit.c), in the directories the daemon holds (pending.c), and the identities of the nodes and
 * handles it moved, rewritten in place (node_rewrite), so that the kernel keeps its inodes. */
#ifndef CELLFS_MOVE_H
#define CELLFS_MOVE_H

#include "fs.h"

#define MOVE_MAX_CELLS 100000 /* a directory rename moves at most this many cells, else EXDEV (mv copies) */

/* rename(2) of table NAME to NEWNAME (NEWPARENT is the root): cells and schema kept; an empty table
 * NEWNAME is replaced unless FLAGS has RENAME_NOREPLACE. Errors: -EINVAL (a bad name), -EEXIST,
 * -ENOTEMPTY, as edit_table_rename(). */
int move_table(struct fs *fs, const char *name, uint64_t newparent, const char *newname, unsigned int flags);

/* rename(2) of NAME in directory P (inode PARENT) to NEWNAME in NP (NEWPARENT), below the tables: a file
 * onto a file name of the same table, a key directory among key directories of its table, a directory
 * made through the mount and still empty, a file created and not written back yet (its handles follow).
 * Errors: -EXDEV (mv copies: another table, a family's directory, too many cells, held directories
 * below), -EISDIR, -ENOTDIR, -ENOTEMPTY, -EEXIST (RENAME_NOREPLACE), -ENAMETOOLONG (a short form whose
 * whole name the file was not given), -EPERM (target_family()), -ENOENT, as edit_move(). */
int move_entry(struct fs *fs, struct node *p, uint64_t parent, const char *name, struct node *np,
	       uint64_t newparent, const char *newname, unsigned int flags);

/* Node N (a key directory, a column or a version) is given the whole name B (BN bytes), FLAGS as
 * setxattr(2)'s (user.cellfs.name). Its own name already: nothing to do. A tool's temporary file keeps B
 * for its rename onto B's short form. An entry made with a short-form name nothing held (standing for the
 * name's own bytes, ident_resolve_new) becomes B if the name is B's short form: a directory's rows move to
 * their key (one transaction), a file not yet written is named (its handles write it back under B).
 * Errors: -EINVAL (N is named otherwise: B is not what its name stands for), -EEXIST (XATTR_CREATE, or
 * B's directory holds rows already), -ENODATA (XATTR_REPLACE), -ENAMETOOLONG (the row key would pass
 * CS_MAX_ROW_KEY, a qualifier CS_MAX_QUALIFIER), -EOPNOTSUPP (a family directory), store errors. */
int move_name(struct fs *fs, struct node *n, const void *b, size_t bn, int flags);

#endif
