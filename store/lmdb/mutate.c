/* mutate.c — row mutations (atomic per row: everything is validated before the first write, and a
 * failed write fails the whole transaction), ReadModifyWrite, CheckAndMutate, dropping row ranges and
 * moving a subtree of rows to another key (cs_move_prefix). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mutate.h"
#include "aggregate.h"
#include "codec.h"
#include "keys.h"
#include "mem.h"
#include "read.h"
#include "schema.h"
#include "lm.h"
#include "vis.h"

static int check_row(cs_bytes row)
{
	if (row.len == 0)
		return -EINVAL;
	return row.len > CS_MAX_ROW_KEY ? -ENAMETOOLONG : 0;
}

/* Whether M writes a cell of the kind FAMILY holds: CS_SET_CELL plain bytes, CS_ADD_TO_CELL an input to
 * merge into an aggregate family's cell. Either into the other kind of family is -EINVAL. */
static int check_kind(const struct sch_table *t, const cs_mutation *m)
{
	const struct sch_family *f = sch_family_find(t, m->family);
	if (!f)
		return -ENOENT;
	return (f->type != CS_TYPE_BYTES) == (m->op == CS_ADD_TO_CELL) ? 0 : -EINVAL;
}

static int validate(lm_txn *txn, struct sch_table *t, const cs_mutation *m, size_t n)
{
	int rc;

	for (size_t i = 0; i < n; i++) {
		switch (m[i].op) {
		case CS_SET_CELL:
		case CS_ADD_TO_CELL:
			if (m[i].ts < 0 && m[i].ts != CS_TS_NOW)
				return -EINVAL;
			if (m[i].op == CS_SET_CELL && m[i].value.len > txn->st->max_value)
				return -EFBIG;
			if (m[i].qualifier.len > CS_MAX_QUALIFIER)
				return -ENAMETOOLONG;
			if (!m[i].family)
				return -ENOENT;
			if ((rc = check_kind(t, &m[i])))
				return rc;
			break;
		case CS_DELETE_COLUMN:
			if (m[i].op == CS_DELETE_COLUMN && (m[i].ts_start < 0 || m[i].ts_end < 0))
				return -EINVAL; /* a negative end would overflow the seek key */
			if (m[i].qualifier.len > CS_MAX_QUALIFIER)
				return -ENAMETOOLONG;
			/* fall through */
		case CS_DELETE_FAMILY:
			if (!m[i].family || !sch_family_find(t, m[i].family))
				return -ENOENT;
			break;
		case CS_DELETE_ROW:
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

/* Find TABLE for writing ROW: the common checks of every write call. */
static int write_begin(lm_txn *txn, const char *table, cs_bytes row, struct sch_table **t)
{
	int rc = lm_txn_write_check(txn);
	if (rc)
		return rc;
	if ((rc = check_row(row)))
		return rc;
	rc = sch_table_get(txn, table, t);
	return rc == -ENOENT || !rc ? rc : lm_txn_fail(txn, rc);
}

int mut_mark_drops(lm_txn *txn, struct sch_table *t, cs_bytes row)
{
	int rc;
	if (!t->ndrops)
		return 0;
	if ((rc = sch_drops_load(txn, t)))
		return rc;
	for (size_t i = 0; i < t->ndrop_list; i++) {
		struct sch_drop *d = &t->drops[i];
		uint8_t *v;
		if (d->dirty || !vis_drop_covers(d, row.data, row.len))
			continue;
		/* A row inside this range is written again: reads can no longer skip the range whole. */
		if (!(v = mem_malloc(d->endn + 1)))
			return lm_txn_fail(txn, -ENOMEM);
		v[0] = (uint8_t)((d->has_end ? 1 : 0) | 2);
		memcpy(v + 1, d->end, d->endn);
		rc = kv_put(txn->kv, d->xkey, d->xkeyn, v, d->endn + 1);
		free(v);
		if (rc)
			return rc;
		d->dirty = true;
	}
	return 0;
}

/* The value CS_ADD_TO_CELL writes at (ROW, F:Q, TS) of table T: INPUT merged into the visible cell there,
 * or INPUT if a read returns no cell there. OUT gets it, 8 bytes big-endian.
 * Errors: -EIO (the cell there is not 8 bytes long: a corrupt store), -ENOMEM, a read's errors. */
static int add_value_at(lm_txn *txn, struct sch_table *t, cs_bytes row, const struct sch_family *f,
			cs_bytes q, int64_t ts, int64_t input, uint8_t out[8])
{
	/* A scan decides visibility (GC policy, drops, the family's age) as every read does; the timestamp
	 * range only filters what it returns, after versions are counted. */
	cs_column_sel sel = { .family = f->name, .qualifier = &q };
	cs_read_opts o = { .row = &row, .ncolumns = 1, .columns = &sel, .ts_start = ts,
			   .ts_end = ts == INT64_MAX ? CS_TS_MAX : ts + 1 };
	const cs_row *r;
	lm_scan *s;
	int64_t v = input;
	int rc = lm_scan_open(txn, t->name, &o, &s);

	if (rc)
		return rc;
	rc = lm_scan_next(s, &r);
	if (rc == 1) {
		const cs_cell *c = &r->cells[0];
		if (c->value.len != 8) {
			rc = -EIO; /* only AddToCell writes here, always 8 bytes */
		} else {
			v = agg_merge(f->type, (int64_t)key_get_u64(c->value.data), input);
			rc = 0;
		}
	}
	lm_scan_close(s);
	if (rc < 0)
		return rc;
	key_put_u64(out, (uint64_t)v);
	return 0;
}

/* Delete every key that starts with the KN-byte prefix at K (kbuf), beginning at K itself; with
 * MIN_TS >= 0, stop at the first cell older than MIN_TS (cell keys sort newest first). */
static int del_prefix(lm_txn *txn, size_t seekn, size_t pfxn, int64_t min_ts)
{
	uint8_t *k = txn->kbuf;
	kv_cursor *c;
	int rc;

	if ((rc = kv_cursor_open(txn->kv, &c)))
		return rc;
	for (rc = kv_seek(c, k, seekn); !rc; rc = kv_seek(c, k, seekn)) {
		const uint8_t *ck;
		size_t ckn;
		kv_key(c, (const void **)&ck, &ckn);
		if (ckn < pfxn || memcmp(ck, k, pfxn))
			break;
		if (min_ts >= 0 && ckn >= 8 && INT64_MAX - (int64_t)key_get_u64(ck + ckn - 8) < min_ts)
			break;
		/* Seek again from the deleted key: the next one is the first key >= it. */
		memcpy(k, ck, ckn);
		seekn = ckn;
		if ((rc = kv_del(txn->kv, k, ckn)))
			break;
	}
	kv_cursor_close(c);
	return rc == -ENOENT ? 0 : rc;
}

/* Write the cell (ROW, FAMILY:Q, TS) = VALUE. */
static int put_cell(lm_txn *txn, struct sch_table *t, cs_bytes row, const char *family, cs_bytes q, int64_t ts,
		    cs_bytes value)
{
	uint8_t *k = txn->kbuf;
	const void *rec;
	size_t kn, recn;
	uint64_t seq;
	int rc;

	if ((rc = lm_txn_seq(txn, &seq)) || (rc = mut_mark_drops(txn, t, row)))
		return rc;
	if ((rc = codec_encode(value.data, value.len, seq, &txn->scratch, &txn->scratch_cap, &rec, &recn)))
		return rc;
	kn = key_cell(k, t->id, row, family, q, ts);
	return kv_put(txn->kv, k, kn, rec, recn);
}

static int apply(lm_txn *txn, struct sch_table *t, cs_bytes row, const cs_mutation *m, int64_t now)
{
	uint8_t *k = txn->kbuf, num[8];
	size_t kn;
	int64_t ts, end;
	int rc;

	switch (m->op) {
	case CS_SET_CELL:
		ts = m->ts == CS_TS_NOW ? now : m->ts;
		return put_cell(txn, t, row, m->family, m->qualifier, ts, m->value);
	case CS_ADD_TO_CELL:
		ts = m->ts == CS_TS_NOW ? now : m->ts;
		if ((rc = add_value_at(txn, t, row, sch_family_find(t, m->family), m->qualifier, ts, m->input, num)))
			return rc;
		return put_cell(txn, t, row, m->family, m->qualifier, ts, CS_BYTES(num, 8));
	case CS_DELETE_COLUMN:
		end = m->ts_end == 0 || m->ts_end == CS_TS_MAX ? CS_TS_MAX : m->ts_end;
		kn = key_column(k, t->id, row, m->family, m->qualifier);
		if (end <= m->ts_start)
			return 0;
		if (end == CS_TS_MAX)
			return del_prefix(txn, kn, kn, m->ts_start > 0 ? m->ts_start : -1);
		key_put_u64(k + kn, (uint64_t)(INT64_MAX - (end - 1)));
		return del_prefix(txn, kn + 8, kn, m->ts_start > 0 ? m->ts_start : -1);
	case CS_DELETE_FAMILY:
		kn = key_family(k, t->id, row, m->family);
		return del_prefix(txn, kn, kn, -1);
	case CS_DELETE_ROW:
		kn = key_row(k, t->id, row);
		return del_prefix(txn, kn, kn, -1);
	}
	return -EINVAL;
}

static int apply_all(lm_txn *txn, struct sch_table *t, cs_bytes row, const cs_mutation *m, size_t n)
{
	int64_t now = cs_now_us();
	for (size_t i = 0; i < n; i++) {
		int rc = apply(txn, t, row, &m[i], now);
		if (rc)
			return lm_txn_fail(txn, rc);
	}
	if (n) /* one write of the row, counted if TXN commits */
		lm_heat_wrote(txn, t, row);
	return 0;
}

int lm_row_mutate(void *txn_, const char *table, cs_bytes row, const cs_mutation *m, size_t n)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	int rc = write_begin(txn, table, row, &t);
	if (rc)
		return rc;
	if ((rc = validate(txn, t, m, n)))
		return rc;
	return apply_all(txn, t, row, m, n);
}

/* The newest visible cell of a column, for ReadModifyWrite: (*TS = -1, empty) when there is none. */
static int rmw_read(lm_txn *txn, struct sch_table *t, cs_bytes row, const char *family, cs_bytes q,
		    int64_t *ts, void **val, size_t *vlen)
{
	int rc = read_newest(txn, t, row, family, q, ts, val, vlen);
	if (rc == -ENOENT) {
		*ts = -1;
		*val = NULL;
		*vlen = 0;
		return 0;
	}
	return rc;
}

static int rmw_write(lm_txn *txn, struct sch_table *t, cs_bytes row, const char *family, cs_bytes q,
		     int64_t newest, const void *v, size_t vn, int64_t *ts_out)
{
	int64_t now = cs_now_us();
	cs_mutation m = { .op = CS_SET_CELL, .family = family, .qualifier = q, .value = { v, vn } };
	m.ts = newest > now ? newest : now;
	if (ts_out)
		*ts_out = m.ts;
	return apply_all(txn, t, row, &m, 1);
}

static int rmw_begin(lm_txn *txn, const char *table, cs_bytes row, const char *family, cs_bytes q,
		     struct sch_table **t)
{
	cs_mutation probe = { .op = CS_DELETE_COLUMN, .family = family, .qualifier = q };
	int rc = write_begin(txn, table, row, t);
	return rc ? rc : validate(txn, *t, &probe, 1);
}

/* rmw_begin() for a ReadModifyWrite, which writes plain cells: refused in an aggregate family. */
static int rmw_plain_begin(lm_txn *txn, const char *table, cs_bytes row, const char *family, cs_bytes q,
			   struct sch_table **t)
{
	cs_mutation probe = { .op = CS_SET_CELL, .family = family, .qualifier = q };
	int rc = rmw_begin(txn, table, row, family, q, t);
	return rc ? rc : check_kind(*t, &probe);
}

int lm_rmw_append(void *txn_, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		  cs_bytes suffix, int64_t *ts)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	void *old, *nv;
	size_t oldn;
	int64_t oldts;
	int rc = rmw_plain_begin(txn, table, row, family, qualifier, &t);

	if (rc)
		return rc;
	if ((rc = rmw_read(txn, t, row, family, qualifier, &oldts, &old, &oldn)))
		return lm_txn_fail(txn, rc);
	if (oldn + suffix.len > txn->st->max_value) {
		free(old);
		return -EFBIG;
	}
	if (!(nv = mem_realloc(old, oldn + suffix.len + 1))) {
		free(old);
		return lm_txn_fail(txn, -ENOMEM);
	}
	if (suffix.len)
		memcpy((uint8_t *)nv + oldn, suffix.data, suffix.len);
	rc = rmw_write(txn, t, row, family, qualifier, oldts, nv, oldn + suffix.len, ts);
	free(nv);
	return rc;
}

int lm_rmw_increment(void *txn_, const char *table, cs_bytes row, const char *family,
		     cs_bytes qualifier, int64_t delta, int64_t *result)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	void *old;
	size_t oldn;
	int64_t oldts;
	uint64_t v = 0;
	uint8_t nv[8];
	int rc = rmw_plain_begin(txn, table, row, family, qualifier, &t);

	if (rc)
		return rc;
	if ((rc = rmw_read(txn, t, row, family, qualifier, &oldts, &old, &oldn)))
		return lm_txn_fail(txn, rc);
	if (old && oldn != 8) {
		free(old);
		return -EINVAL;
	}
	if (old)
		v = key_get_u64(old);
	free(old);
	v += (uint64_t)delta; /* two's complement: wraps */
	key_put_u64(nv, v);
	if (result)
		*result = (int64_t)v;
	return rmw_write(txn, t, row, family, qualifier, oldts, nv, 8, NULL);
}

