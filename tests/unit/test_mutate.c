/* test_mutate.c — row mutations (set, delete column/family/row, in order, all-or-nothing per row),
 * the limits and the errors that leave the transaction usable, ReadModifyWrite, CheckAndMutate, and
 * dropping row ranges and whole tables. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"

static int setup(void **state)
{
	struct tu_store *ts;
	tu_store_setup(state);
	ts = *state;
	tu_table(ts->st, "t", "a", NULL, "ab", NULL, "b", NULL, "v1", "maxversions=1", NULL);
	return 0;
}

/* Mutations from string literals, usable in static tables. */
#define LIT(s) { (s), sizeof(s) - 1 }
#define SET(f, q, t, v) { .op = CS_SET_CELL, .family = (f), .qualifier = LIT(q), .ts = (t), .value = LIT(v) }
#define DELCOL(f, q, s, e) \
	{ .op = CS_DELETE_COLUMN, .family = (f), .qualifier = LIT(q), .ts_start = (s), .ts_end = (e) }
#define DELFAM(f) { .op = CS_DELETE_FAMILY, .family = (f) }
#define DELROW() { .op = CS_DELETE_ROW }

static void mutate_ok(cs_store *st, const char *row, const cs_mutation *m, size_t n)
{
	cs_txn *txn = tu_begin(st, 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR(row), m, n), 0);
	tu_commit(txn);
}

static void expect_dump(cs_store *st, const cs_read_opts *o, const char *want)
{
	char *s = tu_dump_st(st, "t", o);
	assert_string_equal(s, want);
	free(s);
}

/* The newest cell of a column: its value (caller frees) and timestamp; NULL if there is none. */
static char *newest(cs_txn *txn, const char *row, const char *fam, const char *q, int64_t *ts, size_t *n)
{
	cs_bytes r = CS_STR(row), qq = CS_STR(q);
	cs_column_sel sel = { .family = fam, .qualifier = &qq };
	cs_read_opts o = { .row = &r, .ncolumns = 1, .columns = &sel, .cells_per_column = 1 };
	const cs_row *rw;
	cs_scan *scan;
	char *v = NULL;
	int rc;

	assert_int_equal(cs_scan_open(txn, "t", &o, &scan), 0);
	rc = cs_scan_next(scan, &rw);
	assert_true(rc >= 0);
	if (rc == 1) {
		assert_int_equal(rw->ncells, 1);
		v = malloc(rw->cells[0].value.len + 1);
		memcpy(v, rw->cells[0].value.data, rw->cells[0].value.len);
		v[rw->cells[0].value.len] = 0;
		if (ts)
			*ts = rw->cells[0].ts;
		if (n)
			*n = rw->cells[0].value.len;
	}
	cs_scan_close(scan);
	return v;
}

static void test_mutate__set_replaces_same_timestamp(void **state)
{
	struct tu_store *ts = *state;
	const cs_mutation m[] = { SET("a", "q", 5, "one"), SET("a", "q", 6, "two"), SET("a", "q", 5, "three") };

	mutate_ok(ts->st, "r", m, 3);
	expect_dump(ts->st, NULL, "r a:q@6=two a:q@5=three\n");
	mutate_ok(ts->st, "r", &m[0], 1);
	expect_dump(ts->st, NULL, "r a:q@6=two a:q@5=one\n");
}

