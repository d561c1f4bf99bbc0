/* test_schema.c — tables and column families: names, GC policies (canonical and as cbt shows them),
 * delimiters, errors that leave the transaction usable, deletion that hides data at once, and renaming
 * tables. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmutil.h"

static char *repeat(char c, size_t n)
{
	char *s = (char *)tu_filled(n + 1, (uint8_t)c);
	s[n] = 0;
	return s;
}

static void test_schema__names(void **state)
{
	static const struct {
		const char *name;
		int ok;
	} cases[] = {
		{ "t", 1 }, { "_", 1 }, { "T0", 1 }, { "a-b.c_d", 1 }, { "0abc", 1 },
		{ "", 0 }, { "-a", 0 }, { ".a", 0 }, { "a b", 0 }, { "a/b", 0 }, { "a:b", 0 }, { "a#b", 0 },
		{ "\xc3\xa9", 0 }, { "a\tb", 0 }, { "a*", 0 },
	};
	char *t50 = repeat('t', CS_MAX_TABLE), *t51 = repeat('t', CS_MAX_TABLE + 1);
	char *f64 = repeat('f', CS_MAX_FAMILY), *f65 = repeat('f', CS_MAX_FAMILY + 1);

	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		int want = cases[i].ok ? 0 : -EINVAL;
		if (cs_check_table_name(cases[i].name) != want || cs_check_family_name(cases[i].name) != want)
			fail_msg("\"%s\": want %d", cases[i].name, want);
	}
	assert_int_equal(cs_check_table_name(NULL), -EINVAL);
	assert_int_equal(cs_check_table_name(t50), 0);
	assert_int_equal(cs_check_table_name(t51), -EINVAL);
	assert_int_equal(cs_check_family_name(f64), 0);
	assert_int_equal(cs_check_family_name(f65), -EINVAL);
	free(t50);
	free(t51);
	free(f64);
	free(f65);
}

static void test_schema__bad_names_rejected_and_txn_usable(void **state)
{
	struct tu_store *ts = *state;
	char *t51 = repeat('t', CS_MAX_TABLE + 1), *f65 = repeat('f', CS_MAX_FAMILY + 1);
	cs_txn *txn = tu_begin(ts->st, 0);
	char **names;
	size_t n;

	assert_int_equal(cs_table_create(txn, "", 0), -EINVAL);
	assert_int_equal(cs_table_create(txn, "a b", 0), -EINVAL);
	assert_int_equal(cs_table_create(txn, t51, 0), -EINVAL);
	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	assert_int_equal(cs_table_create(txn, "t", 0), -EEXIST);
	assert_int_equal(cs_family_create(txn, "t", "-f", NULL), -EINVAL);
	assert_int_equal(cs_family_create(txn, "t", f65, NULL), -EINVAL);
	assert_int_equal(cs_family_create(txn, "t", "f", "maxversions=x"), -EINVAL);
	assert_int_equal(cs_family_create(txn, "t", "f", "never or maxversions=1"), -EINVAL);
	assert_int_equal(cs_family_create(txn, "nosuch", "f", NULL), -ENOENT);
	assert_int_equal(cs_family_create(txn, "t", "f", NULL), 0);
	assert_int_equal(cs_family_create(txn, "t", "f", NULL), -EEXIST);
	assert_int_equal(cs_family_delete(txn, "t", "g"), -ENOENT);
	assert_int_equal(cs_family_delete(txn, "nosuch", "f"), -ENOENT);
	assert_int_equal(cs_family_set_gc(txn, "t", "g", "never"), -ENOENT);
	assert_int_equal(cs_family_set_gc(txn, "t", "f", "maxage=1x"), -EINVAL);
	assert_int_equal(cs_family_set_gc(txn, "nosuch", "f", "never"), -ENOENT);
	assert_int_equal(cs_table_delete(txn, "nosuch"), -ENOENT);
	tu_commit(txn); /* none of those errors failed the transaction */

	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_list(txn, &names, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "t");
	cs_strv_free(names, n);
	tu_commit(txn);
	free(t51);
	free(f65);
}