int lm_check_and_mutate(void *txn_, const char *table, cs_bytes row, const cs_predicate *pred,
			const cs_mutation *true_m, size_t n_true, const cs_mutation *false_m, size_t n_false,
			bool *matched)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	void *val;
	size_t vn;
	int64_t ts;
	bool ok;
	int rc = rmw_begin(txn, table, row, pred->family, pred->qualifier, &t);

	if (rc)
		return rc;
	if ((rc = validate(txn, t, true_m, n_true)) || (rc = validate(txn, t, false_m, n_false)))
		return rc;
	if ((rc = rmw_read(txn, t, row, pred->family, pred->qualifier, &ts, &val, &vn)))
		return lm_txn_fail(txn, rc);
	ok = ts >= 0 && (!pred->value_equals ||
			 (pred->value_equals->len == vn && (!vn || !memcmp(val, pred->value_equals->data, vn))));
	free(val);
	if (matched)
		*matched = ok;
	return ok ? apply_all(txn, t, row, true_m, n_true) : apply_all(txn, t, row, false_m, n_false);
}

int lm_drop_prefix(void *txn_, const char *table, cs_bytes prefix)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	uint8_t *k = txn->kbuf, *v;
	size_t kn, endn;
	uint64_t seq;
	int rc = lm_txn_write_check(txn);

	if (rc)
		return rc;
	if ((rc = sch_table_get(txn, table, &t)))
		return rc == -ENOENT ? rc : lm_txn_fail(txn, rc);
	if (prefix.len > CS_MAX_ROW_KEY)
		return -ENAMETOOLONG;
	if (!prefix.len) {
		/* Every row: the table moves to a fresh id; the old id's cells are left for lm_gc(). */
		if ((rc = sch_new_table_id(txn, &t->id)))
			return rc;
		t->ndrops = 0;
		t->drops_loaded = false;
		return sch_table_put(txn, t);
	}
	if ((rc = lm_txn_seq_bump(txn, &seq)))
		return lm_txn_fail(txn, rc);
	if (!(v = mem_malloc(prefix.len + 1)))
		return lm_txn_fail(txn, -ENOMEM);
	memcpy(v + 1, prefix.data, prefix.len);
	endn = prefix.len;
	while (endn && v[endn] == 0xFF)
		endn--;
	v[0] = endn ? 1 : 0; /* has an end */
	if (endn)
		v[endn]++;
	k[0] = KEY_DROP;
	key_put_u32(k + 1, t->id);
	kn = KEY_TABLE_PREFIX + key_enc(k + KEY_TABLE_PREFIX, prefix.data, prefix.len);
	key_put_u64(k + kn, seq);
	rc = kv_put(txn->kv, k, kn + 8, v, endn + 1);
	free(v);
	if (rc)
		return lm_txn_fail(txn, rc);
	t->ndrops++;
	t->drops_loaded = false;
	return sch_table_put(txn, t);
}

