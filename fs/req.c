/* req.c — request plumbing shared by the handler files (see req.h). Each worker thread keeps one LMDB read
 * transaction: renewed when a request needs it, reset once the request is answered. */
#include "req.h"
#include "ident.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fs *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static __thread enum fs_op cur_op; /* the request this thread is answering, for req_reply_err's log line */

void req_count(fuse_req_t req, enum fs_op op)
{
	cur_op = op;
	atomic_fetch_add_explicit(&req_fs(req)->nreq[op], 1, memory_order_relaxed);
}

static const char *const op_names[OP_COUNT] = {
	"lookup", "forget", "getattr", "opendir", "readdir", "readdirplus", "releasedir", "open", "read",
	"release", "listxattr", "getxattr", "statfs", "create", "write", "flush", "fsync", "setattr", "unlink",
	"mkdir", "rmdir", "rename", "mknod", "symlink", "link", "setxattr", "removexattr", "fsyncdir",
};

/* Whether MSG is a refusal not logged yet: the service's refusals are logged once each (a walk of a
 * table the account may not read would otherwise log a line per file); the first 64 kinds are kept. */
static bool refusal_is_new(const char *msg)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t seen[64];
	static unsigned nseen;
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	bool fresh = true;

	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nseen && fresh; i++)
		fresh = seen[i] != h;
	if (fresh && nseen < 64)
		seen[nseen++] = h;
	else if (fresh) /* (more kinds than that: every one logged, as a flood of new ones is news) */
		seen[h % 64] = h;
	pthread_mutex_unlock(&lock);
	return fresh;
}

void req_reply_err(fuse_req_t req, int err)
{
	/* The contract (fs/CONTRACT.md, "Bad input"): a corrupt store is EIO and a log line. The first lines, then one in a thousand, so
	 * that a find over a damaged table cannot fill the log. */
	static _Atomic uint64_t eios;
	if (err == EIO) {
		uint64_t n = atomic_fetch_add_explicit(&eios, 1, memory_order_relaxed);
		if ((n < 20 || n % 1000 == 0) && !(cs_store_caps(req_fs(req)->st) & CS_CAP_MAINT)) /* a service */
			fuse_log(FUSE_LOG_ERR, "cellfs: %s: input/output error: %s (%llu so far)\n", op_names[cur_op],
				 cs_last_error() ? cs_last_error() : "the store's service failed", (unsigned long long)n + 1);
		else if (n < 20 || n % 1000 == 0)
			fuse_log(FUSE_LOG_ERR, "cellfs: %s: input/output error: the store is damaged "
				 "(%llu so far; cellctl verify names what)\n", op_names[cur_op], (unsigned long long)n + 1);
	}
	if (err == EACCES && !(cs_store_caps(req_fs(req)->st) & CS_CAP_MAINT) && cs_last_error() &&
	    refusal_is_new(cs_last_error()))
		fuse_log(FUSE_LOG_ERR, "cellfs: %s: permission denied: %s\n", op_names[cur_op], cs_last_error());
	fuse_reply_err(req, err);
}

int req_stats(struct fs *fs, char **val, size_t *len)
{
	char *svc, *b;
	size_t n = 0, svcn;
	int rc;

	if ((rc = cs_store_counters(fs->st, &svc, &svcn))) /* (what the store's service cost: Bigtable's calls) */
		return rc;
	if (!(b = malloc(OP_COUNT * 40 + 40 + svcn))) {
		free(svc);
		return -ENOMEM;
	}
	for (int i = 0; i < OP_COUNT; i++)
		n += (size_t)sprintf(b + n, "%s %llu\n", op_names[i],
				     (unsigned long long)atomic_load_explicit(&fs->nreq[i], memory_order_relaxed));
	n += (size_t)sprintf(b + n, "inodes %zu\n", node_count(&fs->nodes));
	memcpy(b + n, svc, svcn);
	n += svcn;
	free(svc);
	*val = b;
	*len = n;
	return 0;
}

static void txn_drop(void *p)
{
	cs_txn_abort(p);
}

int req_txn_key_init(struct fs *fs)
{
	return pthread_key_create(&fs->txn_key, txn_drop) ? -ENOMEM : 0;
}

int req_txn(struct fs *fs, cs_txn **out)
{
	cs_txn *t = pthread_getspecific(fs->txn_key);
	int rc;

	if (t && (rc = cs_txn_renew(t))) {
		cs_txn_abort(t);
		t = NULL;
		pthread_setspecific(fs->txn_key, NULL);
	}
	if (!t) {
		if ((rc = cs_txn_begin(fs->st, CS_TXN_RDONLY, &t)))
			return rc;
		pthread_setspecific(fs->txn_key, t);
	}
	*out = t;
	return 0;
}

void req_txn_idle(struct fs *fs)
{
	cs_txn_reset(pthread_getspecific(fs->txn_key));
}

void req_stat(struct fs *fs, uint64_t ino, const struct view_attr *a, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = a->dir ? S_IFDIR | fs->dir_mode : S_IFREG | fs->file_mode;
	st->st_nlink = a->nlink;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_size = (off_t)a->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((a->size + 511) / 512);
	st->st_mtim.tv_sec = a->mtime_us / 1000000;
	st->st_mtim.tv_nsec = (a->mtime_us % 1000000) * 1000;
	if (st->st_mtim.tv_nsec < 0) {
		st->st_mtim.tv_sec--;
		st->st_mtim.tv_nsec += 1000000000;
	}
	st->st_ctim = st->st_mtim;
	st->st_atim = st->st_mtim;
}

int req_dir(cs_txn *txn, const struct node *n, struct node_id *eff, const struct node_id **dir)
{
	int rc = node_flag(n, NODE_AS_FAMILY) || node_flag(n, NODE_MADE) ? ident_effective(txn, &n->id, n->name, eff) : 0;
	if (rc < 0)
		return rc;
	*dir = rc == 1 ? eff : &n->id;
	return 0;
}
