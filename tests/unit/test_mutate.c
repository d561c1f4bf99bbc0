/* test_mutate.c — row mutations (set, delete column/family/row, in order, all-or-nothing per row),
 * the limits and the errors that leave the transaction usable, ReadModifyWrite, CheckAndMutate,
 * dropping row ranges and whole tables, and moving a subtree of rows to another key. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "keys.h"
#include "store.h"

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

/* ---- moving a subtree of rows (cs_move_prefix) ---- */

/* A table's rows as (key, cells as tu_dump writes them), so that keys can be mapped and compared. */
struct snap_row {
	uint8_t *key;
	size_t n;
	char *cells;
};

struct snap {
	struct snap_row *r;
	size_t n;
};

static struct snap snap_take(cs_txn *txn, const char *table)
{
	struct snap s = { 0 };
	cs_scan *scan;
	const cs_row *row;
	int rc;

	assert_int_equal(cs_scan_open(txn, table, NULL, &scan), 0);
	while ((rc = cs_scan_next(scan, &row)) == 1) {
		struct tu_buf b = { 0 };
		struct snap_row *r;
		tu_buf_add(&b, "", 0);
		for (size_t i = 0; i < row->ncells; i++) {
			const cs_cell *c = &row->cells[i];
			char num[32];
			tu_buf_add(&b, " ", 1);
			tu_buf_add(&b, c->family, strlen(c->family));
			tu_buf_add(&b, ":", 1);
			tu_escape(&b, c->qualifier.data, c->qualifier.len);
			snprintf(num, sizeof(num), "@%lld=", (long long)c->ts);
			tu_buf_add(&b, num, strlen(num));
			tu_escape(&b, c->value.data, c->value.len);
		}
		s.r = realloc(s.r, (s.n + 1) * sizeof(*s.r));
		assert_non_null(s.r);
		r = &s.r[s.n++];
		r->key = tu_filled(row->key.len, 0);
		memcpy(r->key, row->key.data, row->key.len);
		r->n = row->key.len;
		r->cells = b.s;
	}
	assert_int_equal(rc, 0);
	cs_scan_close(scan);
	return s;
}

static void snap_free(struct snap *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->r[i].key);
		free(s->r[i].cells);
	}
	free(s->r);
	s->r = NULL;
	s->n = 0;
}