/* ---- moving rows ---- */

/* The state of lm_move_prefix(): a walk over the cells under one key prefix, deciding each cell's
 * visibility as a read does (vis_cell(), per column in key order), and what the callbacks need. */
struct mv {
	lm_txn *txn;
	struct sch_table *t;
	kv_cursor *c;
	int64_t now;
	cs_bytes from, to;
	uint64_t max, count;
	uint64_t seq;      /* the sequence moved cells are written at */
	uint8_t *k;        /* the current cell's key, copied: a write invalidates the cursor's */
	uint8_t *rpfx;     /* 'd' tid enc(row) of the current row */
	size_t rpfxn;
	uint8_t *row;      /* the current row, decoded */
	size_t rown;
	uint8_t *col;      /* the current column: its key without the timestamp */
	size_t coln;
	uint32_t version;  /* cells of the column so far, for GC policies */
	uint64_t hide;     /* cells of the row written before this sequence are dropped */
	bool new_row;      /* the current cell is its row's first */
	bool marked;       /* the current row's destination has had its drops marked */
	uint8_t *nrow;     /* the destination row: TO + the row after FROM */
	size_t nrown;
	uint8_t *dk;       /* the destination key */
};

enum { MV_NEXT, MV_RESEEK };
/* Called for each cell (key m->k, KN bytes, row part ending at ROW_END; value V, VN bytes, borrowed
 * until the first write). Returns MV_NEXT, MV_RESEEK (the cell was deleted: seek again from its key)
 * or a negative errno, which ends the walk. */
