/* kv.c — ordered map with keys of any length, on one LMDB database. See kv.h for the long-key scheme.
 * This is the only file that includes lmdb.h; LMDB return codes are translated to -errno here, once. */
#include "kv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "anchor.h"
#include "cellstore.h"
#include "codec.h"
#include "fault.h"
#include "mem.h"

#define P KV_INLINE_MAX
#define SKEY_LEN (KV_INLINE_MAX + 8) /* a long key's stored form: first P bytes, 8-byte slot */

struct kv_env {
	MDB_env *env;
	MDB_dbi dbi;
	unsigned psize; /* LMDB's page size */
	_Atomic uint64_t fsize; /* the data file's size when last looked at (another opener may cut it back) */
	_Atomic uintptr_t map;  /* where LMDB mapped the file (0: unknown, in_file() checks nothing) */
	uint64_t mapsize;       /* the map's size */
	int dfd;                /* LMDB's descriptor of the data file */
	bool rdonly;
	bool wmap;              /* the map is written (MDB_WRITEMAP): writable, in memory, its map found */
	/* The synced snapshot (anchor.h), changed only under LMDB's writer lock: */
	MDB_txn *pin;            /* a reader on it, keeping its pages from reuse while commits follow */
	_Atomic uint64_t pinned; /* its txnid + 1; 0: no pin (read without the lock by kv_env_sync) */
	int afd;                 /* DIR/anchor, -1 until the first sync point */
	_Atomic unsigned since;  /* commits since the last sync point */
	_Atomic bool tight;      /* little space left: a sync point before every write (low_space()) */
	_Atomic int64_t synced_ns; /* CLOCK_MONOTONIC time the last sync point ended */
	_Atomic int64_t took_ns;   /* ... and what its syncs took */
	_Atomic int64_t retry_ns;  /* after a failed one, the time from which the next may be tried */
	bool bg_sync;            /* sync points are the caller's (kv_env_sync_due()), SYNC_MAX aside */
	pthread_mutex_t sync_lock; /* this process's sync points, one at a time */
	/* bg_sync: the caller's thread waits in kv_env_sync_wait() until a commit finds a sync point due */
	pthread_mutex_t due_lock;
	pthread_cond_t due_cond;
	_Atomic bool due_told;   /* the waiter was told of this sync point (cleared by the sync) */
};

/* While a snapshot is pinned, every page freed after it waits for the next sync point before LMDB may
 * reuse it: the file grows, and LMDB's free-page bookkeeping gets slower with every commit (a commit loop
 * in tmpfs: 7.5 us a commit with sync points every 64 commits, 12 us every 512). So a writer makes its
 * own sync points often: after SYNC_MIN commits once the time since the last one is SYNC_RATIO times
 * what that one took (syncs then cost at most about a tenth of the time, on a slow disk too), and after
 * SYNC_MAX commits whatever the time.
 *
 * Where a thread of the caller's makes them (bg_sync, the daemon), they cost the committing threads no
 * waiting, but their time is spent all the same (fdatasync's writeback): one is due after SYNC_MIN
 * commits once the time since the last is SYNC_BG_RATIO times what that one took (in memory, where a
 * sync point takes microseconds, every 64 commits), and after SYNC_BG commits whatever the time (on a
 * disk). With the ratio alone the store grew on a disk: each window's pages are all new ones, and the
 * file's high-water mark is about two windows; a sync point's fdatasync takes longer the more its
 * window wrote, so each window was longer than the last, up to SYNC_MAX commits (10,000 files made and
 * overwritten through the mount on ext4 left a 123 MB store; 12 MB now, in about the same time; 5 MB
 * with windows of 64, which cost the daemon a fifth more time). The caller's thread may still fall
 * behind (a loaded machine, a slow disk: the window grows by every commit made while it waits or syncs),
 * so past SYNC_BG_MAX commits the committing thread makes the sync point itself: no window is longer,
 * whatever the timing, and the file stays under about two such windows' pages. */
#define SYNC_MIN 64
#define SYNC_MAX 4096
#define SYNC_RATIO 10
#define SYNC_BG 256
#define SYNC_BG_RATIO 40
#define SYNC_BG_MAX 384
#define FAIL_BACKOFF_NS 100000000 /* after a failed sync point, the next is due no sooner than this */

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* After a commit: is a sync point due? */
static bool sync_due(kv_env *e)
{
	unsigned n = atomic_load(&e->since);
	if (n >= SYNC_MAX)
		return true;
	if (n < SYNC_MIN)
		return false;
	int64_t now = mono_ns();
	if (now < atomic_load(&e->retry_ns))
		return false; /* (a sync point failed just now) */
	if (e->bg_sync && n >= SYNC_BG)
		return true;
	return now >= atomic_load(&e->synced_ns) + (e->bg_sync ? SYNC_BG_RATIO : SYNC_RATIO) * atomic_load(&e->took_ns);
}

struct kv_txn {
	kv_env *env;
	MDB_txn *txn;
	bool rdonly;
	bool reset;       /* a read-only txn whose snapshot is released (mdb_txn_reset) */
	bool faulted;     /* a damaged page was met: nothing more is read or committed through this txn */
	bool nospace;     /* a write into the map found the disk full (then faulted too) */
	uintptr_t map, map_end, file_end; /* the map, and the part of it this snapshot may use (in_file) */
	uint64_t writes;
};

struct group_ent {
	uint8_t skey[SKEY_LEN];
	uint8_t *full; /* the full key: the group's prefix and this entry's tail */
	size_t fulln;
	MDB_val val;   /* the caller's value (tail header stripped); valid while no write happens */
};

enum cstate { C_NONE, C_SIMPLE, C_GROUP };

struct kv_cursor {
	kv_txn *t;
	MDB_cursor *mc;
	enum cstate state;
	MDB_val k, v;                     /* C_SIMPLE: the current pair */
	struct group_ent *g;              /* C_GROUP: the group, sorted by full key */
	size_t gn, gcap, gi;
	uint8_t gmin[SKEY_LEN], gmax[SKEY_LEN]; /* smallest and largest stored key of the group */
	uint64_t gwrites;                 /* t->writes when the group was read */
};

static int kv_errno(int rc)
{
	switch (rc) {
	case MDB_SUCCESS:
		return 0;
	case MDB_NOTFOUND:
		return -ENOENT;
	case MDB_MAP_FULL:
		return -ENOSPC;
	case MDB_TXN_FULL:
		return -E2BIG;
	case MDB_READERS_FULL:
		return -EAGAIN;
	case MDB_KEYEXIST:
		return -EEXIST;
	default:
		if (rc > 0 && rc < 4096)
			return -rc; /* an errno from the system */
		return -EIO;        /* MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_INVALID, ... */
	}
}

/* Every LMDB call that can fail goes through here, so tests can make the Nth fail. */
#define LM(call) (fault_hit(CS_FAULT_LMDB) ? -EIO : kv_errno(call))

