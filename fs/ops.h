/* ops.h — the reading handlers (ops.c). */
#ifndef CELLFS_OPS_H
#define CELLFS_OPS_H

#include "fs.h"

/* Set the reading handlers in OPS, and init and destroy: lookup, forget, getattr, opendir, readdir,
 * readdirplus, releasedir, open, read, release, listxattr, getxattr, statfs. */
void ops_fill(struct fuse_lowlevel_ops *ops);

#endif
