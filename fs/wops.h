/* wops.h — the writing handlers (wops.c). */
#ifndef CELLFS_WOPS_H
#define CELLFS_WOPS_H

#include "fs.h"

/* Set the writing handlers in OPS: create, write, flush, fsync, fsyncdir, setattr, unlink, mkdir, rmdir,
 * rename, mknod, symlink, link, setxattr, removexattr. */
void wops_fill(struct fuse_lowlevel_ops *ops);

#endif
