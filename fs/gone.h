/* gone.h — columns whose bare name was unlinked lately, and their "ghosts" (gone.c).
 *
 * Column COL's bare name was unlinked by process PID (gone_add), so for a while (GONE_US) a lookup by that
 * process (rm -r) of one of its Q@TS names, whose cells went with it, finds an empty file that the next
 * unlink removes (an unlink succeeds for a version name already gone); other processes never see one (a
 * restore must not take it for the version); written again through the mount (gone_drop), it has none.
 * The last 32 columns are kept, in fs->gone under fs->hlock. */
#ifndef CELLFS_GONE_H
#define CELLFS_GONE_H

#include "fs.h"

#define GONE_US (60 * 1000000)

void gone_add(struct fs *fs, uint64_t col, pid_t pid);
void gone_drop(struct fs *fs, uint64_t col);

/* Whether column COL's Q@TS names are ghosts for process PID: 1; 0; -1 for another process's ghosts. */
int gone_has(struct fs *fs, uint64_t col, pid_t pid);

#endif
