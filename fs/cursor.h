/* cursor.h — where directory listings stand between readdir requests. The kernel lists directories
 * without opening them (no_opendir: two requests fewer per directory), so a listing has no handle to keep
 * its position in; the daemon keeps the positions of the listings in progress here, keyed by directory and
 * the offset the kernel asks for next. A position that has given way costs only time: that listing
 * starts again and skips to the offset, as for any offset the kernel seeks to. */
#ifndef CELLFS_CURSOR_H
#define CELLFS_CURSOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "view.h"

#define CURSOR_SLOTS 64 /* listings in progress at once before the oldest gives way */

struct cursor {
	uint64_t ino, off;
	uint64_t stamp;      /* when it was saved; 0: the slot is free */
	struct view_pos pos;
};

struct cursor_cache {
	pthread_mutex_t lock; /* protects everything below */
	uint64_t clock;
	struct cursor slots[CURSOR_SLOTS];
};

void cursor_cache_init(struct cursor_cache *c);
void cursor_cache_release(struct cursor_cache *c); /* frees every saved position */

/* Take the saved position of directory INO's listing that continues at offset OFF: returns true and
 * moves it to *POS (the caller's now, to release or put back), or false with *POS zeroed. */
bool cursor_take(struct cursor_cache *c, uint64_t ino, uint64_t off, struct view_pos *pos);

/* Save *POS as where INO's listing continues at offset OFF. The cache takes what *POS holds and zeroes
 * it; the least recently saved position gives way when every slot is taken. */
void cursor_put(struct cursor_cache *c, uint64_t ino, uint64_t off, struct view_pos *pos);

#endif