static int snap_row_cmp(const void *a, const void *b)
{
	const struct snap_row *x = a, *y = b;
	size_t n = x->n < y->n ? x->n : y->n;
	int c = n ? memcmp(x->key, y->key, n) : 0;
	return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The rows as a read of the table would return them after moving FROM's subtree (delimiter DELIM) to
 * TO: keys mapped, then sorted. */
static void snap_map(struct snap *s, cs_bytes from, cs_bytes to, char delim)
{
	for (size_t i = 0; i < s->n; i++) {
		struct snap_row *r = &s->r[i];
		uint8_t *k;
		if (r->n < from.len || memcmp(r->key, from.data, from.len) ||
		    (r->n > from.len && r->key[from.len] != (uint8_t)delim))
			continue;
		k = tu_filled(to.len + r->n - from.len, 0);
		memcpy(k, to.data, to.len);
		memcpy(k + to.len, r->key + from.len, r->n - from.len);
		free(r->key);
		r->key = k;
		r->n = to.len + r->n - from.len;
	}
	qsort(s->r, s->n, sizeof(*s->r), snap_row_cmp);
}

static char *snap_text(const struct snap *s)
{
	struct tu_buf b = { 0 };
	tu_buf_add(&b, "", 0);
	for (size_t i = 0; i < s->n; i++) {
		tu_escape(&b, s->r[i].key, s->r[i].n);
		tu_buf_add(&b, s->r[i].cells, strlen(s->r[i].cells));
		tu_buf_add(&b, "\n", 1);
	}
	return b.s;
}

static char *table_text(cs_txn *txn, const char *table)
{
	struct snap s = snap_take(txn, table);
	char *t = snap_text(&s);
	snap_free(&s);
	return t;
}

/* How many cells a read of TABLE returns. */
static uint64_t visible_cells(cs_txn *txn, const char *table)
{
	struct snap s = snap_take(txn, table);
	uint64_t n = 0;
	for (size_t i = 0; i < s.n; i++)
		for (const char *p = s.r[i].cells; (p = strchr(p, '@')); p++)
			n++; /* tu_escape writes '@' as \x40: one per cell */
	snap_free(&s);
	return n;
}

/* Cells physically stored (visible or not) in rows of TABLE whose key starts with the bytes PREFIX. */
static uint64_t stored_cells(cs_txn *txn, const char *table, cs_bytes prefix)
{
	struct sch_table *t;
	kv_cursor *c;
	uint8_t *k = malloc(KEY_MAX);
	size_t kn;
	uint64_t n = 0;
	int rc;

	assert_non_null(k);
	assert_int_equal(sch_table_get(txn, table, &t), 0);
	kn = key_table_data(k, t->id);
	kn += key_esc(k + kn, prefix.data, prefix.len);
	assert_int_equal(kv_cursor_open(txn->kv, &c), 0);
	for (rc = kv_seek(c, k, kn); !rc; rc = kv_next(c)) {
		const void *ck;
		size_t ckn;
		kv_key(c, &ck, &ckn);
		if (ckn < kn || memcmp(ck, k, kn))
			break;
		n++;
	}
	assert_true(rc == 0 || rc == -ENOENT);
	kv_cursor_close(c);
	free(k);
	return n;
}

/* Move FROM to TO in TXN and check it against a snapshot: the rows after equal the rows before with
 * their keys mapped, and every visible cell of the subtree moved. Returns the cells moved. */
static uint64_t move_checked(cs_txn *txn, const char *table, char delim, cs_bytes from, cs_bytes to)
{
	struct snap before = snap_take(txn, table), after;
	uint64_t total = visible_cells(txn, table), moved = 12345;
	char *want, *got;

	assert_int_equal(cs_move_prefix(txn, table, from, to, 0, &moved), 0);
	snap_map(&before, from, to, delim);
	after = snap_take(txn, table);
	want = snap_text(&before);
	got = snap_text(&after);
	if (strcmp(want, got))
		fail_msg("after the move: got\n%swant\n%s", got, want);
	assert_int_equal(visible_cells(txn, table), total);
	free(want);
	free(got);
	snap_free(&before);
	snap_free(&after);
	return moved;
}

/* Rows of a directory tree: the subtree "a#b" (the row itself, rows under "a#b#", an empty segment),
 * and neighbours that only start with the same bytes. */
static const struct {
	const char *row;
	size_t n;
	bool in_b; /* under "a#b" */
} tree_rows[] = {
	{ "a", 1, false },        { "a#a", 3, false },     { "a#b", 3, true },        { "a#b\0", 4, false },
	{ "a#b\"", 4, false },    { "a#b#", 4, true },     { "a#b##", 5, true },      { "a#b#x", 5, true },
	{ "a#b#x#y", 7, true },   { "a#b#\0\xff", 6, true }, { "a#b#\xff", 5, true }, { "a#bc", 4, false },
	{ "a#b\xff", 4, false },  { "a#cz", 4, false },    { "a#c\0", 4, false },     { "a#c\xff", 4, false },
	{ "b", 1, false },
};

static void populate_tree(cs_store *st)
{
	cs_txn *txn = tu_begin(st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(tree_rows); i++) {
		const cs_mutation m[] = {
			SET("a", "q", 1, "one"), SET("a", "q", 2, "two"), SET("a", "q", 3, "three"),
			SET("ab", "", 5, "empty qualifier"),
			{ .op = CS_SET_CELL, .family = "b", .qualifier = CS_BYTES("\0x", 2), .ts = 7,
			  .value = CS_BYTES(tree_rows[i].row, tree_rows[i].n) },
			SET("v1", "x", INT64_MAX, "max ts"),
		};
		assert_int_equal(cs_row_mutate(txn, "t", CS_BYTES(tree_rows[i].row, tree_rows[i].n), m, TU_ARRAY_SIZE(m)), 0);
	}
	tu_commit(txn);
}

#define TREE_CELLS 6 /* visible cells per row of populate_tree() */
/* A row of populate_tree() as tu_dump prints it: key K, written at the row whose key is V. */
#define TREE_ROW(k, v) \
	k " a:q@3=three a:q@2=two a:q@1=one ab:@5=empty\\x20qualifier b:\\x00x@7=" v " v1:x@9223372036854775807=max\\x20ts\n"

static size_t tree_count(void)
{
	size_t n = 0;
	for (size_t i = 0; i < TU_ARRAY_SIZE(tree_rows); i++)
		n += tree_rows[i].in_b;
	return n;
}

/* A directory rename: the row and the rows under it move with every cell, version, timestamp and value;
 * rows that only share the bytes stay; moving back restores the table exactly. */
static void test_mutate__move_prefix_moves_the_subtree_exactly(void **state)
{
	struct tu_store *ts = *state;
	char *orig, *s;
	cs_txn *txn;
	uint64_t moved;

	populate_tree(ts->st);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	orig = table_text(txn, "t");
	tu_commit(txn);

	txn = tu_begin(ts->st, 0);
	moved = move_checked(txn, "t", '#', CS_STR("a#b"), CS_STR("a#c"));
	assert_int_equal(moved, tree_count() * TREE_CELLS);
	assert_int_equal(stored_cells(txn, "t", CS_STR("a#b#")), 0);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("a#c") });
	assert_string_equal(s, TREE_ROW("a#c", "a#b") TREE_ROW("a#c\\x00", "a#c\\x00") TREE_ROW("a#c#", "a#b#")
			       TREE_ROW("a#c#\\x00\\xff", "a#b#\\x00\\xff") TREE_ROW("a#c##", "a#b##")
			       TREE_ROW("a#c#x", "a#b#x") TREE_ROW("a#c#x#y", "a#b#x#y") TREE_ROW("a#c#\\xff", "a#b#\\xff")
			       TREE_ROW("a#cz", "a#cz") TREE_ROW("a#c\\xff", "a#c\\xff"));
	free(s);
	tu_commit(txn);

	/* Committed, reopened, read reversed: the same rows. */
	tu_reopen(ts, 0, 0);
	txn = tu_begin(ts->st, 0);
	s = tu_dump(txn, "t", &(cs_read_opts){ .row = &CS_STR("a#c#x") });
	assert_string_equal(s, TREE_ROW("a#c#x", "a#b#x"));
	free(s);
	s = tu_dump(txn, "t", &(cs_read_opts){ .row = &CS_STR("a#b"), .prefix = CS_STR("a#b#") });
	assert_string_equal(s, "");
	free(s);
	/* And back: the table is exactly as it was. */
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("a#c"), CS_STR("a#b")), moved);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	tu_commit(txn);

	/* To a key of another length, under another parent, and a top-level row with everything under it. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("a#b#x"), CS_STR("b#moved-deeper")), 2 * TREE_CELLS);
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("a"), CS_STR("z")), (TU_ARRAY_SIZE(tree_rows) - 3) * TREE_CELLS);
	s = tu_dump(txn, "t", &(cs_read_opts){ .keys_only = true, .columns = &(cs_column_sel){ .family = "a" }, .ncolumns = 1,
					.cells_per_column = 1 });
	assert_string_equal(s, "b a:q@3=[5]\nb#moved-deeper a:q@3=[5]\nb#moved-deeper#y a:q@3=[5]\nz a:q@3=[5]\n"
			       "z#a a:q@3=[5]\nz#b a:q@3=[5]\nz#b\\x00 a:q@3=[5]\nz#b\" a:q@3=[5]\nz#b# a:q@3=[5]\n"
			       "z#b#\\x00\\xff a:q@3=[5]\nz#b## a:q@3=[5]\nz#b#\\xff a:q@3=[5]\nz#bc a:q@3=[5]\nz#b\\xff a:q@3=[5]\n"
			       "z#c\\x00 a:q@3=[5]\nz#cz a:q@3=[5]\nz#c\\xff a:q@3=[5]\n");
	free(s);
	tu_commit(txn);
	free(orig);
}

/* The subtree is defined by the table's own delimiter. */
static void test_mutate__move_prefix_uses_the_table_delimiter(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, 0);
	char *s;

	assert_int_equal(cs_table_create(txn, "s", '/'), 0);
	assert_int_equal(cs_family_create(txn, "s", "f", NULL), 0);
	static const char *const rows[] = { "a/b", "a/b/c", "a/b/c/d", "a/b#c", "a/bc", "a/b\x01" };
	for (size_t i = 0; i < TU_ARRAY_SIZE(rows); i++)
		assert_int_equal(tu_set(txn, "s", CS_STR(rows[i]), "f", CS_STR("q"), 1, CS_STR(rows[i])), 0);
	assert_int_equal(move_checked(txn, "s", '/', CS_STR("a/b"), CS_STR("x")), 3);
	s = tu_dump(txn, "s", NULL);
	assert_string_equal(s, "a/b\\x01 f:q@1=a/b\\x01\na/b#c f:q@1=a/b#c\na/bc f:q@1=a/bc\n"
			       "x f:q@1=a/b\nx/c f:q@1=a/b/c\nx/c/d f:q@1=a/b/c/d\n");
	free(s);
	tu_commit(txn);
}

