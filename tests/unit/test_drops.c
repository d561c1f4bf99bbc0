/* test_drops.c — dropping row ranges and all of a table's rows: what a drop hides, rows written again
 * after it, drops within one transaction. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		tu_expect_dump(ts->st, NULL, "");
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
	tu_expect_dump(ts->st, NULL, "a1 a:q@1=new\nb a:q@5=kept\n");
	tu_expect_dump(ts->st, &(cs_read_opts){ .reversed = true }, "b a:q@5=kept\na1 a:q@1=new\n");
	tu_expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("a") }, "a1 a:q@1=new\n");

	/* Drop again: the rewritten row goes too; then another row comes back. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), 0);
	tu_commit(txn);
	tu_expect_dump(ts->st, NULL, "b a:q@5=kept\n");
	tu_put(ts->st, "t", "a2", "b", "q", 9, "again");
	tu_expect_dump(ts->st, NULL, "a2 b:q@9=again\nb a:q@5=kept\n");
	tu_reopen(ts, 0, 0);
	tu_expect_dump(ts->st, NULL, "a2 b:q@9=again\nb a:q@5=kept\n");
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
	tu_expect_dump(ts->st, NULL, "a2 a:q@2=after\n");

	txn = tu_begin(ts->st, 0);
	uint8_t *big = tu_filled(CS_MAX_ROW_KEY + 1, 'a');
	assert_int_equal(cs_drop_prefix(txn, "t", CS_BYTES(big, CS_MAX_ROW_KEY + 1)), -ENAMETOOLONG);
	assert_int_equal(cs_drop_prefix(txn, "nosuch", CS_STR("a")), -ENOENT);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_BYTES(big, CS_MAX_ROW_KEY)), 0);
	tu_commit(txn);
	free(big);
	tu_expect_dump(ts->st, NULL, "a2 a:q@2=after\n");
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
	tu_expect_dump(ts->st, NULL, "a a:q@2=new\n");
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
	tu_expect_dump(ts->st, NULL, "");
	tu_put(ts->st, "t", "z", "a", "q", 3, "newest");
	tu_expect_dump(ts->st, NULL, "z a:q@3=newest\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, tu_mutate_setup, tu_store_teardown)
		T(test_mutate__drop_prefix_ranges),
		T(test_mutate__drop_prefix_then_rewrite),
		T(test_mutate__drop_prefix_within_a_transaction),
		T(test_mutate__drop_all_rows),
#undef T
	};
	return cmocka_run_group_tests_name("drops", tests, NULL, NULL);
}
