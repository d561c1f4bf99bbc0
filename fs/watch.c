/* watch.c — following the store: the kernel caches entries, attributes, listings and file pages for
 * long, and this thread tells it to drop them when the store changes (a write by cellctl or any other
 * process). Invalidation is never done from inside a request handler, where it could deadlock. The
 * store's version is polled every POLL_MS, so a change shows within about a second.
 * It also makes the daemon's sync points (store/README.md, "Durability"): every 5 s, and while the
 * store is being written whenever a commit finds one due (cs_store_sync_wait() wakes this thread), so
 * that no close() waits for the disk (the store is opened CS_OPEN_BG_SYNC); and once the daemon has
 * nothing unsynced it lets go of the snapshot its last sync point pinned (cs_store_unpin()), so an idle
 * mount does not keep other writers from reusing pages. Once a minute it has the store write the Key
 * Visualizer's counts (cs_heat_flush()), which a mount that only reads would otherwise keep. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "watch.h"

#define POLL_MS 200
#define TICK_MS 10
#define SYNC_MS 5000 /* every 5 s: what the daemon wrote is flushed to disk (power-loss safe) */
#define HEAT_MS 60000 /* every minute: the Key Visualizer's counts of a mount that reads, written */
#define MAPPED_MAX (32u << 20) /* the store's pages the daemon keeps mapped, at most (see mapped_bytes) */

struct inval {
	uint64_t ino, parent;
	char *name;
};

struct inval_list {
	struct inval *v;
	size_t n, cap;
	bool oom;
};

static void collect(const struct node *n, void *arg)
{
	struct inval_list *l = arg;
	if (l->oom)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct inval *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->oom = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].ino = n->ino;
	l->v[l->n].parent = n->parent;
	if (!(l->v[l->n].name = strdup(n->name))) {
		l->oom = true;
		return;
	}
	l->n++;
}

/* Drop everything the kernel may have cached from us. */
static void invalidate_all(struct fs *fs)
{
	struct inval_list l = { 0 };
	node_foreach(&fs->nodes, collect, &l);
	for (size_t i = 0; i < l.n; i++) {
		fuse_lowlevel_notify_inval_inode(fs->se, l.v[i].ino, 0, 0);
		if (l.v[i].parent)
			fuse_lowlevel_notify_inval_entry(fs->se, l.v[i].parent, l.v[i].name, strlen(l.v[i].name));
		free(l.v[i].name);
	}
	free(l.v);
	if (l.oom)
		fuse_log(FUSE_LOG_ERR, "cellfs: out of memory while invalidating caches\n");
}

void watch_inval_later(struct fs *fs, uint64_t parent, const char *name)
{
	char *n = strdup(name);

	if (!n)
		return;
	pthread_mutex_lock(&fs->hlock);
	if (fs->ninval == fs->capinval) {
		size_t cap = fs->capinval ? 2 * fs->capinval : 16;
		struct fs_inval *v = realloc(fs->inval, cap * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&fs->hlock);
			free(n);
			return;
		}
		fs->inval = v;
		fs->capinval = cap;
	}
	fs->inval[fs->ninval++] = (struct fs_inval){ parent, n };
	pthread_mutex_unlock(&fs->hlock);
}

/* The entries watch_inval_later() queued, forgotten by the kernel (outside any request: safe to wait for
 * the directory's lock). */
