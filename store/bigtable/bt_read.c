/* bt_read.c — scans over ReadRows: the row range and the column filters go to Bigtable; the merged rows
 * (btm) are sorted (families come in any order), and what Bigtable does not do on read is done here:
 * cells collected by the GC policies are dropped (Bigtable collects lazily, the contract says they are
 * gone: fs/CONTRACT.md, "Data model"), then the timestamp range, cells per column, values left out, the row limit. A broken stream
 * resumes after the last committed row, a bounded number of times. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bigtable.pb-c.h"
#include "bt_internal.h"
#include "btm.h"
#include "btw.h"
#include "mem.h"

#define READ_ROWS "/google.bigtable.v2.Bigtable/ReadRows"
#define RESUMES 8 /* stream breaks survived without a committed row in between */

/* Keys one after another in one buffer: key I is blob[off[I] .. + len[I]). */
struct keys {
	uint8_t *blob;
	size_t n, cap, *off, *len, count, ocap;
};

struct bt_scan {
	bt_txn *txn;
	bt_store *st;
	struct bt_schema *sch;
	struct bt_target to;
	/* what to read */
	uint8_t *lo, *hi;  /* rows in [lo, hi); hi NULL = unbounded; lo_open: (lo, hi) */
	size_t lon, hin;
	bool lo_open, hi_closed, empty;
	char *row_re;
	bool reversed, keys_only;
	uint64_t limit, rows_out;
	uint32_t per_column, per_row;
	char *after_fam;        /* opts->after, with ROW: cells up to it are passed over (else NULL) */
	uint8_t *after_q;
	size_t after_qn;
	int64_t after_ts;
	int64_t ts_start, ts_end, now;
	Google__Bigtable__V2__RowFilter *filter; /* NULL: every cell */
	char *table;
	/* columns named exactly: chosen here (SEL), so that kept rows can answer (EXACT); one row (SINGLE) is
	 * always read whole, from the store's kept rows when it has it */
	bool exact, single, served, cache_rows;
	bool whole_ok; /* a listing (no row limit), forward: its range may be read whole first */
	size_t nsel;
	struct sel { char *family; uint8_t *q; size_t qn; bool has_q; } *sel;
	struct bt_cached *held;
	uint64_t merged;   /* rows the stream gave */
	/* a range read whole before (bt_rows_covered): its rows served from the kept ones */
	struct bt_cover *cov;
	size_t covi;
	bool cov_checked;
	/* this range being read whole: the keys seen, for bt_rows_cover() at its end */
	struct keys seen;
	/* the ranges a skip scan jumped over (pairs: from, to), for bt_ahead_children() at close */
	struct keys kids;
	bool record;
	bool sought;    /* bt_scan_seek() was called */
	int64_t opened; /* bt_mono_ms() at open: what the range held is as old as that */
	/* where it stands */
	btr_stream *s;
	btw_rr rr;      /* the message being read (held by the stream) */
	bool have_msg;
	btm *m;
	bool done;
	unsigned breaks;
	/* after a seek, streams ask for few rows first (1, 4, 16, ...), since the caller may seek again at
	 * once: Bigtable would otherwise read ahead a window of rows that are skipped */
	int64_t limit_now;    /* this stream's rows_limit, 0 = none */
	uint8_t *cap;         /* with limit_now: the sample key the stream's range ends at (closed), or NULL */
	size_t capn;
	int64_t stream_rows;  /* rows it gave */
	int err;
	/* the row handed out */
	cs_cell *cells;
	size_t *order;
	size_t ordercap;
	cs_row row;
};

/* ---- the range ----------------------------------------------------------------------------------------- */

/* Narrow [lo, hi) to [A, B) (B NULL: unbounded). */
static int narrow(struct bt_scan *s, const void *a, size_t an, const void *b, size_t bn, bool b_closed)
{
	if (an && bt_key_cmp(a, an, s->lo, s->lon) > 0) {
		free(s->lo);
		if (!(s->lo = bt_dup(a, an)))
			return -ENOMEM;
		s->lon = an;
	}
	int c = b && s->hi ? bt_key_cmp(b, bn, s->hi, s->hin) : -1;
	if (b && (c < 0 || (c == 0 && s->hi_closed && !b_closed))) {
		free(s->hi);
		if (!(s->hi = bt_dup(b, bn)))
			return -ENOMEM;
		s->hin = bn;
		s->hi_closed = b_closed;
	}
	return 0;
}

