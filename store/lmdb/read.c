/* read.c — scans: rows in a key range (forward or reversed), with prefix, regex, column, timestamp and
 * per-column limits, returning only visible cells (vis.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"
#include "codec.h"
#include "heat.h"
#include "keys.h"
#include "mem.h"
#include "schema.h"
#include "lm.h"
#include "vis.h"

struct colsel {
	const char *family;
	uint8_t *q;
	size_t qn;
	bool has_q;
	cs_regex *fre, *qre; /* or NULL */
};

struct lm_scan {
	lm_txn *txn;
	struct sch_table *t;
	kv_cursor *c;
	int64_t now;
	bool reversed, keys_only;
	uint64_t limit, rows_out;
	uint32_t per_column, per_row;
	bool one_row;     /* opts->row: the scan's one row */
	uint8_t *from;    /* opts->after: its column's key prefix, where the scan starts, or NULL */
	size_t fromn;
	int64_t from_ts;  /* its timestamp: the column's cells this new or newer are passed over */
	int64_t ts_start, ts_end;
	uint8_t *lo, *hi; /* row bounds [lo, hi); hi NULL = unbounded */
	uint8_t *at;      /* where a forward scan resumes after lm_scan_seek(), or NULL */
	size_t atn;
	size_t lon, hin;
	cs_regex *row_re; /* or NULL */
	size_t ncols;
	struct colsel *cols;
	uint8_t *colpfx;  /* one exact column of one row (forward): its cells' keys start so; else NULL */
	size_t colpfxn;
	int state;        /* 0 = not started, 1 = cursor on the next row's first cell, 2 = done */
	bool ordered;     /* rpfx holds the row taken before: the next must follow it (take_row) */
	size_t famidx;    /* index in t->fam of the family found last: the likeliest next one */
	int err;
	/* the current row */
	uint8_t *rpfx;    /* 'd' tid enc(row): how every key of the row starts */
	size_t rpfxn, rpfxcap;
	uint8_t *rkey;
	size_t rkeyn, rkeycap;
	cs_cell *cells;
	size_t *qoff;     /* qualifier offsets into arena while the row is built */
	size_t ncells, cellcap, qoffcap;
	uint8_t *arena;
	size_t arenan, arenacap;
	void **owned;     /* decompressed values of the current row */
	size_t nowned, ownedcap;
	cs_row row;
	bool heat;            /* the rows it returns count as reads (heat.h) */
	struct heat_run hrun;
};

static void *dupb(const void *p, size_t n)
{
	void *d = mem_malloc(n ? n : 1);
	if (d && n)
		memcpy(d, p, n);
	return d;
}