/* Policies are stored canonical, and shown as `cbt ls` shows them. */
static void test_schema__gc_policies(void **state)
{
	static const struct {
		const char *in, *canon, *cbt;
	} cases[] = {
		{ NULL, "never", "" },
		{ "never", "never", "" },
		{ "maxversions=1", "maxversions=1", "versions() > 1" },
		{ "maxage=48h", "maxage=2d", "age() > 2d" },
		{ "maxversions=2 && maxage=7d", "maxversions=2 and maxage=7d", "(versions() > 2 && age() > 7d)" },
		{ "maxversions=2||maxage=1h", "maxversions=2 or maxage=1h", "(versions() > 2 || age() > 1h)" },
		{ "maxage=30d || (maxage=3d && maxversions=100)", "maxage=30d or (maxage=3d and maxversions=100)",
		  "(age() > 30d || (age() > 3d && versions() > 100))" },
	};
	struct tu_store *ts = *state;
	cs_table_info *info;
	cs_txn *txn;

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		char fam[8], *canon = NULL;
		snprintf(fam, sizeof(fam), "f%zu", i);
		assert_int_equal(cs_family_create(txn, "t", fam, cases[i].in), 0);
		if (cases[i].in) {
			assert_int_equal(cs_check_gc_policy(cases[i].in, &canon), 0);
			assert_string_equal(canon, cases[i].canon);
			free(canon);
			assert_int_equal(cs_check_gc_policy(cases[i].in, NULL), 0);
		}
	}
	tu_commit(txn);
	tu_reopen(ts, 0, 0);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_int_equal(info->nfamilies, TU_ARRAY_SIZE(cases));
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		assert_string_equal(info->families[i].gc, cases[i].canon);
		assert_string_equal(info->families[i].gc_cbt, cases[i].cbt);
	}
	cs_table_info_free(info);
	tu_commit(txn);
	assert_int_equal(cs_check_gc_policy("", NULL), -EINVAL);
	assert_int_equal(cs_check_gc_policy("maxversions", NULL), -EINVAL);

	/* And changed. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_set_gc(txn, "t", "f0", "maxversions=3 or maxage=1d"), 0);
	assert_int_equal(cs_family_set_gc(txn, "t", "f1", NULL), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_string_equal(info->families[0].gc, "maxversions=3 or maxage=1d");
	assert_string_equal(info->families[1].gc, "never");
	cs_table_info_free(info);
	tu_commit(txn);
}

static void test_schema__tables_and_families_sorted(void **state)
{
	static const char *tables[] = { "zeta", "Alpha", "alpha", "_x", "b.c", "b-c", "0" };
	static const char *sorted[] = { "0", "Alpha", "_x", "alpha", "b-c", "b.c", "zeta" };
	static const char *fams[] = { "m", "a", "Z", "a.b", "a-b", "aa" };
	static const char *fams_sorted[] = { "Z", "a", "a-b", "a.b", "aa", "m" };
	struct tu_store *ts = *state;
	cs_table_info *info;
	cs_txn *txn = tu_begin(ts->st, 0);
	char **names;
	size_t n;

	for (size_t i = 0; i < TU_ARRAY_SIZE(tables); i++)
		assert_int_equal(cs_table_create(txn, tables[i], i == 0 ? '/' : 0), 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(fams); i++)
		assert_int_equal(cs_family_create(txn, "zeta", fams[i], NULL), 0);
	tu_commit(txn);

	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_list(txn, &names, &n), 0);
	assert_int_equal(n, TU_ARRAY_SIZE(sorted));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(names[i], sorted[i]);
	cs_strv_free(names, n);
	assert_int_equal(cs_table_info_get(txn, "zeta", &info), 0);
	assert_string_equal(info->name, "zeta");
	assert_int_equal(info->delim, '/');
	assert_int_equal(info->nfamilies, TU_ARRAY_SIZE(fams_sorted));
	for (size_t i = 0; i < info->nfamilies; i++)
		assert_string_equal(info->families[i].name, fams_sorted[i]);
	cs_table_info_free(info);
	assert_int_equal(cs_table_info_get(txn, "alpha", &info), 0);
	assert_int_equal(info->delim, CS_DEFAULT_DELIM);
	assert_int_equal(info->nfamilies, 0);
	cs_table_info_free(info);
	assert_int_equal(cs_table_info_get(txn, "nosuch", &info), -ENOENT);
	assert_int_equal(cs_table_info_get(txn, "bad name", &info), -ENOENT);
	cs_table_info_free(NULL);
	cs_strv_free(NULL, 0);
	tu_commit(txn);
}

/* cs_table_create_as() gives a table the schema cs_table_info_get() read from another: delimiter,
 * creation time, families with their policies and value types; 0 for the time is now. Cells written
 * into it at once are visible (its families count from a fresh id's start). */
