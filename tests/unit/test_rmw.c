/* test_rmw.c — ReadModifyWrite (increment, append, the new cell's timestamp, visible cells only) and
 * CheckAndMutate (both branches validated before either runs). */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"

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
		v = tu_newest(txn, "r", "a", cases[i].q, &t, &n);
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
	tu_expect_dump(ts->st, &(cs_read_opts){ .keys_only = true, .ts_start = 0, .ts_end = 2 },
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
	tu_expect_dump(ts->st, &(cs_read_opts){ .keys_only = true }, want);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	v = tu_newest(txn, "r", "a", "log", NULL, NULL);
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
	v = tu_newest(txn, "r", "a", "s", NULL, &n);
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
	v = tu_newest(txn, "r", "a", "s", NULL, &n);
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
	cs_mutation del = TU_DELCOL("a", "gone", 0, 0);
	char *v;

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_create(txn, "t", "old", "maxage=1d"), 0);
	tu_commit(txn);
	put_u64(ts->st, "r", "gone", 5, 100);
	tu_mutate_ok(ts->st, "r", &del, 1);
	tu_put(ts->st, "t", "r", "old", "s", 1000, "ancient"); /* 1970: collected by maxage=1d */
	tu_put(ts->st, "t", "d1", "a", "s", 1, "dropped");

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("gone"), 1, &result), 0);
	assert_int_equal(result, 1);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "old", CS_STR("s"), CS_STR("new"), NULL), 0);
	v = tu_newest(txn, "r", "old", "s", NULL, NULL);
	assert_string_equal(v, "new");
	free(v);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("d")), 0);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("d1"), "a", CS_STR("s"), CS_STR("+"), NULL), 0);
	v = tu_newest(txn, "d1", "a", "s", NULL, NULL);
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
	const cs_mutation t_m[] = { TU_SET("a", "result", 10, "T"), TU_DELCOL("a", "x", 0, 0) };
	const cs_mutation f_m[] = { TU_SET("a", "result", 10, "F") };
	struct tu_store *ts = *state;
	const cs_mutation init[] = {
		TU_SET("a", "x", 1, "yes"), TU_SET("a", "e", 1, ""), TU_SET("v1", "q", 1, "old"), TU_SET("v1", "q", 2, "new"),
	};

	tu_mutate_ok(ts->st, "r", init, TU_ARRAY_SIZE(init));
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		cs_txn *txn = tu_begin(ts->st, 0);
		bool matched = !cases[i].matched;
		char *v, *x;

		assert_int_equal(cs_check_and_mutate(txn, "t", CS_STR("r"), &cases[i].p, t_m, 2, f_m, 1, &matched), 0);
		if (matched != cases[i].matched)
			fail_msg("case %zu: matched %d", i, matched);
		v = tu_newest(txn, "r", "a", "result", NULL, NULL);
		x = tu_newest(txn, "r", "a", "x", NULL, NULL);
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
	tu_expect_dump(ts->st, NULL, "r a:e@1= a:x@1=yes v1:q@2=new\n");
}

/* Both branches are validated before either runs: an error in the one not taken still stops it. */
static void test_mutate__check_and_mutate_errors(void **state)
{
	struct tu_store *ts = *state;
	const cs_predicate p = { "a", { "x", 1 }, NULL }, bad_p = { "nosuch", { "x", 1 }, NULL };
	const cs_mutation good[] = { TU_SET("a", "result", 1, "T") };
	const cs_mutation bad[] = { TU_SET("a", "result", 1, "F"), TU_SET("nosuch", "q", 1, "v") };
	const cs_mutation neg[] = { TU_SET("a", "result", -3, "F") };
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
	tu_expect_dump(ts->st, NULL, "r a:x@1=yes\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, tu_mutate_setup, tu_store_teardown)
		T(test_mutate__increment),
		T(test_mutate__increment_rejects_non_counters),
		T(test_mutate__rmw_timestamp_after_future_cell),
		T(test_mutate__append),
		T(test_mutate__rmw_reads_visible_cells_only),
		T(test_mutate__check_and_mutate),
		T(test_mutate__check_and_mutate_errors),
#undef T
	};
	return cmocka_run_group_tests_name("rmw", tests, NULL, NULL);
}
