/* kv_internal.h — what the files of the kv module share; included only by store/kv*.c, the only files
 * that include lmdb.h. kv.h is the module's interface to the rest of store/.
 *
 *   kv.c        the map: long keys, point operations, cursors
 *   kv_env.c    the environment: open and close, sync points, the pin, the anchor's recovery
 *   kv_txn.c    transactions
 *   kv_guard.c  damaged pages: values bounded by the file, the SIGSEGV/SIGBUS guard around LMDB calls
 *   kv_grow.c   a written map's file: grown on a fault, cut back at open
 *   kv_maps.c   where LMDB mapped the file (/proc/self/maps)
 */
#ifndef CELLFS_KV_INTERNAL_H
#define CELLFS_KV_INTERNAL_H

#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cellstore.h"
#include "fault.h"
#include "kv.h"

struct kv_env {
	MDB_env *env;
	MDB_dbi dbi;
	unsigned psize; /* LMDB's page size */
	_Atomic uint64_t fsize; /* the data file's size when last looked at (another opener may cut it back) */
	_Atomic uintptr_t map;  /* where LMDB mapped the file (0: unknown, kv_guard_in_file() checks nothing) */
	uint64_t mapsize;       /* the map's size */
	pthread_mutex_t remap_lock; /* held while LMDB maps the file anew, and while its pages are let go */
	int dfd;                /* LMDB's descriptor of the data file */
	bool rdonly;
	bool wmap;              /* the map is written (MDB_WRITEMAP): writable, in memory, its map found */
	/* The synced snapshot (anchor.h), changed only under LMDB's writer lock: */
	MDB_txn *pin;            /* a reader on it, keeping its pages from reuse while commits follow */
	_Atomic uint64_t pinned; /* its txnid + 1; 0: no pin (read without the lock by kv_env_sync) */
	int afd;                 /* DIR/anchor, -1 until the first sync point */
	_Atomic unsigned since;  /* commits since the last sync point */
	_Atomic bool tight;      /* little space left: a sync point before every write (kv_env_low_space()) */
	_Atomic int64_t synced_ns; /* CLOCK_MONOTONIC time the last sync point ended */
	_Atomic int64_t took_ns;   /* ... and what its syncs took */
	_Atomic int64_t retry_ns;  /* after a failed one, the time from which the next may be tried */
	bool bg_sync;            /* sync points are the caller's (kv_env_sync_due()), SYNC_MAX aside */
	pthread_mutex_t sync_lock; /* this process's sync points, one at a time */
	/* bg_sync: the caller's thread waits in kv_env_sync_wait() until a commit finds a sync point due */
	pthread_mutex_t due_lock;
	pthread_cond_t due_cond;
	_Atomic bool due_told;   /* the waiter was told of this sync point (cleared by the sync) */
};

struct kv_txn {
	kv_env *env;
	MDB_txn *txn;
	bool rdonly;
	bool reset;       /* a read-only txn whose snapshot is released (mdb_txn_reset) */
	bool faulted;     /* a damaged page was met: nothing more is read or committed through this txn */
	bool nospace;     /* a write into the map found the disk full (then faulted too) */
	uintptr_t map, map_end, file_end; /* the map, and the part of it this snapshot may use (kv_guard.c) */
	uint64_t writes;
};

/* An LMDB return code as -errno: the one translation. */
static inline int kv_errno(int rc)
{
	switch (rc) {
	case MDB_SUCCESS:
		return 0;
	case MDB_NOTFOUND:
		return -ENOENT;
	case MDB_MAP_FULL:
		return -ENOSPC;
	case MDB_TXN_FULL:
		return -E2BIG;
	case MDB_READERS_FULL:
		return -EAGAIN;
	case MDB_KEYEXIST:
		return -EEXIST;
	default:
		if (rc > 0 && rc < 4096)
			return -rc; /* an errno from the system */
		return -EIO;        /* MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_INVALID, ... */
	}
}

/* Every LMDB call that can fail goes through here, so tests can make the Nth fail. */
#define LM(call) (fault_hit(CS_FAULT_LMDB) ? -EIO : kv_errno(call))