/* Damaged pages. LMDB trusts the page references and node offsets it reads: a damaged one can make it
 * (or us, reading a key or value it returned) touch memory outside the file. Two defences:
 *  - every value LMDB returns must lie inside the file's part of the map (in_file()), else -EIO;
 *  - a call into LMDB that reads pages runs under LMG(): once kv_catch_faults() has installed its
 *    handlers, a SIGSEGV or SIGBUS inside that call jumps back here and the call returns -EIO.
 * Either way the transaction is marked faulted: it reads nothing more (a cursor may be anywhere) and
 * cannot commit; the caller aborts it (a read-only one may be renewed: a new snapshot, a fresh start).
 * Only LMDB's own frames are skipped by the jump, so no lock or allocation of ours is left behind.
 *
 * The file grows on a fault. A writable env in memory (mem_fs()) maps the file MDB_WRITEMAP: a write
 * transaction's pages are written into the map, not copied to the heap and pwrite()n at commit, so the
 * file must be there before LMDB writes a page (LMDB would make it as large as the whole map:
 * kv_env_open() cuts it back). A write past the file's end faults with SIGBUS; the handler allocates
 * the file up to past that page (fallocate: on a full disk that fails, not a later write) and returns,
 * and the write runs again. If the disk is full the fault jumps back as above, and the call returns
 * -ENOSPC. Writes into the map happen only in a write transaction's puts, deletes and commit (LMG())
 * and map_copy(), which say so (fault_env); the handler must be SIGBUS's whenever one runs
 * (grow_handler_check()). */
static __thread sigjmp_buf *fault_jmp;
static __thread bool fault_nospace; /* the last jump was a file that could not grow */

/* The env whose write transaction this thread is in, inside LMDB or copying into the map: a fault past
 * the end of its file is a page being written, and grows the file. (A fault anywhere else, a read of a
 * damaged page say, never grows it.) */
static __thread kv_env *fault_env;

/* The size the file grows to so that offset OFF lies inside it, from its size SIZE: past OFF by an
 * eighth of the file (at least GROW_MIN), in whole GROW_MIN. */
#define GROW_MIN ((uint64_t)1 << 20)

static uint64_t grow_to(uint64_t off, uint64_t size)
{
	uint64_t step = size / 8 > GROW_MIN ? size / 8 : GROW_MIN;
	return (off + step + GROW_MIN - 1) / GROW_MIN * GROW_MIN;
}

/* The address of this thread's last fault that was inside the file when the handler looked. */
static __thread uintptr_t fault_inside;

/* In the handler: if ADDR lies in E's map past the end of its file, grow the file past it. Returns 1
 * (grown, or grown meanwhile: the access may run again), 0 (inside the file: damage, or a hole the disk
 * had no room for), -1 (the file could not grow: the disk is full). The file's size is asked again, not
 * remembered: another process's kv_env_open() may have cut it back meanwhile, or (LMDB's open, before
 * the cut) made it the map's size since the access faulted; so a fault found inside the file is let
 * run again once. Only async-signal-safe system calls. */
static int grow_on_fault(kv_env *e, uintptr_t addr)
{
	uintptr_t map = atomic_load_explicit(&e->map, memory_order_relaxed);
	uint64_t off = addr - map, size, to;
	struct stat sb;

	if (!map || addr < map || off >= e->mapsize || fstat(e->dfd, &sb))
		return 0;
	size = (uint64_t)sb.st_size;
	if (off < size) {
		if (fault_inside == addr)
			return 0; /* again: not a race */
		fault_inside = addr;
		return 1;
	}
	to = grow_to(off, size);
	if (to > e->mapsize)
		to = e->mapsize;
	int rc = fallocate(e->dfd, 0, (off_t)size, (off_t)(to - size)) ? errno : 0;
	if (rc == EOPNOTSUPP) /* (no fallocate here: a sparse file, as LMDB would make) */
		rc = ftruncate(e->dfd, (off_t)to) ? errno : 0;
	if (rc)
		return -1;
	atomic_store_explicit(&e->fsize, to, memory_order_relaxed);
	return 1;
}

/* What SIGSEGV and SIGBUS did before kv_catch_faults(): a fault that is not ours is theirs. */
static struct sigaction prev_segv, prev_bus;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int saved = errno, g = sig == SIGBUS && fault_env ? grow_on_fault(fault_env, (uintptr_t)si->si_addr) : 0;
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

int kv_catch_faults(void)
{
	int rc = catch_one(SIGSEGV, &prev_segv);
	return rc ? rc : catch_one(SIGBUS, &prev_bus);
}

/* Before a write into the map: the handler that grows the file must be SIGBUS's. Something may have
 * replaced it since the env was opened (a test framework does, for every test); it is put back, and
 * what replaced it gets the faults that are not ours. One system call. */
static void grow_handler_check(void)
{
	struct sigaction cur;
	if (!sigaction(SIGBUS, NULL, &cur) && !is_ours(&cur))
		catch_one(SIGBUS, &prev_bus);
}

/* The LMDB calls that read pages, as guarded() runs them. */
enum gop { G_COMMIT, G_GET, G_PUT, G_DEL, G_CURSOR_GET, G_COPY, G_ZERO };

static bool low_space(kv_env *env);

/* kv_errno() of one LMDB call in txn T (OP on cursor MC, key K, value V, put flags or cursor op ARG),
 * under the fault guard (see above); G_COPY copies V into the map at K (a reserved value), G_ZERO zeroes
 * K. A function of its own, never inlined, so that the jump back skips only LMDB's frames and no
 * caller's variable lives across sigsetjmp(). A write fault on a full disk is -ENOSPC: the file could not grow, or a hole in it
 * (a copied store's) could not be filled. */
static __attribute__((noinline)) int guarded(kv_txn *t, enum gop op, MDB_cursor *mc, MDB_val *k, MDB_val *v,
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
		if (!t->rdonly && t->env->wmap && (fault_nospace || (sig == SIGBUS && low_space(t->env)))) {
			t->nospace = true;
			return -ENOSPC;
		}
		return -EIO;
	}
	fault_jmp = &jb;
	fault_inside = 0;
	fault_env = t->rdonly || !t->env->wmap || op == G_GET || op == G_CURSOR_GET ? NULL : t->env;
	switch (op) {
	case G_COMMIT:
		rc = kv_errno(mdb_txn_commit(t->txn));
		break;
	case G_GET:
		rc = kv_errno(mdb_get(t->txn, t->env->dbi, k, v));
		break;
	case G_PUT:
		rc = kv_errno(mdb_put(t->txn, t->env->dbi, k, v, arg));
		break;
	case G_DEL:
		rc = kv_errno(mdb_del(t->txn, t->env->dbi, k, NULL));
		break;
	case G_CURSOR_GET:
		rc = kv_errno(mdb_cursor_get(mc, k, v, (MDB_cursor_op)arg));
		break;
	case G_COPY:
		memcpy(k->mv_data, v->mv_data, v->mv_size);
		rc = 0;
		break;
	case G_ZERO:
		memset(k->mv_data, 0, k->mv_size);
		rc = 0;
		break;
	}
	fault_jmp = NULL;
	fault_env = NULL;
	return rc;
}

/* LM() for a call that reads pages in txn T: guarded(), and counted for fault injection. */
#define LMG(t, op, mc, k, v, arg) (fault_hit(CS_FAULT_LMDB) ? -EIO : guarded(t, op, mc, k, v, arg))

/* The mappings of the file (device DEV, inode INO) at offset 0 in this process: their start addresses,
 * up to MAX; returns how many (LMDB does not say where it mapped the file: MDB_envinfo's me_mapaddr is
 * set only for MDB_FIXEDMAP). Linux's /proc/self/maps; 0 where it cannot be read. */
