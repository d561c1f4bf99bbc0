/* node.h — the daemon's inode table: what each inode number the kernel holds stands for, and its
 * lookup count. Inode numbers are a hash of the node's identity, so they are the same on every mount. */
#ifndef CELLFS_NODE_H
#define CELLFS_NODE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum node_kind {
	NODE_ROOT,    /* the mount's top: one directory per table */
	NODE_DIR,     /* a table (key empty) or a row-key prefix s1#...#sn: a row and/or a prefix */
	NODE_FAMILY,  /* family F of row KEY */
	NODE_COLUMN,  /* column F:Q of row KEY: its newest cell */
	NODE_VERSION, /* the cell F:Q@TS of row KEY */
};

/* What a node is. All pointers are owned by the node (or, in a probe, borrowed). */
struct node_id {
	enum node_kind kind;
	const char *table;   /* NODE_DIR and below */
	const uint8_t *key;  /* NODE_DIR: the prefix (no trailing delimiter); below: the row key */
	size_t keyn;
	bool lead_empty;     /* NODE_DIR with keyn 0: the empty first segment (keys that start with the
	                      * delimiter), not the table, whose key is empty too */
	const char *family;  /* NODE_FAMILY and below */
	const uint8_t *qual; /* NODE_COLUMN, NODE_VERSION */
	size_t qualn;
	int64_t ts;          /* NODE_VERSION */
};

/* Copy SRC into DST, which then owns its strings (free with node_id_free()). Errors: -ENOMEM (DST is
 * left empty). */
int node_id_copy(struct node_id *dst, const struct node_id *src);
/* A malloc'd copy of the N bytes at P (one byte allocated when N is 0), or NULL (out of memory). The
 * caller frees it. */
void *node_dup_bytes(const void *p, size_t n);
void node_id_free(struct node_id *id); /* frees what an owning ID holds and zeroes it */
bool node_id_equal(const struct node_id *a, const struct node_id *b);

/* A node as a request sees it: a view of the table's entry for inode INO, filled by node_get(). Its
 * pointers (the identity's bytes, the name) are borrowed from the entry and stay valid while the kernel
 * holds a lookup on the inode (which is the case for the inode of any request in flight). The entries
 * themselves are small (a fixed part of about 50 bytes, the key, a qualifier and a name only where it
 * is not the key's last segment or the qualifier itself; table and family names kept once for all), so
 * that the daemon's memory does not grow much with the inodes the kernel keeps. */
struct node_rec;
struct node_table;
struct node {
	uint64_t ino;
	struct node_id id;     /* borrowed */
	uint64_t parent;       /* the directory it was looked up in (0 for the root) */
	const char *name;      /* its name there (borrowed) */
	struct node_rec *rec;  /* the entry: for the flags below */
};

/* Flags one request sets on a node and others read (atomically, without the table's lock). */
enum node_flag {
	NODE_AS_FAMILY = 1u << 1, /* a key directory P<delim>F in which a file made F a family (ident_effective) */
	NODE_MADE = 1u << 2,      /* made by mkdir through the mount: its plain name may turn into a family's */
};
bool node_flag(const struct node *n, enum node_flag f);
void node_set_flag(const struct node *n, enum node_flag f);

/* A file made by mknod that the store does not hold yet: when (µs), or 0. Set under the table's lock
 * (the entry grows a part for it); read by any request. Setting fails only when out of memory, and then
 * the file is not remembered (node_set_made_us returns -ENOMEM). */
int64_t node_made_us(struct node_table *t, const struct node *n);
int node_set_made_us(struct node_table *t, const struct node *n, int64_t us);

#define NODE_ALIAS_BUCKETS 256
struct node_table {
	pthread_mutex_t lock;
	struct node_rec **buckets;
	size_t nbuckets, count;
	struct node_rec *aliases[NODE_ALIAS_BUCKETS]; /* nodes by alias, for node_ref() */
	/* every table and family name the entries use, once (never freed before the table) */
	char **names;
	uint32_t nnames, namescap;
	uint32_t *nameidx;     /* open addressing: index + 1 into NAMES, 0 empty */
	uint32_t nameidxcap;   /* a power of two */
	/* where entries live (node.c) */
	struct slab_block *slabs;
	void *slab_free[256 / 8 + 1];
};

int node_table_init(struct node_table *t);      /* -ENOMEM */
void node_table_release(struct node_table *t);  /* frees every node */

/* Make inode 1 (FUSE_ROOT_ID), the mount's root, stand for ROOT, a table's directory or a key directory
 * (-o only=, share.h), instead of the top; NAME is ROOT's name in its parent (the last key segment's, as
 * the kernel would have reached it: a key directory whose name turns into a family's follows it,
 * ident_effective()). From then on node_ino_of(ROOT) is 1 and every other identity keeps its number. The
 * root is process-wide, as inode numbers are a function of the identity alone: call it once, on the
 * daemon's one table, after node_table_init() and before any request. Errors: -ENOMEM. */