static void test_schema__create_as_copies_a_schema(void **state)
{
	struct tu_store *ts = *state;
	cs_table_info *src, *dst, *info;
	int64_t before, after;
	cs_txn *txn = tu_begin(ts->st, 0);
	char *s;

	assert_int_equal(cs_table_create(txn, "src", '/'), 0);
	assert_int_equal(cs_family_create(txn, "src", "m", "maxversions=2 && maxage=7d"), 0);
	assert_int_equal(cs_family_create_typed(txn, "src", "agg", "never", CS_TYPE_INTMAX), 0);
	assert_int_equal(cs_family_create(txn, "src", "Z", NULL), 0);
	assert_int_equal(cs_table_info_get(txn, "src", &src), 0);
	free(src->name);
	src->name = strdup("dst");
	src->created = 1234567;
	assert_int_equal(cs_table_create_as(txn, src), 0);
	assert_int_equal(tu_set(txn, "dst", CS_STR("r"), "Z", CS_STR("q"), 1, CS_STR("v")), 0);
	tu_commit(txn);

	tu_reopen(ts, 0, 0);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "dst", &dst), 0);
	assert_int_equal(dst->delim, '/');
	assert_int_equal(dst->created, 1234567);
	assert_int_equal(dst->nfamilies, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(dst->families[i].name, src->families[i].name);
		assert_string_equal(dst->families[i].gc, src->families[i].gc);
		assert_string_equal(dst->families[i].gc_cbt, src->families[i].gc_cbt);
		assert_int_equal(dst->families[i].type, src->families[i].type);
	}
	assert_string_equal(dst->families[1].name, "agg");
	assert_int_equal(dst->families[1].type, CS_TYPE_INTMAX);
	s = tu_dump(txn, "dst", NULL);
	assert_string_equal(s, "r Z:q@1=v\n");
	free(s);
	tu_commit(txn);
	cs_table_info_free(dst);
	cs_table_info_free(src);

	/* Families in any order, a NULL policy, the default delimiter and "now". */
	{
		cs_family_info fams[] = { { .name = "b", .gc = "maxversions=1" }, { .name = "a" } };
		const cs_table_info i2 = { .name = "now", .nfamilies = 2, .families = fams };

		before = cs_now_us();
		txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_table_create_as(txn, &i2), 0);
		assert_int_equal(cs_table_info_get(txn, "now", &info), 0);
		tu_commit(txn);
		after = cs_now_us();
		assert_int_equal(info->delim, CS_DEFAULT_DELIM);
		assert_true(info->created >= before && info->created <= after);
		assert_int_equal(info->nfamilies, 2);
		assert_string_equal(info->families[0].name, "a");
		assert_string_equal(info->families[0].gc, "never");
		assert_string_equal(info->families[1].name, "b");
		assert_string_equal(info->families[1].gc, "maxversions=1");
		cs_table_info_free(info);
	}
}

