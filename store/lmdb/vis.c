/* vis.c — visibility (vis.h): dropped ranges covering a row, and a walk that judges each stored cell of a
 * table in key order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vis.h"
#include "codec.h"
#include "keys.h"
#include "kv.h"
#include "mem.h"

bool vis_drop_covers(const struct sch_drop *d, const uint8_t *row, size_t n)
{
	if (kv_key_cmp(row, n, d->start, d->startn) < 0)
		return false;
	return !d->has_end || kv_key_cmp(row, n, d->end, d->endn) < 0;
}

uint64_t vis_hide_seq(const struct sch_table *t, const uint8_t *row, size_t n, const struct sch_drop **clean)
{
	uint64_t s = 0;
	if (clean)
		*clean = NULL;
	for (size_t i = 0; i < t->ndrop_list; i++) {
		const struct sch_drop *d = &t->drops[i];
		if (!vis_drop_covers(d, row, n))
			continue;
		if (d->seq > s)
			s = d->seq;
		if (clean && !d->dirty)
			*clean = d;
	}
	return s;
}

int vis_walk_step(struct vis_walk *w, const uint8_t *k, size_t kn, const struct key_parts *kp, uint64_t seq,
		  struct sch_family **f)
{
	char fam[CS_MAX_FAMILY + 1];

	w->new_row = !w->renc || kp->row_len != w->rencn || memcmp(k + kp->row_off, w->renc, w->rencn);
	if (w->new_row) {
		uint8_t *row;
		size_t rn;
		free(w->renc);
		if (!(w->renc = mem_malloc(kp->row_len)) || !(row = mem_malloc(kp->row_len)))
			return -ENOMEM;
		memcpy(w->renc, k + kp->row_off, kp->row_len);
		w->rencn = kp->row_len;
		key_dec(w->renc, w->rencn, row, &rn);
		w->hide = vis_hide_seq(w->t, row, rn, NULL);
		free(row);
	}
	if (kn - 8 != w->coln || memcmp(k, w->col, w->coln)) {
		memcpy(w->col, k, kn - 8);
		w->coln = kn - 8;
		w->version = 0;
	}
	memcpy(fam, k + kp->fam_off, kp->fam_len);
	fam[kp->fam_len] = 0;
	*f = sch_family_find(w->t, fam);
	return vis_cell(*f, false, seq, w->hide, &w->version, kp->ts, w->now);
}

void vis_walk_end(struct vis_walk *w)
{
	free(w->renc);
	w->renc = NULL;
}

int vis_table_walk(struct vis_walk *w, kv_cursor *c,
		   int (*fn)(void *ctx, const struct vis_walk *w, const struct vis_cell *cell), void *ctx)
{
	uint8_t pfx[KEY_TABLE_PREFIX];
	int rc;

	key_table_data(pfx, w->t->id);
	for (rc = kv_seek(c, pfx, sizeof(pfx)); !rc;) {
		struct vis_cell cell = { 0 };
		const void *v;
		key_parts kp;
		codec_hdr h;

		kv_key(c, (const void **)&cell.k, &cell.kn);
		if (cell.kn < sizeof(pfx) || memcmp(cell.k, pfx, sizeof(pfx)))
			break;
		if ((rc = kv_value(c, &v, &cell.vn)))
			break;
		if (key_parse_cell(cell.k, cell.kn, &kp) || codec_header(v, cell.vn, &h) || kp.fam_len > CS_MAX_FAMILY) {
			rc = -EIO;
			break;
		}
		cell.kp = &kp;
		cell.h = &h;
		if ((rc = vis_walk_step(w, cell.k, cell.kn, &kp, h.seq, &cell.f)) < 0)
			break;
		cell.visible = rc;
		if ((rc = fn(ctx, w, &cell)) == 0)
			rc = kv_next(c);
		else if (rc == 1)
			rc = 0;
	}
	vis_walk_end(w);
	return rc == -ENOENT ? 0 : rc;
}