typedef int (*mv_fn)(struct mv *m, size_t kn, size_t row_end, const void *v, size_t vn, bool visible);

/* A drop covering ROW that no write has touched since it was made: nothing under it is visible. */
static const struct sch_drop *clean_drop(const struct sch_table *t, const uint8_t *row, size_t n)
{
	for (size_t i = 0; i < t->ndrop_list; i++)
		if (!t->drops[i].dirty && vis_drop_covers(&t->drops[i], row, n))
			return &t->drops[i];
	return NULL;
}

/* Call FN for every cell whose key starts with the PFXN bytes at PFX, in key order, skipping in one seek
 * each range under a clean drop (as scans do: its cells are hidden, and may stay where they are). */
static int mv_walk(struct mv *m, const uint8_t *pfx, size_t pfxn, mv_fn fn)
{
	size_t seekn = pfxn;
	int rc;

	memcpy(m->k, pfx, pfxn);
	m->rpfxn = m->coln = 0;
	for (rc = kv_seek(m->c, m->k, seekn); !rc;) {
		const uint8_t *k, *v;
		size_t kn, vn, row_end;
		const struct sch_drop *clean;
		struct sch_family *f = NULL;
		key_parts kp;
		codec_hdr h;
		bool vis;

		if ((rc = kv_pair(m->c, (const void **)&k, &kn, (const void **)&v, &vn)))
			break;
		if (kn < pfxn || memcmp(k, pfx, pfxn))
			break;
		if (key_parse_cell(k, kn, &kp) || codec_header(v, vn, &h)) {
			rc = -EIO;
			break;
		}
		row_end = kp.row_off + kp.row_len;
		if (row_end != m->rpfxn || memcmp(k, m->rpfx, row_end)) {
			memcpy(m->rpfx, k, row_end);
			m->rpfxn = row_end;
			if (key_dec(k + kp.row_off, kp.row_len, m->row, &m->rown) < 0) {
				rc = -EIO;
				break;
			}
			if ((clean = clean_drop(m->t, m->row, m->rown))) {
				if (!clean->has_end)
					break;
				seekn = key_table_data(m->k, m->t->id);
				seekn += key_esc(m->k + seekn, clean->end, clean->endn);
				m->rpfxn = 0;
				rc = kv_seek(m->c, m->k, seekn);
				continue;
			}
			m->hide = vis_hide_seq(m->t, m->row, m->rown, NULL);
			m->new_row = true;
		}
		if (kn - 8 != m->coln || memcmp(k, m->col, m->coln)) {
			m->coln = kn - 8;
			memcpy(m->col, k, m->coln);
			m->version = 0;
		}
		if (kp.fam_len <= CS_MAX_FAMILY) {
			char fam[CS_MAX_FAMILY + 1];
			memcpy(fam, k + kp.fam_off, kp.fam_len);
			fam[kp.fam_len] = 0;
			f = sch_family_find(m->t, fam);
		}
		vis = vis_cell(f, false, h.seq, m->hide, &m->version, kp.ts, m->now);
		memcpy(m->k, k, kn);
		rc = fn(m, kn, row_end, v, vn, vis);
		m->new_row = false;
		if (rc < 0)
			break;
		rc = rc == MV_RESEEK ? kv_seek(m->c, m->k, kn) : kv_next(m->c);
	}
	return rc == -ENOENT ? 0 : rc;
}