/* Whatever is wrong with the schema, nothing is created and the transaction stays usable. */
static void test_schema__create_as_refuses_a_bad_schema_and_creates_nothing(void **state)
{
	static const struct {
		const char *table, *fam1, *gc1, *fam2;
		int type2, want;
	} cases[] = {
		{ "bad name", "a", NULL, "b", 0, -EINVAL },
		{ "t", "-a", NULL, "b", 0, -EINVAL },
		{ "t", "a", "maxversions=x", "b", 0, -EINVAL },
		{ "t", "a", NULL, "b", 99, -EINVAL },
		{ "t", "a", NULL, "a", 0, -EINVAL },
		{ "t", "b", NULL, "a", CS_TYPE_INTSUM, -EEXIST },
	};
	struct tu_store *ts = *state;
	cs_txn *txn;
	char **names;
	size_t n;

	tu_table(ts->st, "t", "f", NULL, NULL);
	txn = tu_begin(ts->st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		cs_family_info fams[] = { { .name = (char *)cases[i].fam1, .gc = (char *)cases[i].gc1 },
					  { .name = (char *)cases[i].fam2, .type = (cs_value_type)cases[i].type2 } };
		const cs_table_info info = { .name = (char *)cases[i].table, .nfamilies = 2, .families = fams };

		if (cs_table_create_as(txn, &info) != cases[i].want)
			fail_msg("case %zu: want %d", i, cases[i].want);
	}
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_list(txn, &names, &n), 0);
	assert_int_equal(n, 1);
	cs_strv_free(names, n);
	{
		const cs_table_info info = { .name = "u" };
		assert_int_equal(cs_table_create_as(txn, &info), -EROFS);
	}
	tu_commit(txn);
	{
		char *s = tu_dump_st(ts->st, "t", NULL);
		assert_string_equal(s, "");
		free(s);
	}
}

/* An empty store lists no tables. */
static void test_schema__empty_store(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, CS_TXN_RDONLY);
	char **names = (char **)1;
	size_t n = 99;
	cs_scan *scan;

	assert_int_equal(cs_table_list(txn, &names, &n), 0);
	assert_int_equal(n, 0);
	cs_strv_free(names, n);
	assert_int_equal(cs_scan_open(txn, "t", NULL, &scan), -ENOENT);
	tu_commit(txn);
}

/* Deleting a table hides its data at once; a new table of that name starts empty. */
static void test_schema__delete_table_then_recreate(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;
	char *s;

	tu_table(ts->st, "t", "f", NULL, NULL);
	tu_table(ts->st, "u", "f", NULL, NULL);
	tu_put(ts->st, "t", "r", "f", "q", 1, "old");
	tu_put(ts->st, "u", "r", "f", "q", 1, "other");

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_delete(txn, "t"), 0);
	assert_int_equal(cs_table_delete(txn, "t"), -ENOENT);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 2, CS_STR("x")), -ENOENT);
	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	assert_int_equal(cs_family_create(txn, "t", "f", NULL), 0);
	s = tu_dump(txn, "t", NULL);
	assert_string_equal(s, "");
	free(s);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 2, CS_STR("new")), 0);
	tu_commit(txn);

	s = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(s, "r f:q@2=new\n");
	free(s);
	s = tu_dump_st(ts->st, "u", NULL);
	assert_string_equal(s, "r f:q@1=other\n");
	free(s);
}

/* Deleting a family hides its cells; a family created again under that name starts empty, in the same
 * transaction or a later one. */
static void test_schema__delete_family_then_recreate(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;
	char *s;

	tu_table(ts->st, "t", "f", NULL, "g", NULL, NULL);
	tu_put(ts->st, "t", "r", "f", "q", 1, "f-old");
	tu_put(ts->st, "t", "r", "g", "q", 1, "g-kept");
	tu_put(ts->st, "t", "s", "f", "q", 1, "f-old");

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_delete(txn, "t", "f"), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 2, CS_STR("x")), -ENOENT);
	s = tu_dump(txn, "t", NULL);
	assert_string_equal(s, "r g:q@1=g-kept\n");
	free(s);
	assert_int_equal(cs_family_create(txn, "t", "f", NULL), 0);
	s = tu_dump(txn, "t", NULL);
	assert_string_equal(s, "r g:q@1=g-kept\n");
	free(s);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 1, CS_STR("f-new")), 0);
	tu_commit(txn);
	s = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(s, "r f:q@1=f-new g:q@1=g-kept\n");
	free(s);

	/* Cells written in the same transaction before the family is deleted and recreated are gone too. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("s"), "f", CS_STR("q"), 5, CS_STR("doomed")), 0);
	assert_int_equal(cs_family_delete(txn, "t", "f"), 0);
	assert_int_equal(cs_family_create(txn, "t", "f", "maxversions=1"), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("s"), "f", CS_STR("q2"), 3, CS_STR("fresh")), 0);
	tu_commit(txn);
	s = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(s, "r g:q@1=g-kept\ns f:q2@3=fresh\n");
	free(s);
}

/* Schema changes persist, and table ids are never reused (old data never reappears). */
static void test_schema__persists_and_ids_not_reused(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;
	char *s;

	tu_table(ts->st, "a", "f", "maxversions=2", NULL);
	tu_put(ts->st, "a", "r", "f", "q", 1, "a-data");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_delete(txn, "a"), 0);
	tu_commit(txn);
	tu_reopen(ts, 0, 0);
	tu_table(ts->st, "b", "f", NULL, NULL); /* must not inherit a's id and data */
	tu_table(ts->st, "a", "f", NULL, NULL);
	s = tu_dump_st(ts->st, "b", NULL);
	assert_string_equal(s, "");
	free(s);
	s = tu_dump_st(ts->st, "a", NULL);
	assert_string_equal(s, "");
	free(s);

	tu_reopen(ts, CS_OPEN_RDONLY, 0);
	cs_table_info *info;
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "a", &info), 0);
	assert_int_equal(info->nfamilies, 1);
	assert_string_equal(info->families[0].gc, "never");
	cs_table_info_free(info);
	tu_commit(txn);
}

