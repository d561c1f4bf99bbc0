/* uring.h — FUSE over io_uring (uring.c): requests arrive on one ring per CPU and are answered in their
 * ring entry; /dev/fuse (loop.c) still carries INIT, FORGET, INTERRUPT and the daemon's notifications. */
#ifndef CELLFS_URING_H
#define CELLFS_URING_H

#include <stdbool.h>

#define FUSE_USE_VERSION 35
#include <fuse_lowlevel.h>

struct uring;

/* Prepare the io_uring transport of SE (mounted, not yet serving): a ring for each possible CPU, and
 * libfuse's reads and writes of /dev/fuse routed through uring.c (fuse_session_custom_io) so that the
 * INIT reply can ask for io_uring and ring requests are answered in place. Whether requests then come
 * on the rings is decided at INIT: the kernel must offer it (root's switch,
 * /sys/module/fuse/parameters/enable_uring) and every queue must register; else they keep coming on
 * /dev/fuse. Either way the daemon logs one line (fuse_log) saying which transport serves the mount.
 * SIG (loop.h's LOOP_WAKE_SIG) interrupts its threads' waits at the end. Returns 0 and *OUT (free with uring_free after uring_stop), or a negative errno with nothing changed:
 * -EOPNOTSUPP when built without liburing, else why the kernel refused a ring (-EPERM: io_uring is
 * disabled by kernel.io_uring_disabled; -ENOMEM). */
int uring_new(struct fuse_session *se, int sig, struct uring **out);

/* The supervisor's look, every tick (loop.c): on a queue where one request has been in progress since
 * the last look and no thread waits for the ring, lets another thread wait (a parked one, or a new one).
 * Returns true if a request began on any ring since the last look. U may be NULL. */
bool uring_tick(struct uring *u);

/* End the rings' threads (called by the supervisor once the session has ended, with the handler of
 * uring_new's SIG installed, without SA_RESTART). U may be NULL. */
void uring_stop(struct uring *u);

/* Free the rings and entries; after uring_stop. Accepts NULL. */
void uring_free(struct uring *u);

/* Tell the kernel to drop directory INO's attributes and cached listing (fuse_lowlevel_notify_inval_inode
 * of the whole directory). Such a notification never waits for a request (a directory's cached pages are
 * locked only while the kernel fills or reads them), so a thread serving a ring request writes it to
 * /dev/fuse itself instead of through the notifier thread. Only for directories: a file's pages stay
 * locked while its read waits for the daemon. Returns as fuse_lowlevel_notify_inval_inode. */
int uring_inval_dir(struct fuse_session *se, fuse_ino_t ino);

/* Whether this build has the io_uring transport (liburing). */
bool uring_built(void);

#endif
