/* anchor.h — the store's record of its last synced snapshot, so that a power loss never leaves a torn
 * store (see store/README.md, "Durability").
 *
 * Commits are not synced one by one (MDB_NOSYNC): after a power loss the newest meta page may point at
 * pages that never reached the disk. At every sync the store saves here, and syncs, the two meta pages
 * of the snapshot it just synced, together with the machine's boot id; while unsynced commits follow,
 * the writer keeps that snapshot's pages from reuse (kv_env.c). Opened after a reboot, a store whose anchor
 * was written in an earlier boot gets those meta pages back: its last synced state, whole.
 *
 * The file, DIR/anchor, holds two slots written alternately, each checksummed, so a write cut short by
 * the power loss itself leaves the other. Knows nothing of LMDB: the meta pages are bytes.
 */
#ifndef CELLFS_ANCHOR_H
#define CELLFS_ANCHOR_H

#include <stddef.h>
#include <stdint.h>

#define ANCHOR_BOOT_MAX 48     /* bytes of a boot id, NUL included */
#define ANCHOR_META_MAX 0x10000 /* the meta pages saved: two of LMDB's largest page size (32 KiB) */
#define ANCHOR_STRIDE (4096 + ANCHOR_META_MAX) /* slot I lies at I * ANCHOR_STRIDE: header, meta bytes */

typedef struct anchor_rec {
	uint64_t seq;                /* which write this was (the newer slot has the larger) */
	uint64_t txnid;              /* the synced snapshot */
	char boot[ANCHOR_BOOT_MAX];  /* the boot it was written in */
	uint32_t nmeta;              /* bytes in META */
	uint8_t meta[ANCHOR_META_MAX];
} anchor_rec;

/* Open (CREATE: creating, 0600, and syncing DIR so the name lasts) DIR/anchor for reading and writing.
 * Returns a descriptor or -errno: -ENOENT (no anchor and not CREATE), -EACCES, -EROFS, -ENOSPC, -EIO. */
int anchor_open(const char *dir, int create);

/* Read the newer whole slot of FD into *REC (the caller's; about 64 KiB, so not on a thread's stack). -ENOENT: no whole slot (a new
 * anchor, or both cut short); -EIO. */
int anchor_read(int fd, anchor_rec *rec);

/* Write REC (its seq is set to one past the newest slot's) into the other slot and fdatasync it.
 * -EINVAL (nmeta too large), -ENOMEM, -ENOSPC, -EIO; the newer slot is kept. Hold anchor_lock(). */
int anchor_write(int fd, anchor_rec *rec);

/* An exclusive flock of FD: writers and the recovery at open take turns. -errno (-EINTR aside). */
int anchor_lock(int fd);
void anchor_unlock(int fd);

/* This boot's id (/proc/sys/kernel/random/boot_id), or "" where the system has none (then no anchor is
 * ever taken as from another boot). The string is static. */
const char *anchor_boot_id(void);

/* Tests: pretend to be in boot ID (NULL: the real one again). Not thread-safe; call before opening. */
void anchor_test_boot_id(const char *id);

#endif
