/* test_mutate.c — row mutations (set, delete column/family/row, in order, all-or-nothing per row),
 * the limits and the errors that leave the transaction usable, bulk loads in one transaction. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "keys.h"
#include "lm.h"

static void test_mutate__set_replaces_same_timestamp(void **state)
{
	struct tu_store *ts = *state;
	const cs_mutation m[] = { TU_SET("a", "q", 5, "one"), TU_SET("a", "q", 6, "two"), TU_SET("a", "q", 5, "three") };

	tu_mutate_ok(ts->st, "r", m, 3);
	tu_expect_dump(ts->st, NULL, "r a:q@6=two a:q@5=three\n");
	tu_mutate_ok(ts->st, "r", &m[0], 1);
	tu_expect_dump(ts->st, NULL, "r a:q@6=two a:q@5=one\n");
}

static void test_mutate__timestamp_now(void **state)
{
	struct tu_store *ts = *state;
	const cs_mutation m[] = { TU_SET("a", "q", CS_TS_NOW, "x"), TU_SET("b", "q", CS_TS_NOW, "y") };
	int64_t before = cs_now_us(), after, t1, t2;
	cs_txn *txn;
	char *v;

	tu_mutate_ok(ts->st, "r", m, 2);
	after = cs_now_us();
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	free(v = tu_newest(txn, "r", "a", "q", &t1, NULL));
	assert_non_null(v);
	free(v = tu_newest(txn, "r", "b", "q", &t2, NULL));
	assert_non_null(v);
	tu_commit(txn);
	assert_true(t1 >= before && t1 <= after);
	assert_true(t1 == t2); /* one mutation call, one "now" */
}

static void test_mutate__delete_column_time_ranges(void **state)
{
	static const struct {
		int64_t start, end;
		const char *left; /* the timestamps left, newest first */
	} cases[] = {
		{ 0, 0, "" },
		{ 0, CS_TS_MAX, "" },
		{ 3, 0, "2 1" },
		{ 3, CS_TS_MAX, "2 1" },
		{ 0, 5, "13 8 5" },
		{ 2, 8, "13 8 1" },
		{ 1, 2, "13 8 5 3 2" },
		{ 4, 6, "13 8 3 2 1" },
		{ 13, 14, "8 5 3 2 1" },
		{ 14, 20, "13 8 5 3 2 1" },
		{ 0, 1, "13 8 5 3 2 1" },
		{ 5, 5, "13 8 5 3 2 1" },
		{ 8, 3, "13 8 5 3 2 1" },
	};
	static const int64_t stamps[] = { 1, 2, 3, 5, 8, 13 };
	struct tu_store *ts = *state;

	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		cs_mutation m = TU_DELCOL("a", "q", cases[i].start, cases[i].end);
		cs_txn *txn = tu_begin(ts->st, 0);
		char want[256] = "", *s, *w;

		for (size_t j = 0; j < TU_ARRAY_SIZE(stamps); j++)
			assert_int_equal(tu_set(txn, "t", CS_STR("r"), "a", CS_STR("q"), stamps[j], CS_STR("v")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("r"), "a", CS_STR("other"), 3, CS_STR("v")), 0);
		assert_int_equal(cs_row_mutate(txn, "t", CS_STR("r"), &m, 1), 0);
		s = tu_dump(txn, "t", NULL);
		w = want + sprintf(want, "r a:other@3=v");
		for (const char *p = cases[i].left; *p;) {
			char *end;
			long t = strtol(p, &end, 10);
			w += sprintf(w, " a:q@%ld=v", t);
			p = *end ? end + 1 : end;
		}
		strcpy(w, "\n");
		if (strcmp(s, want))
			fail_msg("[%lld, %lld): got \"%s\", want \"%s\"", (long long)cases[i].start,
				 (long long)cases[i].end, s, want);
		free(s);
		cs_txn_abort(txn);
	}
}

/* Rows, families and qualifiers that extend the one deleted must be untouched. */
static void populate_neighbours(cs_store *st)
{
	static const struct {
		const char *row;
		size_t rn;
	} rows[] = { { "r", 1 }, { "r\0", 2 }, { "r\x01", 2 }, { "r#", 2 }, { "q\xff", 2 }, { "s", 1 } };
	cs_txn *txn = tu_begin(st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(rows); i++) {
		cs_bytes r = CS_BYTES(rows[i].row, rows[i].rn);
		const cs_mutation m[] = {
			TU_SET("a", "x", 1, "1"), TU_SET("ab", "x", 1, "2"),
			{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_BYTES("x\0", 2), .ts = 1, .value = CS_STR("3") },
			TU_SET("a", "xy", 1, "4"), TU_SET("a", "", 1, "5"),
		};
		assert_int_equal(cs_row_mutate(txn, "t", r, m, TU_ARRAY_SIZE(m)), 0);
	}
	tu_commit(txn);
}

