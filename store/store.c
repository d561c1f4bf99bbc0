/* store.c — the seam (backend.h): every public call of cellstore.h that a store answers, handed to the
 * backend of the store it is made on. The only file that dispatches; what it adds is the same for every
 * backend: the checks of what a call may ask, the capabilities' answers (CS_CAP_*), and the as-of
 * store's narrowing of reads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asof.h"
#include "backends.h"
#include "mem.h"
#include "remote.h"
#include "store.h"

struct cs_store {
	const struct cs_backend *be;
	void *impl;
	bool rdonly;
	bool asof;       /* CS_OPEN_ASOF: reads see only cells at or before asof_us (asof.h) */
	int64_t asof_us;
	uint64_t max_value;
};

struct cs_txn {
	cs_store *st;
	void *impl;
	bool rdonly;
};

struct cs_scan {
	const struct cs_backend *be;
	void *impl;
};

struct cs_bulk {
	const struct cs_backend *be;
	void *impl;
};

/* The backend of transaction TXN's store. */
#define BE(txn) ((txn)->st->be)

/* ---- Which backend ---------------------------------------------------------------------------------- */

/* The backend of store NAME: a built-in one by its scheme (backends.c), else a module's (remote.c). */
static int find_backend(const char *name, const struct cs_backend **out)
{
	const char *sep = strstr(name, "://");
	size_t sn = remote_is_name(name) ? (size_t)(sep - name) : 0;

	for (size_t i = 0; backends[i].scheme; i++)
		if (strlen(backends[i].scheme) == sn && !strncmp(backends[i].scheme, name, sn) &&
		    backends[i].be) {
			*out = backends[i].be;
			return 0;
		}
	return sn ? remote_backend(name, out) : -EPROTONOSUPPORT;
}

int cs_store_name_kind(const char *name)
{
	return remote_is_name(name) ? 1 : remote_check_name(name);
}

int cs_store_open(const char *name, const cs_open_opts *opts, cs_store **out)
{
	cs_open_opts def = { 0 };
	const struct cs_backend *be;
	const char *why = NULL;
	cs_store *st;
	int rc;

	if (!opts)
		opts = &def;
	if (!name || !*name)
		return -EINVAL;
	if ((opts->flags & CS_OPEN_ASOF) && (opts->asof < 0 || (opts->flags & CS_OPEN_CREATE)))
		return -EINVAL;
	if ((rc = cs_store_name_kind(name)) < 0 || (rc = find_backend(name, &be)))
		return rc;
	if (!(st = mem_calloc(1, sizeof(*st))))
		return -ENOMEM;
	st->be = be;
	st->rdonly = opts->flags & (CS_OPEN_RDONLY | CS_OPEN_ASOF);
	st->asof = opts->flags & CS_OPEN_ASOF;
	st->asof_us = opts->asof;
	st->max_value = opts->max_value ? opts->max_value : CS_DEFAULT_MAX_VALUE;
	if ((rc = be->open(name, opts, &st->impl, &why))) {
		remote_open_failed(be, why);
		free(st);
		return rc;
	}
	*out = st;
	return 0;
}

void cs_store_close(cs_store *st)
{
	if (!st)
		return;
	st->be->close(st->impl);
	free(st);
}

int cs_store_catch_faults(void)
{
	int rc = 0;

	for (size_t i = 0; backends[i].scheme && !rc; i++)
		if (backends[i].be && backends[i].be->catch_faults)
			rc = backends[i].be->catch_faults();
	return rc;
}

/* ---- The store -------------------------------------------------------------------------------------- */

int cs_store_sync(cs_store *st)
{
	return st->be->sync ? st->be->sync(st->impl) : 0;
}

bool cs_store_unpin(cs_store *st)
{
	return st->be->unpin ? st->be->unpin(st->impl) : true;
}

int cs_store_release_pages(cs_store *st)
{
	return st->be->release_pages ? st->be->release_pages(st->impl) : 0;
}

bool cs_store_sync_due(cs_store *st)
{
	return st->be->sync_due ? st->be->sync_due(st->impl) : false;
}

bool cs_store_sync_wait(cs_store *st, unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	if (st->be->sync_wait)
		return st->be->sync_wait(st->impl, ms);
	nanosleep(&ts, NULL);
	return false;
}

int cs_store_compact(cs_store *st, const char *dest, uint64_t *size)
{
	return st->be->caps & CS_CAP_MAINT ? st->be->compact(st->impl, dest, size) : -EOPNOTSUPP;
}

int cs_store_size(cs_store *st, uint64_t *size)
{
	return st->be->caps & CS_CAP_MAINT ? st->be->size(st->impl, size) : -EOPNOTSUPP;
}

int cs_restore(cs_store *st, cs_read_fn *read, void *ctx, const cs_restore_opts *opts, cs_restore_result *res)
{
	if (!(st->be->caps & CS_CAP_MAINT))
		return -EOPNOTSUPP; /* (tables cannot be renamed into place) */
	return st->be->restore(st->impl, read, ctx, opts, res);
}