/* The first key after every key starting with P (N bytes) in *OUT, or NULL when there is none. */
static int prefix_end(const uint8_t *p, size_t n, uint8_t **out, size_t *outn)
{
	while (n && p[n - 1] == 0xff)
		n--;
	*out = NULL;
	*outn = 0;
	if (!n)
		return 0;
	if (!(*out = bt_dup(p, n)))
		return -ENOMEM;
	(*out)[n - 1]++;
	*outn = n;
	return 0;
}

static int set_range(struct bt_scan *s, const cs_read_opts *o)
{
	int rc;
	if (!(s->lo = bt_dup("", 0)))
		return -ENOMEM;
	if (o->row) {
		if ((rc = narrow(s, o->row->data, o->row->len, o->row->data, o->row->len, true)))
			return rc;
		if (o->row->len == 0)
			s->empty = true;
	}
	if ((rc = narrow(s, o->start.data, o->start.len, o->end.len ? o->end.data : NULL, o->end.len, false)))
		return rc;
	if (o->prefix.len) {
		uint8_t *e;
		size_t en;
		if ((rc = prefix_end(o->prefix.data, o->prefix.len, &e, &en)))
			return rc;
		rc = narrow(s, o->prefix.data, o->prefix.len, e, en, false);
		free(e);
		if (rc)
			return rc;
	}
	if (s->hi) {
		int c = bt_key_cmp(s->lo, s->lon, s->hi, s->hin);
		if (c > 0 || (c == 0 && !s->hi_closed))
			s->empty = true;
	}
	return 0;
}

/* ---- the stream ---------------------------------------------------------------------------------------- */

static int stream_open(struct bt_scan *s)
{
	Google__Bigtable__V2__ReadRowsRequest req = GOOGLE__BIGTABLE__V2__READ_ROWS_REQUEST__INIT;
	Google__Bigtable__V2__RowSet rows = GOOGLE__BIGTABLE__V2__ROW_SET__INIT;
	Google__Bigtable__V2__RowRange range = GOOGLE__BIGTABLE__V2__ROW_RANGE__INIT, *rp = &range;
	size_t lastn;
	const uint8_t *last = btm_last_key(s->m, &lastn);
	int queued = bt_defer_flush_range(s->st, s->table, s->lo, s->lon, s->hi, s->hin); /* (queued writes first) */

	if (queued)
		return queued;
	req.table_name = s->to.name;
	req.app_profile_id = (char *)btr_app_profile(s->st->c);
	req.filter = s->filter;
	req.reversed = s->reversed;
	if (s->lon) {
		range.start_key_case = s->lo_open ? GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_OPEN
						  : GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_CLOSED;
		range.start_key_closed = (ProtobufCBinaryData){ s->lon, s->lo };
		range.start_key_open = range.start_key_closed;
	}
	if (s->hi) {
		range.end_key_case = s->hi_closed ? GOOGLE__BIGTABLE__V2__ROW_RANGE__END_KEY_END_KEY_CLOSED
						  : GOOGLE__BIGTABLE__V2__ROW_RANGE__END_KEY_END_KEY_OPEN;
		range.end_key_open = (ProtobufCBinaryData){ s->hin, s->hi };
		range.end_key_closed = range.end_key_open;
	}
	/* resuming: only the rows beyond the last one committed (or scanned) */
	if (last && !s->reversed) {
		range.start_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_OPEN;
		range.start_key_open = (ProtobufCBinaryData){ lastn, (uint8_t *)last };
	} else if (last) {
		range.end_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__END_KEY_END_KEY_OPEN;
		range.end_key_open = (ProtobufCBinaryData){ lastn, (uint8_t *)last };
	}
	/* A few rows after a seek (a skip scan): asked for up to the next sample key only, so that a server
	 * that reads a whole range before applying the row limit (the emulator does) reads a sample's gap */
	free(s->cap);
	s->cap = NULL;
	if (s->limit_now && !s->reversed && s->st->rows) {
		struct bt_samples *sm;
		const uint8_t *from = range.start_key_case ? range.start_key_closed.data : NULL;
		size_t fromn = range.start_key_case ? range.start_key_closed.len : 0, n, i;
		if (range.start_key_case == GOOGLE__BIGTABLE__V2__ROW_RANGE__START_KEY_START_KEY_OPEN)
			from = range.start_key_open.data, fromn = range.start_key_open.len;
		if (!bt_samples_get(s->st, s->table, &sm)) {
			for (i = 0; i < bt_samples_count(sm); i++) { /* (few: a binary search is not worth it here) */
				const uint8_t *k = bt_samples_key(sm, i, &n);
				if (bt_key_cmp(k, n, from, fromn) > 0)
					break;
			}
			if (i < bt_samples_count(sm)) {
				const uint8_t *k = bt_samples_key(sm, i, &n);
				if ((!s->hi || bt_key_cmp(k, n, s->hi, s->hin) < 0) && (s->cap = bt_dup(k, n))) {
					s->capn = n;
					range.end_key_case = GOOGLE__BIGTABLE__V2__ROW_RANGE__END_KEY_END_KEY_CLOSED;
					range.end_key_closed = (ProtobufCBinaryData){ n, s->cap };
				}
			}
			bt_samples_put(sm);
		}
	}
	rows.n_row_ranges = 1;
	rows.row_ranges = &rp;
	req.rows = &rows;
	req.rows_limit = s->limit_now;
	s->stream_rows = 0;
	int rc = btr_stream_open(s->st->c, BTR_DATA, READ_ROWS, &req.base, s->to.routing, &s->s);
	return rc;
}