static void test_mutate__timestamp_now(void **state)
{
	struct tu_store *ts = *state;
	const cs_mutation m[] = { SET("a", "q", CS_TS_NOW, "x"), SET("b", "q", CS_TS_NOW, "y") };
	int64_t before = cs_now_us(), after, t1, t2;
	cs_txn *txn;
	char *v;

	mutate_ok(ts->st, "r", m, 2);
	after = cs_now_us();
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	free(v = newest(txn, "r", "a", "q", &t1, NULL));
	assert_non_null(v);
	free(v = newest(txn, "r", "b", "q", &t2, NULL));
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
		cs_mutation m = DELCOL("a", "q", cases[i].start, cases[i].end);
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
			SET("a", "x", 1, "1"), SET("ab", "x", 1, "2"),
			{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_BYTES("x\0", 2), .ts = 1, .value = CS_STR("3") },
			SET("a", "xy", 1, "4"), SET("a", "", 1, "5"),
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
		{ DELCOL("a", "x", 0, 0), "r a:@1=5 a:x\\x00@1=3 a:xy@1=4 ab:x@1=2\n" },
		{ DELCOL("a", "", 0, 0), "r a:x@1=1 a:x\\x00@1=3 a:xy@1=4 ab:x@1=2\n" },
		{ DELFAM("a"), "r ab:x@1=2\n" },
		{ DELFAM("ab"), "r a:@1=5 a:x@1=1 a:x\\x00@1=3 a:xy@1=4\n" },
		{ DELROW(), "" },
	};
	struct tu_store *ts = *state;

	populate_neighbours(ts->st);
	expect_dump(ts->st, NULL, "q\\xff" FULL "r" FULL OTHERS);
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
	const cs_mutation none[] = { DELROW(), DELFAM("b"), DELCOL("b", "zz", 0, 0) };
	mutate_ok(ts->st, "nothing-here", none, 3);
	mutate_ok(ts->st, "r", &none[1], 2);
	expect_dump(ts->st, NULL, "q\\xff" FULL "r" FULL OTHERS);
}

static void test_mutate__applied_in_order(void **state)
{
	struct tu_store *ts = *state;
	const cs_mutation m[] = {
		SET("a", "q", 1, "gone"), SET("b", "q", 1, "gone"), DELROW(),
		SET("a", "q", 2, "kept"), SET("b", "q", 2, "gone"), DELFAM("b"),
		SET("b", "q", 3, "kept"), SET("a", "z", 3, "gone"), DELCOL("a", "z", 0, 0),
	};
	mutate_ok(ts->st, "r", m, TU_ARRAY_SIZE(m));
	expect_dump(ts->st, NULL, "r a:q@2=kept b:q@3=kept\n");
	mutate_ok(ts->st, "empty", m, 0); /* no mutations: nothing */
	expect_dump(ts->st, NULL, "r a:q@2=kept b:q@3=kept\n");
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
		{ "empty row", "t", CS_BYTES("", 0), SET("a", "q", 1, "v"), -EINVAL },
		{ "row 4097 bytes", "t", row_long, SET("a", "q", 1, "v"), -ENAMETOOLONG },
		{ "qualifier 16385 bytes", "t", row_ok,
		  { .op = CS_SET_CELL, .family = "a", .qualifier = q_long, .ts = 1 }, -ENAMETOOLONG },
		{ "delete qualifier 16385 bytes", "t", row_ok,
		  { .op = CS_DELETE_COLUMN, .family = "a", .qualifier = q_long }, -ENAMETOOLONG },
		{ "value over the limit", "t", row_ok,
		  { .op = CS_SET_CELL, .family = "a", .ts = 1, .value = CS_BYTES(big, 1001) }, -EFBIG },
		{ "negative timestamp", "t", row_ok, SET("a", "q", -1, "v"), -EINVAL },
		{ "most negative timestamp but one", "t", row_ok, SET("a", "q", INT64_MIN + 1, "v"), -EINVAL },
		{ "negative delete range start", "t", row_ok, DELCOL("a", "q", -10, 5), -EINVAL },
		{ "negative delete range", "t", row_ok, DELCOL("a", "q", -10, -5), -EINVAL },
		{ "bad op", "t", row_ok, { .op = (enum cs_mut_op)99, .family = "a" }, -EINVAL },
		{ "no such family", "t", row_ok, SET("nosuch", "q", 1, "v"), -ENOENT },
		{ "no family", "t", row_ok, SET(NULL, "q", 1, "v"), -ENOENT },
		{ "delete no such family", "t", row_ok, DELFAM("nosuch"), -ENOENT },
		{ "delete column of no such family", "t", row_ok, DELCOL("nosuch", "q", 0, 0), -ENOENT },
		{ "no such table", "nosuch", row_ok, SET("a", "q", 1, "v"), -ENOENT },
		{ "bad table name", "a b", row_ok, SET("a", "q", 1, "v"), -ENOENT },
	};
	cs_txn *txn;

	tu_reopen(ts, 0, 1000);
	tu_table(ts->st, "u", "a", NULL, NULL);
	tu_put(ts->st, "t", "r", "b", "before", 1, "v");
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		const cs_mutation m[] = { SET("a", "q", 7, "first"), DELROW(), cases[i].bad, SET("a", "q2", 7, "last") };
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
	const cs_mutation del[] = { DELCOL("a", "q", INT64_MAX, CS_TS_MAX) };
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
	cs_mutation dr = DELROW();
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

