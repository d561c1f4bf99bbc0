/* test_bulk.c — the bulk loader: the same cells as cs_row_mutate in any input order, appending when keys
 * arrive in order past the end of the store, ordinary writes otherwise (unsorted input, a table followed
 * by another's cells, long keys), validation errors that leave the transaction usable, dropped ranges,
 * aggregate cells stored as given. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int setup(void **state)
{
	struct tu_store *ts;
	tu_store_setup(state);
	ts = *state;
	tu_table(ts->st, "t", "a", NULL, "b", NULL, NULL);
	return 0;
}

struct cell {
	const char *row, *fam, *q;
	int64_t ts;
	const char *val;
};

/* Load CELLS through a bulk loader in one transaction; return its stats. */
static cs_bulk_stats load(cs_store *st, const char *table, const struct cell *c, size_t n)
{
	cs_txn *txn = tu_begin(st, 0);
	cs_bulk *b;
	cs_bulk_stats s;

	assert_int_equal(cs_bulk_open(txn, table, &b), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(cs_bulk_put(b, CS_STR(c[i].row), c[i].fam, CS_STR(c[i].q), c[i].ts, CS_STR(c[i].val)), 0);
	cs_bulk_get_stats(b, &s);
	cs_bulk_close(b);
	tu_commit(txn);
	return s;
}

static const struct cell sorted[] = {
	{ "r1", "a", "x", 3000, "new" }, { "r1", "a", "x", 1000, "old" }, { "r1", "a", "y", 5, "" },
	{ "r1", "b", "", 7, "empty-qualifier" }, { "r2", "a", "x", 9, "v" },
};
static const char sorted_dump[] =
	"r1 a:x@3000=new a:x@1000=old a:y@5= b:@7=empty-qualifier\n"
	"r2 a:x@9=v\n";

static void test_bulk__sorted_input_into_a_new_table_is_appended(void **state)
{
	struct tu_store *ts = *state;
	cs_bulk_stats s = load(ts->st, "t", sorted, TU_ARRAY_SIZE(sorted));
	char *d = tu_dump_st(ts->st, "t", NULL);

	assert_string_equal(d, sorted_dump);
	assert_int_equal(s.appended, 5);
	assert_int_equal(s.put, 0);
	free(d);
}

static void test_bulk__unsorted_input_gives_the_same_cells(void **state)
{
	struct tu_store *ts = *state;
	struct cell c[TU_ARRAY_SIZE(sorted)];
	cs_bulk_stats s;
	char *d;

	for (size_t i = 0; i < TU_ARRAY_SIZE(sorted); i++)
		c[i] = sorted[TU_ARRAY_SIZE(sorted) - 1 - i];
	s = load(ts->st, "t", c, TU_ARRAY_SIZE(c));
	d = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(d, sorted_dump);
	assert_int_equal(s.appended + s.put, 5);
	assert_true(s.put >= 4);
	free(d);
}

static void test_bulk__a_cell_written_again_is_replaced(void **state)
{
	struct tu_store *ts = *state;
	static const struct cell c[] = { { "r", "a", "q", 10, "one" }, { "r", "a", "q", 10, "two" } };
	char *d;

	load(ts->st, "t", c, 2);
	d = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(d, "r a:q@10=two\n");
	free(d);
}

static void test_bulk__a_table_followed_by_another_is_written_without_appending(void **state)
{
	struct tu_store *ts = *state;
	static const struct cell later[] = { { "z", "f", "q", 1, "later" } };
	cs_bulk_stats s;
	char *d;

	tu_table(ts->st, "u", "f", NULL, NULL); /* a higher table id: its cells sort after t's */
	load(ts->st, "u", later, 1);
	s = load(ts->st, "t", sorted, TU_ARRAY_SIZE(sorted));
	assert_int_equal(s.appended, 0);
	assert_int_equal(s.put, 5);
	d = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(d, sorted_dump);
	free(d);
	d = tu_dump_st(ts->st, "u", NULL);
	assert_string_equal(d, "z f:q@1=later\n");
	free(d);
}

static void test_bulk__long_keys_round_trip(void **state)
{
	struct tu_store *ts = *state;
	char row[CS_MAX_ROW_KEY + 1], q[700];
	struct cell c[4];
	char *d, *want;

	memset(row, 'k', CS_MAX_ROW_KEY);
	row[CS_MAX_ROW_KEY] = 0;
	memset(q, 'q', sizeof q - 1);
	q[sizeof q - 1] = 0;
	c[0] = (struct cell){ "a", "a", "x", 1, "short-before" };
	c[1] = (struct cell){ row, "a", q, 2, "long" };
	c[2] = (struct cell){ row, "b", "", 3, "long-row" };
	c[3] = (struct cell){ "zz", "a", "x", 4, "short-after" };
	load(ts->st, "t", c, 4);
	d = tu_dump_st(ts->st, "t", NULL);
	assert_int_not_equal(asprintf(&want, "a a:x@1=short-before\n%s a:%s@2=long b:@3=long-row\nzz a:x@4=short-after\n", row, q), -1);
	assert_string_equal(d, want);
	free(d);
	free(want);
}

static void test_bulk__bad_cells_are_refused_before_writing(void **state)
{
	struct tu_store *ts = *state;
	static char big[CS_MAX_QUALIFIER + 1];
	cs_txn *txn;
	cs_bulk *b;
	char *d;

	tu_reopen(ts, 0, 4);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_bulk_open(txn, "nosuch", &b), -ENOENT);
	assert_int_equal(cs_bulk_open(txn, "t", &b), 0);
	assert_int_equal(cs_bulk_put(b, CS_STR(""), "a", CS_STR("q"), 1, CS_STR("v")), -EINVAL);
	assert_int_equal(cs_bulk_put(b, CS_STR("r"), "a", CS_STR("q"), -5, CS_STR("v")), -EINVAL);
	assert_int_equal(cs_bulk_put(b, CS_STR("r"), "nosuch", CS_STR("q"), 1, CS_STR("v")), -ENOENT);
	assert_int_equal(cs_bulk_put(b, CS_STR("r"), "a", CS_BYTES(big, sizeof big), 1, CS_STR("v")), -ENAMETOOLONG);
	assert_int_equal(cs_bulk_put(b, CS_STR("r"), "a", CS_STR("q"), 1, CS_STR("12345")), -EFBIG);
	assert_int_equal(cs_bulk_put(b, CS_STR("r"), "a", CS_STR("q"), 1, CS_STR("1234")), 0);
	cs_bulk_close(b);
	tu_commit(txn);
	d = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(d, "r a:q@1=1234\n");
	free(d);
}

