/* gc.c — physical clean-up: remove what reads no longer return (cells a GC policy collected, dropped
 * rows, cells of deleted families and tables) and the drop records whose work is then done. Changing a
 * family's GC policy lives here too, as it first collects what the old policy collected. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "heat.h"
#include "keys.h"
#include "mem.h"
#include "restore.h"
#include "schema.h"
#include "lm.h"
#include "vis.h"

/* Delete the cell at the cursor (key K, KN bytes, stored size SZ), leaving the cursor on the next key. */
static int del_here(lm_txn *txn, kv_cursor *c, const uint8_t *k, size_t kn, size_t sz, cs_gc_stats *st)
{
	uint8_t *copy = txn->kbuf;
	int rc;
	memcpy(copy, k, kn);
	if ((rc = kv_del(txn->kv, copy, kn)))
		return rc;
	st->cells_removed++;
	st->bytes_freed += kn + sz;
	return kv_seek(c, copy, kn);
}

/* Remove every key that starts with the N-byte PFX. */
static int del_all(lm_txn *txn, kv_cursor *c, const uint8_t *pfx, size_t n, cs_gc_stats *st)
{
	int rc = kv_seek(c, pfx, n);
	while (!rc) {
		const uint8_t *k;
		const void *v;
		size_t kn, vn;
		kv_key(c, (const void **)&k, &kn);
		if (kn < n || memcmp(k, pfx, n))
			return 0;
		if ((rc = kv_value(c, &v, &vn)))
			return rc;
		rc = del_here(txn, c, k, kn, vn, st);
	}
	return rc == -ENOENT ? 0 : rc;
}

struct sweep {
	lm_txn *txn;
	kv_cursor *c;
	cs_gc_stats *st;
};

/* A cell no read returns is deleted (the cursor then on the next). */
static int sweep_cell(void *ctx, const struct vis_walk *w, const struct vis_cell *cell)
{
	struct sweep *sw = ctx;
	int rc;

	if (cell->visible)
		return 0;
	rc = del_here(sw->txn, sw->c, cell->k, cell->kn, cell->vn, sw->st);
	return rc ? rc : 1;
}

