/* req.h — what every handler needs to serve a request: the daemon's context, the request's count and
 * error reply, this thread's read transaction, the attributes as the kernel is told them, and the
 * directory a node stands for now (req.c). */
#ifndef CELLFS_REQ_H
#define CELLFS_REQ_H

#include <sys/stat.h>

#include "fs.h"
#include "view.h"

/* The daemon's context of REQ. */
struct fs *req_fs(fuse_req_t req);

/* Count REQ as a request of kind OP (the counters req_stats() reads); REQ's kind is the one
 * req_reply_err() names in its log line. */
void req_count(fuse_req_t req, enum fs_op op);

/* fuse_reply_err(REQ, ERR) (ERR positive, 0 for success), and an EIO (the store could not be read)
 * logged with the request's kind (the last one req_count() saw on this thread); rate-limited. */
void req_reply_err(fuse_req_t req, int err);

/* The request counters as text, "NAME COUNT" lines (the root's hidden attribute REQ_XA_STATS): *VAL
 * the caller's to free, *LEN its length. Errors: -ENOMEM. */
#define REQ_XA_STATS "user.cellfs.stats"
int req_stats(struct fs *fs, char **val, size_t *len);

/* Create the key of the per-thread read transactions. Errors: -ENOMEM. */
int req_txn_key_init(struct fs *fs);

/* This thread's read transaction, renewed to the newest snapshot; valid until req_txn_idle(), which the
 * handler calls once the request is answered (REQ is gone by then: hence FS), so that a thread between
 * requests holds no snapshot. Errors: as cs_txn_begin(). */
int req_txn(struct fs *fs, cs_txn **out);
void req_txn_idle(struct fs *fs);

/* *ST for inode INO with attributes A, as the kernel is told them (owner, mode, times). */
void req_stat(struct fs *fs, uint64_t ino, const struct view_attr *a, struct stat *st);

/* The directory node N stands for now: *DIR points at N's identity or, for a key directory a file written
 * in it has made a family's (node->as_family, ident_effective()), at *EFF (owned: node_id_free()).
 * Errors: as the store. */
int req_dir(cs_txn *txn, const struct node *n, struct node_id *eff, const struct node_id **dir);

#endif
