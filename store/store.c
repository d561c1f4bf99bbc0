/* store.c — opening stores, transactions and the write sequence that dropped ranges are judged by. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "heatspool.h"
#include "keys.h"
#include "mem.h"
#include "remote.h"
#include "schema.h"

static const char META_SEQ[] = "Mseq";

/* A remote store (backend.h): the backend's store in a cs_store of its own. */
static int open_remote(const char *name, const cs_open_opts *opts, cs_store **out)
{
	cs_open_opts ro = *opts;
	const struct cs_backend *be;
	const char *why = NULL;
	cs_store *st;
	int rc;

	if ((rc = remote_backend(name, &be)))
		return rc;
	if (!(st = mem_calloc(1, sizeof(*st))))
		return -ENOMEM;
	st->be = be;
	st->rdonly = opts->flags & (CS_OPEN_RDONLY | CS_OPEN_ASOF);
	st->asof = opts->flags & CS_OPEN_ASOF;
	st->asof_us = opts->asof;
	st->max_value = opts->max_value ? opts->max_value : CS_DEFAULT_MAX_VALUE;
	if (st->asof) /* (the backend knows nothing of as-of: read-only to it; reads are narrowed here) */
		ro.flags = (ro.flags & ~(unsigned)CS_OPEN_ASOF) | CS_OPEN_RDONLY;
	if ((rc = be->open(name, &ro, &st->impl, &why))) {
		remote_open_failed(be, why);
		free(st);
		return rc;
	}
	*out = st;
	return 0;
}

int cs_store_name_kind(const char *name)
{
	return remote_is_name(name) ? 1 : remote_check_name(name);
}

int cs_store_open(const char *dir, const cs_open_opts *opts, cs_store **out)
{
	cs_open_opts def = { 0 };
	cs_store *st;
	int rc;

	if (!opts)
		opts = &def;
	if (!dir || !*dir)
		return -EINVAL;
	if ((opts->flags & CS_OPEN_ASOF) && (opts->asof < 0 || (opts->flags & CS_OPEN_CREATE)))
		return -EINVAL;
	if ((rc = cs_store_name_kind(dir)) > 0)
		return open_remote(dir, opts, out);
	if (rc < 0)
		return rc;
	st = mem_calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	sch_spares_init(&st->spares);
	st->rdonly = opts->flags & (CS_OPEN_RDONLY | CS_OPEN_ASOF);
	st->asof = opts->flags & CS_OPEN_ASOF;
	st->asof_us = opts->asof;
	st->max_value = opts->max_value ? opts->max_value : CS_DEFAULT_MAX_VALUE;
	if ((rc = heat_new(&st->heat)) || !(st->dir = mem_strdup(dir)))
		rc = -ENOMEM;
	else
		rc = kv_env_open(dir, st->rdonly, opts->flags & CS_OPEN_CREATE, &st->kv);
	if (rc) {
		heat_free(st->heat);
		free(st->dir);
		sch_spares_release(&st->spares);
		free(st);
		return rc;
	}
	kv_env_set_bg_sync(st->kv, opts->flags & CS_OPEN_BG_SYNC);
	*out = st;
	return 0;
}

void cs_store_close(cs_store *st)
{
	if (!st)
		return;
	if (st->be) {
		st->be->close(st->impl);
		free(st);
		return;
	}
	if (heat_pending(st->heat))
		cs_heat_flush(st); /* (errors are not reported: the counts are only lost) */
	kv_env_close(st->kv);
	heat_free(st->heat);
	free(st->dir);
	sch_spares_release(&st->spares);
	free(st);
}

int cs_store_sync(cs_store *st)
{
	if (st->be) /* (no CS_CAP_SYNC: every commit is acknowledged by the service, but CS_TXN_DEFER's) */
		return st->be->sync ? st->be->sync(st->impl) : 0;
	return kv_env_sync(st->kv);
}

bool cs_store_unpin(cs_store *st)
{
	if (st->be)
		return true;
	return kv_env_unpin(st->kv);
}

int cs_store_release_pages(cs_store *st)
{
	if (st->be)
		return 0;
	return kv_env_release_pages(st->kv);
}

bool cs_store_sync_due(cs_store *st)
{
	if (st->be)
		return false;
	return kv_env_sync_due(st->kv);
}

bool cs_store_sync_wait(cs_store *st, unsigned ms)
{
	if (st->be) {
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
		nanosleep(&ts, NULL);
		return false;
	}
	return kv_env_sync_wait(st->kv, ms);
}