uint64_t cs_store_max_value(const cs_store *st)
{
	return st->max_value;
}

unsigned cs_store_caps(const cs_store *st)
{
	return st->be->caps;
}

uint64_t cs_store_version(cs_store *st)
{
	return st->be->version(st->impl);
}

int cs_store_counters(cs_store *st, char **text, size_t *len)
{
	if (st->be->counters)
		return st->be->counters(st->impl, text, len);
	if (!(*text = mem_strdup("")))
		return -ENOMEM;
	*len = 0;
	return 0;
}

int cs_heat_flush(cs_store *st)
{
	return st->be->caps & CS_CAP_KEYVIZ ? st->be->heat_flush(st->impl) : 0;
}

void cs_heat_set_clock(cs_store *st, int64_t (*now_us)(void *ctx), void *ctx)
{
	if (st->be->caps & CS_CAP_KEYVIZ)
		st->be->heat_set_clock(st->impl, now_us, ctx);
}

/* ---- Transactions ----------------------------------------------------------------------------------- */

int cs_txn_begin(cs_store *st, unsigned flags, cs_txn **out)
{
	cs_txn *t;
	int rc;

	if (!(flags & CS_TXN_RDONLY) && st->rdonly)
		return -EROFS;
	if (!(t = mem_calloc(1, sizeof(*t))))
		return -ENOMEM;
	if ((rc = st->be->txn_begin(st->impl, flags, &t->impl))) {
		free(t);
		return rc;
	}
	t->st = st;
	t->rdonly = flags & CS_TXN_RDONLY;
	*out = t;
	return 0;
}

int cs_txn_commit(cs_txn *t)
{
	int rc = BE(t)->txn_commit(t->impl);
	free(t);
	return rc;
}

void cs_txn_abort(cs_txn *t)
{
	if (!t)
		return;
	BE(t)->txn_abort(t->impl);
	free(t);
}

int cs_txn_renew(cs_txn *t)
{
	if (!t->rdonly)
		return -EINVAL;
	return BE(t)->txn_renew ? BE(t)->txn_renew(t->impl) : 0;
}

void cs_txn_reset(cs_txn *t)
{
	if (t && t->rdonly && BE(t)->txn_reset)
		BE(t)->txn_reset(t->impl);
}

void *store_txn_impl(cs_txn *t)
{
	return t->impl;
}

/* ---- Tables and families ---------------------------------------------------------------------------- */

int cs_table_create(cs_txn *txn, const char *name, char delim)
{
	const cs_table_info info = { .name = (char *)name, .delim = delim };

	return cs_table_create_as(txn, &info);
}

int cs_table_create_as(cs_txn *txn, const cs_table_info *info)
{
	return BE(txn)->table_create_as(txn->impl, info);
}

int cs_table_delete(cs_txn *txn, const char *name)
{
	return BE(txn)->table_delete(txn->impl, name);
}

int cs_table_rename(cs_txn *txn, const char *from, const char *to)
{
	return BE(txn)->caps & CS_CAP_TABLE_RENAME ? BE(txn)->table_rename(txn->impl, from, to) : -EXDEV;
}

int cs_table_list(cs_txn *txn, char ***names, size_t *n)
{
	return BE(txn)->table_list(txn->impl, names, n);
}

int cs_table_info_get(cs_txn *txn, const char *name, cs_table_info **out)
{
	int rc = BE(txn)->table_info_get(txn->impl, name, out);

	/* An as-of store: nothing there is newer than its time, the table's creation neither */
	if (!rc && txn->st->asof && (*out)->created > txn->st->asof_us)
		(*out)->created = txn->st->asof_us;
	return rc;
}

int cs_table_set_keyviz(cs_txn *txn, const char *table, bool on)
{
	return BE(txn)->caps & CS_CAP_KEYVIZ ? BE(txn)->table_set_keyviz(txn->impl, table, on) : -EOPNOTSUPP;
}

int cs_family_create(cs_txn *txn, const char *table, const char *family, const char *gc)
{
	return cs_family_create_typed(txn, table, family, gc, CS_TYPE_BYTES);
}

int cs_family_create_typed(cs_txn *txn, const char *table, const char *family, const char *gc,
			   cs_value_type type)
{
	return BE(txn)->family_create_typed(txn->impl, table, family, gc, type);
}

int cs_family_delete(cs_txn *txn, const char *table, const char *family)
{
	return BE(txn)->family_delete(txn->impl, table, family);
}

int cs_family_set_gc(cs_txn *txn, const char *table, const char *family, const char *gc)
{
	return BE(txn)->family_set_gc(txn->impl, table, family, gc);
}

/* ---- Writes ----------------------------------------------------------------------------------------- */

int cs_row_mutate(cs_txn *txn, const char *table, cs_bytes row, const cs_mutation *m, size_t n)
{
	return BE(txn)->row_mutate(txn->impl, table, row, m, n);
}

