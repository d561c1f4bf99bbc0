/* mutate.c — row mutations (atomic per row: everything is validated before the first write, and a
 * failed write fails the whole transaction), ReadModifyWrite, CheckAndMutate, dropping row ranges and
 * physical clean-up (cs_gc). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "keys.h"
#include "store_internal.h"

static int check_row(cs_bytes row)
{
	if (row.len == 0)
		return -EINVAL;
	return row.len > CS_MAX_ROW_KEY ? -ENAMETOOLONG : 0;
}

static int validate(cs_txn *txn, struct sch_table *t, const cs_mutation *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (m[i].op) {
		case CS_SET_CELL:
			if (m[i].ts < 0 && m[i].ts != CS_TS_NOW)
				return -EINVAL;
			if (m[i].value.len > txn->st->max_value)
				return -EFBIG;
			/* fall through */
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
static int write_begin(cs_txn *txn, const char *table, cs_bytes row, struct sch_table **t)
{
	int rc = txn_write_check(txn);
	if (rc)
		return rc;
	if ((rc = check_row(row)))
		return rc;
	rc = sch_table_get(txn, table, t);
	return rc == -ENOENT || !rc ? rc : txn_fail(txn, rc);
}

int mut_mark_drops(cs_txn *txn, struct sch_table *t, cs_bytes row)
{
	int rc;
	if (!t->ndrops)
		return 0;
	if ((rc = sch_drops_load(txn, t)))
		return rc;
	for (size_t i = 0; i < t->ndrop_list; i++) {
		struct sch_drop *d = &t->drops[i];
		uint8_t *v;
		if (d->dirty || !drop_covers(d, row.data, row.len))
			continue;
		/* A row inside this range is written again: reads can no longer skip the range whole. */
		if (!(v = malloc(d->endn + 1)))
			return -ENOMEM;
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

/* Delete every key that starts with the KN-byte prefix at K (kbuf), beginning at K itself; with
 * MIN_TS >= 0, stop at the first cell older than MIN_TS (cell keys sort newest first). */
static int del_prefix(cs_txn *txn, size_t seekn, size_t pfxn, int64_t min_ts)
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

static int apply(cs_txn *txn, struct sch_table *t, cs_bytes row, const cs_mutation *m, int64_t now)
{
	uint8_t *k = txn->kbuf;
	const void *rec;
	size_t kn, recn;
	uint64_t seq;
	int64_t ts, end;
	int rc;

	switch (m->op) {
	case CS_SET_CELL:
		ts = m->ts == CS_TS_NOW ? now : m->ts;
		if ((rc = txn_seq(txn, &seq)) || (rc = mut_mark_drops(txn, t, row)))
			return rc;
		if ((rc = codec_encode(m->value.data, m->value.len, seq, &txn->scratch, &txn->scratch_cap, &rec, &recn)))
			return rc;
		kn = key_cell(k, t->id, row, m->family, m->qualifier, ts);
		return kv_put(txn->kv, k, kn, rec, recn);
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

static int apply_all(cs_txn *txn, struct sch_table *t, cs_bytes row, const cs_mutation *m, size_t n)
{
	int64_t now = cs_now_us();
	for (size_t i = 0; i < n; i++) {
		int rc = apply(txn, t, row, &m[i], now);
		if (rc)
			return txn_fail(txn, rc);
	}
	return 0;
}

int cs_row_mutate(cs_txn *txn, const char *table, cs_bytes row, const cs_mutation *m, size_t n)
{
	struct sch_table *t;
	int rc = write_begin(txn, table, row, &t);
	if (rc)
		return rc;
	if ((rc = validate(txn, t, m, n)))
		return rc;
	return apply_all(txn, t, row, m, n);
}

/* The newest visible cell of a column, for ReadModifyWrite: (*TS = -1, empty) when there is none. */
static int rmw_read(cs_txn *txn, struct sch_table *t, cs_bytes row, const char *family, cs_bytes q,
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

static int rmw_write(cs_txn *txn, struct sch_table *t, cs_bytes row, const char *family, cs_bytes q,
		     int64_t newest, const void *v, size_t vn, int64_t *ts_out)
{
	int64_t now = cs_now_us();
	cs_mutation m = { .op = CS_SET_CELL, .family = family, .qualifier = q, .value = { v, vn } };
	m.ts = newest > now ? newest : now;
	if (ts_out)
		*ts_out = m.ts;
	return apply_all(txn, t, row, &m, 1);
}

static int rmw_begin(cs_txn *txn, const char *table, cs_bytes row, const char *family, cs_bytes q,
		     struct sch_table **t)
{
	cs_mutation probe = { .op = CS_DELETE_COLUMN, .family = family, .qualifier = q };
	int rc = write_begin(txn, table, row, t);
	return rc ? rc : validate(txn, *t, &probe, 1);
}

int cs_rmw_append(cs_txn *txn, const char *table, cs_bytes row, const char *family, cs_bytes qualifier,
		  cs_bytes suffix, int64_t *ts)
{
	struct sch_table *t;
	void *old, *nv;
	size_t oldn;
	int64_t oldts;
	int rc = rmw_begin(txn, table, row, family, qualifier, &t);

	if (rc)
		return rc;
	if ((rc = rmw_read(txn, t, row, family, qualifier, &oldts, &old, &oldn)))
		return txn_fail(txn, rc);
	if (oldn + suffix.len > txn->st->max_value) {
		free(old);
		return -EFBIG;
	}
	if (!(nv = realloc(old, oldn + suffix.len + 1))) {
		free(old);
		return -ENOMEM;
	}
	if (suffix.len)
		memcpy((uint8_t *)nv + oldn, suffix.data, suffix.len);
	rc = rmw_write(txn, t, row, family, qualifier, oldts, nv, oldn + suffix.len, ts);
	free(nv);
	return rc;
}

int cs_rmw_increment(cs_txn *txn, const char *table, cs_bytes row, const char *family,
		     cs_bytes qualifier, int64_t delta, int64_t *result)
{
	struct sch_table *t;
	void *old;
	size_t oldn;
	int64_t oldts;
	uint64_t v = 0;
	uint8_t nv[8];
	int rc = rmw_begin(txn, table, row, family, qualifier, &t);

	if (rc)
		return rc;
	if ((rc = rmw_read(txn, t, row, family, qualifier, &oldts, &old, &oldn)))
		return txn_fail(txn, rc);
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

int cs_check_and_mutate(cs_txn *txn, const char *table, cs_bytes row, const cs_predicate *pred,
			const cs_mutation *true_m, size_t n_true, const cs_mutation *false_m, size_t n_false,
			bool *matched)
{
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
		return txn_fail(txn, rc);
	ok = ts >= 0 && (!pred->value_equals ||
			 (pred->value_equals->len == vn && (!vn || !memcmp(val, pred->value_equals->data, vn))));
	free(val);
	if (matched)
		*matched = ok;
	return ok ? apply_all(txn, t, row, true_m, n_true) : apply_all(txn, t, row, false_m, n_false);
}

int cs_drop_prefix(cs_txn *txn, const char *table, cs_bytes prefix)
{
	struct sch_table *t;
	uint8_t *k = txn->kbuf, *v;
	size_t kn, endn;
	uint64_t seq;
	int rc = txn_write_check(txn);

	if (rc)
		return rc;
	if ((rc = sch_table_get(txn, table, &t)))
		return rc == -ENOENT ? rc : txn_fail(txn, rc);
	if (prefix.len > CS_MAX_ROW_KEY)
		return -ENAMETOOLONG;
	if (!prefix.len) {
		/* Every row: the table moves to a fresh id; the old id's cells are left for cs_gc(). */
		if ((rc = sch_new_table_id(txn, &t->id)))
			return rc;
		t->ndrops = 0;
		t->drops_loaded = false;
		return sch_table_put(txn, t);
	}
	if ((rc = txn_seq_bump(txn, &seq)))
		return txn_fail(txn, rc);
	if (!(v = malloc(prefix.len + 1)))
		return -ENOMEM;
	memcpy(v + 1, prefix.data, prefix.len);
	endn = prefix.len;
	while (endn && v[endn] == 0xFF)
		endn--;
	v[0] = endn ? 1 : 0; /* has an end */
	if (endn)
		v[endn]++;
	k[0] = KEY_DROP;
	key_put_u32(k + 1, t->id);
	kn = 5 + key_enc(k + 5, prefix.data, prefix.len);
	key_put_u64(k + kn, seq);
	rc = kv_put(txn->kv, k, kn + 8, v, endn + 1);
	free(v);
	if (rc)
		return txn_fail(txn, rc);
	t->ndrops++;
	t->drops_loaded = false;
	return sch_table_put(txn, t);
}