static size_t file_maps(dev_t dev, ino_t ino, uintptr_t *out, size_t max)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	size_t n = 0;
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long start, end, off, maj, min, i;
		if (sscanf(line, "%lx-%lx %*s %lx %lx:%lx %lu", &start, &end, &off, &maj, &min, &i) == 6 && !off &&
		    i == ino && makedev(maj, min) == dev)
			out[n++] = start;
	}
	fclose(f);
	return n;
}

/* The data file's size now (0 if unknown); remembered in ENV. */
static uint64_t file_size(kv_env *env)
{
	struct stat sb;
	int fd;
	if (mdb_env_get_fd(env->env, &fd) || fstat(fd, &sb))
		return 0;
	atomic_store_explicit(&env->fsize, (uint64_t)sb.st_size, memory_order_relaxed);
	return (uint64_t)sb.st_size;
}

/* Record where T's snapshot can point: the map, and the part of it both its pages and the file (as last
 * seen: a damaged or cut file may be shorter than its pages say) hold. */
static void txn_bounds(kv_txn *t)
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

/* Whether V may be read: inside the file's part of the map, or outside the map (a write txn's own dirty
 * pages live on the heap). Marks T faulted if not. */
static bool in_file(kv_txn *t, const MDB_val *v)
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
	fsize = file_size(t->env);
	if (fsize && fsize <= t->map_end - t->map) {
		t->file_end = t->map + (uintptr_t)fsize;
		if (p <= t->file_end && v->mv_size <= t->file_end - p)
			return true;
	}
	t->faulted = true;
	return false;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* A well-mixed 64-bit hash of a long key; collisions are handled, so it need not be cryptographic. */
static uint64_t key_hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		h ^= rotl(rd64(p + i) * 0x87C37B91114253D5ull, 31) * 0x4CF5AD432745937Full;
		h = rotl(h, 27) * 5 + 0x52DCE729;
	}
	uint64_t t = 0;
	for (size_t j = 0; i + j < n; j++)
		t |= (uint64_t)p[i + j] << (8 * j);
	h ^= rotl(t * 0x87C37B91114253D5ull, 31) * 0x4CF5AD432745937Full;
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDull;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ull;
	h ^= h >> 33;
	return h;
}

static void slot_key(uint8_t *skey, const uint8_t *key, uint64_t slot)
{
	memcpy(skey, key, P);
	for (int i = 0; i < 8; i++)
		skey[P + i] = (uint8_t)(slot >> (56 - 8 * i));
}

static uint64_t slot_of(const uint8_t *skey)
{
	uint64_t s = 0;
	for (int i = 0; i < 8; i++)
		s = (s << 8) | skey[P + i];
	return s;
}

/* A long key's stored value: varint tail length, tail, the caller's value. */
static int split_long(const MDB_val *v, const uint8_t **tail, size_t *tailn, MDB_val *user)
{
	uint64_t tn;
	int a = codec_get_varint(v->mv_data, v->mv_size, &tn);
	if (a < 0 || tn == 0 || tn > v->mv_size - (size_t)a)
		return -EIO;
	*tail = (const uint8_t *)v->mv_data + a;
	*tailn = tn;
	user->mv_data = (uint8_t *)v->mv_data + a + tn;
	user->mv_size = v->mv_size - (size_t)a - tn;
	return 0;
}

/* ---- environment and transactions ---- */

static int mkdirs(const char *dir)
{
	char *p = mem_strdup(dir);
	int rc = 0;
	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0700) && errno != EEXIST)
			rc = -errno;
		*s = '/';
		if (rc)
			break;
	}
	if (!rc && mkdir(p, 0700) && errno != EEXIST)
		rc = -errno;
	free(p);
	return rc;
}

int kv_dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "lock.mdb")) {
			rc = -ENOTEMPTY;
			break;
		}
	closedir(d);
	return rc;
}

/* DIR/data.mdb's device and inode. Returns 0 or -errno. */
static int data_id(const char *dir, dev_t *dev, ino_t *ino)
{
	struct stat sb;
	char *data;
	int rc;
	if (mem_asprintf(&data, "%s/data.mdb", dir) < 0)
		return -ENOMEM;
	rc = stat(data, &sb) ? -errno : 0;
	free(data);
	if (rc)
		return rc;
	*dev = sb.st_dev;
	*ino = sb.st_ino;
	return 0;
}

/* ---- the synced snapshot (anchor.h, store/README.md "Durability") ----
 * Invariant: the snapshot an anchor names is whole on the disk. It was synced before the anchor was
 * written, and its pages are not reused while commits follow it unsynced, because every writer holds a
 * reader on the snapshot it last anchored (no later than the newest anchor's) from its first write
 * until its next sync point. A writer without one (just opened) makes a sync point before its first
 * commit, so commits left unsynced by a process that died are synced, not built on. */

/* After a reboot: give data.mdb back the meta pages of its last synced snapshot, if it has others. Run
 * before LMDB opens DIR; the anchor's lock keeps two openers from racing. Where the store cannot be
 * written (permissions, a read-only file system) nothing is done. Returns 0 or -errno. */
static int recover(const char *dir)
{
	anchor_rec *rec = NULL;
	uint8_t *cur = NULL;
	char *data = NULL;
	int afd, dfd = -1, rc;

	afd = anchor_open(dir, 0);
	if (afd == -ENOENT || afd == -EACCES || afd == -EROFS)
		return 0;
	if (afd < 0)
		return afd;
	if ((rc = anchor_lock(afd)))
		goto out;
	rec = mem_malloc(sizeof(*rec));
	if (!rec) {
		rc = -ENOMEM;
		goto out;
	}
	rc = anchor_read(afd, rec);
	if (rc == -ENOENT || (!rc && (!*anchor_boot_id() || !strcmp(rec->boot, anchor_boot_id())))) {
		rc = 0; /* nothing synced yet, or this boot's: the page cache holds every commit */
		goto out;
	}
	if (rc)
		goto out;
	cur = mem_malloc(rec->nmeta);
	if (!cur || mem_asprintf(&data, "%s/data.mdb", dir) < 0) {
		rc = -ENOMEM;
		goto out;
	}
	if ((dfd = open(data, O_RDWR | O_CLOEXEC)) < 0) {
		rc = errno == ENOENT ? 0 : -errno;
		goto out;
	}
	ssize_t n = pread(dfd, cur, rec->nmeta, 0);
	if (n < 0) {
		rc = -EIO;
		goto out;
	}
	if ((size_t)n != rec->nmeta || memcmp(cur, rec->meta, rec->nmeta)) {
		/* commits after the anchored snapshot were never synced: they may be torn, so drop them */
		n = pwrite(dfd, rec->meta, rec->nmeta, 0);
		if (n < 0 || (size_t)n != rec->nmeta || fdatasync(dfd)) {
			rc = -EIO;
			goto out;
		}
	}
	snprintf(rec->boot, sizeof(rec->boot), "%s", anchor_boot_id());
	rc = anchor_write(afd, rec);
out:
	if (dfd >= 0)
		close(dfd);
	anchor_unlock(afd);
	close(afd);
	free(data);
	free(cur);
	free(rec);
	return rc == -EACCES || rc == -EROFS ? 0 : rc;
}

/* Below this much free space a writer syncs before every commit, so that the pages its pinned snapshot
 * holds are free for reuse: a full disk must not refuse a delete that LMDB could fit in freed pages. */
#define LOW_SPACE (16u << 20)