static void put_u64(cs_store *st, const char *row, const char *q, int64_t ts, uint64_t v)
{
	uint8_t b[8];
	cs_txn *txn = tu_begin(st, 0);
	key_put_u64(b, v);
	assert_int_equal(tu_set(txn, "t", CS_STR(row), "a", CS_STR(q), ts, CS_BYTES(b, 8)), 0);
	tu_commit(txn);
}

static void test_mutate__increment(void **state)
{
	static const struct {
		const char *q;
		bool exists;
		uint64_t start;
		int64_t delta, want;
	} cases[] = {
		{ "missing", false, 0, 5, 5 },
		{ "missing-neg", false, 0, -5, -5 },
		{ "zero-delta", false, 0, 0, 0 },
		{ "one", true, 1, 41, 42 },
		{ "neg", true, (uint64_t)-10, 3, -7 },
		{ "wrap", true, (uint64_t)INT64_MAX, 1, INT64_MIN },
		{ "wrap-down", true, (uint64_t)INT64_MIN, -1, INT64_MAX },
	};
	struct tu_store *ts = *state;
	cs_txn *txn;

	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		int64_t result = 12345, t;
		size_t n;
		char *v;

		if (cases[i].exists)
			put_u64(ts->st, "r", cases[i].q, 10, cases[i].start);
		txn = tu_begin(ts->st, 0);
		int64_t before = cs_now_us();
		assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR(cases[i].q), cases[i].delta, &result), 0);
		if (result != cases[i].want)
			fail_msg("%s: got %lld, want %lld", cases[i].q, (long long)result, (long long)cases[i].want);
		v = newest(txn, "r", "a", cases[i].q, &t, &n);
		assert_non_null(v);
		assert_int_equal(n, 8);
		assert_true(key_get_u64((uint8_t *)v) == (uint64_t)cases[i].want); /* 8 bytes, big-endian */
		assert_true(t >= before);
		free(v);
		tu_commit(txn);
	}

	/* Successive increments in one transaction and across transactions add up. */
	for (int i = 0; i < 10; i++) {
		int64_t result;
		txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("ctr"), 3, &result), 0);
		assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("ctr"), 4, NULL), 0);
		tu_commit(txn);
		assert_int_equal(result, 7 * i + 3);
	}
}

static void test_mutate__increment_rejects_non_counters(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;
	int64_t result;

	tu_put(ts->st, "t", "r", "a", "seven", 1, "1234567");
	tu_put(ts->st, "t", "r", "a", "empty", 1, "");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("seven"), 1, &result), -EINVAL);
	assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("empty"), 1, &result), -EINVAL);
	assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "nosuch", CS_STR("q"), 1, &result), -ENOENT);
	assert_int_equal(cs_rmw_increment(txn, "nosuch", CS_STR("r"), "a", CS_STR("q"), 1, &result), -ENOENT);
	assert_int_equal(cs_rmw_increment(txn, "t", CS_STR(""), "a", CS_STR("q"), 1, &result), -EINVAL);
	uint8_t *big = tu_filled(CS_MAX_ROW_KEY + 1, 'r');
	assert_int_equal(cs_rmw_increment(txn, "t", CS_BYTES(big, CS_MAX_ROW_KEY + 1), "a", CS_STR("q"), 1, &result),
			 -ENAMETOOLONG);
	free(big);
	assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("ok"), 1, &result), 0);
	tu_commit(txn); /* usable after every error */
	expect_dump(ts->st, &(cs_read_opts){ .keys_only = true, .ts_start = 0, .ts_end = 2 },
		    "r a:empty@1=[0] a:seven@1=[7]\n");
}