/* A failed schema transaction (aborted) leaves nothing behind. */
static void test_schema__abort_leaves_nothing(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, 0);
	char **names;
	size_t n;

	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	assert_int_equal(cs_family_create(txn, "t", "f", NULL), 0);
	cs_txn_abort(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_list(txn, &names, &n), 0);
	assert_int_equal(n, 0);
	cs_strv_free(names, n);
	tu_commit(txn);
}

/* The table's whole state as text: delimiter, creation time, families and GC policies, every cell. */
static char *table_state(cs_txn *txn, const char *name)
{
	cs_table_info *info;
	char *d, *s;
	struct tu_buf b = { 0 };

	assert_int_equal(cs_table_info_get(txn, name, &info), 0);
	assert_true(asprintf(&s, "delim %c created %lld\n", info->delim, (long long)info->created) > 0);
	tu_buf_add(&b, s, strlen(s));
	free(s);
	for (size_t i = 0; i < info->nfamilies; i++) {
		assert_true(asprintf(&s, "%s: %s\n", info->families[i].name, info->families[i].gc) > 0);
		tu_buf_add(&b, s, strlen(s));
		free(s);
	}
	cs_table_info_free(info);
	d = tu_dump(txn, name, NULL);
	tu_buf_add(&b, d, strlen(d));
	free(d);
	return b.s;
}

static void expect_tables(cs_txn *txn, const char *want)
{
	char **names;
	size_t n;
	struct tu_buf b = { 0 };

	tu_buf_add(&b, "", 0);
	assert_int_equal(cs_table_list(txn, &names, &n), 0);
	for (size_t i = 0; i < n; i++) {
		tu_buf_add(&b, names[i], strlen(names[i]));
		tu_buf_add(&b, " ", 1);
	}
	cs_strv_free(names, n);
	assert_string_equal(b.s, want);
	free(b.s);
}

/* A table with a delimiter, GC policies, versions (some collected), a dropped range with a row written
 * again after the drop, and a deleted-and-recreated family. */
static void populate_renamed(cs_store *st)
{
	cs_txn *txn;

	tu_table(st, "t", "f", NULL, "g", "maxversions=1", "h", NULL, NULL);
	txn = tu_begin(st, 0);
	assert_int_equal(cs_table_create(txn, "x", '/'), 0); /* another table, left alone */
	assert_int_equal(cs_family_create(txn, "x", "f", NULL), 0);
	assert_int_equal(tu_set(txn, "x", CS_STR("r"), "f", CS_STR("q"), 1, CS_STR("x")), 0);
	for (int64_t ts = 1; ts <= 3; ts++) {
		assert_int_equal(tu_set(txn, "t", CS_STR("a#1"), "f", CS_STR("q"), ts, CS_STR("f")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("a#1"), "g", CS_STR("q"), ts, CS_STR("g")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("b#2"), "h", CS_STR("q"), ts, CS_STR("h-old")), 0);
	}
	assert_int_equal(tu_set(txn, "t", CS_STR("d#1"), "f", CS_STR("q"), 1, CS_STR("dropped")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("d#2"), "f", CS_STR("q"), 1, CS_STR("dropped")), 0);
	tu_commit(txn);
	txn = tu_begin(st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("d")), 0);
	assert_int_equal(cs_family_delete(txn, "t", "h"), 0);
	assert_int_equal(cs_family_create(txn, "t", "h", "maxversions=2"), 0);
	tu_commit(txn);
	tu_put(st, "t", "d#2", "f", "q", 2, "again");
}