static bool low_space(kv_env *env)
{
	struct statvfs sv;
	int fd;
	return !mdb_env_get_fd(env->env, &fd) && !fstatvfs(fd, &sv) && (uint64_t)sv.f_bavail * sv.f_frsize < LOW_SPACE;
}

static int txn_begin_raw(kv_env *env, bool rdonly, kv_txn **out);

/* The sync point, in two steps so that commits go on during the fdatasync: holding the writer lock only
 * to capture the newest snapshot (its id, its meta pages as written, a reader on it), then syncing
 * data.mdb, anchoring the snapshot and moving the pin to it. Called with sync_lock held. */
static int sync_locked(kv_env *e)
{
	int64_t t0 = 0, t1 = 0;
	anchor_rec *rec;
	MDB_txn *pin = NULL;
	uint64_t synced;
	const char *dir;
	kv_txn *w;
	int rc, dfd;
	ssize_t n;

	if (e->afd < 0) {
		if ((rc = LM(mdb_env_get_path(e->env, &dir))))
			return rc;
		if ((rc = anchor_open(dir, 1)) < 0)
			return rc == -EDQUOT ? -ENOSPC : rc;
		e->afd = rc;
	}
	if ((rc = LM(mdb_env_get_fd(e->env, &dfd))))
		return rc;
	if (!(rec = mem_malloc(sizeof(*rec))))
		return -ENOMEM;
	if ((rc = txn_begin_raw(e, false, &w)))
		goto out;
	synced = mdb_txn_id(w->txn) - 1; /* the newest commit: none can come while W is open */
	if (atomic_load(&e->pinned) == synced + 1) {
		kv_txn_abort(w); /* nothing committed since this process's last sync point */
		atomic_store(&e->since, 0);
		atomic_store(&e->due_told, false);
		goto out;
	}
	rec->nmeta = 2 * e->psize;
	n = pread(dfd, rec->meta, rec->nmeta, 0);
	if (n < 0 || (size_t)n != rec->nmeta)
		rc = -EIO;
	else if (!(rc = LM(mdb_txn_begin(e->env, NULL, MDB_RDONLY, &pin))) && mdb_txn_id(pin) != synced) {
		mdb_txn_abort(pin); /* cannot be: no commit while W is open */
		rc = -EIO;
	}
	kv_txn_abort(w);
	if (rc)
		goto out;
	atomic_store(&e->since, 0);
	atomic_store(&e->due_told, false);

	rec->txnid = synced;
	snprintf(rec->boot, sizeof(rec->boot), "%s", anchor_boot_id());
	anchor_rec *cur = mem_malloc(sizeof(*cur));
	if (!cur)
		rc = -ENOMEM;
	else if (!(rc = anchor_lock(e->afd))) {
		rc = anchor_read(e->afd, cur);
		if (rc == -ENOENT || (!rc && (cur->txnid < synced || strcmp(cur->boot, rec->boot)))) {
			/* the data first: the anchor never names a snapshot not wholly on the disk */
			t0 = mono_ns(); /* (what the disk takes; waiting for the lock is not the sync's cost) */
			if (!(rc = e->wmap ? (fault_hit(CS_FAULT_LMDB) ? -EIO : fdatasync(e->dfd) ? -errno : 0)
					   : LM(mdb_env_sync(e->env, 1))))
				rc = fault_hit(CS_FAULT_LMDB) ? -EIO : anchor_write(e->afd, rec);
			t1 = mono_ns();
		} /* (else another process has anchored this snapshot, or a later one) */
		anchor_unlock(e->afd);
	}
	free(cur);
	if (rc) {
		mdb_txn_abort(pin);
		goto out;
	}
	if (e->pin)
		mdb_txn_abort(e->pin);
	e->pin = pin;
	atomic_store(&e->pinned, synced + 1);
	atomic_store(&e->tight, low_space(e));
	atomic_store(&e->took_ns, t1 - t0);
	atomic_store(&e->synced_ns, mono_ns());
out:
	if (rc) { /* not again at once: the next due after FAIL_BACKOFF_NS (SYNC_MAX aside) */
		atomic_store(&e->retry_ns, mono_ns() + FAIL_BACKOFF_NS);
		atomic_store(&e->due_told, false);
	}
	free(rec);
	return rc;
}

#define MAX_MAPS 64

/* Whether DIR is on a file system kept in memory (tmpfs, ramfs). Only there does a written map pay:
 * on a disk, every sync point cleans the pages written, which write-protects them in the map, and
 * copy-on-write moves each commit to other pages, so nearly every page a commit writes faults first
 * (ext4, through the mount: 13 faults an overwrite, the daemon's time up a third), where pwrite() copies
 * it. In memory nothing cleans the pages: 0.02 faults an overwrite, and the time down a fifth. */
static bool mem_fs(const char *dir)
{
	struct statfs sf;
	return !statfs(dir, &sf) && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC);
}

/* Open LMDB's environment of DIR into E with FLAGS, in the largest map the address space allows, and find
 * where LMDB mapped the file (E->map; 0 if that cannot be told). */
/* The map sizes env_map() tries, largest first. */
static const size_t map_sizes[] = { (size_t)1 << 40, (size_t)1 << 36, (size_t)1 << 32, (size_t)1 << 30 };

/* Whether SIZE is a map's size: what LMDB makes a written map's file at its open, which cut_back()
 * undoes; a file found at that size was left so by a crash in between. */
static bool is_map_size(uint64_t size)
{
	for (size_t i = 0; i < sizeof(map_sizes) / sizeof(map_sizes[0]); i++)
		if (size == map_sizes[i])
			return true;
	return false;
}

static int env_map(kv_env *e, const char *dir, unsigned flags)
{
	const size_t *sizes = map_sizes;
	uintptr_t before[MAX_MAPS];
	size_t nbefore = 0;
	dev_t dev = 0;
	ino_t ino = 0;
	int rc = -ENOMEM;

	/* A large map costs only address space; fall back where that is limited (valgrind, 32-bit) or where
	 * the file system cannot hold a file that large (MDB_WRITEMAP makes the file the map's size). */
	for (size_t i = 0; i < sizeof(map_sizes) / sizeof(map_sizes[0]); i++) {
		if ((rc = LM(mdb_env_create(&e->env))))
			return rc;
		mdb_env_set_maxreaders(e->env, 1022);
		mdb_env_set_mapsize(e->env, sizes[i]);
		nbefore = data_id(dir, &dev, &ino) ? 0 : file_maps(dev, ino, before, MAX_MAPS);
		rc = LM(mdb_env_open(e->env, dir, flags, 0600));
		if (!rc)
			break;
		mdb_env_close(e->env);
		e->env = NULL;
		if (rc != -ENOMEM && rc != -EINVAL && rc != -EFBIG)
			return rc;
	}
	if (rc)
		return rc;
	/* the new mapping of data.mdb is LMDB's (other envs of this process may map it too) */
	if (!data_id(dir, &dev, &ino)) {
		uintptr_t after[MAX_MAPS];
		size_t nafter = file_maps(dev, ino, after, MAX_MAPS), nnew = 0;
		uintptr_t found = 0;
		for (size_t i = 0; i < nafter; i++) {
			size_t j = 0;
			while (j < nbefore && before[j] != after[i])
				j++;
			if (j == nbefore) {
				found = after[i];
				nnew++;
			}
		}
		if (nnew == 1)
			atomic_store_explicit(&e->map, found, memory_order_relaxed);
	}
	return 0;
}

