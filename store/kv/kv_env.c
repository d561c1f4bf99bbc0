/* kv_env.c — the LMDB environment: opening it (after the anchor's recovery) in the largest map the
 * address space allows, closing it, and the durability of its commits: sync points and the pin
 * (anchor.h, store/README.md "Durability"). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "anchor.h"
#include "kv_internal.h"
#include "mem.h"

/* While a snapshot is pinned, every page freed after it waits for the next sync point before LMDB may
 * reuse it: the file grows, and LMDB's free-page bookkeeping gets slower with every commit. So a writer
 * makes its own sync points often: after SYNC_MIN commits once the time since the last one is
 * SYNC_RATIO times what that one took (syncs then cost at most about a tenth of the time, on a slow disk
 * too), and after SYNC_MAX commits whatever the time.
 *
 * Where a thread of the caller's makes them (bg_sync, the daemon), they cost the committing threads no
 * waiting, but their time is spent all the same (fdatasync's writeback): one is due after SYNC_MIN
 * commits once the time since the last is SYNC_BG_RATIO times what that one took (in memory, where a
 * sync point takes microseconds, every 64 commits), and after SYNC_BG commits whatever the time (on a
 * disk). The ratio alone is not enough there: each window's pages are all new ones, and the file's
 * high-water mark is about two windows; a sync point's fdatasync takes longer the more its window
 * wrote, so each window would be longer than the last, up to SYNC_MAX commits. The caller's thread may
 * still fall behind (a loaded machine, a slow disk: the window grows by every commit made while it
 * waits or syncs), so past SYNC_BG_MAX commits the committing thread makes the sync point itself: no
 * window is longer, whatever the timing, and the file stays under about two such windows' pages. */
#define SYNC_MIN 64
#define SYNC_MAX 4096
#define SYNC_RATIO 10
#define SYNC_BG 256
#define SYNC_BG_RATIO 40
#define SYNC_BG_MAX 384
#define FAIL_BACKOFF_NS 100000000 /* after a failed sync point, the next is due no sooner than this */

/* Below this much free space a writer syncs before every commit, so that the pages its pinned snapshot
 * holds are free for reuse: a full disk must not refuse a delete that LMDB could fit in freed pages. */
#define LOW_SPACE (16u << 20)

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

bool kv_env_low_space(kv_env *e)
{
	struct statvfs sv;
	int fd;
	return !mdb_env_get_fd(e->env, &fd) && !fstatvfs(fd, &sv) && (uint64_t)sv.f_bavail * sv.f_frsize < LOW_SPACE;
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
	if ((rc = kv_txn_begin_raw(e, false, &w)))
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
			/* the data first: the anchor never names a snapshot not wholly on the disk. A written
			 * map is synced by fdatasync, which on Linux writes its dirty pages too (mdb_env_sync
			 * would msync the whole map). */
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
	atomic_store(&e->tight, kv_env_low_space(e));
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

/* ---- opening ---- */

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

int kv_env_dir_is_empty(const char *dir)
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

/* The map sizes env_map() tries, largest first. */
static const size_t map_sizes[] = { (size_t)1 << 40, (size_t)1 << 36, (size_t)1 << 32, (size_t)1 << 30 };

/* Whether SIZE is a map's size: what LMDB makes a written map's file at its open, which
 * kv_grow_cut_back() undoes; a file found at that size was left so by a crash in between. */
static bool is_map_size(uint64_t size)
{
	for (size_t i = 0; i < sizeof(map_sizes) / sizeof(map_sizes[0]); i++)
		if (size == map_sizes[i])
			return true;
	return false;
}

/* Open LMDB's environment of DIR into E with FLAGS, in the largest map the address space allows, and find
 * where LMDB mapped the file (E->map; 0 if that cannot be told). */
static int env_map(kv_env *e, const char *dir, unsigned flags)
{
	uintptr_t before[KV_MAPS_MAX];
	size_t nbefore = 0;
	int rc = -ENOMEM;

	/* A large map costs only address space; fall back where that is limited (valgrind, 32-bit) or where
	 * the file system cannot hold a file that large (MDB_WRITEMAP makes the file the map's size). */
	for (size_t i = 0; i < sizeof(map_sizes) / sizeof(map_sizes[0]); i++) {
		if ((rc = LM(mdb_env_create(&e->env))))
			return rc;
		mdb_env_set_maxreaders(e->env, 1022);
		mdb_env_set_mapsize(e->env, map_sizes[i]);
		nbefore = kv_maps_list(dir, before, KV_MAPS_MAX);
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
	uintptr_t map = kv_maps_new(dir, before, nbefore);
	if (map)
		atomic_store_explicit(&e->map, map, memory_order_relaxed);
	return 0;
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
	/* A file left at the map's size (a crash between LMDB's open and kv_grow_cut_back()) is cut back by
	 * the next open that may write it. A read-only one does it with a writable open of its own (which
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
	if (rc == -ENOENT && (rc = kv_env_dir_is_empty(dir)))
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
	pthread_mutex_init(&e->remap_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->due_cond, &ca);
	pthread_condattr_destroy(&ca);

	/* A writable env in memory writes its commits into the map (MDB_WRITEMAP: no copy of each dirty
	 * page, no pwrite()), which needs the fault handler and where LMDB mapped the file, for growing the
	 * file (kv_grow.c). */
	bool sized = e->wmap = !rdonly && kv_grow_mem_fs(dir) && !kv_guard_catch_faults(); /* (LMDB sizes its file) */
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
	if ((sized || (left && !rdonly)) && (rc = kv_grow_cut_back(e, pre)))
		goto close_env;
	kv_guard_file_size(e);
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
	pthread_mutex_destroy(&e->remap_lock);
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
	pthread_mutex_destroy(&env->remap_lock);
	pthread_cond_destroy(&env->due_cond);
	free(env);
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

uint64_t kv_env_version(kv_env *env)
{
	MDB_envinfo info;
	if (mdb_env_info(env->env, &info))
		return 0;
	return info.me_last_txnid;
}

/* ---- sync points ---- */

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
	if (!kv_txn_begin_raw(env, false, &w)) {
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

int kv_env_release_pages(kv_env *env)
{
	uintptr_t map;
	int rc = 0;
	pthread_mutex_lock(&env->remap_lock);
	map = atomic_load_explicit(&env->map, memory_order_relaxed);
	/* A shared mapping of the file: its pages stay in the page cache, and the next access maps them
	 * again, with the same contents (written ones too: MAP_SHARED). */
	if (map && madvise((void *)map, (size_t)env->mapsize, MADV_DONTNEED))
		rc = -errno;
	pthread_mutex_unlock(&env->remap_lock);
	return rc;
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

void kv_env_committed(kv_env *e)
{
	if (!sync_due(e))
		return;
	if (!e->bg_sync || atomic_load(&e->since) >= SYNC_BG_MAX) {
		kv_env_sync(e); /* committed either way; a failure here leaves the old pin */
	} else if (!atomic_exchange(&e->due_told, true)) { /* wake the thread in kv_env_sync_wait() */
		pthread_mutex_lock(&e->due_lock);
		pthread_cond_signal(&e->due_cond);
		pthread_mutex_unlock(&e->due_lock);
	}
}

/* The disk filled faster than the sync points noticed: the caller's next try (a delete, say) may fit
 * where LMDB can reuse the pinned pages. */
void kv_env_free_pinned(kv_env *e)
{
	atomic_store(&e->tight, true);
	kv_env_sync(e);
}
