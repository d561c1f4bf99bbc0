/* pending.h — directories that exist only in the daemon. A directory made with mkdir below a table has
 * nothing in the store until a file is written under it (a row cannot be empty), so the daemon holds it
 * here: lookups, listings and getattr fall back on this set when the store has no such directory. A
 * directory emptied through the mount (its last file removed) is held here too, so that it stays until
 * rmdir, as a directory does. Entries whose directory exists in the store are harmless (the store wins)
 * and go when removed with rmdir or at unmount. Thread-safe. Knows nothing of FUSE. */
#ifndef CELLFS_PENDING_H
#define CELLFS_PENDING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node.h"

struct pending_dir {
	struct node_id id;   /* owned: NODE_DIR (a prefix) or NODE_FAMILY (a family of a row) */
	uint64_t ino;        /* node_ino_of(&id) */
	uint64_t alias;      /* after pending_rewrite(): node_ino_of() of the new identity too (else 0) */
	uint64_t parent_alias; /* after pending_rewrite(): the directory's other inode number (else 0) */
	uint64_t parent;     /* node_ino_of() of the directory it is in */
	char *name;          /* its name there */
	int64_t mtime_us;    /* when it was made */
	struct pending_dir *next;
};

struct pending_set {
	pthread_mutex_t lock; /* protects everything below; the two counts are also read without it (0: none) */
	struct pending_dir *head;
	_Atomic size_t count;
	/* Columns whose cells were all written through Q@TS names, by this mount, since it made them: their
	 * bare name stays absent (the newest is listed as Q@TS too) until the bare name itself is written,
	 * so that a restore writing Q@TS before Q (cp -a, tar, rsync in any order) finds no Q to refuse
	 * (O_EXCL) or unlink (tar) and writes Q as the new version it is. By the column's inode number. */
	uint64_t *cols;
	_Atomic size_t ncols;
	size_t capcols;
	/* Bare names given a time with no sub-second part (a tool that keeps whole seconds, like GNU tar,
	 * may have rounded it down): a version of the same second written or removed after it is refused,
	 * as it would take the bare name's place as the newest. */
	struct pending_round {
		uint64_t col;
		int64_t sec_us;
	} *rounds;
	size_t nrounds, caprounds;
};

void pending_init(struct pending_set *p);
void pending_release(struct pending_set *p); /* frees every entry */

/* Hold directory ID, named NAME in the directory whose inode number is PARENT. Holding one already held
 * is not an error. Its inode number is node_ino_of(ID) (pending_add_ino: INO, the kernel's inode of a
 * directory renamed). Errors: -ENOMEM. */
int pending_add(struct pending_set *p, const struct node_id *id, uint64_t parent, const char *name, int64_t mtime_us);
int pending_add_ino(struct pending_set *p, const struct node_id *id, uint64_t ino, uint64_t parent, const char *name,
		    int64_t mtime_us);

/* Whether a held directory of TABLE has key KEY (KEYN bytes) or one below it (KEY DELIM ...). */
bool pending_under(struct pending_set *p, const char *table, const uint8_t *key, size_t keyn, char delim);

/* Let go of the directory with inode number INO (pending_remove_entry: named NAME in PARENT). Returns
 * whether it was held. */
bool pending_remove(struct pending_set *p, uint64_t ino);
bool pending_remove_entry(struct pending_set *p, uint64_t parent, const char *name);

/* Find the held directory named NAME in directory PARENT: copies its identity into *ID (owned, free with
 * node_id_free()) and its time into *MTIME_US. Returns 0, -ENOENT or -ENOMEM. */
int pending_lookup(struct pending_set *p, uint64_t parent, const char *name, struct node_id *id, int64_t *mtime_us);

/* Whether directory INO is held; *MTIME_US (if not NULL) gets its time. */
bool pending_has(struct pending_set *p, uint64_t ino, int64_t *mtime_us);

/* Whether any held directory is in directory PARENT. */
bool pending_has_children(struct pending_set *p, uint64_t parent);

/* The names of the held directories in PARENT, sorted bytewise, as a NULL-terminated array of copies
 * (*NAMES, caller frees each and the array) and their count. Errors: -ENOMEM. */
int pending_children(struct pending_set *p, uint64_t parent, char ***names, size_t *n);

/* After a directory got a new identity (named through user.cellfs.name), the directory with inode number
 * TOP now also known as TOP_ALIAS (node_ino_of() of its new identity): FN(id, arg) rewrites, in place, the
 * identity of each held directory below it (returning whether it did, as node_rewrite()'s). Each is then
 * found under its inode number and its new identity's, and in its directory under either of that one's:
 * the kernel may hold either (node_rewrite_alias). FN is called under the set's lock and must not call
 * back into it. */
void pending_rewrite(struct pending_set *p, bool (*fn)(struct node_id *id, void *arg), void *arg, uint64_t top,
		     uint64_t top_alias);

/* Columns written only as versions (see struct pending_set). pending_col_add: -ENOMEM. */
int pending_col_add(struct pending_set *p, uint64_t ino);
void pending_col_remove(struct pending_set *p, uint64_t ino);
bool pending_col_has(struct pending_set *p, uint64_t ino);

/* Bare names written at a whole second (see struct pending_set). pending_round_add: -ENOMEM.
 * pending_round_hit: whether column COL was written at the whole second that TS falls in. */
int pending_round_add(struct pending_set *p, uint64_t col, int64_t sec_us);
bool pending_round_hit(struct pending_set *p, uint64_t col, int64_t ts);

#endif
