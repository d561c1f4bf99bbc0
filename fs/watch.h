/* watch.h — the thread that follows the store's changes (another process's writes) and invalidates the
 * kernel's caches, and the daemon's own writes, which it leaves alone (watch.c). */
#ifndef CELLFS_WATCH_H
#define CELLFS_WATCH_H

#include <stdint.h>

#include "fs.h"

/* Start/stop the thread that follows the store's changes and invalidates the kernel's caches.
 * fs_watch_start: 0 or -errno (the thread could not be made). */
int fs_watch_start(struct fs *fs);
void fs_watch_stop(struct fs *fs);

/* Around each write transaction of the daemon's: fs_watch_write_begin() returns the store version before
 * it, fs_watch_write_end() takes note of what changed, so that the watcher does not drop every cache for
 * the daemon's own writes. */
uint64_t fs_watch_write_begin(struct fs *fs);
void fs_watch_write_end(struct fs *fs, uint64_t before);

#endif