static int seq_floor(cs_txn *t, uint64_t *floor);
static int seq_floor_store(cs_txn *t, uint64_t floor);

/* The copy's txnids start again at 1: raise its sequence floor (below) past every sequence ST has used,
 * read after the copy, so no earlier snapshot's can be larger. Then sync the copy. */
static int compact_floor(cs_store *st, const char *dest)
{
	cs_open_opts o = { 0 };
	uint64_t floor, used;
	cs_store *copy;
	cs_txn *t;
	int rc;

	if ((rc = cs_txn_begin(st, CS_TXN_RDONLY, &t)))
		return rc;
	rc = seq_floor(t, &floor);
	used = floor + kv_txn_id(t->kv);
	cs_txn_abort(t);
	if (rc || (rc = cs_store_open(dest, &o, &copy)))
		return rc;
	if (!(rc = cs_txn_begin(copy, 0, &t))) {
		if ((rc = seq_floor_store(t, used + 1)))
			cs_txn_abort(t);
		else
			rc = cs_txn_commit(t);
	}
	if (!rc)
		rc = cs_store_sync(copy);
	cs_store_close(copy);
	return rc;
}

int cs_store_compact(cs_store *st, const char *dest, uint64_t *size)
{
	if (st->be || st->asof) /* (an as-of store: the copy would hold every cell, the newer ones too) */
		return -EOPNOTSUPP;
	struct stat sb;
	char *data;
	int rc;

	if (!dest || !*dest)
		return -EINVAL;
	if (mkdir(dest, 0700) && errno != EEXIST)
		return -errno;
	if (stat(dest, &sb))
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return -ENOTDIR;
	if (mem_asprintf(&data, "%s/data.mdb", dest) < 0)
		return -ENOMEM;
	if (!access(data, F_OK)) {
		free(data);
		return -EEXIST;
	}
	if ((rc = kv_env_dir_is_empty(dest))) {
		free(data);
		return rc;
	}
	rc = kv_env_copy_compact(st->kv, dest);
	if (!rc)
		rc = compact_floor(st, dest);
	if (!rc && size) {
		rc = stat(data, &sb) ? -errno : 0;
		*size = rc ? 0 : (uint64_t)sb.st_size;
	}
	if (rc) { /* never leave half a copy */
		char *anchor;
		unlink(data);
		if (mem_asprintf(&anchor, "%s/anchor", dest) >= 0) {
			unlink(anchor);
			free(anchor);
		}
	}
	free(data);
	return rc;
}

int cs_store_size(cs_store *st, uint64_t *size)
{
	if (st->be)
		return -EOPNOTSUPP;
	return kv_env_size(st->kv, size);
}

uint64_t cs_store_max_value(const cs_store *st)
{
	return st->max_value;
}

unsigned cs_store_caps(const cs_store *st)
{
	if (st->be)
		return st->be->caps;
	return CS_CAP_TXN | CS_CAP_MOVE | CS_CAP_TABLE_RENAME | CS_CAP_TS_MICROS | CS_CAP_WATCH | CS_CAP_MAINT |
	       CS_CAP_SYNC;
}

int cs_store_catch_faults(void)
{
	return kv_guard_catch_faults();
}

int cs_default_path(char **out)
{
	const char *db = getenv("CELLFS_DB"), *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	int n;

	if (db && *db)
		n = mem_asprintf(out, "%s", db);
	else if (xdg && *xdg)
		n = mem_asprintf(out, "%s/cellfs/default", xdg);
	else if (home && *home)
		n = mem_asprintf(out, "%s/.local/share/cellfs/default", home);
	else
		return -ENOENT;
	return n < 0 ? -ENOMEM : 0;
}

int64_t cs_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int cs_txn_begin(cs_store *st, unsigned flags, cs_txn **out)
{
	bool rdonly = flags & CS_TXN_RDONLY;
	cs_txn *t;
	int rc;

	if (!rdonly && st->rdonly)
		return -EROFS;
	if (st->be) {
		if (!(t = mem_calloc(1, sizeof(*t))))
			return -ENOMEM;
		if ((rc = st->be->txn_begin(st->impl, flags, &t->impl))) {
			free(t);
			return rc;
		}
		t->st = st;
		t->rdonly = rdonly;
		*out = t;
		return 0;
	}
	t = mem_calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->st = st;
	t->rdonly = rdonly;
	t->kbuf = mem_malloc(KEY_MAX);
	t->kbuf2 = mem_malloc(KEY_MAX);
	if (!t->kbuf || !t->kbuf2) {
		rc = -ENOMEM;
		goto free_txn;
	}
	if ((rc = kv_txn_begin(st->kv, rdonly, &t->kv)))
		goto free_txn;
	if (!rdonly)
		atomic_fetch_add(&st->writers, 1);
	*out = t;
	return 0;

free_txn:
	free(t->kbuf);
	free(t->kbuf2);
	free(t);
	return rc;
}

