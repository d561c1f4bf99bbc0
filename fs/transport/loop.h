/* loop.h — the daemon's request loop (loop.c): one thread answers requests, more join when one is slow. */
#ifndef CELLFS_LOOP_H
#define CELLFS_LOOP_H

#include <signal.h>

#define FUSE_USE_VERSION 35
#include <fuse_lowlevel.h>

#include "uring.h"

#define LOOP_WAKE_SIG SIGUSR2 /* interrupts a thread's read() or ring wait at the end */

/* Serve SE's requests until it ends: unmounted, or a signal libfuse's handlers catch. Called from the
 * main thread, which supervises and receives the signals; up to 16 threads answer /dev/fuse. With U
 * (uring_new(), else NULL) the supervisor looks after the rings' threads too (uring_tick) and ends
 * them (uring_stop). Returns 0 when the session ended normally, else the negative errno of the failed
 * read of /dev/fuse (or of the first thread's creation, then having served nothing). */
int loop_run(struct fuse_session *se, struct uring *u);

#endif
