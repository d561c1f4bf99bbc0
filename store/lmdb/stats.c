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

int lm_table_stats_get(void *txn_, const char *table, cs_table_stats **out)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	cs_table_stats *s;
	kv_cursor *c = NULL;
	struct vis_walk w = { .now = cs_now_us(), .col = txn->kbuf2 };
	uint8_t pfx[5];
	bool row_counted = false;
	int rc, vis;

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
	key_table_data(pfx, t->id);
	for (rc = kv_seek(c, pfx, 5); !rc; rc = kv_next(c)) {
		const uint8_t *k, *v;
		size_t kn, vn;
		key_parts kp;
		codec_hdr h;
		struct sch_family *f;

		kv_key(c, (const void **)&k, &kn);
		if (kn < 5 || memcmp(k, pfx, 5))
			break;
		if ((rc = kv_value(c, (const void **)&v, &vn)))
			break;
		if (key_parse_cell(k, kn, &kp) || codec_header(v, vn, &h) || kp.fam_len > CS_MAX_FAMILY) {
			rc = -EIO;
			break;
		}
		if ((vis = vis_walk_step(&w, k, kn, &kp, h.seq, &f)) < 0) {
			rc = vis;
			break;
		}
		if (w.new_row)
			row_counted = false;
		if (txn->st->asof && kp.ts > txn->st->asof_us)
			continue; /* an as-of store: not there, neither as a cell nor as garbage */
		if (f && w.version > s->families[f - t->fam].max_versions)
			s->families[f - t->fam].max_versions = w.version;
		if (vis) {
			cs_family_stats *fs = &s->families[f - t->fam];
			fs->cells++;
			fs->raw_bytes += h.rawlen;
			fs->stored_bytes += vn;
			fs->key_bytes += kn;
			if (!row_counted)
				s->rows++;
			row_counted = true;
		} else {
			/* in the schema and not dropped: what hides it is the family's GC policy */
			if (f && h.seq >= f->since && h.seq >= w.hide)
				s->families[f - t->fam].collected_cells++;
			s->garbage_cells++;
			s->garbage_bytes += kn + vn;
		}
	}
	vis_walk_end(&w);
	if (rc == -ENOENT)
		rc = 0;
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