int node_set_root(struct node_table *t, const struct node_id *root, const char *name);

/* How many inodes the table holds (the kernel's, the root included). */
size_t node_count(struct node_table *t);

/* The node for inode INO, filled into *VIEW, which is returned; NULL when there is none. */
struct node *node_get(struct node_table *t, uint64_t ino, struct node *view);

/* Find or add the node with identity ID (reached as NAME in directory PARENT) and count one lookup.
 * Returns its inode number in *INO. Errors: -ENOMEM (also: more than 65,535 distinct table and family
 * names in use, or a key, qualifier or name longer than the store allows). */
int node_ref(struct node_table *t, const struct node_id *id, uint64_t parent, const char *name, uint64_t *ino);

/* Drop N lookups of INO (the kernel's forget); the node is freed at zero. */
void node_forget(struct node_table *t, uint64_t ino, uint64_t n);

/* The inode number ID would get (its identity hash; stable across mounts). */
uint64_t node_ino_of(const struct node_id *id);
/* The inode number of the column file ID (a column or one of its versions) is shown as. */
uint64_t node_column_ino(const struct node_id *id);

/* How a handle on a file reads: the kernel's page cache is shared by every handle on the inode, so only
 * handles holding one same value may use it. */
enum node_cache {
	NODE_CACHE_KEEP,   /* through the page cache, which holds this value already: keep it */
	NODE_CACHE_DROP,   /* through the page cache, dropped at open: it may hold another value */
	NODE_CACHE_DIRECT, /* around it (direct I/O): handles on another value are reading through it */
};

/* A handle on file INO is opened with the value identified by VER (a hash of it; 0: none, never kept).
 * Returns how the handle must read. A handle that reads through the cache is counted until
 * node_close_file(INO, true); a direct one is not counted (close it with CACHED false). */
enum node_cache node_open_file(struct node_table *t, uint64_t ino, uint64_t ver);
void node_close_file(struct node_table *t, uint64_t ino, bool cached);

/* Handles open for writing on file INO: the kernel sends futimens() and utimensat() alike without a
 * handle, so a time set on the file goes to them. node_set_times() calls FN(h, arg) for each under the
 * table's lock and returns how many there were. */
struct fileh;
void node_add_writer(struct node_table *t, uint64_t ino, struct fileh *h);
void node_remove_writer(struct node_table *t, uint64_t ino, struct fileh *h);
size_t node_foreach_writer(struct node_table *t, uint64_t ino, void (*fn)(struct fileh *h, void *arg), void *arg);
/* In a node_foreach() callback: the first handle open for writing on N (the rest chained from it), or
 * NULL. */
struct fileh *node_writers(const struct node *n);

/* After a rename in the store: FN(id, arg, out) gives, in *OUT (owned: node.c frees it), the new
 * identity of every node the rename moved (returning true if it did; false leaves the node as it was,
 * also when out of memory) and WFN(h, id, arg) is then called for each handle open for writing on that
 * node, to follow it. Inode numbers stay: the kernel keeps its inodes across a rename. Under the table's
 * lock: FN and WFN must not call back into it. */
void node_rewrite(struct node_table *t, bool (*fn)(const struct node_id *id, void *arg, struct node_id *out),
		  void (*wfn)(struct fileh *h, const struct node_id *id, void *arg), void *arg);

/* node_rewrite(), and each node rewritten keeps its inode number for its new identity too: node_ref() of
 * that identity finds it (a directory named through user.cellfs.name stays the kernel's one inode, so
 * that what was made in it under either inode number is found under both). */
void node_rewrite_alias(struct node_table *t, bool (*fn)(const struct node_id *id, void *arg, struct node_id *out),
			void (*wfn)(struct fileh *h, const struct node_id *id, void *arg), void *arg);

/* The node INO now has NAME in directory PARENT (the kernel's rename moved its dentry). */
void node_moved(struct node_table *t, uint64_t ino, uint64_t parent, const char *name);

/* Keep a copy of the N bytes at B as node INO's whole name, replacing any. Errors: -ESTALE, -ENOMEM. */
int node_set_fullname(struct node_table *t, uint64_t ino, const void *b, size_t n);
/* A copy of node INO's whole name into *B (caller frees) and *N. Errors: -ENOENT (none), -ENOMEM. */
int node_fullname(struct node_table *t, uint64_t ino, uint8_t **b, size_t *n);

/* Call FN for every node, with a view valid during the call (under the lock: FN must not call back into
 * the table). */
void node_foreach(struct node_table *t, void (*fn)(const struct node *n, void *arg), void *arg);

#endif