#define FULL " a:@1=5 a:x@1=1 a:x\\x00@1=3 a:xy@1=4 ab:x@1=2\n"
#define OTHERS "r\\x00" FULL "r\\x01" FULL "r#" FULL "s" FULL

static void test_mutate__deletes_do_not_reach_neighbours(void **state)
{
	static const struct {
		cs_mutation m;
		const char *r;
	} cases[] = {
		{ TU_DELCOL("a", "x", 0, 0), "r a:@1=5 a:x\\x00@1=3 a:xy@1=4 ab:x@1=2\n" },
		{ TU_DELCOL("a", "", 0, 0), "r a:x@1=1 a:x\\x00@1=3 a:xy@1=4 ab:x@1=2\n" },
		{ TU_DELFAM("a"), "r ab:x@1=2\n" },
		{ TU_DELFAM("ab"), "r a:@1=5 a:x@1=1 a:x\\x00@1=3 a:xy@1=4\n" },
		{ TU_DELROW(), "" },
	};
	struct tu_store *ts = *state;

	populate_neighbours(ts->st);
	tu_expect_dump(ts->st, NULL, "q\\xff" FULL "r" FULL OTHERS);
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		cs_txn *txn = tu_begin(ts->st, 0);
		char want[1024], *s;
		assert_int_equal(cs_row_mutate(txn, "t", CS_STR("r"), &cases[i].m, 1), 0);
		snprintf(want, sizeof(want), "q\\xff" FULL "%s" OTHERS, cases[i].r);
		s = tu_dump(txn, "t", NULL);
		if (strcmp(s, want))
			fail_msg("case %zu: got\n%swant\n%s", i, s, want);
		free(s);
		cs_txn_abort(txn);
	}
	/* Deleting what is not there is not an error. */
	const cs_mutation none[] = { TU_DELROW(), TU_DELFAM("b"), TU_DELCOL("b", "zz", 0, 0) };
	tu_mutate_ok(ts->st, "nothing-here", none, 3);
	tu_mutate_ok(ts->st, "r", &none[1], 2);
	tu_expect_dump(ts->st, NULL, "q\\xff" FULL "r" FULL OTHERS);
}

static void test_mutate__applied_in_order(void **state)
{
	struct tu_store *ts = *state;
	const cs_mutation m[] = {
		TU_SET("a", "q", 1, "gone"), TU_SET("b", "q", 1, "gone"), TU_DELROW(),
		TU_SET("a", "q", 2, "kept"), TU_SET("b", "q", 2, "gone"), TU_DELFAM("b"),
		TU_SET("b", "q", 3, "kept"), TU_SET("a", "z", 3, "gone"), TU_DELCOL("a", "z", 0, 0),
	};
	tu_mutate_ok(ts->st, "r", m, TU_ARRAY_SIZE(m));
	tu_expect_dump(ts->st, NULL, "r a:q@2=kept b:q@3=kept\n");
	tu_mutate_ok(ts->st, "empty", m, 0); /* no mutations: nothing */
	tu_expect_dump(ts->st, NULL, "r a:q@2=kept b:q@3=kept\n");
}

/* Every validation error is found before anything is written (a bad mutation in the middle of a list
 * leaves no trace of the ones before it), and leaves the transaction usable. */