/* Renaming keeps the table whole (id, schema, delimiter, creation time, cells, dropped ranges) in a
 * constant number of writes, frees the old name, and lasts. */
static void test_schema__rename_keeps_cells_and_schema_and_frees_the_name(void **state)
{
	struct tu_store *ts = *state;
	char *before, *s;
	cs_txn *txn;
	cs_scan *scan;
	const cs_row *row;
	uint64_t w;
	cs_gc_stats gs;

	populate_renamed(ts->st);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	before = table_state(txn, "t");
	tu_commit(txn);
	s = strstr(before, "\nf: never\n");
	assert_non_null(s);
	assert_string_equal(s, "\nf: never\ng: maxversions=1\nh: maxversions=2\n"
			       "a#1 f:q@3=f f:q@2=f f:q@1=f g:q@3=g\nd#2 f:q@2=again\n");

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_scan_open(txn, "t", NULL, &scan), 0); /* open across the rename */
	w = kv_txn_writes(lm_txn_of(txn)->kv);
	assert_int_equal(cs_table_rename(txn, "t", "u"), 0);
	assert_true(kv_txn_writes(lm_txn_of(txn)->kv) - w <= 2); /* the record only: no cell is touched */
	assert_int_equal(cs_scan_next(scan, &row), 1);
	assert_memory_equal(row->key.data, "a#1", 3);
	cs_scan_close(scan);
	/* Within the transaction: the old name is gone everywhere, the new one is the same table. */
	assert_int_equal(cs_scan_open(txn, "t", NULL, &scan), -ENOENT);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "f", CS_STR("q"), 1, CS_STR("v")), -ENOENT);
	assert_int_equal(cs_family_create(txn, "t", "k", NULL), -ENOENT);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), -ENOENT);
	s = table_state(txn, "u");
	assert_string_equal(s, before);
	free(s);
	expect_tables(txn, "u x ");
	tu_commit(txn);

	tu_reopen(ts, 0, 0);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	s = table_state(txn, "u");
	assert_string_equal(s, before);
	free(s);
	expect_tables(txn, "u x ");
	assert_int_equal(cs_table_info_get(txn, "t", &(cs_table_info *){ NULL }), -ENOENT);
	tu_commit(txn);

	/* The old name is free: a new table "t" starts empty, and "u" is untouched by it. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	assert_int_equal(cs_family_create(txn, "t", "f", NULL), 0);
	s = tu_dump(txn, "t", NULL);
	assert_string_equal(s, "");
	free(s);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#1"), "f", CS_STR("q"), 9, CS_STR("new")), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	s = table_state(txn, "u");
	assert_string_equal(s, before);
	free(s);
	/* The dropped range and collected versions still apply: GC removes them, and then the same shows. */
	assert_int_equal(cs_gc(txn, NULL, &gs), 0);
	assert_true(gs.cells_removed >= 2 + 2 + 3);
	s = table_state(txn, "u");
	assert_string_equal(s, before);
	free(s);
	tu_commit(txn);
	s = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(s, "a#1 f:q@9=new\n");
	free(s);
	s = tu_dump_st(ts->st, "x", NULL);
	assert_string_equal(s, "r f:q@1=x\n");
	free(s);
	free(before);
}

/* Renaming within one transaction: back and forth, after creating, then writing and dropping under the
 * new name. */