/* LMDB makes a written map's file as large as the map: cut it back to the pages in use, in whole
 * GROW_MIN, or to PRE, its size before LMDB's open, if that was larger (but not the map's size). With
 * the writer lock held: no commit of another process is writing past the end meanwhile (one that
 * starts later grows the file on its first fault). An env that is not a written map (a file left at
 * the map's size, opened on a disk) cuts to the pages in use: LMDB's writes extend it as they need.
 * Returns 0 or -errno. */
static int cut_back(kv_env *e, uint64_t pre)
{
	MDB_envinfo info;
	struct stat sb;
	MDB_txn *w;
	int rc;

	if ((rc = LM(mdb_txn_begin(e->env, NULL, 0, &w))))
		return rc == -EACCES ? -EROFS : rc;
	if (!(rc = LM(mdb_env_info(e->env, &info)))) {
		uint64_t used = (uint64_t)(info.me_last_pgno + 1) * e->psize;
		uint64_t to = e->wmap ? (used + GROW_MIN - 1) / GROW_MIN * GROW_MIN : used;
		if (pre > to && pre < e->mapsize)
			to = pre;
		if (fstat(e->dfd, &sb) || ((uint64_t)sb.st_size > to && ftruncate(e->dfd, (off_t)to)))
			rc = -errno;
	}
	mdb_txn_abort(w);
	return rc;
}

int kv_env_open(const char *dir, bool rdonly, bool create, kv_env **out)
{
	struct stat sb;
	uint64_t pre = 0;
	kv_env *e;
	MDB_txn *txn;
	char *data;
	int rc;

	if (create && !rdonly && (rc = mkdirs(dir)))
		return rc;
	if (stat(dir, &sb))
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return -ENOTDIR;
	if (mem_asprintf(&data, "%s/data.mdb", dir) < 0)
		return -ENOMEM;
	rc = stat(data, &sb) ? -errno : 0;
	/* A file left at the map's size (a crash between LMDB's open and cut_back()) is cut back by the
	 * next open that may write it. A read-only one does it with a writable open of its own (which
	 * takes the writer lock and changes nothing but the file's length past the pages in use), before
	 * its env: closing a second env of the store would drop this one's file locks. Where the process
	 * may not write the file, it stays as it is: it reads as well (a sparse file, no space on the disk),
	 * and the next writer cuts it. */
	bool left = !rc && is_map_size((uint64_t)sb.st_size);
	if (left && rdonly && !access(data, W_OK)) {
		kv_env *w;
		if (!kv_env_open(dir, false, false, &w)) /* (it cuts, or could not: read on regardless) */
			kv_env_close(w);
	}
	free(data);
	if (rc && (!create || rdonly))
		return rc;
	if (rc == -ENOENT && (rc = kv_dir_is_empty(dir)))
		return rc; /* never scatter a store into a directory that holds something else */
	if (!rc)
		pre = (uint64_t)sb.st_size;

	if (!rc && (rc = recover(dir)))
		return rc;
	e = mem_calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->rdonly = rdonly;
	e->afd = -1;
	e->dfd = -1;
	pthread_mutex_init(&e->sync_lock, NULL);
	pthread_mutex_init(&e->due_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->due_cond, &ca);
	pthread_condattr_destroy(&ca);

	/* A writable env in memory writes its commits into the map (MDB_WRITEMAP: no copy of each dirty
	 * page, no pwrite()), which needs the fault handler and where LMDB mapped the file, for growing the
	 * file. (See mem_fs() for why not on a disk.) */
	bool sized = e->wmap = !rdonly && mem_fs(dir) && !kv_catch_faults(); /* (LMDB sizes its file) */
	rc = env_map(e, dir, MDB_NOTLS | MDB_NOSYNC | (rdonly ? MDB_RDONLY : e->wmap ? MDB_WRITEMAP : 0));
	if (!rc && e->wmap && !e->map) { /* (not known where: as without it) */
		mdb_env_close(e->env);
		e->env = NULL;
		e->wmap = false;
		rc = env_map(e, dir, MDB_NOTLS | MDB_NOSYNC);
	}
	if (rc)
		goto free_env;
	MDB_stat ms;
	MDB_envinfo info;
	if ((rc = LM(mdb_env_stat(e->env, &ms))) || (rc = LM(mdb_env_info(e->env, &info))) ||
	    (rc = LM(mdb_env_get_fd(e->env, &e->dfd))))
		goto close_env;
	e->psize = ms.ms_psize;
	e->mapsize = info.me_mapsize;
	if (!rdonly) { /* readers left by killed processes would pin their snapshots for ever */
		int dead;
		mdb_reader_check(e->env, &dead);
	}
	if ((sized || (left && !rdonly)) && (rc = cut_back(e, pre)))
		goto close_env;
	file_size(e);
	if ((rc = LM(mdb_txn_begin(e->env, NULL, rdonly ? MDB_RDONLY : 0, &txn))))
		goto close_env;
	if ((rc = LM(mdb_dbi_open(txn, NULL, 0, &e->dbi)))) {
		mdb_txn_abort(txn);
		goto close_env;
	}
	if ((rc = LM(mdb_txn_commit(txn))))
		goto close_env;
	*out = e;
	return 0;

close_env:
	mdb_env_close(e->env);
free_env:
	pthread_mutex_destroy(&e->sync_lock);
	pthread_mutex_destroy(&e->due_lock);
	pthread_cond_destroy(&e->due_cond);
	free(e);
	return rc == -EIO ? -EIO : rc;
}

void kv_env_close(kv_env *env)
{
	if (!env)
		return;
	if (env->pin)
		mdb_txn_abort(env->pin);
	if (env->afd >= 0)
		close(env->afd);
	mdb_env_close(env->env);
	pthread_mutex_destroy(&env->sync_lock);
	pthread_mutex_destroy(&env->due_lock);
	pthread_cond_destroy(&env->due_cond);
	free(env);
}

void kv_env_set_bg_sync(kv_env *env, bool on)
{
	env->bg_sync = on;
}

int kv_env_sync(kv_env *env)
{
	int rc;
	if (env->rdonly)
		return LM(mdb_env_sync(env->env, 1));
	uint64_t v = kv_env_version(env);
	if (v && v + 1 == atomic_load(&env->pinned))
		return 0; /* nothing committed since this process's last sync point */
	pthread_mutex_lock(&env->sync_lock);
	rc = sync_locked(env);
	pthread_mutex_unlock(&env->sync_lock);
	return rc;
}

bool kv_env_unpin(kv_env *env)
{
	kv_txn *w;
	if (env->rdonly || atomic_load(&env->since))
		return env->rdonly;
	if (!atomic_load(&env->pinned))
		return true;
	pthread_mutex_lock(&env->sync_lock);
	/* Under the writer lock: no commit of this process is under way, and none begins until the pin is
	 * gone (kv_txn_begin() looks at it again once it holds the lock). */
	if (!txn_begin_raw(env, false, &w)) {
		if (!atomic_load(&env->since) && env->pin) {
			mdb_txn_abort(env->pin);
			env->pin = NULL;
			atomic_store(&env->pinned, 0);
		}
		kv_txn_abort(w);
	}
	pthread_mutex_unlock(&env->sync_lock);
	return !atomic_load(&env->since);
}