/* The new cell's timestamp is max(newest, now): a counter stamped in the future is replaced there. */
static void test_mutate__rmw_timestamp_after_future_cell(void **state)
{
	struct tu_store *ts = *state;
	int64_t future = cs_now_us() + 3600LL * 1000000, t;
	cs_txn *txn;
	char *v;

	put_u64(ts->st, "r", "ctr", future, 5);
	put_u64(ts->st, "r", "ctr", 1, 100);
	tu_put(ts->st, "t", "r", "a", "log", future, "x");
	txn = tu_begin(ts->st, 0);
	int64_t result;
	assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("ctr"), 2, &result), 0);
	assert_int_equal(result, 7);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "a", CS_STR("log"), CS_STR("y"), &t), 0);
	assert_true(t == future);
	tu_commit(txn);
	char want[256];
	snprintf(want, sizeof(want), "r a:ctr@%lld=[8] a:ctr@1=[8] a:log@%lld=[2]\n", (long long)future, (long long)future);
	expect_dump(ts->st, &(cs_read_opts){ .keys_only = true }, want);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	v = newest(txn, "r", "a", "log", NULL, NULL);
	assert_string_equal(v, "xy");
	free(v);
	tu_commit(txn);
}

static void test_mutate__append(void **state)
{
	struct tu_store *ts = *state;
	uint8_t *big = tu_filled(600, 'z');
	int64_t t1, t2, before = cs_now_us();
	size_t n;
	cs_txn *txn;
	char *v;

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "a", CS_STR("s"), CS_STR("ab"), &t1), 0);
	assert_true(t1 >= before);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "a", CS_STR("s"), CS_BYTES("\0\xff", 2), &t2), 0);
	assert_true(t2 >= t1);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "a", CS_STR("s"), CS_STR(""), NULL), 0);
	v = newest(txn, "r", "a", "s", NULL, &n);
	assert_int_equal(n, 4);
	assert_memory_equal(v, "ab\0\xff", 4);
	free(v);
	tu_commit(txn);

	/* Over the value limit: -EFBIG, and the transaction goes on. */
	tu_reopen(ts, 0, 1000);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "a", CS_STR("s"), CS_BYTES(big, 600), NULL), 0);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "a", CS_STR("s"), CS_BYTES(big, 600), NULL), -EFBIG);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "a", CS_STR("s"), CS_BYTES(big, 396), NULL), 0);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "nosuch", CS_STR("s"), CS_STR("x"), NULL), -ENOENT);
	v = newest(txn, "r", "a", "s", NULL, &n);
	assert_int_equal(n, 1000);
	free(v);
	tu_commit(txn);
	free(big);
}

/* ReadModifyWrite sees only visible cells: collected, deleted and dropped ones count as missing. */
static void test_mutate__rmw_reads_visible_cells_only(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;
	int64_t result;
	cs_mutation del = DELCOL("a", "gone", 0, 0);
	char *v;

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_create(txn, "t", "old", "maxage=1d"), 0);
	tu_commit(txn);
	put_u64(ts->st, "r", "gone", 5, 100);
	mutate_ok(ts->st, "r", &del, 1);
	tu_put(ts->st, "t", "r", "old", "s", 1000, "ancient"); /* 1970: collected by maxage=1d */
	tu_put(ts->st, "t", "d1", "a", "s", 1, "dropped");

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("gone"), 1, &result), 0);
	assert_int_equal(result, 1);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "old", CS_STR("s"), CS_STR("new"), NULL), 0);
	v = newest(txn, "r", "old", "s", NULL, NULL);
	assert_string_equal(v, "new");
	free(v);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("d")), 0);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("d1"), "a", CS_STR("s"), CS_STR("+"), NULL), 0);
	v = newest(txn, "d1", "a", "s", NULL, NULL);
	assert_string_equal(v, "+");
	free(v);
	tu_commit(txn);
}

