/* kv.h — an ordered byte-string map on LMDB whose keys may be of any length (LMDB's own limit is 511
 * bytes). The only module that includes lmdb.h (its files, store/kv*.c, share kv_internal.h); nothing
 * LMDB leaves it.
 *
 * Keys up to KV_INLINE_MAX bytes are stored as themselves. A longer key L is stored as L[:KV_INLINE_MAX]
 * followed by an 8-byte hash slot, with the rest of L at the front of its value; such keys sharing their
 * first KV_INLINE_MAX bytes form a "group" that cursors read whole and sort in memory, so iteration order
 * is always exact bytewise order of the full keys. Hash collisions are resolved by linear probing.
 */
#ifndef CELLFS_KV_H
#define CELLFS_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KV_INLINE_MAX 480

typedef struct kv_env kv_env;
typedef struct kv_txn kv_txn;
typedef struct kv_cursor kv_cursor;

/* Open (CREATE: creating, directory 0700 and files 0600) the environment in DIR, first giving it back
 * its anchored meta pages if the anchor is from another boot (anchor.h). Writable and on tmpfs or ramfs:
 * MDB_WRITEMAP, the data file cut back to its pages under the writer lock, and kv_guard_catch_faults()
 * installed (kv_grow.c).
 * Errors: -ENOENT, -EACCES, -EINVAL (not a store), -EIO, -ENOMEM. Close with kv_env_close(). */
int kv_env_open(const char *dir, bool rdonly, bool create, kv_env **out);

/* 0 if DIR holds nothing (a lock file left by an earlier attempt aside), else -ENOTEMPTY or -errno: where
 * a new environment may be made. */
int kv_env_dir_is_empty(const char *dir);
void kv_env_close(kv_env *env); /* accepts NULL */
/* A sync point: everything committed on disk and anchored (anchor.h). -EIO, -ENOSPC, -EROFS, -ENOMEM. A
 * writable env also makes one before its first write, every so many commits (kv_env.c, SYNC_MIN) and when
 * space is low. */
int kv_env_sync(kv_env *env);
/* If this process has committed nothing since its last sync point, let go of the snapshot pinned there
 * (kv_env.c, the pin), so other processes' commits may reuse the pages freed after it; the next write makes
 * a sync point first. Returns whether this process's commits are all synced (true for a read-only env).
 * No lock or system call when there is nothing to let go of. */
bool kv_env_unpin(kv_env *env);
/* Let go of the pages of the file this process has mapped (madvise MADV_DONTNEED on LMDB's map): they stay
 * in the page cache, and readers map them again as they touch them. Returns 0 or -errno; 0 when where
 * the file is mapped is not known. */
int kv_env_release_pages(kv_env *env);
/* Whether this process's commits since its last sync point make one due (no system call). */
bool kv_env_sync_due(kv_env *env);
/* Wait up to MS milliseconds for a commit of this process to find a sync point due; returns
 * kv_env_sync_due() then (so false on a timeout with none due). For the bg_sync caller's thread. */
bool kv_env_sync_wait(kv_env *env, unsigned ms);
/* ON: commits leave sync points to the caller (kv_env_sync_due(), kv_env_sync_wait()) unless far overdue
 * (SYNC_MAX). */
void kv_env_set_bg_sync(kv_env *env, bool on);
/* Write a compacted copy of ENV (a consistent snapshot; free pages left out) into the existing empty
 * directory DIR. Errors: -EACCES, -ENOSPC, -EIO. */
int kv_env_copy_compact(kv_env *env, const char *dir);
/* The size of ENV's data file in bytes. Errors: -EIO. */
int kv_env_size(kv_env *env, uint64_t *size);

/* Begin a transaction. Errors: -EROFS, -EAGAIN (reader slots full), -EIO, -ENOMEM. */
int kv_txn_begin(kv_env *env, bool rdonly, kv_txn **out);
int kv_txn_commit(kv_txn *txn); /* frees TXN; -ENOSPC, -EIO */
void kv_txn_abort(kv_txn *txn); /* frees TXN; accepts NULL */
/* The LMDB transaction id: a write txn's is one more than the last commit's (so they only grow, but
 * start again at 1 in a compacted copy). */
uint64_t kv_txn_id(const kv_txn *txn);
/* Bumped by every write in TXN: cursors must be re-positioned (kv_seek...) after a write. */
uint64_t kv_txn_writes(const kv_txn *txn);
/* Move a read-only TXN to the newest snapshot. Cursors must be closed. Errors: -EIO, -EAGAIN. */
int kv_txn_renew(kv_txn *txn);
/* cs_store_catch_faults(): a fault inside LMDB fails that call with -EIO, and a write past the end of a
 * written map's file grows the file (kv_guard.c, kv_grow.c). 0 or -errno (sigaction's). */
int kv_guard_catch_faults(void);
void kv_txn_reset(kv_txn *txn); /* release a read-only TXN's snapshot until kv_txn_renew() */
/* The id of the last committed transaction (any process). */
uint64_t kv_env_version(kv_env *env);

/* Point operations. Values returned are borrowed until the next write in TXN or its end.
 * Errors: -ENOENT (kv_get, kv_del: no such key), -ENOSPC, -EIO, -ENOMEM. */
int kv_get(kv_txn *txn, const void *key, size_t klen, const void **val, size_t *vlen);
int kv_put(kv_txn *txn, const void *key, size_t klen, const void *val, size_t vlen);
/* Like kv_put, but reserves VLEN bytes for the caller to fill at *DST before any other call on TXN (zeroed
 * first when the map is written, so that the caller's fill never needs the file to grow). */
int kv_reserve(kv_txn *txn, const void *key, size_t klen, size_t vlen, void **dst);
int kv_del(kv_txn *txn, const void *key, size_t klen);
/* kv_put for a key known to sort after every stored key (LMDB's MDB_APPEND: no search, and pages fill
 * whole instead of splitting half full). KLEN must be at most KV_INLINE_MAX (-EINVAL otherwise).
 * -EEXIST: KEY is not greater than the last stored key; nothing was written and TXN is still usable
 * (use kv_put). Other errors as kv_put. */
int kv_append(kv_txn *txn, const void *key, size_t klen, const void *val, size_t vlen);

/* The order of keys: bytewise, a key before every longer key it begins. */
static inline int kv_key_cmp(const void *a, size_t an, const void *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int r = n ? memcmp(a, b, n) : 0;
	return r ? r : (an > bn) - (an < bn);
}

/* Cursors. Positioning calls return 0 when positioned on a key, -ENOENT when they ran off the end,
 * or an error (-EIO, -ENOMEM). A cursor belongs to its transaction. */
int kv_cursor_open(kv_txn *txn, kv_cursor **out);
void kv_cursor_close(kv_cursor *c); /* accepts NULL */
int kv_seek(kv_cursor *c, const void *key, size_t klen);    /* first key >= KEY, in walk order */
int kv_seek_le(kv_cursor *c, const void *key, size_t klen); /* last key <= KEY */
int kv_last(kv_cursor *c);
int kv_next(kv_cursor *c);
int kv_prev(kv_cursor *c);
/* The current key and value, borrowed until the cursor moves or TXN writes. */
void kv_key(const kv_cursor *c, const void **key, size_t *klen);
int kv_value(kv_cursor *c, const void **val, size_t *vlen);
/* Both in one call, for scans that need both at every key. */
int kv_pair(kv_cursor *c, const void **key, size_t *klen, const void **val, size_t *vlen);

#endif
