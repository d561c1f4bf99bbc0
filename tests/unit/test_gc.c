/* test_gc.c — physical clean-up: cs_gc() removes exactly what reads no longer return (collected cells,
 * dropped rows, deleted families and tables, and spent drop records) and keeps everything visible. The
 * stored keys are counted through kv to see what really went. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "lmutil.h"

#define DAY (24 * 3600LL * 1000000)

/* Stored keys of KIND (KEY_DATA, KEY_DROP) for table id TID, or for every table id if TID is 0. */
static size_t count_keys(cs_store *st, uint8_t kind, uint32_t tid)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	uint8_t pfx[KEY_TABLE_PREFIX] = { kind };
	size_t n;

	key_put_u32(pfx + 1, tid);
	n = tu_count_keys(txn, pfx, tid ? KEY_TABLE_PREFIX : 1);
	tu_commit(txn);
	return n;
}

static uint32_t table_id(cs_store *st, const char *name)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	struct sch_table *t;
	uint32_t id;
	assert_int_equal(sch_table_get(lm_txn_of(txn), name, &t), 0);
	id = t->id;
	tu_commit(txn);
	return id;
}

static cs_gc_stats gc(cs_store *st, const char *table)
{
	cs_gc_stats s;
	cs_txn *txn = tu_begin(st, 0);
	memset(&s, 0xAB, sizeof(s));
	assert_int_equal(cs_gc(txn, table, &s), 0);
	tu_commit(txn);
	return s;
}

static void expect_same(char *before, cs_store *st, const char *table)
{
	char *after = tu_dump_st(st, table, NULL);
	assert_string_equal(after, before);
	free(after);
	free(before);
}

static void test_gc__removes_collected_keeps_visible(void **state)
{
	struct tu_store *ts = *state;
	int64_t now = cs_now_us();
	cs_gc_stats s;
	cs_txn *txn;
	char *before;

	tu_table(ts->st, "t", "n", NULL, "v1", "maxversions=1", "old", "maxage=1d", NULL);
	txn = tu_begin(ts->st, 0);
	for (int r = 0; r < 3; r++) {
		char row[8];
		snprintf(row, sizeof(row), "row%d", r);
		for (int col = 0; col < 2; col++) {
			char q[8];
			snprintf(q, sizeof(q), "q%d", col);
			for (int64_t t = 1; t <= 3; t++) {
				assert_int_equal(tu_set(txn, "t", CS_STR(row), "n", CS_STR(q), t, CS_STR("keep")), 0);
				assert_int_equal(tu_set(txn, "t", CS_STR(row), "v1", CS_STR(q), t, CS_STR("v1")), 0);
			}
			assert_int_equal(tu_set(txn, "t", CS_STR(row), "old", CS_STR(q), now - 2 * DAY, CS_STR("old")), 0);
			assert_int_equal(tu_set(txn, "t", CS_STR(row), "old", CS_STR(q), now - DAY / 2, CS_STR("young")), 0);
		}
	}
	tu_commit(txn);
	uint32_t id = table_id(ts->st, "t");
	assert_int_equal(count_keys(ts->st, KEY_DATA, id), 3 * 2 * (3 + 3 + 2));

	before = tu_dump_st(ts->st, "t", NULL);
	s = gc(ts->st, "t");
	assert_int_equal(s.cells_removed, 3 * 2 * (2 + 1));
	assert_true(s.bytes_freed >= s.cells_removed * 10);
	expect_same(before, ts->st, "t");
	assert_int_equal(count_keys(ts->st, KEY_DATA, id), 3 * 2 * (3 + 1 + 1));

	/* Nothing left to do. */
	before = tu_dump_st(ts->st, "t", NULL);
	s = gc(ts->st, NULL);
	assert_int_equal(s.cells_removed, 0);
	assert_int_equal(s.bytes_freed, 0);
	expect_same(before, ts->st, "t");
}

