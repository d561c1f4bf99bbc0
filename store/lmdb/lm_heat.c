/* lm_heat.c — the Key Visualizer's side of the LMDB store (heat.h, heatspool.h): its one hook on a
 * write transaction's commit, the rows a write notes for it, and cs_heat_get()/cs_heat_flush() of an
 * LMDB store. Nothing else of the store's commit path knows of it. */
#include <errno.h>
#include <stdlib.h>

#include "heatspool.h"
#include "lm.h"
#include "lm_internal.h"
#include "schema.h"

void lm_heat_wrote(lm_txn *txn, const struct sch_table *t, cs_bytes row)
{
	if (!t->heat_off)
		heat_pend_note(txn->st->heat, &txn->heat_w, t->name, row.data, row.len);
}

/* Add one pending histogram to its record, unless the table is gone. (Counts of a table whose keyviz is
 * off now were counted while it was on: they stay, as what was recorded does.) */
static int heat_write_one(lm_txn *t, const struct heat_item *it, int64_t now)
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
static int heat_write_all(lm_txn *t, struct heat_item **taken)
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
	return lm_txn_fail(t, rc);
}

/* The Key Visualizer's hook on T's commit, made anyway: its counts ride on it when they are due (the
 * handle's first, then one a minute: heat.h), written into T before kv_txn_commit(); after it, they are
 * done or given back. Returns the commit's result, or the error writing the counts met (T aborted). */
int lm_heat_commit(lm_txn *t)
{
	struct heat_item *taken = NULL;
	int rc;

	if (!heat_due(t->st->heat, &t->heat_w)) {
		if (!(rc = kv_txn_commit(t->kv)))
			heat_pend_commit(t->st->heat, &t->heat_w);
		return rc;
	}
	if ((rc = heat_write_all(t, &taken)))
		kv_txn_abort(t->kv);
	else
		rc = kv_txn_commit(t->kv);
	heat_taken_done(t->st->heat, taken, !rc);
	return rc;
}

/* A handle's counts go to the spool (heatspool.h): a commit of their own would wait for any writer, and
 * change the store's version, which makes every mount drop its caches. Only once the spool is large and
 * the handle may write (and has no transaction open, which its own would wait for) do they take one. */
int lm_heat_flush(void *st_)
{
	lm_store *st = st_;
	struct heat_pend none = { 0 };
	struct heat_item *items;
	uint64_t spooled;
	lm_txn *t;
	int rc;

	if (!heat_pending(st->heat))
		return 0;
	if (!st->rdonly && !atomic_load(&st->writers) && !hspool_size(st->dir, &spooled) &&
	    spooled >= HSPOOL_COMMIT) {
		if ((rc = lm_txn_open(st, 0, &t)))
			return rc;
		t->heat_w.force = true;
		return lm_txn_commit(t);
	}
	items = heat_take(st->heat, &none);
	rc = hspool_append(st->dir, items);
	heat_taken_done(st->heat, items, !rc);
	return rc;
}

/* TABLE's records from minute FROM on, and what the spool holds of it (a spool that cannot be read is
 * left out: its counts are not lost, only not shown yet). */
static int heat_get_local(lm_txn *txn, const struct sch_table *t, int64_t from, cs_heat **out)
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

int lm_heat_get(void *txn_, const char *table, cs_heat **out)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	int rc;

	if ((rc = sch_table_get(txn, table, &t)))
		return rc;
	/* (records of the name older than the table are an earlier table's, until lm_gc() removes them) */
	return heat_get_local(txn, t, t->created > 0 ? t->created / 60000000 : 0, out);
}

void lm_heat_set_clock(void *st_, int64_t (*now_us)(void *ctx), void *ctx)
{
	lm_store *st = st_;
	if (st->heat)
		heat_set_clock(st->heat, now_us, ctx);
}