static void inval_queued(struct fs *fs)
{
	struct fs_inval *v;
	size_t n;

	pthread_mutex_lock(&fs->hlock);
	v = fs->inval;
	n = fs->ninval;
	fs->inval = NULL;
	fs->ninval = fs->capinval = 0;
	pthread_mutex_unlock(&fs->hlock);
	for (size_t i = 0; i < n; i++) {
		fuse_lowlevel_notify_inval_entry(fs->se, v[i].parent, v[i].name, strlen(v[i].name));
		free(v[i].name);
	}
	free(v);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void watch_expire_later(struct fs *fs, uint64_t ino)
{
	int64_t due = now_ms() + fs->ttl_ms;

	pthread_mutex_lock(&fs->hlock);
	if (fs->nexpiry == fs->capexpiry) {
		size_t cap = fs->capexpiry ? 2 * fs->capexpiry : 256;
		struct fs_expiry *v = malloc(cap * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&fs->hlock);
			return;
		}
		for (size_t i = 0; i < fs->nexpiry; i++) /* (unrolled from the ring) */
			v[i] = fs->expiry[(fs->expiry_head + i) % fs->capexpiry];
		free(fs->expiry);
		fs->expiry = v;
		fs->capexpiry = cap;
		fs->expiry_head = 0;
	}
	fs->expiry[(fs->expiry_head + fs->nexpiry++) % fs->capexpiry] = (struct fs_expiry){ ino, due };
	pthread_mutex_unlock(&fs->hlock);
}

/* The listings whose time has come, dropped from the kernel (outside any request). */
static void expire_due(struct fs *fs)
{
	int64_t t = now_ms();
	for (;;) {
		uint64_t ino;
		pthread_mutex_lock(&fs->hlock);
		if (!fs->nexpiry || fs->expiry[fs->expiry_head].due_ms > t) {
			pthread_mutex_unlock(&fs->hlock);
			return;
		}
		ino = fs->expiry[fs->expiry_head].ino;
		fs->expiry_head = (fs->expiry_head + 1) % fs->capexpiry;
		fs->nexpiry--;
		pthread_mutex_unlock(&fs->hlock);
		fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0); /* (-ENOENT: forgotten already) */
	}
}

/* A store whose writes are calls to a service (no CS_CAP_TXN: Bigtable) is not held locked across them:
 * a write waiting for an instance that does not answer must not hold up every other write (and the
 * watcher) for its deadline. Two writes of the daemon's at once then count as another process's, which
 * costs one dropping of the caches; such a store drops them every cache_ttl anyway. A local store's
 * writers queue in LMDB whatever we do, so there the lock costs nothing and keeps the count exact. */
static bool held_across(const struct fs *fs)
{
	return cs_store_caps(fs->st) & CS_CAP_TXN;
}

uint64_t watch_write_begin(struct fs *fs)
{
	uint64_t v;
	pthread_mutex_lock(&fs->wlock);
	v = cs_store_version(fs->st);
	if (v != fs->acct) /* someone else wrote since */
		fs->foreign = true;
	if (!held_across(fs))
		pthread_mutex_unlock(&fs->wlock);
	return v;
}

void watch_write_end(struct fs *fs, uint64_t before)
{
	if (!held_across(fs))
		pthread_mutex_lock(&fs->wlock);
	uint64_t v = cs_store_version(fs->st);
	if (v != before && v != before + 1) /* more than our one transaction */
		fs->foreign = true;
	fs->acct = v;
	pthread_mutex_unlock(&fs->wlock);
}


/* The file-backed and shared pages resident in the daemon (statm's third field): the store's file, which
 * LMDB maps whole, so that every page a listing touched counts in the daemon's RSS though the page cache
 * owns it; and the libraries (a few MB). 0 where /proc cannot be read. */