int cs_rmw_append(cs_txn *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		  cs_bytes suffix, int64_t *ts)
{
	return BE(txn)->rmw_append(txn->impl, table, row, family, qualifier, suffix, ts);
}

int cs_rmw_increment(cs_txn *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		     int64_t delta, int64_t *result)
{
	return BE(txn)->rmw_increment(txn->impl, table, row, family, qualifier, delta, result);
}

int cs_check_and_mutate(cs_txn *txn, const char *table, cs_bytes row, const cs_predicate *pred,
			const cs_mutation *true_m, size_t n_true, const cs_mutation *false_m, size_t n_false,
			bool *matched)
{
	return BE(txn)->check_and_mutate(txn->impl, table, row, pred, true_m, n_true, false_m, n_false, matched);
}

int cs_drop_prefix(cs_txn *txn, const char *table, cs_bytes prefix)
{
	return BE(txn)->drop_prefix(txn->impl, table, prefix);
}

int cs_move_prefix(cs_txn *txn, const char *table, cs_bytes from, cs_bytes to, uint64_t max_cells,
		   uint64_t *moved)
{
	if (!(BE(txn)->caps & CS_CAP_MOVE))
		return -EXDEV;
	return BE(txn)->move_prefix(txn->impl, table, from, to, max_cells, moved);
}

/* ---- Maintenance and the Key Visualizer ------------------------------------------------------------- */

int cs_gc(cs_txn *txn, const char *table, cs_gc_stats *stats)
{
	return BE(txn)->caps & CS_CAP_MAINT ? BE(txn)->gc(txn->impl, table, stats) : -EOPNOTSUPP;
}

int cs_verify(cs_txn *txn, cs_problem_fn *report, void *ctx, cs_verify_stats *stats)
{
	return BE(txn)->caps & CS_CAP_MAINT ? BE(txn)->verify(txn->impl, report, ctx, stats) : -EOPNOTSUPP;
}

int cs_table_stats_get(cs_txn *txn, const char *table, cs_table_stats **out)
{
	return BE(txn)->caps & CS_CAP_MAINT ? BE(txn)->table_stats_get(txn->impl, table, out) : -EOPNOTSUPP;
}

int cs_heat_get(cs_txn *txn, const char *table, cs_heat **out)
{
	return BE(txn)->caps & CS_CAP_KEYVIZ ? BE(txn)->heat_get(txn->impl, table, out) : -EOPNOTSUPP;
}

/* ---- Bulk loads ------------------------------------------------------------------------------------- */

int cs_bulk_open(cs_txn *txn, const char *table, cs_bulk **out)
{
	cs_bulk *b;
	int rc;

	if (txn->rdonly)
		return -EROFS;
	if (!(b = mem_calloc(1, sizeof(*b))))
		return -ENOMEM;
	if ((rc = BE(txn)->bulk_open(txn->impl, table, &b->impl))) {
		free(b);
		return rc;
	}
	b->be = BE(txn);
	*out = b;
	return 0;
}

int cs_bulk_put(cs_bulk *b, cs_bytes row, const char *family, cs_bytes qualifier, int64_t ts, cs_bytes value)
{
	return b->be->bulk_put(b->impl, row, family, qualifier, ts, value);
}

void cs_bulk_get_stats(const cs_bulk *b, cs_bulk_stats *stats)
{
	b->be->bulk_get_stats(b->impl, stats);
}

int cs_bulk_flush(cs_bulk *b)
{
	return b->be->bulk_flush ? b->be->bulk_flush(b->impl) : 0;
}

void cs_bulk_close(cs_bulk *b)
{
	if (!b)
		return;
	b->be->bulk_close(b->impl);
	free(b);
}

/* ---- Scans ------------------------------------------------------------------------------------------ */

int cs_scan_open(cs_txn *txn, const char *table, const cs_read_opts *opts, cs_scan **out)
{
	cs_read_opts narrowed;
	cs_scan *s;
	int rc;

	if (txn->st->asof) { /* every scan of an as-of store passes here */
		asof_read_opts(txn->st->asof_us, opts, &narrowed);
		opts = &narrowed;
	}
	if (!(s = mem_calloc(1, sizeof(*s))))
		return -ENOMEM;
	if ((rc = BE(txn)->scan_open(txn->impl, table, opts, &s->impl))) {
		free(s);
		return rc;
	}
	s->be = BE(txn);
	*out = s;
	return 0;
}

int cs_scan_next(cs_scan *s, const cs_row **row)
{
	return s->be->scan_next(s->impl, row);
}

int cs_scan_seek(cs_scan *s, cs_bytes row)
{
	return s->be->scan_seek(s->impl, row);
}

void cs_scan_close(cs_scan *s)
{
	if (!s)
		return;
	s->be->scan_close(s->impl);
	free(s);
}

/* ---- Backend-free ----------------------------------------------------------------------------------- */

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