static void test_mutate__check_and_mutate(void **state)
{
	static const cs_bytes yes = { "yes", 3 }, ye = { "ye", 2 }, yess = { "yes!", 4 }, empty = { "", 0 };
	static const cs_bytes nv = { "new", 3 }, ov = { "old", 3 };
	static const struct {
		cs_predicate p;
		bool matched;
	} cases[] = {
		{ { "a", { "x", 1 }, NULL }, true },
		{ { "a", { "nope", 4 }, NULL }, false },
		{ { "a", { "x", 1 }, &yes }, true },
		{ { "a", { "x", 1 }, &ye }, false },
		{ { "a", { "x", 1 }, &yess }, false },
		{ { "a", { "e", 1 }, &empty }, true },     /* an empty value equals "" */
		{ { "a", { "nope", 4 }, &empty }, false }, /* a missing cell does not */
		{ { "v1", { "q", 1 }, &nv }, true },       /* only the newest cell counts */
		{ { "v1", { "q", 1 }, &ov }, false },
		{ { "b", { "x", 1 }, NULL }, false },      /* the family has no cells */
		{ { "a", { "x\0", 2 }, NULL }, false },    /* the qualifier is exact */
		{ { "a", { "", 0 }, NULL }, false },
	};
	const cs_mutation t_m[] = { SET("a", "result", 10, "T"), DELCOL("a", "x", 0, 0) };
	const cs_mutation f_m[] = { SET("a", "result", 10, "F") };
	struct tu_store *ts = *state;
	const cs_mutation init[] = {
		SET("a", "x", 1, "yes"), SET("a", "e", 1, ""), SET("v1", "q", 1, "old"), SET("v1", "q", 2, "new"),
	};

	mutate_ok(ts->st, "r", init, TU_ARRAY_SIZE(init));
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		cs_txn *txn = tu_begin(ts->st, 0);
		bool matched = !cases[i].matched;
		char *v, *x;

		assert_int_equal(cs_check_and_mutate(txn, "t", CS_STR("r"), &cases[i].p, t_m, 2, f_m, 1, &matched), 0);
		if (matched != cases[i].matched)
			fail_msg("case %zu: matched %d", i, matched);
		v = newest(txn, "r", "a", "result", NULL, NULL);
		x = newest(txn, "r", "a", "x", NULL, NULL);
		assert_string_equal(v, matched ? "T" : "F");
		if (matched)
			assert_null(x); /* the whole true list was applied */
		else
			assert_string_equal(x, "yes");
		free(v);
		free(x);
		cs_txn_abort(txn);
	}

	/* Empty mutation lists, and no MATCHED. */
	cs_txn *txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_check_and_mutate(txn, "t", CS_STR("r"), &cases[0].p, NULL, 0, NULL, 0, NULL), 0);
	tu_commit(txn);
	expect_dump(ts->st, NULL, "r a:e@1= a:x@1=yes v1:q@2=new\n");
}

/* Both branches are validated before either runs: an error in the one not taken still stops it. */
static void test_mutate__check_and_mutate_errors(void **state)
{
	struct tu_store *ts = *state;
	const cs_predicate p = { "a", { "x", 1 }, NULL }, bad_p = { "nosuch", { "x", 1 }, NULL };
	const cs_mutation good[] = { SET("a", "result", 1, "T") };
	const cs_mutation bad[] = { SET("a", "result", 1, "F"), SET("nosuch", "q", 1, "v") };
	const cs_mutation neg[] = { SET("a", "result", -3, "F") };
	cs_txn *txn;
	bool matched;

	tu_put(ts->st, "t", "r", "a", "x", 1, "yes");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_check_and_mutate(txn, "t", CS_STR("r"), &p, good, 1, bad, 2, &matched), -ENOENT);
	assert_int_equal(cs_check_and_mutate(txn, "t", CS_STR("r"), &p, good, 1, neg, 1, &matched), -EINVAL);
	assert_int_equal(cs_check_and_mutate(txn, "t", CS_STR("r"), &bad_p, good, 1, NULL, 0, &matched), -ENOENT);
	assert_int_equal(cs_check_and_mutate(txn, "nosuch", CS_STR("r"), &p, good, 1, NULL, 0, &matched), -ENOENT);
	assert_int_equal(cs_check_and_mutate(txn, "t", CS_STR(""), &p, good, 1, NULL, 0, &matched), -EINVAL);
	tu_commit(txn);
	expect_dump(ts->st, NULL, "r a:x@1=yes\n");
}

/* ---- dropping row ranges ---- */

static const struct {
	const char *row;
	size_t n;
} drop_rows[] = {
	{ "\0", 1 }, { "\0\0", 2 }, { "\x01", 1 }, { "a", 1 }, { "a1", 2 }, { "a2", 2 }, { "a\xff", 2 },
	{ "a\xff\xff", 3 }, { "ab", 2 }, { "b", 1 }, { "\xff", 1 }, { "\xff\xff" "1", 3 },
};

static char *reverse_lines(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *r = malloc(n + 1);
	assert_non_null(r);
	for (size_t end = n; end > 0;) {
		size_t start = end - 1;
		while (start > 0 && s[start - 1] != '\n')
			start--;
		memcpy(r + o, s + start, end - start);
		o += end - start;
		end = start;
	}
	r[o] = 0;
	return r;
}