bool kv_env_sync_due(kv_env *env)
{
	return !env->rdonly && sync_due(env);
}

bool kv_env_sync_wait(kv_env *env, unsigned ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&env->due_lock);
	while (!atomic_load(&env->due_told) && pthread_cond_timedwait(&env->due_cond, &env->due_lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&env->due_lock);
	bool due = kv_env_sync_due(env);
	if (!due) /* (told, but another thread has made the sync point since) */
		atomic_store(&env->due_told, false);
	return due;
}

int kv_env_copy_compact(kv_env *env, const char *dir)
{
	return LM(mdb_env_copy2(env->env, dir, MDB_CP_COMPACT));
}

int kv_env_size(kv_env *env, uint64_t *size)
{
	const char *path;
	struct stat sb;
	char *data;
	int rc;

	if ((rc = LM(mdb_env_get_path(env->env, &path))))
		return rc;
	if (mem_asprintf(&data, "%s/data.mdb", path) < 0)
		return -ENOMEM;
	rc = stat(data, &sb) ? -errno : 0;
	free(data);
	if (!rc)
		*size = (uint64_t)sb.st_size;
	return rc;
}

static int txn_begin_raw(kv_env *env, bool rdonly, kv_txn **out)
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
			 * anew: where is not known, so in_file() stops checking; the fault guard stays.) */
			atomic_store_explicit(&env->map, 0, memory_order_relaxed);
			mdb_env_set_mapsize(env->env, 0);
			continue;
		}
		rc = raw == EACCES ? -EROFS : kv_errno(raw);
		break;
	}
	if (rc) {
		free(t);
		return rc;
	}
	txn_bounds(t);
	*out = t;
	return 0;
}

int kv_txn_begin(kv_env *env, bool rdonly, kv_txn **out)
{
	int rc;
	if (!rdonly && env->wmap)
		grow_handler_check();
	for (;;) {
		if (!rdonly && !env->rdonly && !atomic_load(&env->pinned) && (rc = kv_env_sync(env)))
			return rc; /* this process's first write (or first since kv_env_unpin()): anchor what it builds on */
		if (!rdonly && atomic_load(&env->tight) && atomic_load(&env->since))
			kv_env_sync(env); /* frees the pinned pages for reuse (a failure leaves them pinned) */
		if ((rc = txn_begin_raw(env, rdonly, out)) || rdonly || env->rdonly || atomic_load(&env->pinned))
			return rc;
		kv_txn_abort(*out); /* kv_env_unpin() let go of the pin while this waited for the writer lock */
	}
}

/* LMDB reports a write that the file system cut short as EIO ("short write, filesystem full?"), where
 * the contract wants ENOSPC. A failed commit is the file system's being full if it has less than this
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

/* After a write refused for want of space (the disk filled faster than the sync points noticed): free
 * the pinned pages now, so that the caller's next try (a delete, say) may fit where LMDB can reuse them,
 * and sync before every write while space stays low. */
static void free_pinned(kv_env *e)
{
	atomic_store(&e->tight, true);
	kv_env_sync(e);
}

/* Wake the caller's thread waiting in kv_env_sync_wait(): a sync point is due. */
static void due_tell(kv_env *e)
{
	pthread_mutex_lock(&e->due_lock);
	pthread_cond_signal(&e->due_cond);
	pthread_mutex_unlock(&e->due_lock);
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
		rc = commit_errno(t, guarded(t, G_COMMIT, NULL, NULL, NULL, 0));
		if (t->faulted)
			mdb_txn_abort(t->txn); /* the commit faulted half-way: LMDB did not end the txn */
		if (!rc && w && sync_due(t->env)) {
			if (!t->env->bg_sync || atomic_load(&t->env->since) >= SYNC_BG_MAX)
				kv_env_sync(t->env); /* committed either way; a failure here leaves the old pin */
			else if (!atomic_exchange(&t->env->due_told, true))
				due_tell(t->env);
		}
	}
	if (rc == -ENOSPC && !t->rdonly)
		free_pinned(t->env);
	free(t);
	return rc;
}

void kv_txn_abort(kv_txn *t)
{
	if (!t)
		return;
	mdb_txn_abort(t->txn);
	if (t->nospace)
		free_pinned(t->env);
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
		txn_bounds(t);
	return rc;
}

void kv_txn_reset(kv_txn *t)
{
	if (!t || !t->rdonly || t->reset)
		return;
	mdb_txn_reset(t->txn);
	t->reset = true;
}

uint64_t kv_env_version(kv_env *env)
{
	MDB_envinfo info;
	if (mdb_env_info(env->env, &info))
		return 0;
	return info.me_last_txnid;
}

uint64_t kv_txn_id(const kv_txn *t)
{
	return mdb_txn_id(t->txn);
}

uint64_t kv_txn_writes(const kv_txn *t)
{
	return t->writes;
}

/* ---- point operations ---- */

/* Find the slot of long key KEY. Returns 0 with SKEY/VAL set (found), -ENOENT with SKEY set to the first
 * free slot of its probe sequence, or an error. */
static int long_find(kv_txn *t, const uint8_t *key, size_t klen, uint8_t *skey, MDB_val *val)
{
	uint64_t slot = key_hash(key, klen);
	for (;;) {
		MDB_val k = { SKEY_LEN, skey }, v;
		const uint8_t *tail;
		size_t tailn;
		int rc;

		slot_key(skey, key, slot);
		rc = LMG(t, G_GET, NULL, &k, &v, 0);
		if (!rc && !in_file(t, &v))
			rc = -EIO;
		if (rc)
			return rc;
		if ((rc = split_long(&v, &tail, &tailn, val)))
			return rc;
		if (tailn == klen - P && !memcmp(tail, key + P, tailn))
			return 0;
		slot++;
	}
}

int kv_get(kv_txn *t, const void *key, size_t klen, const void **val, size_t *vlen)
{
	MDB_val v;
	int rc;

	if (klen <= P) {
		MDB_val k = { klen, (void *)key };
		rc = LMG(t, G_GET, NULL, &k, &v, 0);
		if (!rc && !in_file(t, &v))
			rc = -EIO;
	} else {
		uint8_t skey[SKEY_LEN];
		rc = long_find(t, key, klen, skey, &v);
	}
	if (rc)
		return rc;
	*val = v.mv_data;
	*vlen = v.mv_size;
	return 0;
}

/* Copy N bytes from SRC to DST, space LMDB reserved in T: in the map when it is written (MDB_WRITEMAP),
 * so under the fault guard (the file grows, or the disk is full: -ENOSPC). */
static int map_copy(kv_txn *t, void *dst, const void *src, size_t n)
{
	MDB_val d = { n, dst }, s = { n, (void *)src };
	if (!t->env->wmap)
		return (memcpy(dst, src, n), 0);
	return guarded(t, G_COPY, NULL, &d, &s, 0);
}