static int gc_table(lm_txn *txn, struct sch_table *t, kv_cursor *c, cs_gc_stats *st)
{
	struct vis_walk w = { .t = t, .now = cs_now_us(), .col = txn->kbuf2 };
	struct sweep sw = { txn, c, st };
	int rc;

	if ((rc = sch_drops_load(txn, t)) || (rc = vis_table_walk(&w, c, sweep_cell, &sw)))
		return rc;
	if (t->ndrops) {
		uint8_t xp[KEY_TABLE_PREFIX] = { KEY_DROP };
		cs_gc_stats recs = { 0 };
		key_put_u32(xp + 1, t->id);
		if ((rc = del_all(txn, c, xp, sizeof(xp), &recs)))
			return rc;
		st->bytes_freed += recs.bytes_freed; /* drop records are not cells */
		t->ndrops = 0;
		t->drops_loaded = false;
		return sch_table_put(txn, t);
	}
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Remove data and drop records of table ids that no table has any more. IDS (N, sorted) are live. */
static int gc_orphans(lm_txn *txn, kv_cursor *c, const uint32_t *ids, size_t n, cs_gc_stats *st)
{
	static const uint8_t kinds[] = { KEY_DATA, KEY_DROP };
	for (size_t i = 0; i < sizeof(kinds); i++) {
		uint8_t pfx[KEY_TABLE_PREFIX] = { kinds[i] };
		cs_gc_stats recs = { 0 }; /* drop records are not cells: only their bytes count */
		cs_gc_stats *s = kinds[i] == KEY_DATA ? st : &recs;
		int rc = kv_seek(c, pfx, 1);
		while (!rc) {
			const uint8_t *k;
			size_t kn;
			uint32_t tid;
			kv_key(c, (const void **)&k, &kn);
			if (kn < sizeof(pfx) || k[0] != kinds[i])
				break;
			tid = key_get_u32(k + 1);
			key_put_u32(pfx + 1, tid);
			if (!bsearch(&tid, ids, n, sizeof(*ids), id_cmp) && (rc = del_all(txn, c, pfx, sizeof(pfx), s)))
				return rc;
			if (tid == UINT32_MAX)
				break;
			key_put_u32(pfx + 1, tid + 1);
			rc = kv_seek(c, pfx, sizeof(pfx));
		}
		if (rc && rc != -ENOENT)
			return rc;
		st->bytes_freed += recs.bytes_freed;
	}
	return 0;
}

/* lm_gc() of one table whose schema T is loaded. */
static int gc_table_now(lm_txn *txn, struct sch_table *t, cs_gc_stats *stats)
{
	kv_cursor *c;
	int rc = kv_cursor_open(txn->kv, &c);
	if (rc)
		return lm_txn_fail(txn, rc);
	memset(stats, 0, sizeof(*stats));
	rc = gc_table(txn, t, c, stats);
	kv_cursor_close(c);
	return rc ? lm_txn_fail(txn, rc) : 0;
}

int lm_gc(void *txn_, const char *table, cs_gc_stats *stats)
{
	lm_txn *txn = txn_;
	cs_gc_stats local = { 0 };
	struct sch_table *t;
	kv_cursor *c = NULL;
	char **names = NULL;
	uint32_t *ids = NULL, *staged = NULL;
	size_t n = 0, nstaged = 0;
	int rc = lm_txn_write_check(txn);

	if (rc)
		return rc;
	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	if (table) {
		if ((rc = sch_table_get(txn, table, &t)))
			return rc == -ENOENT ? rc : lm_txn_fail(txn, rc);
	} else if ((rc = lm_table_list(txn, &names, &n))) {
		return lm_txn_fail(txn, rc);
	}
	if ((rc = kv_cursor_open(txn->kv, &c)))
		goto out;
	if (table) {
		rc = gc_table(txn, t, c, stats);
		goto out;
	}
	/* Live ids: every table's, and those of restores in progress (staging tables, restore.c). */
	if ((rc = restore_live_ids(txn, &staged, &nstaged)))
		goto out;
	if ((n || nstaged) && !(ids = mem_calloc(n + nstaged, sizeof(*ids)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		if (!(rc = sch_table_get(txn, names[i], &t))) {
			ids[i] = t->id;
			rc = gc_table(txn, t, c, stats);
		}
	}
	if (nstaged)
		memcpy(ids + n, staged, nstaged * sizeof(*ids));
	qsort(ids, n + nstaged, sizeof(*ids), id_cmp);
	if (!rc)
		rc = gc_orphans(txn, c, ids, n + nstaged, stats);
	if (!rc) /* the Key Visualizer's records of tables deleted or renamed, or a week old */
		rc = heat_gc(txn->kv, names, n, cs_now_us() / 60000000);
out:
	kv_cursor_close(c);
	cs_strv_free(names, n);
	free(ids);
	free(staged);
	return rc ? lm_txn_fail(txn, rc) : 0;
}

int lm_family_set_gc(void *txn_, const char *table, const char *family, const char *gc)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	struct sch_family *f;
	gcp *p;
	char *canon;
	int rc = sch_family_get(txn, table, family, &t, &f);

	if (rc)
		return rc;
	if ((rc = sch_policy_parse(gc, &p, &canon)))
		return rc == -ENOMEM ? lm_txn_fail(txn, rc) : rc;
	if (!gcp_is_never(f->policy)) {
		/* Remove what the old policy collected: a looser new one must not bring it back. */
		cs_gc_stats st;
		if ((rc = gc_table_now(txn, t, &st))) {
			gcp_free(p);
			free(canon);
			return rc;
		}
	}
	return sch_family_set_policy(txn, t, f, p, canon);
}