void lm_scan_close(void *s_)
{
	lm_scan *s = s_;
	if (!s)
		return;
	if (s->heat)
		heat_run_release(s->txn->st->heat, &s->hrun);
	for (size_t i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	for (size_t i = 0; i < s->ncols; i++) {
		free(s->cols[i].q);
		cs_regex_free(s->cols[i].fre);
		cs_regex_free(s->cols[i].qre);
	}
	cs_regex_free(s->row_re);
	kv_cursor_close(s->c);
	void *bufs[] = { s->colpfx, s->from, s->cols, s->owned, s->lo, s->at, s->hi, s->rpfx, s->rkey, s->cells,
			 s->qoff, s->arena, s };
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		free(bufs[i]);
}

/* Set [lo, hi) from the options: the intersection of [start, end), the prefix range and the row. */
static int set_bounds(lm_scan *s, const cs_read_opts *o)
{
	const uint8_t *lo = o->start.data, *hi = o->end.data;
	size_t lon = o->start.len, hin = o->end.len;
	uint8_t *succ = NULL;
	int rc = 0;

	if (o->row) {
		lo = o->row->data;
		lon = o->row->len;
		if (!(succ = mem_malloc(lon + 1)))
			return -ENOMEM;
		memcpy(succ, lo, lon);
		succ[lon] = 0; /* ROW followed by a NUL byte: the next possible key */
		hi = succ;
		hin = lon + 1;
	}
	if (o->prefix.len) {
		const uint8_t *p = o->prefix.data;
		size_t n = o->prefix.len;
		if (kv_key_cmp(p, n, lo, lon) > 0) {
			lo = p;
			lon = n;
		}
		while (n && p[n - 1] == 0xFF)
			n--;
		if (n) { /* the smallest key above every key starting with the prefix */
			uint8_t *ps = mem_malloc(n);
			if (!ps) {
				free(succ);
				return -ENOMEM;
			}
			memcpy(ps, p, n);
			ps[n - 1]++;
			if (!hin || kv_key_cmp(ps, n, hi, hin) < 0) {
				free(succ);
				succ = ps;
				hi = ps;
				hin = n;
			} else {
				free(ps);
			}
		}
	}
	if (!(s->lo = dupb(lo, lon)))
		rc = -ENOMEM;
	s->lon = lon;
	if (!rc && hin) {
		if (!(s->hi = dupb(hi, hin)))
			rc = -ENOMEM;
		s->hin = hin;
	}
	free(succ);
	return rc;
}

static int scan_open_table(lm_txn *txn, struct sch_table *t, const cs_read_opts *o, lm_scan **out)
{
	static const cs_read_opts none;
	lm_scan *s;
	int rc;

	if (!o)
		o = &none;
	if ((rc = sch_drops_load(txn, t)))
		return rc;
	if (!(s = mem_calloc(1, sizeof(*s))))
		return -ENOMEM;
	s->txn = txn;
	s->t = t;
	s->now = cs_now_us();
	s->reversed = o->reversed;
	s->keys_only = o->keys_only;
	s->limit = o->limit;
	s->per_column = o->cells_per_column;
	s->per_row = o->cells_per_row;
	s->one_row = o->row != NULL;
	s->ts_start = o->ts_start;
	s->ts_end = (o->ts_start == 0 && o->ts_end == 0) ? CS_TS_MAX : o->ts_end;
	if ((rc = set_bounds(s, o)))
		goto fail;
	if (o->row_regex && (rc = cs_regex_compile(o->row_regex, &s->row_re, NULL)))
		goto fail;
	if (o->ncolumns && !(s->cols = mem_calloc(o->ncolumns, sizeof(*s->cols)))) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < o->ncolumns; i++) {
		const cs_column_sel *cs = &o->columns[i];
		struct colsel *c = &s->cols[i];
		s->ncols++;
		c->family = cs->family;
		if (cs->qualifier) {
			c->has_q = true;
			c->qn = cs->qualifier->len;
			if (!(c->q = dupb(cs->qualifier->data, c->qn))) {
				rc = -ENOMEM;
				goto fail;
			}
		}
		if (cs->family_regex && (rc = cs_regex_compile(cs->family_regex, &c->fre, NULL)))
			goto fail;
		if (cs->qualifier_regex && (rc = cs_regex_compile(cs->qualifier_regex, &c->qre, NULL)))
			goto fail;
	}
	if (o->row && !o->reversed && s->ncols == 1 && s->cols[0].family && s->cols[0].has_q && !s->cols[0].fre &&
	    !s->cols[0].qre && !s->row_re) {
		/* one column of one row (a file through the mount): seek to its cells, not the row's first */
		if (!(s->colpfx = mem_malloc(KEY_TABLE_PREFIX + 2 * o->row->len + 2 + strlen(s->cols[0].family) + 1 + 2 * s->cols[0].qn + 2))) {
			rc = -ENOMEM;
			goto fail;
		}
		s->colpfxn = key_column(s->colpfx, t->id, *o->row, s->cols[0].family,
					(cs_bytes){ s->cols[0].q, s->cols[0].qn });
	}
	if (o->after && o->row && !o->reversed && !s->colpfx) {
		const struct cs_cell *a = o->after;
		/* From the column's first cell, so that its versions are counted (GC) before those shown */
		if (!(s->from = mem_malloc(KEY_TABLE_PREFIX + 2 * o->row->len + 2 + strlen(a->family) + 1 + 2 * a->qualifier.len + 2))) {
			rc = -ENOMEM;
			goto fail;
		}
		s->fromn = key_column(s->from, t->id, *o->row, a->family, a->qualifier);
		s->from_ts = a->ts;
	}
	if ((rc = kv_cursor_open(txn->kv, &s->c)))
		goto fail;
	*out = s;
	return 0;
fail:
	lm_scan_close(s);
	return rc;
}

