/* loop.h — the daemon's request loop (loop.c): one thread answers requests, more join when one is slow. */
#ifndef CELLFS_LOOP_H
#define CELLFS_LOOP_H

#include "fs.h"

/* Serve SE's requests until it ends: unmounted, or a signal libfuse's handlers catch. Called from the
 * main thread, which supervises and receives the signals; up to 16 threads answer. Returns 0 when the
 * session ended normally, else the negative errno of the failed read of /dev/fuse (or of the first
 * thread's creation, then having served nothing). */
int loop_run(struct fuse_session *se);

#endif