static void test_gc__dropped_rows_and_their_records(void **state)
{
	struct tu_store *ts = *state;
	cs_gc_stats s;
	cs_txn *txn;
	char *before;

	tu_table(ts->st, "t", "f", NULL, NULL);
	txn = tu_begin(ts->st, 0);
	for (int i = 0; i < 50; i++) {
		char row[16];
		snprintf(row, sizeof(row), "%c%02d", i % 2 ? 'a' : 'b', i);
		assert_int_equal(tu_set(txn, "t", CS_STR(row), "f", CS_STR("q"), 1, CS_STR("v")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR(row), "f", CS_STR("q"), 2, CS_STR("v")), 0);
	}
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("b1")), 0);
	tu_commit(txn);
	tu_put(ts->st, "t", "a01", "f", "q", 0, "rewritten");
	uint32_t id = table_id(ts->st, "t");
	assert_int_equal(count_keys(ts->st, KEY_DROP, id), 2);

	before = tu_dump_st(ts->st, "t", NULL);
	s = gc(ts->st, "t");
	assert_int_equal(s.cells_removed, 2 * (25 + 5));
	expect_same(before, ts->st, "t");
	assert_int_equal(count_keys(ts->st, KEY_DROP, id), 0); /* their work is done */
	assert_int_equal(count_keys(ts->st, KEY_DATA, id), 1 + 2 * 20);

	/* With the records gone, rows written into the old ranges simply show. */
	tu_put(ts->st, "t", "a03", "f", "q", 1, "new");
	char *s2 = tu_dump_st(ts->st, "t", &(cs_read_opts){ .prefix = CS_STR("a") });
	assert_string_equal(s2, "a01 f:q@0=rewritten\na03 f:q@1=new\n");
	free(s2);
}

static void test_gc__deleted_and_recreated_family(void **state)
{
	struct tu_store *ts = *state;
	cs_gc_stats s;
	cs_txn *txn;
	char *before;

	tu_table(ts->st, "t", "f", NULL, "g", NULL, NULL);
	tu_put(ts->st, "t", "r", "f", "q", 1, "old");
	tu_put(ts->st, "t", "r", "f", "q2", 1, "old");
	tu_put(ts->st, "t", "r", "g", "q", 1, "kept");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_delete(txn, "t", "f"), 0);
	assert_int_equal(cs_family_create(txn, "t", "f", NULL), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 2, CS_STR("new")), 0);
	tu_commit(txn);
	before = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(before, "r f:q@2=new g:q@1=kept\n");
	s = gc(ts->st, "t");
	assert_int_equal(s.cells_removed, 2);
	expect_same(before, ts->st, "t");

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_delete(txn, "t", "g"), 0);
	tu_commit(txn);
	s = gc(ts->st, "t");
	assert_int_equal(s.cells_removed, 1);
	assert_int_equal(count_keys(ts->st, KEY_DATA, table_id(ts->st, "t")), 1);
}

/* Deleted tables, and every row of a table dropped at once, are reclaimed by cs_gc(NULL). */
static void test_gc__deleted_tables_and_dropped_tables(void **state)
{
	struct tu_store *ts = *state;
	uint32_t gone, dropped, kept;
	cs_gc_stats s;
	cs_txn *txn;

	tu_table(ts->st, "gone", "f", NULL, NULL);
	tu_table(ts->st, "dropped", "f", NULL, NULL);
	tu_table(ts->st, "kept", "f", NULL, NULL);
	gone = table_id(ts->st, "gone");
	dropped = table_id(ts->st, "dropped");
	kept = table_id(ts->st, "kept");
	for (int i = 0; i < 10; i++) {
		char row[8];
		snprintf(row, sizeof(row), "r%d", i);
		tu_put(ts->st, "gone", row, "f", "q", 1, "x");
		tu_put(ts->st, "dropped", row, "f", "q", 1, "x");
		tu_put(ts->st, "kept", row, "f", "q", 1, "x");
	}
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "gone", CS_STR("r1")), 0); /* a drop record of a deleted table */
	assert_int_equal(cs_table_delete(txn, "gone"), 0);
	assert_int_equal(cs_drop_prefix(txn, "dropped", CS_STR("r2")), 0);
	assert_int_equal(cs_drop_prefix(txn, "dropped", CS_STR("")), 0);
	assert_int_equal(cs_gc(txn, "gone", NULL), -ENOENT);
	tu_commit(txn);
	tu_put(ts->st, "dropped", "new", "f", "q", 1, "y");

	s = gc(ts->st, NULL);
	assert_int_equal(s.cells_removed, 20);
	assert_int_equal(count_keys(ts->st, KEY_DATA, gone), 0);
	assert_int_equal(count_keys(ts->st, KEY_DROP, gone), 0);
	assert_int_equal(count_keys(ts->st, KEY_DATA, dropped), 0);
	assert_int_equal(count_keys(ts->st, KEY_DROP, dropped), 0);
	assert_int_equal(count_keys(ts->st, KEY_DATA, kept), 10);
	assert_int_equal(count_keys(ts->st, KEY_DATA, table_id(ts->st, "dropped")), 1);
	assert_int_equal(count_keys(ts->st, KEY_DATA, 0), 11);
	assert_int_equal(count_keys(ts->st, KEY_DROP, 0), 0);
	char *d = tu_dump_st(ts->st, "dropped", NULL);
	assert_string_equal(d, "new f:q@1=y\n");
	free(d);
}