/* kv_reserve() without making *DST safe to fill outside the fault guard: kv_put() copies under it. */
static int reserve(kv_txn *t, const void *key, size_t klen, size_t vlen, void **dst)
{
	uint8_t skey[SKEY_LEN], hdr[10];
	MDB_val k, v;
	size_t hl = 0;
	int rc;

	if (t->rdonly)
		return -EROFS;
	if (klen == 0)
		return -EINVAL;
	t->writes++;
	if (klen <= P) {
		k.mv_size = klen;
		k.mv_data = (void *)key;
	} else {
		MDB_val old;
		rc = long_find(t, key, klen, skey, &old);
		if (rc && rc != -ENOENT)
			return rc;
		k.mv_size = SKEY_LEN;
		k.mv_data = skey;
		hl = codec_put_varint(hdr, klen - P);
	}
	v.mv_size = hl + (klen > P ? klen - P : 0) + vlen;
	v.mv_data = NULL;
	if ((rc = LMG(t, G_PUT, NULL, &k, &v, MDB_RESERVE)))
		return rc;
	if (klen > P && ((rc = map_copy(t, v.mv_data, hdr, hl)) ||
			 (rc = map_copy(t, (uint8_t *)v.mv_data + hl, (const uint8_t *)key + P, klen - P))))
		return rc;
	*dst = (uint8_t *)v.mv_data + (v.mv_size - vlen);
	return 0;
}

int kv_put(kv_txn *t, const void *key, size_t klen, const void *val, size_t vlen)
{
	void *dst;
	int rc = reserve(t, key, klen, vlen, &dst);
	if (!rc && vlen)
		rc = map_copy(t, dst, val, vlen);
	return rc;
}

int kv_reserve(kv_txn *t, const void *key, size_t klen, size_t vlen, void **dst)
{
	int rc = reserve(t, key, klen, vlen, dst);
	if (!rc && vlen && t->env->wmap) { /* the file grows under the guard, not in the caller's fill */
		MDB_val d = { vlen, *dst }, z = { vlen, NULL };
		rc = guarded(t, G_ZERO, NULL, &d, &z, 0);
	}
	return rc;
}

int kv_append(kv_txn *t, const void *key, size_t klen, const void *val, size_t vlen)
{
	MDB_val k = { klen, (void *)key }, v = { vlen, NULL };
	int rc;

	if (t->rdonly)
		return -EROFS;
	if (klen == 0 || klen > P)
		return -EINVAL;
	/* LMDB checks the order itself and refuses with MDB_KEYEXIST before changing anything. */
	if ((rc = LMG(t, G_PUT, NULL, &k, &v, MDB_APPEND | MDB_RESERVE)))
		return rc;
	t->writes++;
	return vlen ? map_copy(t, v.mv_data, val, vlen) : 0;
}

/* After emptying slot HOLE of a long-key probe run, pull later entries back so lookups (which stop at
 * the first empty slot) still find them: linear probing's backward-shift deletion. */
static int long_backshift(kv_txn *t, uint8_t *hole)
{
	uint8_t skey[SKEY_LEN];
	uint64_t s = slot_of(hole);
	memcpy(skey, hole, SKEY_LEN);
	for (uint64_t j = s + 1;; j++) {
		MDB_val k = { SKEY_LEN, skey }, v, user;
		const uint8_t *tail;
		size_t tailn;
		uint8_t *full, *copy;
		uint64_t home;
		int rc;

		slot_key(skey, hole, j);
		rc = LMG(t, G_GET, NULL, &k, &v, 0);
		if (!rc && !in_file(t, &v))
			rc = -EIO;
		if (rc == -ENOENT)
			return 0;
		if (rc || (rc = split_long(&v, &tail, &tailn, &user)))
			return rc;
		full = mem_malloc(P + tailn);
		if (!full)
			return -ENOMEM;
		memcpy(full, hole, P);
		memcpy(full + P, tail, tailn);
		home = key_hash(full, P + tailn);
		free(full);
		if (j - home < j - s)
			continue; /* its probe run does not pass the hole */
		copy = mem_malloc(v.mv_size);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, v.mv_data, v.mv_size);
		MDB_val dk = { SKEY_LEN, hole }, dv = { v.mv_size, copy };
		slot_key(hole, hole, s);
		rc = LMG(t, G_PUT, NULL, &dk, &dv, 0);
		free(copy);
		if (!rc)
			rc = LMG(t, G_DEL, NULL, &k, NULL, 0);
		if (rc)
			return rc;
		s = j;
	}
}

int kv_del(kv_txn *t, const void *key, size_t klen)
{
	uint8_t skey[SKEY_LEN];
	MDB_val k, v;
	int rc;

	if (t->rdonly)
		return -EROFS;
	t->writes++;
	if (klen <= P) {
		k.mv_size = klen;
		k.mv_data = (void *)key;
		return LMG(t, G_DEL, NULL, &k, NULL, 0);
	}
	if ((rc = long_find(t, key, klen, skey, &v)))
		return rc;
	k.mv_size = SKEY_LEN;
	k.mv_data = skey;
	if ((rc = LMG(t, G_DEL, NULL, &k, NULL, 0)))
		return rc;
	return long_backshift(t, skey);
}

/* ---- cursors ---- */