/* Bad arguments and overlapping subtrees are refused before anything is written; the transaction goes
 * on. Moving nothing is no error. */
static void test_mutate__move_prefix_validation_errors(void **state)
{
	static const struct {
		const char *from, *to;
		int rc;
		uint64_t moved;
	} cases[] = {
		{ "", "x", -EINVAL, 0 },        { "x", "", -EINVAL, 0 },        { "a#b", "a#b", -EINVAL, 0 },
		{ "a#b", "a#b#c", -EINVAL, 0 }, { "a#b#c", "a#b", -EINVAL, 0 }, { "a", "a#", -EINVAL, 0 },
		{ "a#", "a", -EINVAL, 0 },      { "a#b", "a#b#", -EINVAL, 0 },  { "a#b", "a#b##c", -EINVAL, 0 },
		{ "a#b#", "a#b", -EINVAL, 0 },  { "a#bc", "a#b", -EEXIST, 0 },  { "a#b", "a#bc", -EEXIST, 0 },
		{ "a#b", "a#bd", 0, 2 },        { "a#bc", "a#bd", 0, 1 },       { "a#b#c", "a#bc#c", 0, 1 },
		{ "a#b#c", "a#b#d", 0, 1 },     { "nothing", "here", 0, 0 },
	};
	struct tu_store *ts = *state;
	uint8_t *big = tu_filled(CS_MAX_ROW_KEY + 1, 'k');
	char *orig, *s;
	cs_txn *txn;
	uint64_t moved;

	tu_put(ts->st, "t", "a#b", "a", "q", 1, "v");
	tu_put(ts->st, "t", "a#b#c", "a", "q", 1, "v");
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	orig = table_text(txn, "t");
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("x"), 0, &moved), -EROFS);
	tu_commit(txn);

	txn = tu_begin(ts->st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		moved = 99;
		assert_int_equal(tu_set(txn, "t", CS_STR("a#bc"), "a", CS_STR("q"), 1, CS_STR("v")), 0);
		if (cases[i].rc) {
			int rc = cs_move_prefix(txn, "t", CS_STR(cases[i].from), CS_STR(cases[i].to), 0, &moved);
			if (rc != cases[i].rc)
				fail_msg("case %zu (%s -> %s): %d, want %d", i, cases[i].from, cases[i].to, rc, cases[i].rc);
			assert_int_equal(moved, 0);
		} else {
			/* Subtrees sharing bytes but not keys: moved there and back. */
			assert_int_equal(cs_move_prefix(txn, "t", CS_STR(cases[i].from), CS_STR(cases[i].to), 0, &moved), 0);
			assert_int_equal(moved, cases[i].moved);
			assert_int_equal(cs_move_prefix(txn, "t", CS_STR(cases[i].to), CS_STR(cases[i].from), 0, NULL), 0);
		}
		const cs_mutation del = DELROW();
		assert_int_equal(cs_row_mutate(txn, "t", CS_STR("a#bc"), &del, 1), 0);
		s = table_text(txn, "t");
		assert_string_equal(s, orig);
		free(s);
	}
	assert_int_equal(cs_move_prefix(txn, "nosuch", CS_STR("a#b"), CS_STR("x"), 0, &moved), -ENOENT);
	assert_int_equal(cs_move_prefix(txn, "t", CS_BYTES(big, CS_MAX_ROW_KEY + 1), CS_STR("x"), 0, &moved), -ENAMETOOLONG);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_BYTES(big, CS_MAX_ROW_KEY + 1), 0, &moved), -ENAMETOOLONG);
	/* A longest key is fine, as FROM or TO. */
	assert_int_equal(cs_move_prefix(txn, "t", CS_BYTES(big, CS_MAX_ROW_KEY), CS_STR("x"), 0, &moved), 0);
	assert_int_equal(moved, 0);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	/* The transaction is still usable. */
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_BYTES(big, CS_MAX_ROW_KEY - 2), 0, &moved), 0);
	assert_int_equal(moved, 2);
	tu_commit(txn);
	s = tu_dump_st(ts->st, "t", &(cs_read_opts){ .keys_only = true });
	assert_int_equal(strlen(s), 2 * (CS_MAX_ROW_KEY - 2) + 2 + strlen(" a:q@1=[1]\n") * 2);
	assert_non_null(strstr(s, "kk#c a:q@1=[1]\n"));
	free(s);
	free(orig);
	free(big);
}