static void test_mutate__validation_errors(void **state)
{
	struct tu_store *ts = *state;
	uint8_t *big = tu_filled(CS_MAX_QUALIFIER + 1, 0);
	cs_bytes row_ok = CS_STR("r"), row_long = CS_BYTES(big, CS_MAX_ROW_KEY + 1), row_max = CS_BYTES(big, CS_MAX_ROW_KEY);
	cs_bytes q_long = CS_BYTES(big, CS_MAX_QUALIFIER + 1), q_max = CS_BYTES(big, CS_MAX_QUALIFIER);
	const struct {
		const char *name, *table;
		cs_bytes row;
		cs_mutation bad;
		int rc;
	} cases[] = {
		{ "empty row", "t", CS_BYTES("", 0), TU_SET("a", "q", 1, "v"), -EINVAL },
		{ "row 4097 bytes", "t", row_long, TU_SET("a", "q", 1, "v"), -ENAMETOOLONG },
		{ "qualifier 16385 bytes", "t", row_ok,
		  { .op = CS_SET_CELL, .family = "a", .qualifier = q_long, .ts = 1 }, -ENAMETOOLONG },
		{ "delete qualifier 16385 bytes", "t", row_ok,
		  { .op = CS_DELETE_COLUMN, .family = "a", .qualifier = q_long }, -ENAMETOOLONG },
		{ "value over the limit", "t", row_ok,
		  { .op = CS_SET_CELL, .family = "a", .ts = 1, .value = CS_BYTES(big, 1001) }, -EFBIG },
		{ "negative timestamp", "t", row_ok, TU_SET("a", "q", -1, "v"), -EINVAL },
		{ "most negative timestamp but one", "t", row_ok, TU_SET("a", "q", INT64_MIN + 1, "v"), -EINVAL },
		{ "negative delete range start", "t", row_ok, TU_DELCOL("a", "q", -10, 5), -EINVAL },
		{ "negative delete range", "t", row_ok, TU_DELCOL("a", "q", -10, -5), -EINVAL },
		{ "bad op", "t", row_ok, { .op = (enum cs_mut_op)99, .family = "a" }, -EINVAL },
		{ "no such family", "t", row_ok, TU_SET("nosuch", "q", 1, "v"), -ENOENT },
		{ "no family", "t", row_ok, TU_SET(NULL, "q", 1, "v"), -ENOENT },
		{ "delete no such family", "t", row_ok, TU_DELFAM("nosuch"), -ENOENT },
		{ "delete column of no such family", "t", row_ok, TU_DELCOL("nosuch", "q", 0, 0), -ENOENT },
		{ "no such table", "nosuch", row_ok, TU_SET("a", "q", 1, "v"), -ENOENT },
		{ "bad table name", "a b", row_ok, TU_SET("a", "q", 1, "v"), -ENOENT },
	};
	cs_txn *txn;

	tu_reopen(ts, 0, 1000);
	tu_table(ts->st, "u", "a", NULL, NULL);
	tu_put(ts->st, "t", "r", "b", "before", 1, "v");
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		const cs_mutation m[] = { TU_SET("a", "q", 7, "first"), TU_DELROW(), cases[i].bad, TU_SET("a", "q2", 7, "last") };
		int rc;
		char *s;

		txn = tu_begin(ts->st, 0);
		rc = cs_row_mutate(txn, cases[i].table, cases[i].row, m, TU_ARRAY_SIZE(m));
		if (rc != cases[i].rc)
			fail_msg("%s: got %d, want %d", cases[i].name, rc, cases[i].rc);
		s = tu_dump(txn, "t", NULL);
		if (strcmp(s, "r b:before@1=v\n"))
			fail_msg("%s: the mutations before the bad one were applied:\n%s", cases[i].name, s);
		free(s);
		/* The transaction goes on and commits. */
		assert_int_equal(tu_set(txn, "u", CS_STR("ok"), "a", CS_STR("q"), (int64_t)i, CS_STR("v")), 0);
		tu_commit(txn);
	}

	/* The limits themselves are fine, with any bytes. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", row_max, "a", q_max, 0, CS_BYTES(big, 1000)), 0);
	assert_int_equal(tu_set(txn, "t", row_ok, "a", CS_STR("q"), INT64_MAX, CS_STR("")), 0);
	const cs_mutation del[] = { TU_DELCOL("a", "q", INT64_MAX, CS_TS_MAX) };
	assert_int_equal(cs_row_mutate(txn, "t", row_ok, del, 1), 0);
	tu_commit(txn);
	free(big);
}

/* Rows and qualifiers at their full length, of bytes that stress the key encoding, written, read,
 * deleted by column and by row. */