static void test_schema__rename_chains_within_a_transaction(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, 0);
	char *s;

	assert_int_equal(cs_table_create(txn, "a", '/'), 0);
	assert_int_equal(cs_family_create(txn, "a", "f", NULL), 0);
	assert_int_equal(tu_set(txn, "a", CS_STR("r/1"), "f", CS_STR("q"), 1, CS_STR("v")), 0);
	assert_int_equal(cs_table_rename(txn, "a", "b"), 0);
	assert_int_equal(cs_table_rename(txn, "b", "c"), 0);
	assert_int_equal(cs_table_rename(txn, "c", "a"), 0);
	assert_int_equal(cs_table_rename(txn, "a", "b"), 0);
	assert_int_equal(tu_set(txn, "b", CS_STR("r/2"), "f", CS_STR("q"), 1, CS_STR("w")), 0);
	assert_int_equal(cs_drop_prefix(txn, "b", CS_STR("r/1")), 0);
	expect_tables(txn, "b ");
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	expect_tables(txn, "b ");
	s = table_state(txn, "b");
	assert_non_null(strstr(s, "delim /"));
	assert_non_null(strstr(s, "f: never\nr/2 f:q@1=w\n"));
	free(s);
	tu_commit(txn);
}

/* Errors change nothing and leave the transaction usable: onto an existing table (or itself), from a
 * missing one, to a bad name; a read-only transaction. An aborted rename leaves the old name. */
static void test_schema__rename_onto_existing_fails_and_changes_nothing(void **state)
{
	struct tu_store *ts = *state;
	char *bt, *bu, *s, *long_name;
	cs_txn *txn;

	tu_table(ts->st, "t", "f", NULL, NULL);
	tu_table(ts->st, "u", "g", "maxversions=1", NULL);
	tu_put(ts->st, "t", "r", "f", "q", 1, "t-data");
	tu_put(ts->st, "u", "r", "g", "q", 1, "u-data");
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	bt = table_state(txn, "t");
	bu = table_state(txn, "u");
	assert_int_equal(cs_table_rename(txn, "t", "v"), -EROFS);
	tu_commit(txn);

	long_name = repeat('n', CS_MAX_TABLE + 1);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_rename(txn, "t", "u"), -EEXIST);
	assert_int_equal(cs_table_rename(txn, "u", "t"), -EEXIST);
	assert_int_equal(cs_table_rename(txn, "t", "t"), -EEXIST);
	assert_int_equal(cs_table_rename(txn, "nosuch", "v"), -ENOENT);
	assert_int_equal(cs_table_rename(txn, "nosuch", "t"), -ENOENT);
	assert_int_equal(cs_table_rename(txn, "bad name", "v"), -ENOENT);
	assert_int_equal(cs_table_rename(txn, "t", "bad name"), -EINVAL);
	assert_int_equal(cs_table_rename(txn, "t", ""), -EINVAL);
	assert_int_equal(cs_table_rename(txn, "t", "-x"), -EINVAL);
	assert_int_equal(cs_table_rename(txn, "t", long_name), -EINVAL);
	long_name[CS_MAX_TABLE] = 0;
	expect_tables(txn, "t u ");
	/* Still usable: a longest name is fine. */
	assert_int_equal(cs_table_rename(txn, "t", long_name), 0);
	assert_int_equal(cs_table_rename(txn, long_name, "t"), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	expect_tables(txn, "t u ");
	s = table_state(txn, "t");
	assert_string_equal(s, bt);
	free(s);
	s = table_state(txn, "u");
	assert_string_equal(s, bu);
	free(s);
	tu_commit(txn);

	/* Aborted: nothing happened. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_rename(txn, "t", "v"), 0);
	cs_txn_abort(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	expect_tables(txn, "t u ");
	s = table_state(txn, "t");
	assert_string_equal(s, bt);
	free(s);
	tu_commit(txn);
	free(long_name);
	free(bt);
	free(bu);
}

/* Transactions reuse the tables the ones before them parsed (the store's spares), but only while the
 * record is byte for byte what they were parsed from: a committed change is seen, an aborted one never. */
static void test_schema__a_parsed_table_is_reused_until_its_record_changes(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *r, *w;
	struct sch_table *a, *b;

	tu_table(ts->st, "t", "f", NULL, NULL);
	r = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(sch_table_get(lm_txn_of(r), "t", &a), 0);
	cs_txn_reset(r);
	assert_int_equal(cs_txn_renew(r), 0);
	assert_int_equal(sch_table_get(lm_txn_of(r), "t", &b), 0);
	assert_ptr_equal(a, b); /* the spare, not parsed again */
	cs_txn_reset(r);

	w = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_create(w, "t", "g", "maxversions=2"), 0);
	tu_commit(w);
	assert_int_equal(cs_txn_renew(r), 0);
	assert_int_equal(sch_table_get(lm_txn_of(r), "t", &a), 0);
	assert_int_equal(a->nfam, 2);
	assert_non_null(sch_family_find(a, "g"));
	cs_txn_reset(r);

	w = tu_begin(ts->st, 0); /* takes the spare r left, changes it, and is undone */
	assert_int_equal(cs_family_create(w, "t", "h", NULL), 0);
	assert_int_equal(cs_family_set_gc(w, "t", "g", "maxversions=5"), 0);
	cs_txn_abort(w);
	assert_int_equal(cs_txn_renew(r), 0);
	assert_int_equal(sch_table_get(lm_txn_of(r), "t", &a), 0);
	assert_int_equal(a->nfam, 2);
	assert_null(sch_family_find(a, "h"));
	assert_string_equal(sch_family_find(a, "g")->gc, "maxversions=2");
	tu_commit(r);
}