static void test_mutate__drop_prefix_ranges(void **state)
{
	static const struct {
		const char *prefix;
		size_t n;
		const char *left; /* the rows left, escaped as tu_dump writes them, space-separated */
	} cases[] = {
		{ "a", 1, "\\x00 \\x00\\x00 \\x01 b \\xff \\xff\\xff1" },
		{ "a1", 2, "\\x00 \\x00\\x00 \\x01 a a2 ab a\\xff a\\xff\\xff b \\xff \\xff\\xff1" },
		{ "a\xff", 2, "\\x00 \\x00\\x00 \\x01 a a1 a2 ab b \\xff \\xff\\xff1" },
		{ "\xff", 1, "\\x00 \\x00\\x00 \\x01 a a1 a2 ab a\\xff a\\xff\\xff b" },
		{ "\xff\xff", 2, "\\x00 \\x00\\x00 \\x01 a a1 a2 ab a\\xff a\\xff\\xff b \\xff" },
		{ "\0", 1, "\\x01 a a1 a2 ab a\\xff a\\xff\\xff b \\xff \\xff\\xff1" },
		{ "\0\0", 2, "\\x00 \\x01 a a1 a2 ab a\\xff a\\xff\\xff b \\xff \\xff\\xff1" },
		{ "c", 1, "\\x00 \\x00\\x00 \\x01 a a1 a2 ab a\\xff a\\xff\\xff b \\xff \\xff\\xff1" },
		{ "a1x", 3, "\\x00 \\x00\\x00 \\x01 a a1 a2 ab a\\xff a\\xff\\xff b \\xff \\xff\\xff1" },
	};
	struct tu_store *ts = *state;

	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		cs_txn *txn = tu_begin(ts->st, 0);
		char want[512] = "", *w = want, *s, *rev;
		const char *p = cases[i].left;

		for (size_t j = 0; j < TU_ARRAY_SIZE(drop_rows); j++)
			assert_int_equal(tu_set(txn, "t", CS_BYTES(drop_rows[j].row, drop_rows[j].n), "a", CS_STR("q"), 1, CS_STR("v")), 0);
		tu_commit(txn);
		txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_drop_prefix(txn, "t", CS_BYTES(cases[i].prefix, cases[i].n)), 0);
		tu_commit(txn);
		while (*p) {
			size_t n = strcspn(p, " ");
			w += sprintf(w, "%.*s a:q@1=v\n", (int)n, p);
			p += n + (p[n] == ' ');
		}
		s = tu_dump_st(ts->st, "t", NULL);
		if (strcmp(s, want))
			fail_msg("drop case %zu: got\n%swant\n%s", i, s, want);
		free(s);
		/* Reversed, the same rows backwards. */
		s = tu_dump_st(ts->st, "t", &(cs_read_opts){ .reversed = true });
		rev = reverse_lines(want);
		if (strcmp(s, rev))
			fail_msg("drop case %zu reversed: got\n%swant\n%s", i, s, rev);
		free(rev);
		free(s);
		/* Clear the table for the next case. */
		txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("")), 0);
		tu_commit(txn);
		expect_dump(ts->st, NULL, "");
	}
}

/* A row written again after its range was dropped shows only its new cells; its neighbours stay
 * dropped; a later drop hides it again. */
