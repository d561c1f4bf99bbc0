/* test_stats.c — cs_table_stats_get(): rows, visible cells, raw and stored bytes per family, and the
 * garbage (collected, dropped) that cs_gc() would free, which it then does. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm.h"

static cs_table_stats *stats(cs_store *st, const char *table)
{
	cs_table_stats *s = NULL;
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_stats_get(txn, table, &s), 0);
	tu_commit(txn);
	return s;
}

static void test_stats__counts_visible_cells_and_garbage(void **state)
{
	struct tu_store *ts = *state;
	uint8_t *big = tu_filled(10000, 'x');
	cs_table_stats *s;
	cs_gc_stats g;
	cs_txn *txn;

	tu_table(ts->st, "t", "a", "maxversions=1", "b", NULL, NULL);
	txn = tu_begin(ts->st, 0);
	for (int64_t t = 1; t <= 3; t++)
		assert_int_equal(tu_set(txn, "t", CS_STR("r1"), "a", CS_STR("q"), t, CS_STR("abc")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("r2"), "b", CS_STR("q"), 1, CS_BYTES(big, 10000)), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("r2"), "b", CS_STR("e"), 1, CS_STR("")), 0);
	tu_commit(txn);
	free(big);

	s = stats(ts->st, "t");
	assert_int_equal(s->rows, 2);
	assert_int_equal(s->cells, 3);
	assert_int_equal(s->nfamilies, 2);
	assert_string_equal(s->families[0].name, "a");
	assert_int_equal(s->families[0].cells, 1);
	assert_int_equal(s->families[0].raw_bytes, 3);
	assert_int_equal(s->families[1].cells, 2);
	assert_int_equal(s->families[1].raw_bytes, 10000);
	assert_true(s->families[1].stored_bytes < 200); /* compressed */
	assert_int_equal(s->raw_bytes, 10003);
	assert_int_equal(s->garbage_cells, 2);
	assert_true(s->garbage_bytes > 0);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_gc(txn, "t", &g), 0);
	tu_commit(txn);
	assert_int_equal(g.cells_removed, s->garbage_cells);
	assert_int_equal(g.bytes_freed, s->garbage_bytes);
	cs_table_stats_free(s);
	s = stats(ts->st, "t");
	assert_int_equal(s->garbage_cells, 0);
	assert_int_equal(s->cells, 3);
	cs_table_stats_free(s);
}

/* collected_cells counts what the GC policy hides (not dropped rows); max_versions the most cells a
 * column holds as stored, until cs_gc() removes the collected ones. */
static void test_stats__counts_collected_cells_and_stored_versions(void **state)
{
	struct tu_store *ts = *state;
	cs_table_stats *s;
	cs_gc_stats g;
	cs_txn *txn;

	tu_table(ts->st, "t", "a", "maxversions=2", "b", NULL, NULL);
	txn = tu_begin(ts->st, 0);
	for (int64_t t = 1; t <= 5; t++)
		assert_int_equal(tu_set(txn, "t", CS_STR("r1"), "a", CS_STR("q"), t, CS_STR("v")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("r1"), "a", CS_STR("p"), 1, CS_STR("v")), 0);
	for (int64_t t = 1; t <= 3; t++)
		assert_int_equal(tu_set(txn, "t", CS_STR("r2"), "b", CS_STR("q"), t, CS_STR("v")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("gone"), "a", CS_STR("q"), 1, CS_STR("v")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("gone"), "a", CS_STR("q"), 2, CS_STR("v")), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("gone")), 0);
	tu_commit(txn);

	s = stats(ts->st, "t");
	assert_int_equal(s->families[0].collected_cells, 3); /* r1 a:q @1..3; not the dropped row */
	assert_int_equal(s->families[0].max_versions, 5);
	assert_int_equal(s->families[1].collected_cells, 0);
	assert_int_equal(s->families[1].max_versions, 3);
	assert_int_equal(s->garbage_cells, 5);
	cs_table_stats_free(s);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_gc(txn, "t", &g), 0);
	tu_commit(txn);
	s = stats(ts->st, "t");
	assert_int_equal(s->families[0].collected_cells, 0);
	assert_int_equal(s->families[0].max_versions, 2);
	cs_table_stats_free(s);
}

static void test_stats__missing_table(void **state)
{
	struct tu_store *ts = *state;
	cs_table_stats *s = NULL;
	cs_txn *txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_stats_get(txn, "nosuch", &s), -ENOENT);
	assert_null(s);
	tu_commit(txn);
}

/* cs_store_compact() (store.c) writes a copy that reads the same, and refuses a DEST holding things. */
static void test_stats__compact_copy_reads_the_same(void **state)
{
	struct tu_store *ts = *state;
	char *dest, *sub, *other, *a, *b;
	cs_open_opts o = { 0 };
	uint64_t size = 0, orig = 0;
	cs_store *copy;
	FILE *f;

	tu_table(ts->st, "t", "f", NULL, NULL);
	for (int i = 0; i < 200; i++)
		tu_put(ts->st, "t", "r", "f", "q", i, "value");
	{
		cs_txn *txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("")), 0);
		tu_commit(txn);
	}
	tu_put(ts->st, "t", "r", "f", "q", 1, "kept");
	dest = tu_mkdtemp();
	assert_true(asprintf(&sub, "%s/copy", dest) > 0);
	assert_int_equal(cs_store_compact(ts->st, sub, &size), 0);
	assert_int_equal(cs_store_size(ts->st, &orig), 0);
	assert_true(size > 0 && size <= orig);
	assert_int_equal(cs_store_open(sub, &o, &copy), 0);
	a = tu_dump_st(ts->st, "t", NULL);
	b = tu_dump_st(copy, "t", NULL);
	assert_string_equal(a, b);
	cs_store_close(copy);
	assert_int_equal(cs_store_compact(ts->st, sub, NULL), -EEXIST);
	assert_true(asprintf(&other, "%s/f", dest) > 0);
	assert_non_null(f = fopen(other, "w"));
	fclose(f);
	assert_int_equal(cs_store_compact(ts->st, dest, NULL), -ENOTEMPTY);
	assert_int_equal(cs_store_compact(ts->st, other, NULL), -ENOTDIR);
	free(a);
	free(b);
	free(other);
	free(sub);
	tu_rmtree(dest);
	free(dest);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stats__counts_visible_cells_and_garbage, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_stats__counts_collected_cells_and_stored_versions,
						tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_stats__missing_table, tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_stats__compact_copy_reads_the_same, tu_store_setup,
						tu_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