/* cs_gc(TABLE) cleans that table only. */
static void test_gc__one_table_only(void **state)
{
	struct tu_store *ts = *state;
	cs_gc_stats s;

	tu_table(ts->st, "t", "f", "maxversions=1", NULL);
	tu_table(ts->st, "u", "f", "maxversions=1", NULL);
	for (int64_t t = 1; t <= 4; t++) {
		tu_put(ts->st, "t", "r", "f", "q", t, "v");
		tu_put(ts->st, "u", "r", "f", "q", t, "v");
	}
	s = gc(ts->st, "t");
	assert_int_equal(s.cells_removed, 3);
	assert_int_equal(count_keys(ts->st, KEY_DATA, table_id(ts->st, "u")), 4);
	s = gc(ts->st, "u");
	assert_int_equal(s.cells_removed, 3);
}

/* Long rows and qualifiers (kv's long-key groups) are cleaned as well as short ones. */
static void test_gc__long_keys(void **state)
{
	struct tu_store *ts = *state;
	uint8_t *row = tu_filled(CS_MAX_ROW_KEY, 0), *q = tu_filled(CS_MAX_QUALIFIER, 0xFF);
	uint64_t seed = 8;
	cs_gc_stats s;
	cs_txn *txn;
	char *before;

	tu_table(ts->st, "t", "f", "maxversions=2", NULL);
	tu_rand_bytes(&seed, row, CS_MAX_ROW_KEY - 1, 1);
	txn = tu_begin(ts->st, 0);
	for (int r = 0; r < 4; r++) {
		row[CS_MAX_ROW_KEY - 1] = (uint8_t)(r * 0x55); /* rows differing in their last byte */
		for (int64_t t = 1; t <= 6; t++) {
			assert_int_equal(tu_set(txn, "t", CS_BYTES(row, CS_MAX_ROW_KEY), "f", CS_BYTES(q, CS_MAX_QUALIFIER), t,
						CS_STR("long")), 0);
			assert_int_equal(tu_set(txn, "t", CS_BYTES(row, CS_MAX_ROW_KEY), "f", CS_BYTES(q, (size_t)r), t,
						CS_STR("short")), 0);
		}
	}
	tu_commit(txn);
	before = tu_dump_st(ts->st, "t", NULL);
	s = gc(ts->st, NULL);
	assert_int_equal(s.cells_removed, 4 * 2 * 4);
	expect_same(before, ts->st, "t");
	assert_int_equal(count_keys(ts->st, KEY_DATA, table_id(ts->st, "t")), 4 * 2 * 2);
	free(row);
	free(q);
}

static void test_gc__errors(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;

	tu_table(ts->st, "t", "f", NULL, NULL);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_gc(txn, "t", NULL), -EROFS);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_gc(txn, "nosuch", NULL), -ENOENT);
	assert_int_equal(cs_gc(txn, "t", NULL), 0); /* no stats wanted */
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 1, CS_STR("v")), 0);
	tu_commit(txn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, tu_store_setup, tu_store_teardown)
		T(test_gc__removes_collected_keeps_visible),
		T(test_gc__dropped_rows_and_their_records),
		T(test_gc__deleted_and_recreated_family),
		T(test_gc__deleted_tables_and_dropped_tables),
		T(test_gc__one_table_only),
		T(test_gc__long_keys),
		T(test_gc__errors),
#undef T
	};
	return cmocka_run_group_tests_name("gc", tests, NULL, NULL);
}
