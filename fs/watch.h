/* watch.h — the thread that follows the store's changes (another process's writes) and invalidates the
 * kernel's caches, and the daemon's own writes, which it leaves alone (watch.c). */
#ifndef CELLFS_WATCH_H
#define CELLFS_WATCH_H

#include <stdint.h>

#include "fs.h"

/* Start/stop the thread that follows the store's changes and invalidates the kernel's caches.
 * watch_start: 0 or -errno (the thread could not be made). */
int watch_start(struct fs *fs);
void watch_stop(struct fs *fs);

/* Have the kernel forget entry NAME of directory PARENT soon (a name whose file the daemon removed inside
 * a request, where the kernel holds the directory's lock, so that no handler can): the watcher thread does
 * it within a tick. Out of memory, the name is not forgotten (the entry stays until it times out). */
void watch_inval_later(struct fs *fs, uint64_t parent, const char *name);

/* On a store whose data expires (fs->expiring): the listing of directory INO the kernel is being given now,
 * which it keeps until told, is dropped from it cache_ttl from now (with its attributes), so that the
 * next listing asks again, each directory when its own time comes. Out of memory, it is not (the
 * listing stays until the directory's next invalidation). */
void watch_expire_later(struct fs *fs, uint64_t ino);

/* Around each write transaction of the daemon's: watch_write_begin() returns the store version before
 * it, watch_write_end() takes note of what changed, so that the watcher does not drop every cache for
 * the daemon's own writes. */
uint64_t watch_write_begin(struct fs *fs);
void watch_write_end(struct fs *fs, uint64_t before);

/* RC = CALL (an edit_ function: one write transaction), noted as the daemon's own write. */
#define WATCH_OWN(fs, rc, call)                         \
	do {                                            \
		uint64_t v0_ = watch_write_begin(fs);   \
		(rc) = (call);                          \
		watch_write_end((fs), v0_);             \
	} while (0)

#endif