/* More cells than MAX_CELLS: -EXDEV and nothing written (hidden cells do not count); the transaction
 * goes on, and the limit itself is fine. */
static void test_mutate__move_prefix_refuses_over_max_cells(void **state)
{
	struct tu_store *ts = *state;
	const uint64_t n = tree_count() * TREE_CELLS;
	uint64_t moved;
	char *orig, *s;
	cs_txn *txn;

	populate_tree(ts->st);
	/* Hidden versions, which must not count: v1 keeps one. */
	txn = tu_begin(ts->st, 0);
	for (int64_t v = 0; v < 5; v++)
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#x"), "v1", CS_STR("x"), v, CS_STR("old")), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	orig = table_text(txn, "t");
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), n - 1, &moved), -EXDEV);
	assert_int_equal(moved, 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), 1, &moved), -EXDEV);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	assert_int_equal(tu_set(txn, "t", CS_STR("other"), "a", CS_STR("q"), 1, CS_STR("v")), 0);
	tu_commit(txn);
	s = tu_dump_st(ts->st, "t", &(cs_read_opts){ .prefix = CS_STR("a#c#") });
	assert_string_equal(s, "");
	free(s);

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), n, &moved), 0);
	assert_int_equal(moved, n);
	tu_commit(txn);
	free(orig);
}

/* Moving onto rows that have cells would merge them: -EEXIST, nothing written. Rows whose cells are all
 * hidden (dropped, collected, of a deleted family) do not count, and their cells stay hidden. */