/* Validation, source side: count what would move; refuse too many and keys that would be too long. */
static int mv_count(struct mv *m, size_t kn, size_t row_end, const void *v, size_t vn, bool visible)
{
	if (!visible)
		return MV_NEXT;
	if (m->rown - m->from.len + m->to.len > CS_MAX_ROW_KEY)
		return -ENAMETOOLONG;
	if (++m->count > m->max && m->max)
		return -EXDEV;
	return MV_NEXT;
}

/* Validation, destination side: a visible cell there means the rows would merge. */
static int mv_check_dest(struct mv *m, size_t kn, size_t row_end, const void *v, size_t vn, bool visible)
{
	return visible ? -EEXIST : MV_NEXT;
}

/* Before moving: remove the destination's hidden cells, so that none of them (a GC-collected version
 * still counted as one) can hide or be revealed by the cells moved in. */
static int mv_clear_dest(struct mv *m, size_t kn, size_t row_end, const void *v, size_t vn, bool visible)
{
	int rc;
	if (visible)
		return -EIO; /* checked before: cannot happen */
	return (rc = kv_del(m->txn->kv, m->k, kn)) ? rc : MV_RESEEK;
}

/* Move a visible cell (same key after the row, same timestamp and value, a fresh sequence so that drops
 * of the destination made before the move do not hide it); delete a hidden one. */