int lm_scan_open(lm_txn *txn, const char *table, const cs_read_opts *opts, lm_scan **out)
{
	struct sch_table *t;
	lm_scan *s;
	int rc;

	rc = sch_table_get(txn, table, &t);
	if (rc)
		return rc;
	if ((rc = scan_open_table(txn, t, opts, &s)))
		return rc;
	if (!(opts && opts->unrecorded) && !t->heat_off) {
		s->heat = true;
		heat_run_start(&s->hrun, t->name, s->reversed);
	}
	*out = s;
	return 0;
}

/* Seek to the first cell of the first row >= ROW (an empty ROW: the table's first). */
static int seek_row(lm_scan *s, const uint8_t *row, size_t n)
{
	uint8_t *k = s->txn->kbuf;
	size_t kn = key_table_data(k, s->t->id);
	kn += key_esc(k + kn, row, n);
	return kv_seek(s->c, k, kn);
}

/* Is the cursor on a cell of this table? Sets the key. */
static bool in_table(lm_scan *s, const uint8_t **k, size_t *kn)
{
	kv_key(s->c, (const void **)k, kn);
	return *kn >= KEY_TABLE_PREFIX && (*k)[0] == KEY_DATA && key_get_u32(*k + 1) == s->t->id;
}

/* 1 if a selector takes the column (FAM, Q), 0 if none does, or -ENOMEM. */
static int col_selected(const lm_scan *s, const char *fam, const uint8_t *q, size_t qn)
{
	int rc;

	if (!s->ncols)
		return 1;
	for (size_t i = 0; i < s->ncols; i++) {
		const struct colsel *c = &s->cols[i];
		if (c->family && strcmp(c->family, fam))
			continue;
		if (c->fre && (rc = cs_regex_match(c->fre, fam, strlen(fam))) <= 0) {
			if (rc < 0)
				return rc;
			continue;
		}
		if (c->has_q && (c->qn != qn || memcmp(c->q, q, qn)))
			continue;
		if (c->qre && (rc = cs_regex_match(c->qre, q, qn)) <= 0) {
			if (rc < 0)
				return rc;
			continue;
		}
		return 1;
	}
	return 0;
}

/* Whether two short byte strings are equal: inline, where a call into memcmp would cost more (a scan
 * compares a few for every cell). */