static void test_mutate__move_prefix_refuses_onto_existing_rows(void **state)
{
	static const char *const targets[] = { "a#c", "a#c#", "a#c#deep#er" };
	struct tu_store *ts = *state;
	uint64_t moved;
	char *orig, *s;
	cs_txn *txn;

	populate_tree(ts->st);
	for (size_t i = 0; i < TU_ARRAY_SIZE(targets); i++) {
		txn = tu_begin(ts->st, 0);
		assert_int_equal(tu_set(txn, "t", CS_STR(targets[i]), "b", CS_STR("z"), 1, CS_STR("here")), 0);
		orig = table_text(txn, "t");
		moved = 7;
		assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), 0, &moved), -EEXIST);
		assert_int_equal(moved, 0);
		s = table_text(txn, "t");
		assert_string_equal(s, orig); /* nothing written */
		free(s);
		free(orig);
		tu_commit(txn);
		/* Remove it again. */
		txn = tu_begin(ts->st, 0);
		const cs_mutation del = DELROW();
		assert_int_equal(cs_row_mutate(txn, "t", CS_STR(targets[i]), &del, 1), 0);
		tu_commit(txn);
	}

	/* Destination rows with hidden cells only: a dropped range, a collected version, a deleted family. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_create(txn, "t", "old", "maxage=1s"), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#c#gone"), "a", CS_STR("q"), 3, CS_STR("dropped")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#c#x"), "a", CS_STR("q"), 4, CS_STR("dropped")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#c"), "old", CS_STR("q"), 9, CS_STR("collected")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#c#x#y"), "ab", CS_STR(""), 99, CS_STR("deleted family")), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a#c#")), 0);
	assert_int_equal(cs_family_delete(txn, "t", "ab"), 0);
	assert_int_equal(cs_family_create(txn, "t", "ab", NULL), 0);
	assert_int_equal(cs_family_create(txn, "t", "z", NULL), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(visible_cells(txn, "t"), TU_ARRAY_SIZE(tree_rows) * (TREE_CELLS - 1)); /* less ab's */
	moved = move_checked(txn, "t", '#', CS_STR("a#b"), CS_STR("a#c"));
	assert_int_equal(moved, tree_count() * (TREE_CELLS - 1));
	/* Stored under "a#c": the cells moved, the neighbours' (6 each, ab's hidden), the three cells of the
	 * dropped range (left where they are, hidden); not the collected cell of row "a#c". */
	assert_int_equal(stored_cells(txn, "t", CS_STR("a#c")), moved + 3 * TREE_CELLS + 3);
	s = tu_dump(txn, "t", &(cs_read_opts){ .row = &CS_STR("a#c#x") });
	assert_string_equal(s, "a#c#x a:q@3=three a:q@2=two a:q@1=one b:\\x00x@7=a#b#x v1:x@9223372036854775807=max\\x20ts\n");
	free(s);
	s = tu_dump(txn, "t", &(cs_read_opts){ .row = &CS_STR("a#c#gone") });
	assert_string_equal(s, "");
	free(s);
	tu_commit(txn);
	/* Nothing hidden comes back: not with GC, nor with a looser policy, nor after a write. */
	tu_put(ts->st, "t", "a#c#gone", "z", "q", 1, "new");
	txn = tu_begin(ts->st, 0);
	orig = table_text(txn, "t");
	assert_int_equal(cs_family_set_gc(txn, "t", "old", "never"), 0);
	assert_int_equal(cs_gc(txn, NULL, NULL), 0);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	free(orig);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("a#c#gone") });
	assert_string_equal(s, "a#c#gone z:q@1=new\n");
	free(s);
	tu_commit(txn);
}

/* What a read does not return is not moved and does not come back, at the source or the destination:
 * versions a GC policy collected, cells of a deleted family, rows of a dropped range (with a row written
 * again after the drop), cells written before a drop in the same transaction. */