static int mv_move(struct mv *m, size_t kn, size_t row_end, const void *v, size_t vn, bool visible)
{
	lm_txn *txn = m->txn;
	int rc;

	if (m->new_row) {
		size_t rest = m->rown - m->from.len;
		/* A row whose key would be too long has no visible cell (checked before): it is only deleted. */
		m->nrown = 0;
		if (m->rown >= m->from.len && rest + m->to.len <= CS_MAX_ROW_KEY) {
			memcpy(m->nrow, m->to.data, m->to.len);
			if (rest)
				memcpy(m->nrow + m->to.len, m->row + m->from.len, rest);
			m->nrown = m->to.len + rest;
		}
		m->marked = false;
	}
	if (visible) {
		const void *rec;
		size_t recn, dkn;
		if (!m->nrown)
			return -EIO; /* checked before: cannot happen */
		/* The record first: V is borrowed until the first write. */
		if ((rc = codec_reseq(v, vn, m->seq, &txn->scratch, &txn->scratch_cap, &rec, &recn)))
			return rc;
		if (!m->marked) {
			if ((rc = mut_mark_drops(txn, m->t, CS_BYTES(m->nrow, m->nrown))))
				return rc;
			m->marked = true;
		}
		dkn = key_row(m->dk, m->t->id, CS_BYTES(m->nrow, m->nrown));
		memcpy(m->dk + dkn, m->k + row_end, kn - row_end);
		dkn += kn - row_end;
		if ((rc = kv_put(txn->kv, m->dk, dkn, rec, recn)))
			return rc;
		m->count++;
	}
	return (rc = kv_del(txn->kv, m->k, kn)) ? rc : MV_RESEEK;
}

/* Whether A is B or lies under it: A == B, or A starts with B followed by DELIM. */
static bool row_under(cs_bytes a, cs_bytes b, char delim)
{
	return a.len >= b.len && !memcmp(a.data, b.data, b.len) &&
	       (a.len == b.len || ((const uint8_t *)a.data)[b.len] == (uint8_t)delim);
}