/* ---- kv_env.c ---- */

/* After a write transaction of this process committed: make the sync point it made due, or tell the
 * bg_sync caller's thread. */
void kv_env_committed(kv_env *e);
/* After a write refused for want of space: free the pinned pages now, and sync before every write
 * while space stays low. */
void kv_env_free_pinned(kv_env *e);
/* Whether the file system holding E has less than LOW_SPACE free. */
bool kv_env_low_space(kv_env *e);

/* ---- kv_txn.c ---- */

/* kv_txn_begin() without the sync point a writer may owe first (kv_env.c makes sync points with it). */
int kv_txn_begin_raw(kv_env *env, bool rdonly, kv_txn **out);

/* ---- kv_guard.c ---- */

/* The LMDB calls that read pages, as kv_guard_run() runs them. */
enum kv_guard_op { KV_G_COMMIT, KV_G_GET, KV_G_PUT, KV_G_DEL, KV_G_CURSOR_GET, KV_G_COPY, KV_G_ZERO };

/* kv_errno() of one LMDB call in txn T (OP on cursor MC, key K, value V, put flags or cursor op ARG)
 * under the fault guard: -EIO if it faults, -ENOSPC if a write into a written map's file could not
 * grow it. KV_G_COPY copies V into the map at K (a reserved value), KV_G_ZERO zeroes K. A faulted T
 * runs nothing more (-EIO). */
int kv_guard_run(kv_txn *t, enum kv_guard_op op, MDB_cursor *mc, MDB_val *k, MDB_val *v, unsigned arg);

/* LM() for a call that reads pages in txn T: kv_guard_run(), and counted for fault injection. */
#define LMG(t, op, mc, k, v, arg) (fault_hit(CS_FAULT_LMDB) ? -EIO : kv_guard_run(t, op, mc, k, v, arg))

/* Before a write transaction of a written map: the handler that grows the file must be SIGBUS's. */
void kv_guard_check_bus(void);
/* Record where T's snapshot can point (T->map, map_end, file_end); clears T->faulted. */
void kv_guard_bounds(kv_txn *t);
/* Whether V may be read: inside the file's part of the map, or outside the map. Marks T faulted if not. */
bool kv_guard_in_file(kv_txn *t, const MDB_val *v);
/* The data file's size now (0 if unknown); remembered in ENV->fsize. */
uint64_t kv_guard_file_size(kv_env *env);

/* ---- kv_grow.c ---- */

/* The size a written map's file is kept in whole multiples of, and grows by at least. */
#define KV_GROW_MIN ((uint64_t)1 << 20)

/* Whether DIR is on a file system kept in memory (tmpfs, ramfs): only there is the map written. */
bool kv_grow_mem_fs(const char *dir);
/* In the SIGBUS handler: if ADDR lies in E's map past the end of its file, grow the file past it.
 * Returns 1 (grown, or grown meanwhile: the access may run again), 0 (not ours to grow: damage, or a
 * hole the disk had no room for), -1 (the disk is full). *INSIDE is this thread's last fault found
 * inside the file (0 at the start of each guarded call). Only async-signal-safe calls. */
int kv_grow_on_fault(kv_env *e, uintptr_t addr, uintptr_t *inside);
/* Cut E's file back to the pages in use (whole KV_GROW_MIN for a written map), or to PRE if larger
 * and not the map's size, under the writer lock. Returns 0 or -errno (-EROFS: not writable). */
int kv_grow_cut_back(kv_env *e, uint64_t pre);

/* ---- kv_maps.c ---- */

/* The start addresses of this process's mappings of DIR/data.mdb at offset 0, up to MAX: how many
 * (0 if there is none or they cannot be read). */
size_t kv_maps_list(const char *dir, uintptr_t *out, size_t max);
/* The one mapping of DIR/data.mdb not among BEFORE (kv_maps_list() before LMDB's open), or 0 if there
 * is not exactly one (LMDB does not say where it mapped the file). */
uintptr_t kv_maps_new(const char *dir, const uintptr_t *before, size_t nbefore);
#define KV_MAPS_MAX 64

#endif