static void test_mutate__move_prefix_does_not_resurrect_hidden_cells(void **state)
{
	struct tu_store *ts = *state;
	int64_t now = cs_now_us();
	uint64_t moved, visible;
	char *s, *want, exp[256];
	cs_txn *txn;

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_create(txn, "t", "old", "maxage=1h"), 0);
	for (int64_t v = 1; v <= 3; v++) {
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b"), "v1", CS_STR("x"), v, CS_STR("version")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#r"), "old", CS_STR("x"), v, CS_STR("ancient")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#r"), "ab", CS_STR("x"), v, CS_STR("deleted family")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#d#1"), "a", CS_STR("x"), v, CS_STR("dropped")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#e#1"), "a", CS_STR("x"), v, CS_STR("dropped")), 0);
	}
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b#r"), "old", CS_STR("x"), now, CS_STR("recent")), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_delete(txn, "t", "ab"), 0);
	assert_int_equal(cs_family_create(txn, "t", "ab", NULL), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a#b#d")), 0); /* stays clean */
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a#b#e")), 0);
	tu_commit(txn);
	tu_put(ts->st, "t", "a#b#e#1", "b", "y", 1, "written again"); /* dirty */
	tu_put(ts->st, "t", "a#b#r", "ab", "new", 1, "new family");

	txn = tu_begin(ts->st, 0);
	want = tu_dump(txn, "t", NULL);
	snprintf(exp, sizeof(exp),
		 "a#b v1:x@3=version\na#b#e#1 b:y@1=written\\x20again\na#b#r ab:new@1=new\\x20family old:x@%lld=recent\n",
		 (long long)now);
	assert_string_equal(want, exp);
	visible = visible_cells(txn, "t");
	assert_int_equal(visible, 4);
	moved = move_checked(txn, "t", '#', CS_STR("a#b"), CS_STR("n"));
	assert_int_equal(moved, 4);
	/* The source is empty but for the clean dropped range, left hidden where it was. */
	assert_int_equal(stored_cells(txn, "t", CS_STR("a#b")), 3);
	assert_int_equal(stored_cells(txn, "t", CS_STR("a#b#d#1")), 3);
	assert_int_equal(stored_cells(txn, "t", CS_STR("n")), 4); /* nothing hidden was carried */
	tu_commit(txn);
	free(want);

	/* A looser policy, GC, new writes at the source: nothing hidden reappears. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_set_gc(txn, "t", "v1", "never"), 0);
	assert_int_equal(cs_family_set_gc(txn, "t", "old", "never"), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b#d#1"), "b", CS_STR("y"), 1, CS_STR("new")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b#r"), "b", CS_STR("y"), 1, CS_STR("new")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b"), "b", CS_STR("y"), 1, CS_STR("new")), 0);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("a") });
	assert_string_equal(s, "a#b b:y@1=new\na#b#d#1 b:y@1=new\na#b#r b:y@1=new\n");
	free(s);
	assert_int_equal(cs_gc(txn, NULL, NULL), 0);
	assert_int_equal(visible_cells(txn, "t"), 4 + 3);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("n") });
	assert_non_null(strstr(s, "n v1:x@3=version\nn#e#1 b:y@1=written\\x20again\nn#r ab:new@1=new\\x20family old:x@"));
	free(s);
	tu_commit(txn);

	/* In one transaction: cells written before a drop of the source are not moved; cells moved into a
	 * range dropped earlier in the transaction show; a later drop of the destination hides them. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("m#1"), "a", CS_STR("q"), 1, CS_STR("before")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("m#2"), "a", CS_STR("q"), 1, CS_STR("before")), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("m#1")), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("p")), 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("m"), CS_STR("p"), 0, &moved), 0);
	assert_int_equal(moved, 1);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("m") });
	assert_string_equal(s, "");
	free(s);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("p") });
	assert_string_equal(s, "p#2 a:q@1=before\n");
	free(s);
	tu_commit(txn);
	expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("p") }, "p#2 a:q@1=before\n");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("p"), CS_STR("m"), 0, &moved), 0);
	assert_int_equal(moved, 1);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("m")), 0);
	tu_commit(txn);
	expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("m") }, "");
	expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("p") }, "");
}

/* Keys near the limits, across kv's 480-byte boundary (short keys become long and long ones short, long
 * keys sharing their first 480 bytes with their destination), any bytes, full-size qualifiers; a key that
 * would pass CS_MAX_ROW_KEY refuses the whole move. */
static void test_mutate__move_prefix_long_keys(void **state)
{
	struct tu_store *ts = *state;
	uint8_t *to = malloc(3000), *x = malloc(CS_MAX_ROW_KEY), *row = malloc(CS_MAX_ROW_KEY + 1), *q = malloc(CS_MAX_QUALIFIER);
	static const size_t rests[] = { 0, 10, 470, 1000, CS_MAX_ROW_KEY - 3000 - 1 };
	uint64_t seed = 11, moved;
	char *orig, *s;
	cs_txn *txn;

	tu_rand_bytes(&seed, to, 3000, 1);
	tu_rand_bytes(&seed, x, CS_MAX_ROW_KEY, 1);
	tu_rand_bytes(&seed, q, CS_MAX_QUALIFIER, 1);
	txn = tu_begin(ts->st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(rests); i++) {
		size_t n = 1 + (rests[i] ? 1 + rests[i] : 0);
		row[0] = 's';
		row[1] = '#';
		memcpy(row + 2, x, rests[i]);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "a", CS_STR("q"), 1, CS_BYTES(x, i * 100)), 0);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "b", CS_BYTES(q, CS_MAX_QUALIFIER), 2, CS_STR("long q")), 0);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "b", CS_BYTES(q, 400), 3, CS_STR("q 400")), 0);
	}
	tu_commit(txn);

	/* One row too long once moved: nothing moves. */
	txn = tu_begin(ts->st, 0);
	memcpy(row + 2, x, CS_MAX_ROW_KEY - 3000);
	assert_int_equal(tu_set(txn, "t", CS_BYTES(row, 2 + CS_MAX_ROW_KEY - 3000), "a", CS_STR("q"), 1, CS_STR("too long")), 0);
	orig = table_text(txn, "t");
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("s"), CS_BYTES(to, 3000), 0, &moved), -ENAMETOOLONG);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	free(orig);
	cs_txn_abort(txn);

	/* Such a row whose cells are all hidden (deleted family) does not count; its cells are removed. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_BYTES(row, 2 + CS_MAX_ROW_KEY - 3000), "ab", CS_STR("q"), 1, CS_STR("hidden")), 0);
	assert_int_equal(cs_family_delete(txn, "t", "ab"), 0);
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(row, 2 + CS_MAX_ROW_KEY - 3000)), 1);
	orig = table_text(txn, "t");
	/* Short to long (the longest row ends at exactly CS_MAX_ROW_KEY), then back. */
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("s"), CS_BYTES(to, 3000)), 3 * TU_ARRAY_SIZE(rests));
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(row, 2 + CS_MAX_ROW_KEY - 3000)), 0);
	assert_int_equal(move_checked(txn, "t", '#', CS_BYTES(to, 3000), CS_STR("s")), 3 * TU_ARRAY_SIZE(rests));
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	tu_commit(txn);

	/* Long to long: rows FROM and TO differ in their last byte only, so their keys share kv's first 480
	 * bytes; and to a TO that sorts before FROM. */
	txn = tu_begin(ts->st, 0);
	memcpy(row, x, 3990);
	row[3990] = '1';
	for (int i = 0; i < 3; i++) {
		size_t n = 3991 + (i ? 1 + (size_t)i : 0);
		row[3991] = '#';
		memset(row + 3992, 0xff - i, (size_t)i);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "a", CS_STR("q"), i, CS_BYTES(q, 1000 + (size_t)i)), 0);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "b", CS_BYTES(q, CS_MAX_QUALIFIER), i, CS_STR("v")), 0);
	}
	/* TOs x[:3990] + '2' and x[:3990] + '0'. */
	uint8_t *t2 = malloc(3991), *t0 = malloc(3991);
	memcpy(t2, x, 3990);
	memcpy(t0, x, 3990);
	t2[3990] = '2';
	t0[3990] = '0';
	assert_int_equal(move_checked(txn, "t", '#', CS_BYTES(row, 3991), CS_BYTES(t2, 3991)), 6);
	assert_int_equal(move_checked(txn, "t", '#', CS_BYTES(t2, 3991), CS_BYTES(t0, 3991)), 6);
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(t0, 3991)), 6);
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(t2, 3991)), 0);
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(row, 3991)), 0);
	tu_commit(txn);
	tu_reopen(ts, 0, 0);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_BYTES(t0, 3991), .keys_only = true,
					.columns = &(cs_column_sel){ .family = "a" }, .ncolumns = 1 });
	assert_true(strlen(s) > 3 * 3991);
	assert_non_null(strstr(s, " a:q@0=[1000]\n"));
	assert_non_null(strstr(s, " a:q@2=[1002]\n"));
	free(s);
	tu_commit(txn);
	free(orig);
	free(to);
	free(t0);
	free(t2);
	free(x);
	free(row);
	free(q);
}