static void test_mutate__full_size_keys_with_any_bytes(void **state)
{
	struct tu_store *ts = *state;
	uint8_t *rows[3], *qs[2];
	uint64_t seed = 5;
	cs_txn *txn;
	cs_scan *scan;
	const cs_row *r;

	for (int i = 0; i < 3; i++) {
		rows[i] = malloc(CS_MAX_ROW_KEY);
		tu_rand_bytes(&seed, rows[i], CS_MAX_ROW_KEY, 1);
		if (i)
			memcpy(rows[i], rows[0], CS_MAX_ROW_KEY - 1); /* rows differing in the last byte only */
	}
	rows[1][CS_MAX_ROW_KEY - 1] = 0x00;
	rows[2][CS_MAX_ROW_KEY - 1] = 0xFF;
	rows[0][CS_MAX_ROW_KEY - 1] = '#';
	for (int i = 0; i < 2; i++) {
		qs[i] = malloc(CS_MAX_QUALIFIER);
		tu_rand_bytes(&seed, qs[i], CS_MAX_QUALIFIER, 1);
	}
	memcpy(qs[1], qs[0], CS_MAX_QUALIFIER - 1);
	qs[0][CS_MAX_QUALIFIER - 1] = 0x00;
	qs[1][CS_MAX_QUALIFIER - 1] = 0x01;

	txn = tu_begin(ts->st, 0);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++)
			for (int64_t t = 1; t <= 2; t++)
				assert_int_equal(tu_set(txn, "t", CS_BYTES(rows[i], CS_MAX_ROW_KEY), "a",
							CS_BYTES(qs[j], CS_MAX_QUALIFIER), t, CS_BYTES(qs[j], 100 * (size_t)t)), 0);
	tu_commit(txn);

	/* Read back: rows 1 (…00), 0 (…#), 2 (…FF); qualifiers 0 then 1; newest first. */
	static const int order[] = { 1, 0, 2 };
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_scan_open(txn, "t", NULL, &scan), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(cs_scan_next(scan, &r), 1);
		assert_int_equal(r->key.len, CS_MAX_ROW_KEY);
		assert_memory_equal(r->key.data, rows[order[i]], CS_MAX_ROW_KEY);
		assert_int_equal(r->ncells, 4);
		for (int c = 0; c < 4; c++) {
			assert_int_equal(r->cells[c].qualifier.len, CS_MAX_QUALIFIER);
			assert_memory_equal(r->cells[c].qualifier.data, qs[c / 2], CS_MAX_QUALIFIER);
			assert_int_equal(r->cells[c].ts, 2 - c % 2);
			assert_int_equal(r->cells[c].value.len, 100 * (2 - c % 2));
		}
	}
	assert_int_equal(cs_scan_next(scan, &r), 0);
	cs_scan_close(scan);
	tu_commit(txn);

	/* Delete one column of row 0, then all of row 2. */
	cs_mutation dc = { .op = CS_DELETE_COLUMN, .family = "a", .qualifier = CS_BYTES(qs[0], CS_MAX_QUALIFIER) };
	cs_mutation dr = TU_DELROW();
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_BYTES(rows[0], CS_MAX_ROW_KEY), &dc, 1), 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_BYTES(rows[2], CS_MAX_ROW_KEY), &dr, 1), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_scan_open(txn, "t", NULL, &scan), 0);
	assert_int_equal(cs_scan_next(scan, &r), 1);
	assert_memory_equal(r->key.data, rows[1], CS_MAX_ROW_KEY);
	assert_int_equal(r->ncells, 4);
	assert_int_equal(cs_scan_next(scan, &r), 1);
	assert_memory_equal(r->key.data, rows[0], CS_MAX_ROW_KEY);
	assert_int_equal(r->ncells, 2);
	assert_memory_equal(r->cells[0].qualifier.data, qs[1], CS_MAX_QUALIFIER);
	assert_int_equal(cs_scan_next(scan, &r), 0);
	cs_scan_close(scan);
	tu_commit(txn);
	for (int i = 0; i < 3; i++)
		free(rows[i]);
	free(qs[0]);
	free(qs[1]);
}

/* Many rows in one transaction, for bulk loads. */
static void test_mutate__bulk_load_one_transaction(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, 0);
	cs_scan *scan;
	const cs_row *r;
	size_t n = 0;
	char row[32];

	for (int i = 0; i < 5000; i++) {
		const cs_mutation m[] = { TU_SET("a", "x", 1, "v"), TU_SET("b", "y", 2, "w") };
		snprintf(row, sizeof(row), "row%06d", (i * 7919) % 5000);
		assert_int_equal(cs_row_mutate(txn, "t", CS_STR(row), m, 2), 0);
	}
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_scan_open(txn, "t", NULL, &scan), 0);
	while (cs_scan_next(scan, &r) == 1) {
		snprintf(row, sizeof(row), "row%06zu", n++);
		assert_int_equal(r->key.len, strlen(row));
		assert_memory_equal(r->key.data, row, r->key.len);
		assert_int_equal(r->ncells, 2);
	}
	assert_int_equal(n, 5000);
	cs_scan_close(scan);
	tu_commit(txn);
}

/* A failed transaction stores nothing: commit reports the first error. */
static void test_mutate__aborted_transaction_leaves_nothing(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, 0);
	const cs_mutation m[] = { TU_SET("a", "q", 1, "v"), TU_DELROW(), TU_SET("b", "q", 2, "w") };

	assert_int_equal(cs_row_mutate(txn, "t", CS_STR("r"), m, 3), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("x")), 0);
	cs_txn_abort(txn);
	tu_expect_dump(ts->st, NULL, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, tu_mutate_setup, tu_store_teardown)
		T(test_mutate__set_replaces_same_timestamp),
		T(test_mutate__timestamp_now),
		T(test_mutate__delete_column_time_ranges),
		T(test_mutate__deletes_do_not_reach_neighbours),
		T(test_mutate__applied_in_order),
		T(test_mutate__validation_errors),
		T(test_mutate__full_size_keys_with_any_bytes),
		T(test_mutate__bulk_load_one_transaction),
		T(test_mutate__aborted_transaction_leaves_nothing),
#undef T
	};
	return cmocka_run_group_tests_name("mutate", tests, NULL, NULL);
}
