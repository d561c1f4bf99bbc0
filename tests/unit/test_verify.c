/* test_verify.c — cs_verify(): a clean store has no problems; damaged records (a corrupt compressed
 * value, a corrupt cell header, a cell key that does not parse, an unknown record kind, a table record
 * that does not decode) are each reported once, with the table, row, column and timestamp they carry. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "keys.h"
#include "lmutil.h"

struct seen {
	int n;
	char last[512];
};

static void collect(void *ctx, const cs_problem *p)
{
	struct seen *s = ctx;
	struct tu_buf b = { 0 };
	char ts[32] = "";
	s->n++;
	tu_buf_add(&b, p->table ? p->table : "-", strlen(p->table ? p->table : "-"));
	tu_buf_add(&b, " ", 1);
	if (p->row)
		tu_escape(&b, p->row->data, p->row->len);
	tu_buf_add(&b, " ", 1);
	if (p->family)
		tu_buf_add(&b, p->family, strlen(p->family));
	tu_buf_add(&b, ":", 1);
	if (p->qualifier)
		tu_escape(&b, p->qualifier->data, p->qualifier->len);
	if (p->has_ts)
		snprintf(ts, sizeof(ts), "@%lld", (long long)p->ts);
	tu_buf_add(&b, ts, strlen(ts));
	tu_buf_add(&b, " ", 1);
	tu_buf_add(&b, p->what, strlen(p->what));
	snprintf(s->last, sizeof(s->last), "%s", b.s);
	free(b.s);
}

static struct seen verify(cs_store *st, cs_verify_stats *vs)
{
	struct seen s = { 0 };
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(cs_verify(txn, collect, &s, vs), 0);
	tu_commit(txn);
	assert_int_equal((uint64_t)s.n, vs->problems);
	return s;
}

static void setup_table(cs_store *st)
{
	uint8_t *big = tu_filled(4000, 'a');
	cs_txn *txn;
	tu_table(st, "t", "f", NULL, NULL);
	txn = tu_begin(st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("r\n1"), "f", CS_STR("big"), 7, CS_BYTES(big, 4000)), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("r2"), "f", CS_STR("small"), 9, CS_STR("v")), 0);
	tu_commit(txn);
	free(big);
}

/* Rewrite the stored record of cell (ROW, f, Q, TS) of table t through EDIT. */
static void edit_cell(cs_store *st, const char *row, const char *q, int64_t ts, void (*edit)(uint8_t *, size_t *))
{
	cs_txn *txn = tu_begin(st, 0);
	struct sch_table *t;
	uint8_t key[256], rec[8192];
	const void *v;
	size_t kn, vn;

	assert_int_equal(sch_table_get(lm_txn_of(txn), "t", &t), 0);
	kn = key_cell(key, t->id, CS_STR(row), "f", CS_STR(q), ts);
	assert_int_equal(kv_get(lm_txn_of(txn)->kv, key, kn, &v, &vn), 0);
	assert_true(vn <= sizeof(rec));
	memcpy(rec, v, vn);
	edit(rec, &vn);
	assert_int_equal(kv_put(lm_txn_of(txn)->kv, key, kn, rec, vn), 0);
	tu_commit(txn);
}

static void flip_payload_end(uint8_t *rec, size_t *n)
{
	rec[*n - 3] ^= 0x5A; /* inside the zstd frame */
}

static void bad_kind(uint8_t *rec, size_t *n)
{
	rec[0] = 7;
}

static void test_verify__clean_store_has_no_problems(void **state)
{
	struct tu_store *ts = *state;
	cs_verify_stats vs;
	struct seen s;

	setup_table(ts->st);
	tu_table(ts->st, "gone", "f", NULL, NULL);
	tu_put(ts->st, "gone", "r", "f", "q", 1, "v");
	{
		cs_txn *txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_table_delete(txn, "gone"), 0);
		assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("zz")), 0);
		tu_commit(txn);
	}
	s = verify(ts->st, &vs);
	assert_int_equal(s.n, 0);
	assert_int_equal(vs.tables, 1);
	assert_int_equal(vs.cells, 3); /* the orphan is checked too */
	assert_int_equal(vs.orphans, 1); /* the deleted table's cell, awaiting cs_gc() */
	assert_int_equal(vs.value_bytes, 4002);
}

