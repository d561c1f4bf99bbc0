/* bulk.c — loading many cells into one table in one transaction (cs_bulk_*), for imports and restores.
 *
 * A lm_row_mutate() per cell would look the table and family up, check drops and search the B-tree for
 * every cell. A bulk loader does the lookups once, marks dropped ranges once per row, and when keys come
 * in increasing order past the end of everything stored (a new table filled in key order: the usual
 * import or restore) appends them with kv_append(), which fills pages whole. Anything else (unsorted
 * input, a table whose cells are followed by another table's, keys over KV_INLINE_MAX) goes through
 * kv_put(): the same result, only slower.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "keys.h"
#include "mem.h"
#include "mutate.h"
#include "schema.h"
#include "lm.h"

struct lm_bulk {
	lm_txn *txn;
	struct sch_table *t;
	const struct sch_family *fam; /* the family of the last put, checked again by name */
	uint64_t seq;
	uint8_t *top;     /* the greatest key stored as far as we know (KEY_MAX bytes) */
	size_t topn;      /* 0: not known yet */
	bool append_off;  /* the table's cells are followed by other keys: appending cannot work */
	uint8_t *row;     /* the row of the last put, for marking drops once per row */
	size_t rown, rowcap;
	bool have_row;
	cs_bulk_stats stats;
};

int lm_bulk_open(lm_txn *txn, const char *table, lm_bulk **out)
{
	lm_bulk *b;
	int rc = lm_txn_write_check(txn);

	if (rc)
		return rc;
	if (!(b = mem_calloc(1, sizeof(*b))) || !(b->top = mem_malloc(KEY_MAX))) {
		free(b);
		return lm_txn_fail(txn, -ENOMEM);
	}
	b->txn = txn;
	if ((rc = sch_table_get(txn, table, &b->t)) || (rc = lm_txn_seq(txn, &b->seq))) {
		lm_bulk_close(b);
		return rc == -ENOENT ? rc : lm_txn_fail(txn, rc);
	}
	*out = b;
	return 0;
}

void lm_bulk_close(void *b_)
{
	lm_bulk *b = b_;
	if (!b)
		return;
	free(b->top);
	free(b->row);
	free(b);
}

void lm_bulk_get_stats(const void *b_, cs_bulk_stats *stats)
{
	const lm_bulk *b = b_;
	*stats = b->stats;
}

int lm_bulk_flush(void *b_)
{
	lm_bulk *b = b_;
	return lm_txn_write_check(b->txn);
}

/* Learn the greatest key stored, after an append was refused. */
static int learn_top(lm_bulk *b)
{
	kv_cursor *c;
	const void *k;
	size_t kn;
	int rc = kv_cursor_open(b->txn->kv, &c);

	if (rc)
		return rc;
	if (!(rc = kv_last(c))) {
		kv_key(c, &k, &kn);
		memcpy(b->top, k, kn);
		b->topn = kn;
	}
	kv_cursor_close(c);
	return rc == -ENOENT ? 0 : rc;
}

/* Store key K (KN bytes) with record REC, appending when it sorts after everything stored. */
static int store(lm_bulk *b, const uint8_t *k, size_t kn, const void *rec, size_t recn)
{
	bool above = b->topn == 0 || kv_key_cmp(k, kn, b->top, b->topn) > 0;
	int rc;

	if (above && kn <= KV_INLINE_MAX && !b->append_off) {
		rc = kv_append(b->txn->kv, k, kn, rec, recn);
		if (!rc) {
			b->stats.appended++;
			goto raise_top;
		}
		if (rc != -EEXIST)
			return rc;
		/* Something sorts after this key: find out what, so later keys below it go straight to kv_put. */
		if ((rc = learn_top(b)))
			return rc;
		if (kv_key_cmp(k, kn, b->top, b->topn) < 0 && k[0] == KEY_DATA && b->top[0] == KEY_DATA &&
		    key_get_u32(b->top + 1) != b->t->id)
			b->append_off = true; /* another table's cells follow ours */
	}
	if ((rc = kv_put(b->txn->kv, k, kn, rec, recn)))
		return rc;
	b->stats.put++;
raise_top:
	if (b->topn == 0 || kv_key_cmp(k, kn, b->top, b->topn) > 0) {
		memcpy(b->top, k, kn);
		b->topn = kn;
	}
	return 0;
}

static int new_row(lm_bulk *b, cs_bytes row)
{
	int rc;

	if (b->have_row && b->rown == row.len && !memcmp(b->row, row.data, row.len))
		return 0;
	if (row.len > b->rowcap) {
		uint8_t *p = mem_realloc(b->row, row.len);
		if (!p)
			return lm_txn_fail(b->txn, -ENOMEM);
		b->row = p;
		b->rowcap = row.len;
	}
	if ((rc = mut_mark_drops(b->txn, b->t, row)))
		return rc;
	lm_heat_wrote(b->txn, b->t, row); /* one write per run of the row's cells, counted if it commits */
	memcpy(b->row, row.data, row.len);
	b->rown = row.len;
	b->have_row = true;
	return 0;
}

int lm_bulk_put(void *b_, cs_bytes row, const char *family, cs_bytes qualifier, int64_t ts, cs_bytes value)
{
	lm_bulk *b = b_;
	lm_txn *txn = b->txn;
	const void *rec;
	size_t kn, recn;
	int rc;

	if ((rc = lm_txn_write_check(txn)))
		return rc;
	if (row.len == 0 || (ts < 0 && ts != CS_TS_NOW))
		return -EINVAL;
	if (row.len > CS_MAX_ROW_KEY || qualifier.len > CS_MAX_QUALIFIER)
		return -ENAMETOOLONG;
	if (value.len > txn->st->max_value)
		return -EFBIG;
	if (!family)
		return -ENOENT;
	if (!b->fam || strcmp(b->fam->name, family)) {
		if (!(b->fam = sch_family_find(b->t, family)))
			return -ENOENT;
	}
	if (b->fam->type != CS_TYPE_BYTES && value.len != 8)
		return -EINVAL; /* an aggregate cell is a big-endian int64, stored as is (not merged) */
	if (ts == CS_TS_NOW)
		ts = cs_now_us();
	if ((rc = new_row(b, row)))
		return lm_txn_fail(txn, rc);
	if ((rc = codec_encode(value.data, value.len, b->seq, &txn->scratch, &txn->scratch_cap, &rec, &recn)))
		return lm_txn_fail(txn, rc);
	kn = key_cell(txn->kbuf, b->t->id, row, b->fam->name, qualifier, ts);
	if ((rc = store(b, txn->kbuf, kn, rec, recn)))
		return lm_txn_fail(txn, rc);
	return 0;
}