/* A spare's dropped ranges are read again: a write into a dropped range changes the drop's record, not
 * the table's, and a read that still skipped the range whole would miss the new row. */
static void test_schema__a_reused_table_sees_a_dropped_range_written_again(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *r, *w;
	char *d;

	tu_table(ts->st, "t", "f", NULL, NULL);
	tu_put(ts->st, "t", "a1", "f", "q", 1000, "old");
	w = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(w, "t", CS_STR("a")), 0);
	tu_commit(w);
	r = tu_begin(ts->st, CS_TXN_RDONLY);
	d = tu_dump(r, "t", NULL); /* loads the drop, clean: the range is skipped in one seek */
	assert_string_equal(d, "");
	free(d);
	tu_put(ts->st, "t", "a2", "f", "q", 2000, "new");
	cs_txn_reset(r); /* r's table, its drop still clean, is the newest spare */
	assert_int_equal(cs_txn_renew(r), 0);
	d = tu_dump(r, "t", NULL);
	assert_string_equal(d, "a2 f:q@2000=new\n");
	free(d);
	tu_commit(r);
}

/* At most a few spares are kept, whatever the number of tables read. */
static void test_schema__spares_are_bounded(void **state)
{
	struct tu_store *ts = *state;
	lm_store *lst;
	cs_txn *r;
	char name[16];
	struct sch_table *t;

	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		tu_table(ts->st, name, "f", NULL, NULL);
	}
	r = tu_begin(ts->st, CS_TXN_RDONLY);
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		assert_int_equal(sch_table_get(lm_txn_of(r), name, &t), 0);
	}
	lst = lm_txn_of(r)->st;
	tu_commit(r);
	assert_true(lst->spares.n > 0 && lst->spares.n <= 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, tu_store_setup, tu_store_teardown)
		cmocka_unit_test(test_schema__names),
		T(test_schema__bad_names_rejected_and_txn_usable),
		T(test_schema__gc_policies),
		T(test_schema__tables_and_families_sorted),
		T(test_schema__create_as_copies_a_schema),
		T(test_schema__create_as_refuses_a_bad_schema_and_creates_nothing),
		T(test_schema__empty_store),
		T(test_schema__delete_table_then_recreate),
		T(test_schema__delete_family_then_recreate),
		T(test_schema__persists_and_ids_not_reused),
		T(test_schema__abort_leaves_nothing),
		T(test_schema__rename_keeps_cells_and_schema_and_frees_the_name),
		T(test_schema__rename_chains_within_a_transaction),
		T(test_schema__rename_onto_existing_fails_and_changes_nothing),
		T(test_schema__a_parsed_table_is_reused_until_its_record_changes),
		T(test_schema__a_reused_table_sees_a_dropped_range_written_again),
		T(test_schema__spares_are_bounded),
#undef T
	};
	return cmocka_run_group_tests_name("schema", tests, NULL, NULL);
}