/* Values are moved as stored: compressed ones stay compressed (not recompressed), raw ones raw. */
static void test_mutate__move_prefix_keeps_compressed_values(void **state)
{
	static const size_t sizes[] = { 0, 127, 128, 300, 4000, 70000 };
	struct tu_store *ts = *state;
	uint8_t *text = malloc(70000), *noise = malloc(300), *k = malloc(KEY_MAX);
	uint64_t seed = 3;
	struct sch_table *t;
	cs_txn *txn;

	for (size_t i = 0; i < 70000; i++)
		text[i] = (uint8_t)"a compressible value, #row#key "[i % 31];
	tu_rand_bytes(&seed, noise, 300, 0);
	txn = tu_begin(ts->st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(sizes); i++) {
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#c"), "a", CS_STR("text"), (int64_t)i, CS_BYTES(text, sizes[i])), 0);
		if (sizes[i] <= 300)
			assert_int_equal(tu_set(txn, "t", CS_STR("a#b"), "b", CS_STR("noise"), (int64_t)i, CS_BYTES(noise, sizes[i])), 0);
	}
	tu_commit(txn);

	txn = tu_begin(ts->st, 0);
	assert_int_equal(sch_table_get(txn, "t", &t), 0);
	/* The stored records before, by key: header and payload. */
	codec_hdr hb[TU_ARRAY_SIZE(sizes)];
	uint8_t *payload[TU_ARRAY_SIZE(sizes)];
	size_t plen[TU_ARRAY_SIZE(sizes)];
	for (size_t i = 0; i < TU_ARRAY_SIZE(sizes); i++) {
		const void *v;
		size_t vn, kn = key_cell(k, t->id, CS_STR("a#b#c"), "a", CS_STR("text"), (int64_t)i);
		assert_int_equal(kv_get(txn->kv, k, kn, &v, &vn), 0);
		assert_int_equal(codec_header(v, vn, &hb[i]), 0);
		plen[i] = vn - hb[i].hdrlen;
		payload[i] = tu_filled(plen[i], 0);
		memcpy(payload[i], (const uint8_t *)v + hb[i].hdrlen, plen[i]);
	}
	assert_int_equal(hb[0].kind, CODEC_RAW);
	assert_int_equal(hb[1].kind, CODEC_RAW);
	assert_int_equal(hb[2].kind, CODEC_ZSTD);
	assert_int_equal(hb[5].kind, CODEC_ZSTD);
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("a#b"), CS_STR("x")), TU_ARRAY_SIZE(sizes) + 4);
	for (size_t i = 0; i < TU_ARRAY_SIZE(sizes); i++) {
		const void *v;
		size_t vn, kn = key_cell(k, t->id, CS_STR("x#c"), "a", CS_STR("text"), (int64_t)i);
		codec_hdr h;
		assert_int_equal(kv_get(txn->kv, k, kn, &v, &vn), 0);
		assert_int_equal(codec_header(v, vn, &h), 0);
		assert_int_equal(h.kind, hb[i].kind);
		assert_int_equal(h.rawlen, sizes[i]);
		assert_true(h.seq > hb[i].seq); /* written now */
		assert_int_equal(vn - h.hdrlen, plen[i]);
		if (plen[i])
			assert_memory_equal((const uint8_t *)v + h.hdrlen, payload[i], vn - h.hdrlen);
		free(payload[i]);
	}
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	cs_scan *scan;
	const cs_row *r;
	assert_int_equal(cs_scan_open(txn, "t", &(cs_read_opts){ .row = &CS_STR("x#c") }, &scan), 0);
	assert_int_equal(cs_scan_next(scan, &r), 1);
	assert_int_equal(r->ncells, TU_ARRAY_SIZE(sizes));
	for (size_t i = 0; i < TU_ARRAY_SIZE(sizes); i++) {
		const cs_cell *c = &r->cells[TU_ARRAY_SIZE(sizes) - 1 - i];
		assert_int_equal(c->ts, (int64_t)i);
		assert_int_equal(c->value.len, sizes[i]);
		if (sizes[i])
			assert_memory_equal(c->value.data, text, sizes[i]);
	}
	cs_scan_close(scan);
	tu_commit(txn);
	free(text);
	free(noise);
	free(k);
}

