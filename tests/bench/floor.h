/* floor.h — what the floor daemons (floorfs.c, floorw.c) share: an entry as cellfs replies it, and the
 * libfuse session run as cellfs runs it, on /dev/fuse or on cellfs's own io_uring transport. Include
 * after <fuse_lowlevel.h> with FUSE_USE_VERSION 35 and TIMEOUT defined. */
#ifndef FLOOR_H
#define FLOOR_H

#include "loop.h"
#include "uring.h"

/* -o uring, both daemons' option: on cellfs's io_uring transport (floor_serve()'s URING), into the int
 * member uring of the daemon's options struct TYPE. An entry of a struct fuse_opt table. */
#define FLOOR_OPT_URING(type) { "uring", offsetof(type, uring), 1 }

/* The name table's hash of NAME in directory PARENT (FNV-1a, folded). */
static uint64_t floor_hash(fuse_ino_t parent, const char *name)
{
	uint64_t h = 0xcbf29ce484222325u ^ parent;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	return h ^ (h >> 29);
}

/* The entry for a node of attributes ST (its inode number st_ino), with cellfs's timeouts. */
static void floor_entry(const struct stat *st, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = st->st_ino;
	e->attr = *st;
	e->attr_timeout = TIMEOUT;
	e->entry_timeout = TIMEOUT;
}

/* Mount OPS at OPTS's mountpoint with ARGS and serve until unmounted: libfuse's multi-threaded loop
 * configured as cellfs configures it, or the single-threaded one for -s; with URING, cellfs's own loop
 * and io_uring transport (fs/transport/loop.c, fs/transport/uring.c: the io_uring floor, which says on stderr which transport
 * the kernel accepted). Returns 0 after a clean run. */
static int floor_serve(struct fuse_args *args, const struct fuse_cmdline_opts *opts,
		       const struct fuse_lowlevel_ops *ops, int uring)
{
	struct fuse_loop_config loop = { .clone_fd = 0, .max_idle_threads = 10 }; /* as cellfs */
	struct fuse_session *se = fuse_session_new(args, ops, sizeof(*ops), NULL);
	struct uring *u = NULL;
	int ret = 1, rc;

	if (!se)
		return 1;
	if (fuse_set_signal_handlers(se))
		goto destroy;
	if (fuse_session_mount(se, opts->mountpoint))
		goto remove_handlers;
	if (fuse_daemonize(opts->foreground))
		goto unmount;
	if (!uring) {
		ret = opts->singlethread ? fuse_session_loop(se) : fuse_session_loop_mt(se, &loop);
	} else if ((rc = uring_new(se, LOOP_WAKE_SIG, &u))) {
		fprintf(stderr, "floor: no io_uring transport: %s\n", strerror(-rc));
	} else {
		ret = loop_run(se, u);
	}
unmount:
	fuse_session_unmount(se);
	uring_free(u);
remove_handlers:
	fuse_remove_signal_handlers(se);
destroy:
	fuse_session_destroy(se);
	return ret;
}

#endif