static inline bool same_bytes(const void *a, size_t an, const void *b, size_t bn)
{
	const uint8_t *x = a, *y = b;
	uint64_t u, v;
	if (an != bn)
		return false;
	if (an < 8) {
		for (size_t i = 0; i < an; i++)
			if (x[i] != y[i])
				return false;
		return true;
	}
	/* Eight bytes at a time, the last eight overlapping the ones before. */
	for (size_t i = 0; i + 8 < an; i += 8) {
		memcpy(&u, x + i, 8);
		memcpy(&v, y + i, 8);
		if (u != v)
			return false;
	}
	memcpy(&u, x + an - 8, 8);
	memcpy(&v, y + an - 8, 8);
	return u == v;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *np;
	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	if (!(np = mem_realloc(*p, ncap * elem)))
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static void row_reset(lm_scan *s)
{
	for (size_t i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	s->nowned = 0;
	s->ncells = 0;
	s->arenan = 0;
}

/* Decode the row of the cell key K into s->rpfx / s->rkey. */
static int take_row(lm_scan *s, const uint8_t *k, size_t kn)
{
	int a, rc;
	/* A decoded row is never longer than its encoding: decode once, straight into place. */
	if ((rc = grow((void **)&s->rkey, &s->rkeycap, kn - KEY_TABLE_PREFIX, 1)))
		return rc;
	if ((a = key_dec_inline(k + KEY_TABLE_PREFIX, kn - KEY_TABLE_PREFIX, s->rkey, &s->rkeyn, false)) < 0)
		return -EIO;
	/* Rows come in key order (reversed: backwards) since the last seek; one that does not is a damaged
	 * key, and showing it would show a row no lookup finds. Encoded prefixes order as the rows do. */
	if (s->ordered) {
		int c = kv_key_cmp(k, KEY_TABLE_PREFIX + (size_t)a, s->rpfx, s->rpfxn);
		if (s->reversed ? c >= 0 : c <= 0)
			return -EIO;
	}
	s->ordered = true;
	if ((rc = grow((void **)&s->rpfx, &s->rpfxcap, KEY_TABLE_PREFIX + (size_t)a, 1)))
		return rc;
	memcpy(s->rpfx, k, KEY_TABLE_PREFIX + (size_t)a);
	s->rpfxn = KEY_TABLE_PREFIX + (size_t)a;
	return 0;
}

/* The schema's family NAME (N bytes, no NUL). Rows mostly hold the same few families, so try the last
 * one found first, by its index (checked: the schema may have changed since). */
static struct sch_family *family_find(lm_scan *s, const char *name, size_t n)
{
	struct sch_family *f;
	if (s->famidx < s->t->nfam) {
		const char *last = s->t->fam[s->famidx].name;
		size_t i = 0;
		while (i < n && last[i] == name[i]) /* stops at LAST's NUL: NAME has none */
			i++;
		if (i == n && !last[n])
			return &s->t->fam[s->famidx];
	}
	if ((f = sch_family_find(s->t, name)))
		s->famidx = (size_t)(f - s->t->fam);
	return f;
}

/* Read the row whose first cell the cursor is on into s->cells, applying every filter. Leaves the
 * cursor on the next row's first cell (or returns -ENOENT-free 0 with s->state = 2 at the end). */
static int load_row(lm_scan *s)
{
	uint64_t hide = vis_hide_seq(s->t, s->rkey, s->rkeyn, NULL);
	size_t row_end = s->rpfxn;        /* where the row's keys go on to family and qualifier */
	uint8_t *colbuf = s->txn->kbuf2; /* the current column: its keys from row_end to the timestamp */
	size_t colkn = SIZE_MAX;          /* none yet */
	uint8_t *prev = s->txn->kbuf;     /* the last key's tail, from row_end */
	size_t prevn = SIZE_MAX;          /* none yet */
	uint32_t version = 0, emitted = 0;
	struct sch_family *f = NULL;
	bool never = false; /* f's policy collects nothing */
	char fam[CS_MAX_FAMILY + 1];
	size_t famn = SIZE_MAX; /* the length of the name in fam (whose family is f); none yet */
	bool full = false; /* the row has per_row cells: the rest of it is passed over */
	int rc;

	row_reset(s);
	for (;;) {
		const uint8_t *k, *v;
		uint8_t *q;
		size_t kn, vn;
		key_parts kp;
		codec_hdr h;

		if ((rc = kv_pair(s->c, (const void **)&k, &kn, (const void **)&v, &vn)))
			return rc;
		if (kn < row_end || !same_bytes(k, row_end, s->rpfx, row_end))
			return 0; /* the next row, or past the table */
		if (s->colpfx && (kn < s->colpfxn || !same_bytes(k, s->colpfxn, s->colpfx, s->colpfxn))) {
			s->state = 2; /* past the one column: the rest of the row is not wanted */
			return 0;
		}
		if (full)
			goto next;
		/* A row's keys come in order. One that does not is damaged, and a seek may not find it
		 * (column_seek() relies on this): the row is EIO, not a name no lookup finds. */
		if (prevn != SIZE_MAX && kv_key_cmp(k + row_end, kn - row_end, prev, prevn) <= 0)
			return -EIO;
		prevn = kn - row_end;
		memcpy(prev, k + row_end, prevn);
		if (key_parse_tail(k, kn, row_end, &kp))
			return -EIO;
		if ((rc = codec_header(v, vn, &h)))
			return rc;
		if (kp.fam_len > CS_MAX_FAMILY)
			goto next;
		if (!same_bytes(fam, famn, k + kp.fam_off, kp.fam_len)) {
			/* Cells of one family come together: look it up once for them. */
			memcpy(fam, k + kp.fam_off, kp.fam_len);
			fam[kp.fam_len] = 0;
			famn = kp.fam_len;
			f = family_find(s, fam, famn);
			never = f && gcp_is_never(f->policy);
		}
		/* Count the column's cells where a GC policy or a per-column limit needs it. Skipping the
		 * cells of other families is safe: a column's cells are adjacent, and colbuf holds only
		 * counted columns. */
		if ((!never || s->per_column) &&
		    !same_bytes(k + row_end, kn - 8 - row_end, colbuf, colkn)) {
			colkn = kn - 8 - row_end; /* a new column starts */
			memcpy(colbuf, k + row_end, colkn);
			version = emitted = 0;
		}
		if (!vis_cell(f, never, h.seq, hide, &version, kp.ts, s->now))
			goto next;
		if (kp.ts < s->ts_start || (s->ts_end != CS_TS_MAX && kp.ts >= s->ts_end))
			goto next;
		if (s->per_column && emitted >= s->per_column)
			goto next;
		if (s->from && kp.ts >= s->from_ts && kn - 8 == s->fromn && same_bytes(k, kn - 8, s->from, s->fromn)) {
			emitted++; /* at or before the cell to start after: counted, not returned */
			goto next;
		}
		/* The qualifier, decoded into the arena (where it stays if the cell is returned). */
		if ((rc = grow((void **)&s->arena, &s->arenacap, s->arenan + kp.qn + 1, 1)))
			return rc;
		q = s->arena + s->arenan;
		if (kp.qn != kp.q_len - 2)
			key_dec(k + kp.q_off, kp.q_len, q, &kp.qn);
		else if (kp.qn)
			memcpy(q, k + kp.q_off, kp.qn); /* nothing escaped: a plain copy */
		if ((rc = col_selected(s, f->name, q, kp.qn)) < 0)
			return rc;
		if (!rc)
			goto next;
		if ((rc = grow((void **)&s->cells, &s->cellcap, s->ncells + 1, sizeof(*s->cells))))
			return rc;
		if ((rc = grow((void **)&s->qoff, &s->qoffcap, s->ncells + 1, sizeof(size_t))))
			return rc;
		cs_cell *c = &s->cells[s->ncells];
		s->qoff[s->ncells++] = s->arenan;
		s->arenan += kp.qn;
		emitted++;
		c->family = f->name;
		c->qualifier.len = kp.qn;
		c->ts = kp.ts;
		c->value_len = h.rawlen;
		c->value.data = "";
		c->value.len = 0;
		if (!s->keys_only) {
			void *owned;
			if ((rc = grow((void **)&s->owned, &s->ownedcap, s->nowned + 1, sizeof(void *))))
				return rc;
			if ((rc = codec_value(v, vn, &h, &c->value.data, &c->value.len, &owned)))
				return rc;
			if (owned)
				s->owned[s->nowned++] = owned;
		}
		if (s->per_row && s->ncells >= s->per_row) {
			if (s->one_row) { /* nothing after this row: stop here */
				s->state = 2;
				return 0;
			}
			full = true;
		}
next:
		rc = kv_next(s->c);
		if (rc == -ENOENT) {
			s->state = 2;
			return 0;
		}
		if (rc)
			return rc;
	}
}

static void row_finish(lm_scan *s)
{
	for (size_t i = 0; i < s->ncells; i++)
		s->cells[i].qualifier.data = s->arena + s->qoff[i];
	s->row.key.data = s->rkey;
	s->row.key.len = s->rkeyn;
	s->row.ncells = s->ncells;
	s->row.cells = s->cells;
}

/* Position the cursor on the first cell of row ROW (the cursor's current row). */
static int seek_row_start(lm_scan *s)
{
	return seek_row(s, s->rkey, s->rkeyn);
}

/* The seek to the one column's keys (s->colpfx), which returned SEEK_RC: 1, on one of them; 0, the
 * column is absent; or an error. The seek finds the place a walk would (kv_seek); keys out of order
 * within the row, which could hide the column from it, are load_row()'s EIO. */
static int column_seek(lm_scan *s, int seek_rc)
{
	const uint8_t *k;
	size_t kn;

	if (seek_rc)
		return seek_rc == -ENOENT ? 0 : seek_rc;
	kv_key(s->c, (const void **)&k, &kn);
	return kn >= s->colpfxn && same_bytes(k, s->colpfxn, s->colpfx, s->colpfxn);
}

static int next_forward_rows(lm_scan *s)
{
	int rc;
	if (s->state == 0) {
		s->ordered = false;
		if (s->colpfx) {
			if ((rc = column_seek(s, kv_seek(s->c, s->colpfx, s->colpfxn))) <= 0)
				return rc; /* absent (0), or an error */
		} else if (s->from) { /* the row's cells after one (the row's bounds end the scan) */
			rc = kv_seek(s->c, s->from, s->fromn);
			if (rc == -ENOENT)
				return 0;
			if (rc)
				return rc;
		} else {
			rc = s->at ? seek_row(s, s->at, s->atn) : seek_row(s, s->lo, s->lon);
			if (rc == -ENOENT)
				return 0;
			if (rc)
				return rc;
		}
		s->state = 1;
	}
	while (s->state == 1) {
		const uint8_t *k;
		size_t kn;
		const struct sch_drop *clean;

		if (!in_table(s, &k, &kn))
			return 0;
		if ((rc = take_row(s, k, kn)))
			return rc;
		if (s->hi && kv_key_cmp(s->rkey, s->rkeyn, s->hi, s->hin) >= 0)
			return 0;
		vis_hide_seq(s->t, s->rkey, s->rkeyn, &clean);
		if (clean) { /* nothing written since this range was dropped: skip it whole */
			if (!clean->has_end)
				return 0;
			rc = seek_row(s, clean->end, clean->endn);
		} else if (s->row_re && (rc = cs_regex_match(s->row_re, s->rkey, s->rkeyn)) <= 0) {
			uint8_t *nk = s->txn->kbuf;
			size_t nkn = s->rpfxn;
			if (rc < 0)
				return rc;
			memcpy(nk, s->rpfx, nkn);
			nk[nkn - 1] = 0x02; /* just past every cell of this row */
			rc = kv_seek(s->c, nk, nkn);
		} else {
			if ((rc = load_row(s)))
				return rc;
			if (s->ncells)
				return 1;
			continue;
		}
		if (rc == -ENOENT)
			return 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int next_reversed(lm_scan *s)
{
	int rc;
	if (s->state == 0) {
		if (s->hi) {
			rc = seek_row(s, s->hi, s->hin);
			rc = rc == -ENOENT ? kv_last(s->c) : rc ? rc : kv_prev(s->c);
		} else {
			uint8_t k[KEY_TABLE_PREFIX];
			key_table_data(k, s->t->id + 1);
			rc = kv_seek(s->c, k, KEY_TABLE_PREFIX);
			rc = rc == -ENOENT ? kv_last(s->c) : rc ? rc : kv_prev(s->c);
		}
		if (rc == -ENOENT)
			return 0;
		if (rc)
			return rc;
		s->state = 1;
	}
	while (s->state == 1) {
		const uint8_t *k;
		size_t kn;
		const struct sch_drop *clean;
		bool emit = false;

		if (!in_table(s, &k, &kn))
			return 0;
		if ((rc = take_row(s, k, kn)))
			return rc;
		if (kv_key_cmp(s->rkey, s->rkeyn, s->lo, s->lon) < 0)
			return 0;
		vis_hide_seq(s->t, s->rkey, s->rkeyn, &clean);
		if (clean) {
			rc = seek_row(s, clean->start, clean->startn);
		} else {
			if ((rc = seek_row_start(s)))
				return rc == -ENOENT ? -EIO : rc;
			if (s->row_re && (rc = cs_regex_match(s->row_re, s->rkey, s->rkeyn)) < 0)
				return rc;
			if (!s->row_re || rc) {
				if ((rc = load_row(s)))
					return rc;
				emit = s->ncells > 0;
				s->state = 1;
			}
			rc = seek_row_start(s);
		}
		rc = rc == -ENOENT ? kv_last(s->c) : rc ? rc : kv_prev(s->c);
		if (rc == -ENOENT)
			s->state = 2;
		else if (rc)
			return rc;
		if (emit)
			return 1;
	}
	return 0;
}

int lm_scan_seek(void *s_, cs_bytes row)
{
	lm_scan *s = s_;
	uint8_t *at;
	if (s->reversed)
		return -EINVAL;
	if (kv_key_cmp(row.data, row.len, s->lo, s->lon) <= 0)
		row = (cs_bytes){ s->lo, s->lon };
	if (!(at = dupb(row.data, row.len)))
		return -ENOMEM;
	free(s->at);
	s->at = at;
	s->atn = row.len;
	free(s->colpfx); /* whole rows from here (load_row() starts at the row's first cell) */
	s->colpfx = NULL;
	free(s->from);
	s->from = NULL;
	if (!s->err)
		s->state = 0; /* the next call seeks there */
	return 0;
}

int lm_scan_next(void *s_, const cs_row **row)
{
	lm_scan *s = s_;
	int rc;
	if (s->err)
		return s->err;
	if (s->state == 2 || (s->limit && s->rows_out >= s->limit))
		return 0;
	rc = s->reversed ? next_reversed(s) : next_forward_rows(s);
	if (rc < 0) {
		s->err = rc;
		return rc;
	}
	if (rc == 0) {
		s->state = 2;
		return 0;
	}
	row_finish(s);
	s->rows_out++;
	if (s->heat)
		heat_run_row(s->txn->st->heat, &s->hrun, s->row.key.data, s->row.key.len);
	*row = &s->row;
	return 1;
}

int read_newest(lm_txn *txn, struct sch_table *t, cs_bytes row, const char *family, cs_bytes q,
		int64_t *ts, void **val, size_t *vlen)
{
	cs_column_sel sel = { .family = family, .qualifier = &q };
	cs_read_opts o = { .row = &row, .ncolumns = 1, .columns = &sel, .cells_per_column = 1 };
	const cs_row *r;
	lm_scan *s;
	int rc = scan_open_table(txn, t, &o, &s);

	if (rc)
		return rc;
	rc = lm_scan_next(s, &r);
	if (rc == 1) {
		*ts = r->cells[0].ts;
		*vlen = r->cells[0].value.len;
		*val = dupb(r->cells[0].value.data, *vlen);
		rc = *val ? 0 : -ENOMEM;
	} else if (rc == 0) {
		rc = -ENOENT;
	}
	lm_scan_close(s);
	return rc;
}