static void test_verify__corrupt_compressed_value_reported(void **state)
{
	struct tu_store *ts = *state;
	cs_verify_stats vs;
	struct seen s;

	setup_table(ts->st);
	edit_cell(ts->st, "r\n1", "big", 7, flip_payload_end);
	s = verify(ts->st, &vs);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.last, "t r\\x0a1 f:big@7 value does not decompress (4000 bytes, compressed to 19)");
}

static void test_verify__corrupt_cell_header_reported(void **state)
{
	struct tu_store *ts = *state;
	cs_verify_stats vs;
	struct seen s;

	setup_table(ts->st);
	edit_cell(ts->st, "r2", "small", 9, bad_kind);
	s = verify(ts->st, &vs);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.last, "t r2 f:small@9 cell header corrupt (record of 4 bytes)");
}

static void test_verify__bad_keys_and_schema_reported(void **state)
{
	struct tu_store *ts = *state;
	static const struct {
		const char *key;
		size_t kn;
		const char *val;
		size_t vn;
		const char *want;
	} cases[] = {
		{ "Zstray", 6, "x", 1, "-  : record of unknown kind 0x5a" },
		{ "Mseq", 4, "x", 1, "-  : metadata record \"Mseq\" has 1 bytes, not 8" },
		{ "Tbroken", 7, "\x02", 1, "broken  : the table's schema record does not decode" },
		{ "d\0\0\0\1x", 6, "\0\1\0", 3, "t  : cell key does not parse (6 bytes)" },
	};
	setup_table(ts->st);
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		cs_verify_stats vs;
		struct seen s;
		cs_txn *txn = tu_begin(ts->st, 0);
		assert_int_equal(kv_put(lm_txn_of(txn)->kv, cases[i].key, cases[i].kn, cases[i].val, cases[i].vn), 0);
		tu_commit(txn);
		s = verify(ts->st, &vs);
		assert_int_equal(s.n, 1);
		assert_string_equal(s.last, cases[i].want);
		txn = tu_begin(ts->st, 0);
		if (!strcmp(cases[i].key, "Mseq")) { /* put back what was there (any 8 bytes) */
			assert_int_equal(kv_put(lm_txn_of(txn)->kv, "Mseq", 4, "\0\0\0\0\0\0\0\x10", 8), 0);
		} else {
			assert_int_equal(kv_del(lm_txn_of(txn)->kv, cases[i].key, cases[i].kn), 0);
		}
		tu_commit(txn);
	}
}

static void test_verify__aggregate_cell_not_8_bytes_reported(void **state)
{
	struct tu_store *ts = *state;
	cs_mutation add = { .op = CS_ADD_TO_CELL, .family = "s", .qualifier = CS_STR("n"), .ts = 5, .input = 3 };
	cs_verify_stats vs;
	struct seen s;
	struct sch_table *t;
	uint8_t key[64], rec[32];
	const void *v;
	size_t kn, vn;
	cs_txn *txn = tu_begin(ts->st, 0);

	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "s", NULL, CS_TYPE_INTSUM), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR("r"), &add, 1), 0);
	tu_commit(txn);
	s = verify(ts->st, &vs);
	assert_int_equal(s.n, 0);
	/* The raw record kind, seq, len 8, 8 bytes becomes len 7, 7 bytes. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(sch_table_get(lm_txn_of(txn), "t", &t), 0);
	kn = key_cell(key, t->id, CS_STR("r"), "s", CS_STR("n"), 5);
	assert_int_equal(kv_get(lm_txn_of(txn)->kv, key, kn, &v, &vn), 0);
	assert_int_equal(vn, 11);
	memcpy(rec, v, vn);
	rec[2] = 7;
	assert_int_equal(kv_put(lm_txn_of(txn)->kv, key, kn, rec, vn - 1), 0);
	tu_commit(txn);
	s = verify(ts->st, &vs);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.last, "t r s:n@5 aggregate (intsum) cell of 7 bytes, not 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_verify__clean_store_has_no_problems, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_verify__corrupt_compressed_value_reported, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_verify__corrupt_cell_header_reported, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_verify__bad_keys_and_schema_reported, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_verify__aggregate_cell_not_8_bytes_reported, tu_store_setup,
						tu_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