static void stream_drop(struct bt_scan *s)
{
	s->have_msg = false;
	btr_stream_close(s->s);
	s->s = NULL;
}

/* The next committed row from the stream in *ROW (borrowed from the merger): 1, 0 at the end, or an error.
 * A break of the stream (a retryable status) resumes after the last committed row. */
static int next_merged(struct bt_scan *s, const btm_row **row)
{
	int rc;
	for (;;) {
		if (!s->s && (rc = stream_open(s)))
			return rc;
		if (s->have_msg) {
			btm_chunk ch;
			rc = btw_rr_next(&s->rr, &ch);
			if (rc == 1) {
				rc = btm_feed(s->m, &ch, row);
				if (rc == 1) {
					s->breaks = 0, s->stream_rows++;
					btr_count_rows(s->st->c, 1, (*row)->ncells);
				}
				if (rc)
					return rc < 0 ? bt_fail(rc, NULL, btm_error(s->m)) : 1;
				continue;
			}
			if (rc == 0 && s->rr.scanned)
				btm_scanned(s->m, s->rr.scanned, s->rr.scanned_len);
			s->have_msg = false;
			if (rc == -EIO)
				rc = btr_stream_bad_message(s->s);
			if (rc < 0)
				return bt_fail(rc, btr_stream_status(s->s), NULL);
		}
		{
			const uint8_t *msg;
			size_t len;
			rc = btr_stream_next_bytes(s->s, &msg, &len);
			if (rc == 1) {
				btw_rr_start(&s->rr, msg, len);
				s->have_msg = true;
			}
		}
		if (rc == 1)
			continue;
		if (rc == 0) {
			if ((rc = btm_end(s->m)))
				return bt_fail(rc, NULL, btm_error(s->m));
			if (s->limit_now && s->stream_rows >= s->limit_now) { /* more may follow: a wider stream */
				stream_drop(s);
				btm_restart(s->m);
				s->limit_now = s->limit_now >= 256 ? 0 : 4 * s->limit_now;
				continue;
			}
			if (s->cap) { /* read up to a sample key: on from there */
				free(s->lo);
				s->lo = s->cap;
				s->lon = s->capn;
				s->lo_open = true;
				s->cap = NULL;
				stream_drop(s);
				btm_start(s->m, false);
				continue;
			}
			s->done = true;
			return 0;
		}
		{
			const btr_status *st = btr_stream_status(s->s);
			if (!btr_status_retryable(st) || ++s->breaks > RESUMES || btr_quiet(s->st->c))
				return bt_fail(rc, st, NULL);
			btr_count_retry(s->st->c);
			stream_drop(s);
			btm_restart(s->m);
			struct timespec ts = { 0, (long)btr_backoff_ms(s->breaks) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
}

void bt_chunk(const Google__Bigtable__V2__ReadRowsResponse__CellChunk *c, btm_chunk *out)
{
	*out = (btm_chunk){
		.row_key = c->row_key.data, .row_key_len = c->row_key.len,
		.has_family = c->family_name != NULL,
		.family = c->family_name ? c->family_name->value : NULL,
		.family_len = c->family_name ? strlen(c->family_name->value) : 0,
		.has_qualifier = c->qualifier != NULL,
		.qualifier = c->qualifier ? c->qualifier->value.data : NULL,
		.qualifier_len = c->qualifier ? c->qualifier->value.len : 0,
		.timestamp_micros = c->timestamp_micros,
		.labels = c->labels, .nlabels = c->n_labels,
		.value = c->value.data, .value_len = c->value.len, .value_size = c->value_size,
		.reset_row = c->row_status_case == GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_RESET_ROW && c->reset_row,
		.commit_row = c->row_status_case == GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW && c->commit_row,
	};
}

/* ---- rows ------------------------------------------------------------------------------------------------- */

static __thread const btm_row *cmp_row; /* (qsort has no context argument) */

/* Whether a column selector of a single-row scan chooses cell C. */
static bool selected(const struct bt_scan *s, const btm_cell *c)
{
	for (size_t i = 0; i < s->nsel; i++)
		if (!strcmp(s->sel[i].family, c->family) &&
		    (!s->sel[i].has_q || (s->sel[i].qn == c->qualifier_len && !memcmp(s->sel[i].q, c->qualifier, c->qualifier_len))))
			return true;
	return false;
}

static int cmp_cells(const void *pa, const void *pb)
{
	const btm_cell *a = &cmp_row->cells[*(const size_t *)pa], *b = &cmp_row->cells[*(const size_t *)pb];
	int c = strcmp(a->family, b->family);
	if (!c)
		c = bt_key_cmp(a->qualifier, a->qualifier_len, b->qualifier, b->qualifier_len);
	if (!c)
		c = (a->ts < b->ts) - (a->ts > b->ts); /* newest first */
	if (!c)
		c = (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa < *(const size_t *)pb);
	return c;
}

/* Whether cell C comes after the cell opts->after named, in the row's order (family, qualifier, newest
 * first). */
static bool after_it(const struct bt_scan *s, const btm_cell *c)
{
	int d = strcmp(c->family, s->after_fam);
	if (!d)
		d = bt_key_cmp(c->qualifier, c->qualifier_len, s->after_q, s->after_qn);
	return d > 0 || (d == 0 && c->ts < s->after_ts);
}

/* Make the public row of merged row R: sorted, duplicates (two selectors matching one cell) once, GC'd
 * cells out, then the timestamp range, cells per column, values out. 1 if a cell is left, else 0. */
static int take_row(struct bt_scan *s, const btm_row *r)
{
	size_t n = r->ncells, out = 0;
	if (n > s->ordercap) {
		size_t *o = mem_realloc(s->order, n * sizeof(*o));
		cs_cell *c = mem_realloc(s->cells, n * sizeof(*c));
		if (o)
			s->order = o;
		if (c)
			s->cells = c;
		if (!o || !c)
			return -ENOMEM;
		s->ordercap = n;
	}
	for (size_t i = 0; i < n; i++)
		s->order[i] = i;
	cmp_row = r;
	for (size_t i = 1; i < n; i++)
		if (cmp_cells(&s->order[i - 1], &s->order[i]) > 0) { /* (most rows come in order) */
			qsort(s->order, n, sizeof(*s->order), cmp_cells);
			break;
		}
	{
		const btm_cell *prev = NULL;
		uint32_t version = 0, kept = 0;
		int fam = -1;
		const char *famname = NULL;
		for (size_t i = 0; i < n; i++) {
			const btm_cell *c = &r->cells[s->order[i]];
			bool same_col = prev && !strcmp(prev->family, c->family) &&
					!bt_key_cmp(prev->qualifier, prev->qualifier_len, c->qualifier, c->qualifier_len);
			if (same_col && prev->ts == c->ts)
				continue; /* the same cell again */
			if (s->nsel && !selected(s, c))
				continue;
			if (!same_col)
				version = 0, kept = 0;
			else
				version++;
			prev = c;
			if (!famname || strcmp(famname, c->family)) {
				famname = c->family;
				fam = bt_schema_family(s->sch, c->family);
			}
			if (fam < 0) /* a family made since the schema was read: no policy known, show it */
				;
			else if (gcp_collects(s->sch->gc[fam], version, c->ts, s->now))
				continue;
			if ((s->ts_start || s->ts_end) && (c->ts < s->ts_start || c->ts >= s->ts_end))
				continue;
			if (s->per_column && kept >= s->per_column)
				continue;
			if (s->after_fam && !after_it(s, c)) {
				kept++; /* at or before the cell to start after: counted, not returned */
				continue;
			}
			if (s->per_row && out >= s->per_row)
				break;
			kept++;
			s->cells[out++] = (cs_cell){
				/* one pointer per family name (callers group cells by it): the schema's */
				.family = fam >= 0 ? s->sch->info->families[fam].name
					: out && !strcmp(s->cells[out - 1].family, c->family) ? s->cells[out - 1].family
					: c->family,
				.qualifier = { c->qualifier, c->qualifier_len },
				.ts = c->ts,
				.value = s->keys_only ? (cs_bytes){ "", 0 } : (cs_bytes){ c->value, c->value_len },
				.value_len = c->value_len,
			};
		}
	}
	if (!out)
		return 0;
	s->row.key = (cs_bytes){ r->key, r->key_len };
	s->row.ncells = out;
	s->row.cells = s->cells;
	return 1;
}

/* Add key K (N bytes) to L. 0 or -ENOMEM. */
static int keys_add(struct keys *l, const uint8_t *k, size_t n)
{
	if (l->n + n > l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 4096;
		uint8_t *b;
		while (cap < l->n + n)
			cap *= 2;
		if (!(b = mem_realloc(l->blob, cap)))
			return -ENOMEM;
		l->blob = b;
		l->cap = cap;
	}
	if (l->count == l->ocap) {
		size_t cap = l->ocap ? 2 * l->ocap : 256, *o = mem_realloc(l->off, cap * sizeof(*o)), *e;
		if (o)
			l->off = o;
		if (!o || !(e = mem_realloc(l->len, cap * sizeof(*e))))
			return -ENOMEM;
		l->len = e;
		l->ocap = cap;
	}
	if (n)
		memcpy(l->blob + l->n, k, n);
	l->off[l->count] = l->n;
	l->len[l->count++] = n;
	l->n += n;
	return 0;
}

static void keys_free(struct keys *l)
{
	free(l->blob);
	free(l->off);
	free(l->len);
}

/* Whether [LO, HI) of TABLE takes at most LIMIT bytes, by the table's samples (SampleRowKeys, kept a
 * minute): 1, 0, or the call's error. (The samples count stored bytes, the emulator's only values: the
 * read itself stops at LIMIT of memory.) */
static int fits(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin,
		uint64_t limit)
{
	struct bt_samples *sm;
	uint64_t bound;
	int rc = bt_samples_get(st, table, &sm);
	if (rc)
		return rc;
	rc = bt_samples_bound(sm, lo, lon, hi, hin, &bound);
	bt_samples_put(sm);
	return rc ? rc : bound <= limit;
}

int bt_read_whole(bt_store *st, const char *table, const struct bt_target *to, const void *lo, size_t lon,
		  const void *hi, size_t hin, uint64_t limit)
{
	struct bt_scan w = { .st = st, .to = *to, .table = (char *)table, .lo = (uint8_t *)lo, .lon = lon,
			     .hi = (uint8_t *)hi, .hin = hin };
	size_t bytes = 0;
	int64_t at = bt_mono_ms();
	const btm_row *r;
	int rc;

	if (limit > st->prefetch / 2)
		limit = st->prefetch / 2;
	if (!st->rows || bt_rows_too_big(st, table, lo, lon, hi, hin) || (rc = fits(st, table, lo, lon, hi, hin, limit)) == 0)
		return 0;
	if (rc < 0)
		return rc;
	if ((rc = btm_new(&w.m, false)))
		return rc;
	while ((rc = next_merged(&w, &r)) == 1) {
		if ((bytes += bt_rows_size(strlen(table), r->key_len, r->cells, r->ncells)) > limit) {
			bt_rows_mark_big(st, table, lo, lon, hi, hin);
			rc = 1;
			break;
		}
		bt_rows_put(st, table, r->key, r->key_len, r);
		if ((rc = keys_add(&w.seen, r->key, r->key_len)))
			break;
	}
	if (rc == 0)
		bt_rows_cover(st, table, lo, lon, hi, hin, w.seen.blob, w.seen.n, w.seen.off, w.seen.len, w.seen.count, at);
	stream_drop(&w);
	btw_rr_free(&w.rr);
	btm_free(w.m);
	keys_free(&w.seen);
	return rc < 0 ? rc : rc ? 0 : 1;
}

/* Before the scan's first row or seek: whether a range read whole holds the scan's (read whole first
 * if it may be), so that the rows kept answer it; else whether this scan reads its range whole. */
static int find_kept(struct bt_scan *s)
{
	int rc;
	s->cov_checked = true;
	if (s->single || !s->exact || s->reversed || s->empty)
		return 0;
	if (s->whole_ok && !s->lo_open && !s->hi_closed) /* (a walk's next directories, read ahead) */
		bt_ahead_reading(s->st, s->table, &s->to, s->lo, s->lon, s->hi, s->hin);
	s->cov = bt_rows_covered(s->st, s->table, s->lo, s->lon, s->hi, s->hin);
	if (!s->cov && s->whole_ok && !s->lo_open && !s->hi_closed) {
		if ((rc = bt_read_whole(s->st, s->table, &s->to, s->lo, s->lon, s->hi, s->hin, s->st->prefetch)) < 0)
			return rc;
		s->cov = bt_rows_covered(s->st, s->table, s->lo, s->lon, s->hi, s->hin);
	}
	if (s->cov)
		s->covi = bt_cover_find(s->cov, s->lo, s->lon);
	else
		s->record = s->cache_rows && !s->lo_open && !s->hi_closed;
	return 0;
}

int bt_scan_next(void *p, const cs_row **row)
{
	struct bt_scan *s = p;
	const btm_row *r;
	int rc;

	bt_clear_error();
	if (s->err)
		return s->err;
	if (s->empty || s->done || (s->limit && s->rows_out >= s->limit))
		return 0;
	if (!s->cov_checked && (rc = find_kept(s)) < 0)
		return s->err = rc;
	if (s->cov) {
		while (s->covi < bt_cover_count(s->cov)) {
			struct bt_cached *e;
			size_t kn;
			const uint8_t *k = bt_cover_key(s->cov, s->covi, &kn);
			if (s->hi && bt_key_cmp(k, kn, s->hi, s->hin) >= 0)
				break;
			s->covi++;
			if (!bt_rows_get(s->st, s->table, k, kn, &e, &r)) { /* gone meanwhile: read on from here */
				uint8_t *lo = bt_dup(k, kn);
				if (!lo)
					return s->err = -ENOMEM;
				free(s->lo);
				s->lo = lo;
				s->lon = kn;
				s->lo_open = false;
				bt_rows_cover_release(s->cov);
				s->cov = NULL;
				break;
			}
			bt_rows_release(s->held);
			s->held = e;
			if ((rc = take_row(s, r)) < 0)
				return s->err = rc;
			if (rc) {
				s->rows_out++;
				*row = &s->row;
				return 1;
			}
		}
		if (s->cov) {
			s->done = true;
			return 0;
		}
	}
	if (s->single && !s->served) {
		s->served = true;
		if (bt_rows_absent(s->st, s->table, s->lo, s->lon)) {
			s->done = true;
			return 0;
		}
		if (bt_rows_get(s->st, s->table, s->lo, s->lon, &s->held, &r)) {
			s->done = true;
			if (!r->ncells || (rc = take_row(s, r)) == 0)
				return 0;
			if (rc < 0)
				return s->err = rc;
			s->rows_out++;
			*row = &s->row;
			return 1;
		}
	}
	for (;;) {
		if ((rc = next_merged(s, &r)) <= 0) {
			if (rc < 0)
				s->err = rc;
			else if (s->single && s->cache_rows && !s->merged)
				bt_rows_put(s->st, s->table, s->lo, s->lon, NULL); /* (the row is absent) */
			else if (!s->merged && s->exact && !s->single && !s->nsel && !s->sought && !s->reversed &&
				 !s->lo_open && !s->hi_closed && !s->ts_start && !s->ts_end)
				/* a range with no row at all (no filter here drops a row: a lookup's "is there a
				 * row under K#?"): known empty, so the names below it are absent without a call */
				bt_rows_cover(s->st, s->table, s->lo, s->lon, s->hi, s->hin, NULL, 0, NULL, NULL, 0, s->opened);
			else if (s->record)
				bt_rows_cover(s->st, s->table, s->lo, s->lon, s->hi, s->hin, s->seen.blob, s->seen.n,
					      s->seen.off, s->seen.len, s->seen.count, s->opened);
			return rc;
		}
		s->merged++;
		if (s->cache_rows)
			bt_rows_put(s->st, s->table, r->key, r->key_len, r);
		if (s->record && (rc = keys_add(&s->seen, r->key, r->key_len)))
			return s->err = rc;
		if ((rc = take_row(s, r)) < 0)
			return s->err = rc;
		if (rc) {
			s->rows_out++;
			*row = &s->row;
			return 1;
		}
	}
}

int bt_scan_seek(void *p, cs_bytes row)
{
	struct bt_scan *s = p;
	int rc;
	if (s->reversed)
		return -EINVAL;
	if (!s->cov_checked && (rc = find_kept(s)) < 0)
		return s->err = rc;
	s->record = false; /* (the range is not read whole) */
	s->sought = true;
	if (s->cov) {
		if (bt_key_cmp(row.data, row.len, s->lo, s->lon) < 0)
			row = (cs_bytes){ s->lo, s->lon };
		s->covi = bt_cover_find(s->cov, row.data, row.len);
		s->done = false;
		return 0;
	}
	if (s->st->ahead && s->rows_out && row.len && s->whole_ok) {
		/* a jump over the rows of the last one's subdirectory (the mount's skip scan: from row K#s#x to
		 * K#s$, past K#s#): that subdirectory, [K#s#, K#s$), for reading ahead of a walk */
		const uint8_t *j = row.data;
		uint8_t last = j[row.len - 1];
		if (last && s->row.key.len >= row.len && !memcmp(s->row.key.data, j, row.len - 1) &&
		    ((const uint8_t *)s->row.key.data)[row.len - 1] == (uint8_t)(last - 1) &&
		    !keys_add(&s->kids, s->row.key.data, row.len) && keys_add(&s->kids, j, row.len)) {
			s->kids.count--; /* (a pair or nothing) */
			s->kids.n -= row.len;
		}
	}
	if (bt_key_cmp(row.data, row.len, s->lo, s->lon) <= 0 && !s->lo_open)
		row = (cs_bytes){ s->lo, s->lon };
	{
		uint8_t *lo = bt_dup(row.data, row.len);
		if (!lo)
			return -ENOMEM;
		free(s->lo);
		s->lo = lo;
		s->lon = row.len;
		s->lo_open = false;
	}
	stream_drop(s);
	btm_start(s->m, false);
	s->done = false;
	s->served = true; /* (the stream from here) */
	s->limit_now = 1;
	if (s->hi) {
		int c = bt_key_cmp(s->lo, s->lon, s->hi, s->hin);
		if (c > 0 || (c == 0 && !s->hi_closed))
			s->done = true;
	}
	return 0;
}

void bt_scan_close(void *p)
{
	struct bt_scan *s = p;
	if (!s)
		return;
	stream_drop(s);
	btw_rr_free(&s->rr);
	btm_free(s->m);
	bt_filter_free(s->filter);
	bt_rows_release(s->held);
	bt_rows_cover_release(s->cov);
	if (s->kids.count)
		bt_ahead_children(s->st, s->table, s->kids.blob, s->kids.off, s->kids.len, s->kids.count / 2);
	keys_free(&s->seen);
	keys_free(&s->kids);
	for (size_t i = 0; i < s->nsel; i++) {
		free(s->sel[i].family);
		free(s->sel[i].q);
	}
	free(s->sel);
	free(s->after_fam);
	free(s->after_q);
	free(s->table);
	bt_schema_put(s->sch);
	free(s->lo);
	free(s->hi);
	free(s->cap);
	free(s->row_re);
	free(s->cells);
	free(s->order);
	free(s);
}

int bt_scan_open(void *txn, const char *table, const cs_read_opts *opts, void **out)
{
	bt_txn *t = txn;
	cs_read_opts none = { 0 };
	struct bt_scan *s;
	int rc;

	bt_clear_error();
	if (!opts)
		opts = &none;
	if (!(s = mem_calloc(1, sizeof(*s))))
		return -ENOMEM;
	s->txn = t;
	s->st = t->st;
	s->opened = bt_mono_ms();
	if ((rc = bt_schema_get(t->st, table, &s->sch)))
		goto fail;
	if (!(s->table = mem_strdup(table)) || (rc = bt_target(t->st, table, &s->to)) ||
	    (rc = set_range(s, opts)) || (rc = btm_new(&s->m, opts->reversed))) {
		rc = rc ? rc : -ENOMEM;
		goto fail;
	}
	/* Columns named exactly (the mount's reads): chosen here, so that kept rows can answer; one such row
	 * is read whole and kept. */
	s->exact = t->st->rows && !opts->row_regex && !s->empty;
	for (size_t i = 0; s->exact && i < opts->ncolumns; i++)
		if (!opts->columns[i].family || opts->columns[i].family_regex || opts->columns[i].qualifier_regex)
			s->exact = false;
	s->single = s->exact && opts->row;
	s->whole_ok = s->exact && !opts->limit && !opts->reversed;
	if (s->exact && opts->ncolumns) {
		if (!(s->sel = mem_calloc(opts->ncolumns, sizeof(*s->sel)))) {
			rc = -ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < opts->ncolumns; i++, s->nsel++) {
			const cs_column_sel *c = &opts->columns[i];
			struct sel *x = &s->sel[i];
			x->has_q = c->qualifier != NULL;
			x->qn = x->has_q ? c->qualifier->len : 0;
			if (!(x->family = mem_strdup(c->family)) || !(x->q = bt_dup(x->has_q ? c->qualifier->data : "", x->qn))) {
				free(x->family);
				rc = -ENOMEM;
				goto fail;
			}
		}
	}
	if (!s->single && (rc = bt_filter_build(opts, &s->filter)))
		goto fail;
	s->cache_rows = t->st->rows && !s->filter;
	s->reversed = opts->reversed;
	s->keys_only = opts->keys_only;
	s->limit = opts->limit;
	s->per_column = opts->cells_per_column;
	s->per_row = opts->cells_per_row;
	if (opts->after && opts->row && !opts->reversed) {
		if (!(s->after_fam = mem_strdup(opts->after->family)) ||
		    !(s->after_q = mem_malloc(opts->after->qualifier.len + 1))) {
			rc = -ENOMEM;
			goto fail;
		}
		memcpy(s->after_q, opts->after->qualifier.data, opts->after->qualifier.len);
		s->after_qn = opts->after->qualifier.len;
		s->after_ts = opts->after->ts;
	}
	s->ts_start = opts->ts_start;
	s->ts_end = opts->ts_end;
	s->now = bt_now_ts();
	*out = s;
	return 0;
fail:
	bt_scan_close(s);
	return rc;
}