static void txn_free(cs_txn *t, bool keep)
{
	if (!t->rdonly)
		atomic_fetch_sub(&t->st->writers, 1);
	sch_cache_release(t, keep);
	heat_pend_release(&t->heat_w);
	free(t->scratch);
	free(t->kbuf);
	free(t->kbuf2);
	free(t);
}

/* Add one pending histogram to its record, unless the table is gone. (Counts of a table whose keyviz is
 * off now were counted while it was on: they stay, as what was recorded does.) */
static int heat_write_one(cs_txn *t, const struct heat_item *it, int64_t now)
{
	struct sch_table *tab;
	int rc = sch_table_get(t, it->table, &tab);

	if (rc == -ENOENT)
		return 0;
	return rc ? rc : heat_write(t->kv, it->table, it->minute, &it->h, now);
}

/* Write the handle's counts, T's own writes and the spool's counts into T, before it commits: *TAKEN
 * gets what was taken out of the handle and the spool (heat_taken_done() once the commit is known: a
 * failed commit gives the spool's to the handle, which writes them later). */
static int heat_write_all(cs_txn *t, struct heat_item **taken)
{
	int64_t now = heat_minute(t->st->heat);
	struct heat_item *spooled, **tail;
	int rc = 0;

	*taken = heat_take(t->st->heat, &t->heat_w);
	if (!hspool_take(t->st->dir, &spooled) && spooled) { /* (a spool that cannot be read waits) */
		for (tail = taken; *tail; tail = &(*tail)->next)
			;
		*tail = spooled;
	}
	for (const struct heat_item *it = *taken; it && !rc; it = it->next)
		rc = heat_write_one(t, it, now);
	return store_txn_fail(t, rc);
}

int cs_txn_commit(cs_txn *t)
{
	struct heat_item *taken = NULL;
	bool heat = false;
	int rc = t->err;

	if (t->st->be) {
		rc = t->st->be->txn_commit(t->impl);
		free(t);
		return rc;
	}
	/* The counts ride on a commit made anyway: the handle's first, then one a minute (heat.h). */
	if (!rc && !t->rdonly && heat_due(t->st->heat, &t->heat_w, t->heat_force)) {
		heat = true;
		rc = heat_write_all(t, &taken);
	}
	if (rc)
		kv_txn_abort(t->kv);
	else
		rc = kv_txn_commit(t->kv);
	if (heat)
		heat_taken_done(t->st->heat, taken, !rc);
	else if (!rc && !t->rdonly)
		heat_pend_commit(t->st->heat, &t->heat_w);
	txn_free(t, !rc);
	return rc;
}

/* A handle's counts go to the spool (heatspool.h): a commit of their own would wait for any writer, and
 * change the store's version, which makes every mount drop its caches. Only once the spool is large and
 * the handle may write (and has no transaction open, which its own would wait for) do they take one. */
int cs_heat_flush(cs_store *st)
{
	struct heat_pend none = { 0 };
	struct heat_item *items;
	uint64_t spooled;
	cs_txn *t;
	int rc;

	if (st->be || !heat_pending(st->heat))
		return 0;
	if (!st->rdonly && !atomic_load(&st->writers) && !hspool_size(st->dir, &spooled) &&
	    spooled >= HSPOOL_COMMIT) {
		if ((rc = cs_txn_begin(st, 0, &t)))
			return rc;
		t->heat_force = true;
		return cs_txn_commit(t);
	}
	items = heat_take(st->heat, &none);
	rc = hspool_append(st->dir, items);
	heat_taken_done(st->heat, items, !rc);
	return rc;
}

/* TABLE's records from minute FROM on, and what the spool holds of it (a spool that cannot be read is
 * left out: its counts are not lost, only not shown yet). */