/* The move is part of the caller's transaction: aborted, the store is as it was, to the stored byte;
 * committed, it lands together with the other changes. */
static void test_mutate__move_prefix_aborted_transaction_leaves_store_as_it_was(void **state)
{
	struct tu_store *ts = *state;
	uint64_t moved, stored;
	char *orig, *s;
	cs_txn *txn;

	populate_tree(ts->st);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	orig = table_text(txn, "t");
	stored = stored_cells(txn, "t", CS_STR(""));
	tu_commit(txn);

	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("new"), "a", CS_STR("q"), 1, CS_STR("v")), 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), 0, &moved), 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#c#x"), CS_STR("b#x"), 0, &moved), 0);
	assert_int_equal(moved, 2 * TREE_CELLS);
	assert_int_equal(cs_table_rename(txn, "t", "u"), 0);
	cs_txn_abort(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	assert_int_equal(stored_cells(txn, "t", CS_STR("")), stored);
	tu_commit(txn);

	/* Committed with a mutation before and after it: all of it, or (a failed write) none of it. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b#x"), "a", CS_STR("q"), 9, CS_STR("before")), 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), 0, &moved), 0);
	assert_int_equal(moved, tree_count() * TREE_CELLS + 1);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b"), "a", CS_STR("q"), 9, CS_STR("after")), 0);
	tu_commit(txn);
	expect_dump(ts->st, &(cs_read_opts){ .row = &CS_STR("a#b") }, "a#b a:q@9=after\n");
	expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("a#b#") }, "");
	s = tu_dump_st(ts->st, "t", &(cs_read_opts){ .row = &CS_STR("a#c#x"), .cells_per_column = 1,
						     .columns = &(cs_column_sel){ .family = "a" }, .ncolumns = 1 });
	assert_string_equal(s, "a#c#x a:q@9=before\n");
	free(s);
	free(orig);
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
		T(test_mutate__move_prefix_moves_the_subtree_exactly),
		T(test_mutate__move_prefix_uses_the_table_delimiter),
		T(test_mutate__move_prefix_validation_errors),
		T(test_mutate__move_prefix_refuses_over_max_cells),
		T(test_mutate__move_prefix_refuses_onto_existing_rows),
		T(test_mutate__move_prefix_does_not_resurrect_hidden_cells),
		T(test_mutate__move_prefix_long_keys),
		T(test_mutate__move_prefix_keeps_compressed_values),
		T(test_mutate__move_prefix_aborted_transaction_leaves_store_as_it_was),
#undef T
	};
	return cmocka_run_group_tests_name("mutate", tests, NULL, NULL);
}