/* The key prefix of the exact row R (SUB false) or of the rows under R + DELIM (SUB true). TMP has room
 * for R and one byte. */
static size_t mv_prefix(uint8_t *out, uint32_t tid, cs_bytes r, char delim, bool sub, uint8_t *tmp)
{
	size_t n;
	if (!sub)
		return key_row(out, tid, r);
	memcpy(tmp, r.data, r.len);
	tmp[r.len] = (uint8_t)delim;
	n = key_table_data(out, tid);
	return n + key_esc(out + n, tmp, r.len + 1);
}

int lm_move_prefix(void *txn_, const char *table, cs_bytes from, cs_bytes to, uint64_t max_cells,
		   uint64_t *moved)
{
	lm_txn *txn = txn_;
	struct sch_table *t;
	struct mv m = { 0 };
	/* Prefixes: source row, source subtree, destination row, destination subtree. */
	size_t pn[4], pcap = KEY_TABLE_PREFIX + 2 * (CS_MAX_ROW_KEY + 1) + 2;
	uint8_t *pfx[4], *mem;
	int rc = lm_txn_write_check(txn);

	if (moved)
		*moved = 0;
	if (rc)
		return rc;
	if ((rc = sch_table_get(txn, table, &t)))
		return rc == -ENOENT ? rc : lm_txn_fail(txn, rc);
	if (!from.len || !to.len)
		return -EINVAL;
	if (row_under(to, from, t->delim) || row_under(from, to, t->delim))
		return -EINVAL; /* the subtrees overlap: moving a directory into itself, or onto an ancestor */
	if (from.len > CS_MAX_ROW_KEY || to.len > CS_MAX_ROW_KEY)
		return -ENAMETOOLONG;
	if ((rc = sch_drops_load(txn, t)))
		return lm_txn_fail(txn, rc);
	if (!(mem = mem_malloc(5 * (size_t)KEY_MAX + CS_MAX_ROW_KEY + 1 + 4 * pcap)))
		return lm_txn_fail(txn, -ENOMEM);
	m.txn = txn;
	m.t = t;
	m.now = cs_now_us();
	m.from = from;
	m.to = to;
	m.max = max_cells;
	m.k = mem;
	m.rpfx = m.k + KEY_MAX;
	m.row = m.rpfx + KEY_MAX;
	m.col = m.row + KEY_MAX;
	m.dk = m.col + KEY_MAX;
	m.nrow = m.dk + KEY_MAX;
	for (int i = 0; i < 4; i++) {
		pfx[i] = m.nrow + CS_MAX_ROW_KEY + 1 + (size_t)i * pcap;
		pn[i] = mv_prefix(pfx[i], t->id, i < 2 ? from : to, t->delim, i & 1, m.nrow);
	}
	if ((rc = kv_cursor_open(txn->kv, &m.c)))
		goto out;
	/* Validate, writing nothing: the destination is empty (as reads see it), then count the source. */
	if ((rc = mv_walk(&m, pfx[2], pn[2], mv_check_dest)) || (rc = mv_walk(&m, pfx[3], pn[3], mv_check_dest)) ||
	    (rc = mv_walk(&m, pfx[0], pn[0], mv_count)) || (rc = mv_walk(&m, pfx[1], pn[1], mv_count)))
		goto out;
	if (!m.count)
		goto out; /* nothing visible to move: leave everything as it is */
	/* Write: from here any failure fails the transaction. */
	m.count = 0;
	if ((rc = lm_txn_seq(txn, &m.seq)) || (rc = mv_walk(&m, pfx[2], pn[2], mv_clear_dest)) ||
	    (rc = mv_walk(&m, pfx[3], pn[3], mv_clear_dest)) || (rc = mv_walk(&m, pfx[0], pn[0], mv_move)) ||
	    (rc = mv_walk(&m, pfx[1], pn[1], mv_move)))
		lm_txn_fail(txn, rc);
out:
	kv_cursor_close(m.c);
	free(mem);
	if (rc && rc != -EEXIST && rc != -EXDEV && rc != -ENAMETOOLONG)
		lm_txn_fail(txn, rc); /* (the validation errors above leave the transaction usable) */
	if (!rc && moved)
		*moved = m.count;
	return rc;
}