static void test_mutate__drop_prefix_then_rewrite(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;

	tu_put(ts->st, "t", "a1", "a", "q", 5, "old");
	tu_put(ts->st, "t", "a1", "b", "q", 5, "old");
	tu_put(ts->st, "t", "a2", "a", "q", 5, "old");
	tu_put(ts->st, "t", "b", "a", "q", 5, "kept");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), 0);
	tu_commit(txn);
	tu_put(ts->st, "t", "a1", "a", "q", 1, "new"); /* older timestamp than the dropped cells */
	expect_dump(ts->st, NULL, "a1 a:q@1=new\nb a:q@5=kept\n");
	expect_dump(ts->st, &(cs_read_opts){ .reversed = true }, "b a:q@5=kept\na1 a:q@1=new\n");
	expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("a") }, "a1 a:q@1=new\n");

	/* Drop again: the rewritten row goes too; then another row comes back. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), 0);
	tu_commit(txn);
	expect_dump(ts->st, NULL, "b a:q@5=kept\n");
	tu_put(ts->st, "t", "a2", "b", "q", 9, "again");
	expect_dump(ts->st, NULL, "a2 b:q@9=again\nb a:q@5=kept\n");
	tu_reopen(ts, 0, 0);
	expect_dump(ts->st, NULL, "a2 b:q@9=again\nb a:q@5=kept\n");
}

/* Within one transaction: cells written before the drop are hidden, cells after it show. */
static void test_mutate__drop_prefix_within_a_transaction(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, 0);
	char *s;

	assert_int_equal(tu_set(txn, "t", CS_STR("a1"), "a", CS_STR("q"), 1, CS_STR("before")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a2"), "a", CS_STR("q"), 1, CS_STR("before")), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a2"), "a", CS_STR("q"), 2, CS_STR("after")), 0);
	s = tu_dump(txn, "t", NULL);
	assert_string_equal(s, "a2 a:q@2=after\n");
	free(s);
	tu_commit(txn);
	expect_dump(ts->st, NULL, "a2 a:q@2=after\n");

	txn = tu_begin(ts->st, 0);
	uint8_t *big = tu_filled(CS_MAX_ROW_KEY + 1, 'a');
	assert_int_equal(cs_drop_prefix(txn, "t", CS_BYTES(big, CS_MAX_ROW_KEY + 1)), -ENAMETOOLONG);
	assert_int_equal(cs_drop_prefix(txn, "nosuch", CS_STR("a")), -ENOENT);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_BYTES(big, CS_MAX_ROW_KEY)), 0);
	tu_commit(txn);
	free(big);
	expect_dump(ts->st, NULL, "a2 a:q@2=after\n");
}

/* Dropping every row keeps the schema; the table takes new rows at once, and old rows stay gone. */
static void test_mutate__drop_all_rows(void **state)
{
	struct tu_store *ts = *state;
	cs_table_info *info;
	cs_txn *txn;

	tu_put(ts->st, "t", "a", "a", "q", 1, "old");
	tu_put(ts->st, "t", "z", "v1", "q", 1, "old");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), 0); /* a drop record under the old id */
	assert_int_equal(tu_set(txn, "t", CS_STR("m"), "a", CS_STR("q"), 1, CS_STR("doomed")), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a"), "a", CS_STR("q"), 2, CS_STR("new")), 0);
	tu_commit(txn);
	expect_dump(ts->st, NULL, "a a:q@2=new\n");
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_int_equal(info->nfamilies, 4);
	assert_string_equal(info->families[3].gc, "maxversions=1");
	cs_table_info_free(info);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("")), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("")), 0);
	tu_commit(txn);
	expect_dump(ts->st, NULL, "");
	tu_put(ts->st, "t", "z", "a", "q", 3, "newest");
	expect_dump(ts->st, NULL, "z a:q@3=newest\n");
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
		const cs_mutation m[] = { SET("a", "x", 1, "v"), SET("b", "y", 2, "w") };
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
	const cs_mutation m[] = { SET("a", "q", 1, "v"), DELROW(), SET("b", "q", 2, "w") };

	assert_int_equal(cs_row_mutate(txn, "t", CS_STR("r"), m, 3), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("x")), 0);
	cs_txn_abort(txn);
	expect_dump(ts->st, NULL, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, tu_store_teardown)
		T(test_mutate__set_replaces_same_timestamp),
		T(test_mutate__timestamp_now),
		T(test_mutate__delete_column_time_ranges),
		T(test_mutate__deletes_do_not_reach_neighbours),
		T(test_mutate__applied_in_order),
		T(test_mutate__validation_errors),
		T(test_mutate__full_size_keys_with_any_bytes),
		T(test_mutate__increment),
		T(test_mutate__increment_rejects_non_counters),
		T(test_mutate__rmw_timestamp_after_future_cell),
		T(test_mutate__append),
		T(test_mutate__rmw_reads_visible_cells_only),
		T(test_mutate__check_and_mutate),
		T(test_mutate__check_and_mutate_errors),
		T(test_mutate__drop_prefix_ranges),
		T(test_mutate__drop_prefix_then_rewrite),
		T(test_mutate__drop_prefix_within_a_transaction),
		T(test_mutate__drop_all_rows),
		T(test_mutate__bulk_load_one_transaction),
		T(test_mutate__aborted_transaction_leaves_nothing),
#undef T
	};
	return cmocka_run_group_tests_name("mutate", tests, NULL, NULL);
}
