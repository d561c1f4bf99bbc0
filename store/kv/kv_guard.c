/* kv_guard.c — damaged pages. LMDB trusts the page references and node offsets it reads: a damaged one
 * can make it (or us, reading a key or value it returned) touch memory outside the file. Two defences:
 *  - every value LMDB returns must lie inside the file's part of the map (kv_guard_in_file()), else -EIO;
 *  - a call into LMDB that reads pages runs under kv_guard_run(): once kv_guard_catch_faults() has
 *    installed its handlers, a SIGSEGV or SIGBUS inside that call jumps back here and the call returns
 *    -EIO.
 * Either way the transaction is marked faulted: it reads nothing more (a cursor may be anywhere) and
 * cannot commit; the caller aborts it (a read-only one may be renewed: a new snapshot, a fresh start).
 * Only LMDB's own frames are skipped by the jump, so no lock or allocation of ours is left behind.
 *
 * The same handler grows a written map's file (kv_grow.c): writes into the map happen only in a write
 * transaction's puts, deletes and commit, and in the copies into reserved values, all run here, which
 * say so (fault_env); the handler must be SIGBUS's whenever one runs (kv_guard_check_bus()). */
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include "kv_internal.h"

static __thread sigjmp_buf *fault_jmp;
static __thread bool fault_nospace; /* the last jump was a file that could not grow */

/* The env whose write transaction this thread is in, inside LMDB or copying into the map: a fault past
 * the end of its file is a page being written, and grows the file. (A fault anywhere else, a read of a
 * damaged page say, never grows it.) */
static __thread kv_env *fault_env;

/* The address of this thread's last fault that was inside the file when the handler looked. */
static __thread uintptr_t fault_inside;

/* What SIGSEGV and SIGBUS did before kv_guard_catch_faults(): a fault that is not ours is theirs. */
static struct sigaction prev_segv, prev_bus;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int saved = errno;
	int g = sig == SIGBUS && fault_env ? kv_grow_on_fault(fault_env, (uintptr_t)si->si_addr, &fault_inside) : 0;
	errno = saved;
	if (g > 0)
		return;
	sigjmp_buf *j = fault_jmp;
	if (j) {
		fault_jmp = NULL;
		fault_nospace = g < 0;
		siglongjmp(*j, sig);
	}
	/* not inside LMDB: what was there before handles it when the instruction runs again (by default,
	 * the process ends); ours comes back with the next write transaction */
	sigaction(sig, sig == SIGBUS ? &prev_bus : &prev_segv, NULL);
}

static bool is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_fault;
}

static int catch_one(int sig, struct sigaction *prev)
{
	struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER }, old;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old))
		return -errno;
	if (!is_ours(&old))
		*prev = old;
	return 0;
}

int kv_guard_catch_faults(void)
{
	int rc = catch_one(SIGSEGV, &prev_segv);
	return rc ? rc : catch_one(SIGBUS, &prev_bus);
}

/* Something may have replaced the handler since the env was opened (a test framework does, for every
 * test); it is put back, and what replaced it gets the faults that are not ours. One system call. */
void kv_guard_check_bus(void)
{
	struct sigaction cur;
	if (!sigaction(SIGBUS, NULL, &cur) && !is_ours(&cur))
		catch_one(SIGBUS, &prev_bus);
}

/* A function of its own, never inlined, so that the jump back skips only LMDB's frames and no caller's
 * variable lives across sigsetjmp(). A write fault on a full disk is -ENOSPC: the file could not grow,
 * or a hole in it (a copied store's) could not be filled. */
