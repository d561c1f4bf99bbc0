/* kv_txn.c — transactions: begun after the sync point a writer owes (kv_env.c), committed under the
 * fault guard (kv_guard.c), their errors as the mount's contract wants them
 * (fs/CONTRACT.md, "Bad input"). */
#include <stdlib.h>
#include <sys/statvfs.h>

#include "kv_internal.h"
#include "mem.h"

int kv_txn_begin_raw(kv_env *env, bool rdonly, kv_txn **out)
{
	kv_txn *t = mem_calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	t->env = env;
	t->rdonly = rdonly;
	for (int tries = 0;; tries++) {
		int raw = fault_hit(CS_FAULT_LMDB) ? EIO
						     : mdb_txn_begin(env->env, NULL, rdonly ? MDB_RDONLY : 0, &t->txn);
		if (raw == MDB_MAP_RESIZED && tries < 3) {
			/* Another process grew the map: adopt its size and try again. (LMDB maps the file
			 * anew: where is not known, so kv_guard_in_file() stops checking; the fault guard
			 * stays.) */
			pthread_mutex_lock(&env->remap_lock);
			atomic_store_explicit(&env->map, 0, memory_order_relaxed);
			mdb_env_set_mapsize(env->env, 0);
			pthread_mutex_unlock(&env->remap_lock);
			continue;
		}
		rc = raw == EACCES ? -EROFS : kv_errno(raw);
		break;
	}
	if (rc) {
		free(t);
		return rc;
	}
	kv_guard_bounds(t);
	*out = t;
	return 0;
}

int kv_txn_begin(kv_env *env, bool rdonly, kv_txn **out)
{
	int rc;
	if (!rdonly && env->wmap)
		kv_guard_check_bus();
	for (;;) {
		if (!rdonly && !env->rdonly && !atomic_load(&env->pinned) && (rc = kv_env_sync(env)))
			return rc; /* this process's first write (or first since kv_env_unpin()): anchor what it builds on */
		if (!rdonly && atomic_load(&env->tight) && atomic_load(&env->since))
			kv_env_sync(env); /* frees the pinned pages for reuse (a failure leaves them pinned) */
		if ((rc = kv_txn_begin_raw(env, rdonly, out)) || rdonly || env->rdonly || atomic_load(&env->pinned))
			return rc;
		kv_txn_abort(*out); /* kv_env_unpin() let go of the pin while this waited for the writer lock */
	}
}

/* LMDB reports a write that the file system cut short as EIO ("short write, filesystem full?"), where
 * the contract wants ENOSPC (fs/CONTRACT.md, "Bad input"). A failed commit is the file system's being full if it has less than this
 * left; the store itself is unharmed either way (its meta page was not written). */
#define FULL_SLACK (1u << 20)

static int commit_errno(kv_txn *t, int rc)
{
	struct statvfs sv;
	int fd;
	if (rc == -EFBIG)
		return -ENOSPC; /* the file may grow no more (a size limit: the file system's, or RLIMIT_FSIZE) */
	if (rc == -EIO && !mdb_env_get_fd(t->env->env, &fd) && !fstatvfs(fd, &sv) &&
	    (uint64_t)sv.f_bavail * sv.f_frsize < FULL_SLACK)
		return -ENOSPC;
	return rc;
}

int kv_txn_commit(kv_txn *t)
{
	int rc;
	if (t->reset) { /* a released reader: nothing to commit */
		mdb_txn_abort(t->txn);
		rc = 0;
	} else if (t->faulted || fault_hit(CS_FAULT_LMDB)) {
		mdb_txn_abort(t->txn);
		rc = t->nospace ? -ENOSPC : -EIO;
	} else {
		bool w = !t->rdonly;
		if (w)
			atomic_fetch_add(&t->env->since, 1);
		rc = commit_errno(t, kv_guard_run(t, KV_G_COMMIT, NULL, NULL, NULL, 0));
		if (t->faulted)
			mdb_txn_abort(t->txn); /* the commit faulted half-way: LMDB did not end the txn */
		if (!rc && w)
			kv_env_committed(t->env);
	}
	if (rc == -ENOSPC && !t->rdonly)
		kv_env_free_pinned(t->env);
	free(t);
	return rc;
}

void kv_txn_abort(kv_txn *t)
{
	if (!t)
		return;
	mdb_txn_abort(t->txn);
	if (t->nospace)
		kv_env_free_pinned(t->env);
	free(t);
}

int kv_txn_renew(kv_txn *t)
{
	if (!t->rdonly)
		return -EINVAL;
	if (!t->reset)
		mdb_txn_reset(t->txn);
	t->reset = false;
	int rc = LM(mdb_txn_renew(t->txn));
	if (!rc)
		kv_guard_bounds(t);
	return rc;
}

void kv_txn_reset(kv_txn *t)
{
	if (!t || !t->rdonly || t->reset)
		return;
	mdb_txn_reset(t->txn);
	t->reset = true;
}

uint64_t kv_txn_id(const kv_txn *t)
{
	return mdb_txn_id(t->txn);
}

uint64_t kv_txn_writes(const kv_txn *t)
{
	return t->writes;
}