static int heat_get_local(cs_txn *txn, const struct sch_table *t, int64_t from, cs_heat **out)
{
	struct heat_item *spooled = NULL;
	int rc;

	if ((rc = heat_read(txn->kv, t->name, from, out)))
		return rc;
	if (!hspool_peek(txn->st->dir, t->name, &spooled))
		rc = heat_add_items(*out, spooled, from, heat_minute(txn->st->heat));
	hspool_free(spooled);
	if (rc) {
		cs_heat_free(*out);
		*out = NULL;
	}
	return rc;
}

int cs_heat_get(cs_txn *txn, const char *table, cs_heat **out)
{
	struct sch_table *t;
	int rc;

	if (txn->st->be)
		return -EOPNOTSUPP;
	if ((rc = sch_table_get(txn, table, &t)))
		return rc;
	/* (records of the name older than the table are an earlier table's, until cs_gc() removes them) */
	return heat_get_local(txn, t, t->created > 0 ? t->created / 60000000 : 0, out);
}

void cs_heat_set_clock(cs_store *st, int64_t (*now_us)(void *ctx), void *ctx)
{
	if (st->heat)
		heat_set_clock(st->heat, now_us, ctx);
}

void cs_txn_abort(cs_txn *t)
{
	if (!t)
		return;
	if (t->st->be) {
		t->st->be->txn_abort(t->impl);
		free(t);
		return;
	}
	kv_txn_abort(t->kv);
	txn_free(t, t->rdonly); /* a write's changes are undone: what it parsed may be unlike its record */
}

int cs_txn_renew(cs_txn *t)
{
	if (!t->rdonly)
		return -EINVAL;
	if (t->st->be) /* (no CS_CAP_TXN: reads see the newest data anyway) */
		return 0;
	sch_cache_release(t, true); /* the schema may have changed too: read again (or a spare) */
	return kv_txn_renew(t->kv);
}

void cs_txn_reset(cs_txn *t)
{
	if (!t || !t->rdonly || t->st->be)
		return;
	sch_cache_release(t, true);
	kv_txn_reset(t->kv);
}

uint64_t cs_store_version(cs_store *st)
{
	if (st->be)
		return st->be->version(st->impl);
	return kv_env_version(st->kv);
}

int cs_store_counters(cs_store *st, char **text, size_t *len)
{
	if (st->be && st->be->counters)
		return st->be->counters(st->impl, text, len);
	if (!(*text = mem_strdup("")))
		return -ENOMEM;
	*len = 0;
	return 0;
}

int store_txn_write_check(cs_txn *t)
{
	if (t->rdonly)
		return -EROFS;
	return t->err;
}

int store_txn_fail(cs_txn *t, int rc)
{
	if (rc < 0 && !t->err)
		t->err = rc;
	return rc;
}

/* Write sequences. A write transaction's cells carry F + its LMDB txnid, F being the floor stored at
 * META_SEQ (0 when absent): txnids only grow, so sequences do, and a plain write stores nothing more than
 * its cells (no counter rewritten by every commit, which would cost a second B-tree path). A drop or a
 * new family needs a sequence later than the cells written before it in the same transaction: it raises
 * F by one (stored), and the transaction's later cells follow it. Where txnids start again (a compacted
 * copy) cs_store_compact() raises F past every sequence used. */
static int seq_floor(cs_txn *t, uint64_t *floor)
{
	const void *v;
	size_t vn;
	int rc = kv_get(t->kv, META_SEQ, sizeof(META_SEQ) - 1, &v, &vn);
	if (rc && rc != -ENOENT)
		return rc;
	if (!rc && vn != 8)
		return -EIO;
	*floor = rc ? 0 : key_get_u64(v);
	return 0;
}

static int seq_floor_store(cs_txn *t, uint64_t floor)
{
	uint8_t v[8];
	key_put_u64(v, floor);
	return kv_put(t->kv, META_SEQ, sizeof(META_SEQ) - 1, v, 8);
}

int store_txn_seq(cs_txn *t, uint64_t *seq)
{
	if (!t->seq_loaded) {
		uint64_t floor;
		int rc = seq_floor(t, &floor);
		if (rc)
			return rc;
		t->seq = floor + kv_txn_id(t->kv);
		t->seq_loaded = true;
	}
	*seq = t->seq;
	return 0;
}

int store_txn_seq_bump(cs_txn *t, uint64_t *seq)
{
	uint64_t s, floor;
	int rc = store_txn_seq(t, &s);
	if (rc || (rc = seq_floor(t, &floor)) || (rc = seq_floor_store(t, floor + 1)))
		return rc;
	t->seq++;
	*seq = t->seq;
	return 0;
}