__attribute__((noinline)) int kv_guard_run(kv_txn *t, enum kv_guard_op op, MDB_cursor *mc, MDB_val *k, MDB_val *v,
					   unsigned arg)
{
	sigjmp_buf jb;
	volatile int rc = -EIO;
	int sig;

	if (t->faulted)
		return -EIO;
	if ((sig = sigsetjmp(jb, 0))) {
		fault_jmp = NULL;
		fault_env = NULL;
		t->faulted = true;
		if (!t->rdonly && t->env->wmap && (fault_nospace || (sig == SIGBUS && kv_env_low_space(t->env)))) {
			t->nospace = true;
			return -ENOSPC;
		}
		return -EIO;
	}
	fault_jmp = &jb;
	fault_inside = 0;
	fault_env = t->rdonly || !t->env->wmap || op == KV_G_GET || op == KV_G_CURSOR_GET ? NULL : t->env;
	switch (op) {
	case KV_G_COMMIT:
		rc = kv_errno(mdb_txn_commit(t->txn));
		break;
	case KV_G_GET:
		rc = kv_errno(mdb_get(t->txn, t->env->dbi, k, v));
		break;
	case KV_G_PUT:
		rc = kv_errno(mdb_put(t->txn, t->env->dbi, k, v, arg));
		break;
	case KV_G_DEL:
		rc = kv_errno(mdb_del(t->txn, t->env->dbi, k, NULL));
		break;
	case KV_G_CURSOR_GET:
		rc = kv_errno(mdb_cursor_get(mc, k, v, (MDB_cursor_op)arg));
		break;
	case KV_G_COPY:
		memcpy(k->mv_data, v->mv_data, v->mv_size);
		rc = 0;
		break;
	case KV_G_ZERO:
		memset(k->mv_data, 0, k->mv_size);
		rc = 0;
		break;
	}
	fault_jmp = NULL;
	fault_env = NULL;
	return rc;
}

uint64_t kv_guard_file_size(kv_env *env)
{
	struct stat sb;
	int fd;
	if (mdb_env_get_fd(env->env, &fd) || fstat(fd, &sb))
		return 0;
	atomic_store_explicit(&env->fsize, (uint64_t)sb.st_size, memory_order_relaxed);
	return (uint64_t)sb.st_size;
}

/* The part of the map both the snapshot's pages and the file (as last seen: a damaged or cut file may
 * be shorter than its pages say) hold. */
void kv_guard_bounds(kv_txn *t)
{
	MDB_envinfo info;
	uint64_t pages, fsize = atomic_load_explicit(&t->env->fsize, memory_order_relaxed);
	t->faulted = false;
	t->map = t->map_end = t->file_end = 0;
	if (mdb_env_info(t->env->env, &info))
		return;
	t->map = atomic_load_explicit(&t->env->map, memory_order_relaxed);
	t->map_end = t->map + info.me_mapsize;
	pages = (uint64_t)(info.me_last_pgno + 1) * t->env->psize;
	t->file_end = t->map + (uintptr_t)(pages < fsize ? pages : fsize);
}

/* (A write txn's own dirty pages live on the heap, outside the map.) */
bool kv_guard_in_file(kv_txn *t, const MDB_val *v)
{
	uintptr_t p = (uintptr_t)v->mv_data;
	if (!t->map || p >= t->map_end || (p < t->map && v->mv_size <= t->map - p))
		return true; /* bounds unknown, or not in the map */
	if (p <= t->file_end && v->mv_size <= t->file_end - p)
		return true;
	/* The file may have grown since: a write txn spills pages to it or (MDB_WRITEMAP) writes them past
	 * its end, another process commits. What lies inside the file can be read without a fault, which is
	 * all this guards. */
	uint64_t fsize = atomic_load_explicit(&t->env->fsize, memory_order_relaxed);
	if (fsize > (uint64_t)(t->file_end - t->map) && fsize <= t->map_end - t->map &&
	    p <= t->map + fsize && v->mv_size <= t->map + fsize - p) {
		t->file_end = t->map + (uintptr_t)fsize;
		return true;
	}
	fsize = kv_guard_file_size(t->env);
	if (fsize && fsize <= t->map_end - t->map) {
		t->file_end = t->map + (uintptr_t)fsize;
		if (p <= t->file_end && v->mv_size <= t->file_end - p)
			return true;
	}
	t->faulted = true;
	return false;
}