static uint64_t mapped_bytes(void)
{
	unsigned long size, resident, shared = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu %lu", &size, &resident, &shared) != 3)
		shared = 0;
	fclose(f);
	return (uint64_t)shared * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The daemon's own writes need no invalidation here: the kernel made them, knows the names they
 * added or removed, and the write-back tells it the rest (fileh.c). Anything else (cellctl, another
 * mount) drops everything. */
static void *watch_main(void *arg)
{
	struct fs *fs = arg;
	uint64_t last = cs_store_version(fs->st);
	int64_t polled = now_ms(), synced_at = polled, heat_at = polled;
	unsigned tick = POLL_MS;

	while (!fs->stop) {
		bool ours, due = false;
		uint64_t v;
		if (fs->ro) {
			struct timespec ts = { 0, tick * 1000000L };
			nanosleep(&ts, NULL);
		} else {
			due = cs_store_sync_wait(fs->st, tick); /* woken by the commit that makes one due */
		}
		if (__atomic_load_n(&fs->ninval, __ATOMIC_RELAXED))
			inval_queued(fs);
		if (fs->expiring)
			expire_due(fs);
		v = cs_store_version(fs->st); /* (read again under the lock below, to decide) */
		tick = v != last ? TICK_MS : POLL_MS; /* short ticks while the store is being written */
		last = v;
		if (due)
			cs_store_sync(fs->st);
		/* syncfs() and sync(1) reach no FUSE daemon: a periodic sync bounds what a power loss can take
		 * from files already closed (fsync() syncs at once). Only the daemon's own commits are its to
		 * sync: other writers (cellctl) sync theirs. */
		int64_t t = now_ms();
		if (t - synced_at >= SYNC_MS) {
			synced_at = t;
			if (!fs->ro && !cs_store_unpin(fs->st))
				cs_store_sync(fs->st);
		}
		/* The store writes its counts of what the daemon read and wrote with a write of the daemon's
		 * once a minute; a mount that only reads, or is read-only, has none, so they go here: to the
		 * store's spool, or (when that is large) as the daemon's own write, which invalidates nothing. */
		if (t - heat_at >= HEAT_MS) {
			uint64_t before = watch_write_begin(fs);
			bool wrote;
			heat_at = t;
			cs_heat_flush(fs->st);
			wrote = cs_store_version(fs->st) != before;
			watch_write_end(fs, before);
			if (wrote && !due && !cs_store_unpin(fs->st)) { /* (keep no snapshot pinned for it) */
				cs_store_sync(fs->st);
				cs_store_unpin(fs->st);
			}
		}
		if (t - polled < POLL_MS)
			continue;
		polled = t;
		/* Idle since its last sync point: the daemon keeps no snapshot pinned, or every page another
		 * process's commits free would wait for its next sync point (the file grows meanwhile). */
		if (!fs->ro && !due)
			cs_store_unpin(fs->st);
		/* A walk over a large table leaves the store's pages mapped: let them go (they stay cached), so
		 * that the daemon's RSS is its own memory and the kernel reclaims them without unmapping. */
		if (mapped_bytes() > MAPPED_MAX)
			cs_store_release_pages(fs->st);
		if (v == fs->version_seen)
			continue;
		pthread_mutex_lock(&fs->wlock);
		v = cs_store_version(fs->st); /* no write of the daemon's is half done while the lock is held
		                               * (on a local store: held_across) */
		ours = !fs->foreign && v == fs->acct;
		fs->foreign = false;
		fs->acct = v;
		pthread_mutex_unlock(&fs->wlock);
		fs->version_seen = v;
		if (!ours)
			invalidate_all(fs);
	}
	return NULL;
}

int watch_start(struct fs *fs)
{
	fs->version_seen = fs->acct = cs_store_version(fs->st);
	fs->foreign = false;
	fs->stop = false;
	if (pthread_create(&fs->watcher, NULL, watch_main, fs))
		return -EAGAIN;
	fs->watching = true;
	return 0;
}

void watch_stop(struct fs *fs)
{
	if (!fs->watching)
		return;
	fs->stop = true;
	pthread_join(fs->watcher, NULL);
	fs->watching = false;
	for (size_t i = 0; i < fs->ninval; i++) /* (the session is over: nothing to tell the kernel) */
		free(fs->inval[i].name);
	free(fs->inval);
	fs->inval = NULL;
	fs->ninval = fs->capinval = 0;
	free(fs->expiry);
	fs->expiry = NULL;
	fs->nexpiry = fs->capexpiry = fs->expiry_head = 0;
}
