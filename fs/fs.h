/* fs.h — the daemon's context: one struct reached from every request (as lo_data(req) in libfuse's
 * passthrough_ll.c: req_fs()). */
#ifndef CELLFS_FS_H
#define CELLFS_FS_H

#define FUSE_USE_VERSION 35
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "cellstore.h"
#include "cursor.h"
#include "node.h"
#include "pending.h"

/* Requests served, by kind: read through the root's "user.cellfs.stats" attribute (benchmarks report
 * FUSE requests per operation from it). */
enum fs_op { OP_LOOKUP, OP_FORGET, OP_GETATTR, OP_OPENDIR, OP_READDIR, OP_READDIRPLUS, OP_RELEASEDIR, OP_OPEN,
	     OP_READ, OP_RELEASE, OP_LISTXATTR, OP_GETXATTR, OP_STATFS, OP_CREATE, OP_WRITE, OP_FLUSH, OP_FSYNC,
	     OP_SETATTR, OP_UNLINK, OP_MKDIR, OP_RMDIR, OP_RENAME, OP_MKNOD, OP_SYMLINK, OP_LINK, OP_SETXATTR,
	     OP_REMOVEXATTR, OP_FSYNCDIR, OP_COUNT };

struct fs {
	_Atomic uint64_t nreq[OP_COUNT]; /* lock-free counters */
	cs_store *st;             /* thread-safe: LMDB serialises writers, readers use their own txns */
	struct node_table nodes;  /* has its own lock */
	struct cursor_cache cursors; /* where directory listings stand; has its own lock */
	struct fuse_session *se;
	pthread_key_t txn_key;    /* each worker thread's read transaction */
	double entry_timeout, attr_timeout, neg_timeout;
	uid_t uid;                /* the owner, group and permission bits every entry shows (-o uid=, gid=, */
	gid_t gid;                /* file_mode=, dir_mode=: share.h) */
	mode_t file_mode, dir_mode;
	bool ro;
	bool strict_schema;       /* -o strict_schema: files never create families */
	char delim;               /* -o delimiter=C: for tables made with mkdir */
	struct pending_set pending; /* directories made through the mount, not yet in the store */
	_Atomic size_t nnew;      /* files created and not yet written back (listed from their handles) */
	atomic_bool no_opendir;   /* the kernel lists directories unopened (set at init) */
	bool expiring;            /* a store without CS_CAP_WATCH: the kernel's entries and attributes expire
	                           * cache_ttl after they were given, listings are dropped then (watch.c) */
	unsigned ttl_ms;          /* -o cache_ttl, in ms */
	/* every open file handle, so that those whose RELEASE never came (the daemon stopped first) are
	 * freed at exit: fileh_release_all() */
	pthread_mutex_t hlock;
	struct fileh *handles;
	/* columns whose bare name was unlinked lately (under hlock): a Q@TS of theirs that the kernel forgot
	 * meanwhile (another process wrote the store, the watcher dropped every entry) is found again, so
	 * that rm -r, which lists Q@TS names and unlinks Q first, can unlink them (gone.h, "ghosts") */
	struct fs_gone {
		uint64_t col;     /* the column's inode number (0: a free slot) */
		int64_t at_us;    /* when */
		pid_t pid;        /* by which process (the only one that sees the ghosts) */
	} gone[32];
	_Atomic unsigned ngone;   /* how many were ever added (read without the lock: 0, no ghosts) */
	/* names the kernel must forget that a handler cannot have it forget (the kernel holds the directory's
	 * lock while the handler runs): the watcher does, soon after (under hlock; watch_inval_later) */
	struct fs_inval {
		uint64_t parent;
		char *name;
	} *inval;
	size_t ninval, capinval;
	/* directories whose listings the kernel is to drop, in the order given (under hlock; a ring) */
	struct fs_expiry {
		uint64_t ino;
		int64_t due_ms; /* monotonic */
	} *expiry;
	size_t nexpiry, capexpiry, expiry_head;
	/* the daemon's own writes, so the watcher need not drop every cache for them (watch.h: WATCH_OWN) */
	pthread_mutex_t wlock;    /* held around each write transaction of the daemon's (a remote store's: only
	                           * around its accounting, watch.c) */
	uint64_t acct;            /* (under wlock) the newest store version accounted for (seen by the
	                           * watcher, or ours) */
	bool foreign;             /* (under wlock) another process changed the store since the watcher
	                           * last looked */
	/* the watcher thread: only it reads or writes these */
	pthread_t watcher;
	bool watching;
	uint64_t version_seen;
	/* set by the main thread to stop the watcher; read by it */
	atomic_bool stop;
};

#endif
