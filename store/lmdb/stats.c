/* stats.c — lm_table_stats_get(): one pass over a table's stored cells, counting what reads return
 * (rows, cells, raw and stored bytes per family) and what they no longer do (garbage awaiting lm_gc()).
 * Visibility is decided by vis.c, as for reads and lm_gc(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "keys.h"
#include "mem.h"
#include "schema.h"
#include "lm.h"
#include "vis.h"

void cs_table_stats_free(cs_table_stats *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfamilies; i++)
		free(s->families[i].name);
	free(s->families);
	free(s->name);
	free(s);
}

struct count {
	const lm_txn *txn;
	cs_table_stats *s;
	bool row_counted;
};

static int count_cell(void *ctx, const struct vis_walk *w, const struct vis_cell *c)
{
	struct count *n = ctx;
	cs_table_stats *s = n->s;
	const struct sch_table *t = w->t;

	if (w->new_row)
		n->row_counted = false;
	if (n->txn->st->asof && c->kp->ts > n->txn->st->asof_us)
		return 0; /* an as-of store: not there, neither as a cell nor as garbage */
	if (c->f && w->version > s->families[c->f - t->fam].max_versions)
		s->families[c->f - t->fam].max_versions = w->version;
	if (c->visible) {
		cs_family_stats *fs = &s->families[c->f - t->fam];
		fs->cells++;
		fs->raw_bytes += c->h->rawlen;
		fs->stored_bytes += c->vn;
		fs->key_bytes += c->kn;
		if (!n->row_counted)
			s->rows++;
		n->row_counted = true;
	} else {
		/* in the schema and not dropped: what hides it is the family's GC policy */
		if (c->f && c->h->seq >= c->f->since && c->h->seq >= w->hide)
			s->families[c->f - t->fam].collected_cells++;
		s->garbage_cells++;
		s->garbage_bytes += c->kn + c->vn;
	}
	return 0;
}

int lm_table_stats_get(void *txn_, const char *table, cs_table_stats **out)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	cs_table_stats *s;
	kv_cursor *c = NULL;
	struct vis_walk w = { .now = cs_now_us(), .col = txn->kbuf2 };
	struct count n = { .txn = txn };
	int rc;

	if ((rc = sch_table_get(txn, table, &t)) || (rc = sch_drops_load(txn, t)))
		return rc;
	w.t = t;
	if (!(s = mem_calloc(1, sizeof(*s))) || !(s->name = mem_strdup(table)) ||
	    (t->nfam && !(s->families = mem_calloc(t->nfam, sizeof(*s->families))))) {
		cs_table_stats_free(s);
		return -ENOMEM;
	}
	for (; s->nfamilies < t->nfam; s->nfamilies++)
		if (!(s->families[s->nfamilies].name = mem_strdup(t->fam[s->nfamilies].name))) {
			rc = -ENOMEM;
			goto out;
		}
	if ((rc = kv_cursor_open(txn->kv, &c)))
		goto out;
	n.s = s;
	if ((rc = vis_table_walk(&w, c, count_cell, &n)))
		goto out;
	for (size_t i = 0; i < s->nfamilies; i++) {
		s->cells += s->families[i].cells;
		s->raw_bytes += s->families[i].raw_bytes;
		s->stored_bytes += s->families[i].stored_bytes;
		s->key_bytes += s->families[i].key_bytes;
	}
out:
	kv_cursor_close(c);
	if (rc) {
		cs_table_stats_free(s);
		return rc;
	}
	*out = s;
	return 0;
}