int kv_cursor_open(kv_txn *t, kv_cursor **out)
{
	kv_cursor *c = mem_malloc(sizeof(*c)); /* not calloc: gmin and gmax are 1 KiB, written before read */
	int rc;
	if (!c)
		return -ENOMEM;
	c->t = t;
	c->state = C_NONE;
	c->k = c->v = (MDB_val){ 0 };
	c->g = NULL;
	c->gn = c->gcap = c->gi = 0;
	c->gwrites = 0;
	if ((rc = LM(mdb_cursor_open(t->txn, t->env->dbi, &c->mc)))) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

static void group_clear(kv_cursor *c)
{
	for (size_t i = 0; i < c->gn; i++)
		free(c->g[i].full);
	c->gn = 0;
}

void kv_cursor_close(kv_cursor *c)
{
	if (!c)
		return;
	group_clear(c);
	free(c->g);
	mdb_cursor_close(c->mc);
	free(c);
}

static int cget(kv_cursor *c, MDB_val *k, MDB_val *v, MDB_cursor_op op)
{
	int rc = LMG(c->t, G_CURSOR_GET, c->mc, k, v, (unsigned)op);
	if (!rc && (!in_file(c->t, k) || !in_file(c->t, v)))
		rc = -EIO;
	return rc;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct group_ent *x = a, *y = b;
	size_t n = x->fulln < y->fulln ? x->fulln : y->fulln;
	int r = memcmp(x->full, y->full, n);
	if (r)
		return r;
	return (x->fulln > y->fulln) - (x->fulln < y->fulln);
}

/* The cursor is on stored key K (a long key's slot): read its whole group, walking FORWARD or back. */
static int group_load(kv_cursor *c, MDB_val k, MDB_val v, bool forward)
{
	uint8_t prefix[P];
	int rc = 0;

	if (c->gn && c->gwrites == c->t->writes && !memcmp(c->gmin, k.mv_data, P)) {
		c->gi = forward ? 0 : c->gn - 1; /* the same group, unchanged since it was read */
		c->state = C_GROUP;
		return 0;
	}
	group_clear(c);
	memcpy(prefix, k.mv_data, P);
	while (!rc && k.mv_size == SKEY_LEN && !memcmp(k.mv_data, prefix, P)) {
		struct group_ent *e;
		const uint8_t *tail;
		size_t tailn;

		if (c->gn == c->gcap) {
			size_t ncap = c->gcap ? 2 * c->gcap : 8;
			void *ng = mem_realloc(c->g, ncap * sizeof(*c->g));
			if (!ng)
				return -ENOMEM;
			c->g = ng;
			c->gcap = ncap;
		}
		e = &c->g[c->gn];
		if ((rc = split_long(&v, &tail, &tailn, &e->val)))
			return rc;
		if (!(e->full = mem_malloc(P + tailn)))
			return -ENOMEM;
		memcpy(e->skey, k.mv_data, SKEY_LEN);
		memcpy(e->full, prefix, P);
		memcpy(e->full + P, tail, tailn);
		e->fulln = P + tailn;
		c->gn++;
		rc = cget(c, &k, &v, forward ? MDB_NEXT : MDB_PREV);
	}
	if (rc && rc != -ENOENT)
		return rc;
	memcpy(forward ? c->gmin : c->gmax, c->g[0].skey, SKEY_LEN);
	memcpy(forward ? c->gmax : c->gmin, c->g[c->gn - 1].skey, SKEY_LEN);
	qsort(c->g, c->gn, sizeof(*c->g), ent_cmp);
	c->gwrites = c->t->writes;
	c->gi = forward ? 0 : c->gn - 1;
	c->state = C_GROUP;
	return 0;
}

/* Settle the cursor after an LMDB positioning call that returned RC with K/V. */
static int land(kv_cursor *c, int rc, MDB_val k, MDB_val v, bool forward)
{
	if (rc) {
		c->state = C_NONE;
		return rc;
	}
	if (k.mv_size <= P) {
		c->state = C_SIMPLE;
		c->k = k;
		c->v = v;
		return 0;
	}
	if (k.mv_size != SKEY_LEN) {
		c->state = C_NONE;
		return -EIO;
	}
	rc = group_load(c, k, v, forward);
	if (rc)
		c->state = C_NONE;
	return rc;
}

/* Move the LMDB cursor off the current group, past its last (FORWARD) or before its first stored key. */
static int leave_group(kv_cursor *c, bool forward)
{
	MDB_val k = { SKEY_LEN, forward ? c->gmax : c->gmin }, v;
	int rc = cget(c, &k, &v, MDB_SET);
	if (!rc)
		rc = cget(c, &k, &v, forward ? MDB_NEXT : MDB_PREV);
	return land(c, rc, k, v, forward);
}

/* The first key >= KEY as LMDB's search finds it: by the keys in the branch pages. */
static int search_ge(kv_cursor *c, const void *key, size_t klen)
{
	MDB_val k, v;
	int rc;

	if (klen <= P) {
		k.mv_size = klen ? klen : 1;
		k.mv_data = klen ? (void *)key : (void *)"";
		rc = klen ? cget(c, &k, &v, MDB_SET_RANGE) : cget(c, &k, &v, MDB_FIRST);
		return land(c, rc, k, v, true);
	}
	k.mv_size = P;
	k.mv_data = (void *)key;
	rc = cget(c, &k, &v, MDB_SET_RANGE);
	if (!rc && k.mv_size == P && !memcmp(k.mv_data, key, P))
		rc = cget(c, &k, &v, MDB_NEXT); /* KEY[:P] itself is a proper prefix of KEY: smaller */
	if (rc || k.mv_size != SKEY_LEN || memcmp(k.mv_data, key, P))
		return land(c, rc, k, v, true);
	if ((rc = group_load(c, k, v, true))) {
		c->state = C_NONE;
		return rc;
	}
	for (size_t i = 0; i < c->gn; i++) {
		struct group_ent probe = { .full = (uint8_t *)key, .fulln = klen };
		if (ent_cmp(&c->g[i], &probe) >= 0) {
			c->gi = i;
			return 0;
		}
	}
	return leave_group(c, true);
}

/* The first key >= KEY as a walk finds it. LMDB's search goes by the keys in branch pages, which a walk
 * never reads: one damaged sends it to a leaf before or after the place, and a scan that believed it
 * would read rows another scan does not, or go back over rows it had passed (a listing that seeks past
 * rows went round forever). So step from where the search landed: forward past keys below KEY, back
 * over keys at or above it. In an intact store that is one step back and one forward. */
int kv_seek(kv_cursor *c, const void *key, size_t klen)
{
	const void *k;
	size_t kn;
	int rc = search_ge(c, key, klen);

	if (!klen)
		return rc; /* the first key: the search compares no keys */
	if (rc == -ENOENT) {
		if ((rc = kv_last(c)))
			return rc;
		kv_key(c, &k, &kn);
		if (kv_key_cmp(k, kn, key, klen) < 0) {
			c->state = C_NONE; /* (as the search leaves it) */
			return -ENOENT;
		}
	} else if (rc) {
		return rc;
	} else {
		kv_key(c, &k, &kn);
		while (kv_key_cmp(k, kn, key, klen) < 0) {
			if ((rc = kv_next(c)))
				return rc;
			kv_key(c, &k, &kn);
		}
	}
	for (;;) { /* on a key >= KEY: the place, if the key before it is below KEY */
		if ((rc = kv_prev(c)) == -ENOENT)
			return search_ge(c, "", 0);
		if (rc)
			return rc;
		kv_key(c, &k, &kn);
		if (kv_key_cmp(k, kn, key, klen) < 0)
			return kv_next(c);
	}
}

int kv_last(kv_cursor *c)
{
	MDB_val k, v;
	int rc = cget(c, &k, &v, MDB_LAST);
	return land(c, rc, k, v, false);
}

int kv_next(kv_cursor *c)
{
	MDB_val k, v;
	switch (c->state) {
	case C_SIMPLE:
		return land(c, cget(c, &k, &v, MDB_NEXT), k, v, true);
	case C_GROUP:
		if (c->gi + 1 < c->gn) {
			c->gi++;
			return 0;
		}
		return leave_group(c, true);
	default:
		return -ENOENT;
	}
}

int kv_prev(kv_cursor *c)
{
	MDB_val k, v;
	switch (c->state) {
	case C_SIMPLE:
		return land(c, cget(c, &k, &v, MDB_PREV), k, v, false);
	case C_GROUP:
		if (c->gi > 0) {
			c->gi--;
			return 0;
		}
		return leave_group(c, false);
	default:
		return -ENOENT;
	}
}

void kv_key(const kv_cursor *c, const void **key, size_t *klen)
{
	if (c->state == C_GROUP) {
		*key = c->g[c->gi].full;
		*klen = c->g[c->gi].fulln;
	} else {
		*key = c->k.mv_data;
		*klen = c->k.mv_size;
	}
}

int kv_value(kv_cursor *c, const void **val, size_t *vlen)
{
	if (c->state == C_NONE)
		return -ENOENT;
	if (c->state == C_GROUP) {
		*val = c->g[c->gi].val.mv_data;
		*vlen = c->g[c->gi].val.mv_size;
	} else {
		*val = c->v.mv_data;
		*vlen = c->v.mv_size;
	}
	return 0;
}

int kv_pair(kv_cursor *c, const void **key, size_t *klen, const void **val, size_t *vlen)
{
	kv_key(c, key, klen);
	return kv_value(c, val, vlen);
}

int kv_seek_le(kv_cursor *c, const void *key, size_t klen)
{
	const void *k;
	size_t kn, n;
	int rc = kv_seek(c, key, klen);

	if (rc == -ENOENT)
		return kv_last(c);
	if (rc)
		return rc;
	kv_key(c, &k, &kn);
	n = kn < klen ? kn : klen;
	if (kn == klen && !memcmp(k, key, n))
		return 0;
	return kv_prev(c);
}