/* Into an aggregate family a cell is stored as given (8 bytes) and replaces one at its timestamp:
 * loading the same cells twice leaves what loading them once does, and AddToCell merges into it. */
static void test_bulk__an_aggregate_cell_is_stored_exactly_not_merged(void **state)
{
	struct tu_store *ts = *state;
	static const uint8_t five[8] = { 0, 0, 0, 0, 0, 0, 0, 5 };
	const cs_mutation add = { .op = CS_ADD_TO_CELL, .family = "sum", .qualifier = CS_STR("q"), .ts = 1000,
				  .input = 2 };
	cs_txn *txn;
	cs_bulk *b;
	char *d;

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "sum", NULL, CS_TYPE_INTSUM), 0);
	tu_commit(txn);
	for (int run = 0; run < 2; run++) {
		txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_bulk_open(txn, "t", &b), 0);
		assert_int_equal(cs_bulk_put(b, CS_STR("r"), "sum", CS_STR("q"), 1000, CS_STR("1234567")), -EINVAL);
		assert_int_equal(cs_bulk_put(b, CS_STR("r"), "sum", CS_STR("q"), 1000, CS_BYTES(five, 8)), 0);
		cs_bulk_close(b);
		tu_commit(txn);
		d = tu_dump_st(ts->st, "t", NULL);
		assert_string_equal(d, "r sum:q@1000=\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x05\n");
		free(d);
	}
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR("r"), &add, 1), 0);
	tu_commit(txn);
	d = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(d, "r sum:q@1000=\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x07\n");
	free(d);
}

static void test_bulk__cells_loaded_into_a_dropped_range_are_visible(void **state)
{
	struct tu_store *ts = *state;
	static const struct cell c[] = { { "p1", "a", "x", 1, "again" } };
	cs_txn *txn;
	char *d;

	tu_put(ts->st, "t", "p1", "a", "x", 2, "gone");
	tu_put(ts->st, "t", "p2", "a", "x", 2, "gone too");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("p")), 0);
	tu_commit(txn);
	load(ts->st, "t", c, 1);
	d = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(d, "p1 a:x@1=again\n");
	free(d);
}

static void test_bulk__now_is_the_current_time(void **state)
{
	struct tu_store *ts = *state;
	int64_t before = cs_now_us(), ts_got;
	cs_txn *txn = tu_begin(ts->st, 0);
	cs_bulk *b;
	const cs_row *row;
	cs_scan *scan;

	assert_int_equal(cs_bulk_open(txn, "t", &b), 0);
	assert_int_equal(cs_bulk_put(b, CS_STR("r"), "a", CS_STR("q"), CS_TS_NOW, CS_STR("v")), 0);
	cs_bulk_close(b);
	assert_int_equal(cs_scan_open(txn, "t", NULL, &scan), 0);
	assert_int_equal(cs_scan_next(scan, &row), 1);
	ts_got = row->cells[0].ts;
	cs_scan_close(scan);
	tu_commit(txn);
	assert_true(ts_got >= before && ts_got <= cs_now_us());
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, tu_store_teardown)
	const struct CMUnitTest tests[] = {
		T(test_bulk__sorted_input_into_a_new_table_is_appended),
		T(test_bulk__unsorted_input_gives_the_same_cells),
		T(test_bulk__a_cell_written_again_is_replaced),
		T(test_bulk__a_table_followed_by_another_is_written_without_appending),
		T(test_bulk__long_keys_round_trip),
		T(test_bulk__bad_cells_are_refused_before_writing),
		T(test_bulk__an_aggregate_cell_is_stored_exactly_not_merged),
		T(test_bulk__cells_loaded_into_a_dropped_range_are_visible),
		T(test_bulk__now_is_the_current_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
