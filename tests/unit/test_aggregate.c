/* test_aggregate.c — aggregate families: the value type in the schema, AddToCell merging its input into
 * the cell of the same timestamp (sum, min, max), plain writes refused in aggregate families and
 * AddToCell refused in plain ones, and what a read would not return (dropped, of a deleted family) never
 * contributing to a merge. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmutil.h"

#define LIT(s) { (s), sizeof(s) - 1 }
#define ADD(f, q, t, n) { .op = CS_ADD_TO_CELL, .family = (f), .qualifier = LIT(q), .ts = (t), .input = (n) }
#define SET(f, q, t, v) { .op = CS_SET_CELL, .family = (f), .qualifier = LIT(q), .ts = (t), .value = LIT(v) }

/* Table "t": plain family "p", "s" intsum, "mn" intmin, "mx" intmax, "s1" intsum with maxversions=1. */
static int setup(void **state)
{
	struct tu_store *ts;
	cs_txn *txn;

	tu_store_setup(state);
	ts = *state;
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	assert_int_equal(cs_family_create(txn, "t", "p", NULL), 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "s", NULL, CS_TYPE_INTSUM), 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "mn", "never", CS_TYPE_INTMIN), 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "mx", NULL, CS_TYPE_INTMAX), 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "s1", "maxversions=1", CS_TYPE_INTSUM), 0);
	tu_commit(txn);
	return 0;
}

static int add(cs_store *st, const char *row, const cs_mutation *m, size_t n)
{
	cs_txn *txn = tu_begin(st, 0);
	int rc = cs_row_mutate(txn, "t", CS_STR(row), m, n);
	if (rc == 0)
		tu_commit(txn);
	else
		cs_txn_abort(txn);
	return rc;
}

static void add1(cs_store *st, const char *row, const char *fam, const char *q, int64_t ts, int64_t n)
{
	cs_mutation m = { .op = CS_ADD_TO_CELL, .family = fam, .qualifier = CS_STR(q), .ts = ts, .input = n };
	assert_int_equal(add(st, row, &m, 1), 0);
}

/* Every cell of ROW in FAM as "q@ts=N ..." (N the big-endian int64 each holds), "" if none. */
static char *ints(cs_store *st, const char *row, const char *fam)
{
	cs_bytes r = CS_STR(row);
	cs_column_sel sel = { .family = fam };
	cs_read_opts o = { .row = &r, .ncolumns = 1, .columns = &sel };
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	struct tu_buf b = { 0 };
	const cs_row *rw;
	cs_scan *s;

	tu_buf_add(&b, "", 0);
	assert_int_equal(cs_scan_open(txn, "t", &o, &s), 0);
	if (cs_scan_next(s, &rw) == 1) {
		for (size_t i = 0; i < rw->ncells; i++) {
			const cs_cell *c = &rw->cells[i];
			const uint8_t *v = c->value.data;
			uint64_t u = 0;
			char e[64];
			assert_int_equal(c->value.len, 8);
			for (int k = 0; k < 8; k++)
				u = u << 8 | v[k];
			if (i)
				tu_buf_add(&b, " ", 1);
			tu_escape(&b, c->qualifier.data, c->qualifier.len);
			snprintf(e, sizeof e, "@%lld=%lld", (long long)c->ts, (long long)(int64_t)u);
			tu_buf_add(&b, e, strlen(e));
		}
	}
	cs_scan_close(s);
	cs_txn_abort(txn);
	return b.s;
}

static void expect_ints(cs_store *st, const char *row, const char *fam, const char *want)
{
	char *got = ints(st, row, fam);
	assert_string_equal(got, want);
	free(got);
}

static void test_aggregate__merges_inputs_at_one_timestamp(void **state)
{
	struct tu_store *ts = *state;
	static const struct {
		const char *fam;
		int64_t in[4];
		size_t n;
		const char *want;
	} cases[] = {
		{ "s", { 5, 7, 10 }, 3, "q@1000=22" },
		{ "s", { 5, -7 }, 2, "q@1000=-2" },
		{ "s", { INT64_MAX, 1 }, 2, "q@1000=-9223372036854775808" }, /* wraps */
		{ "mn", { 10, 3, 7 }, 3, "q@1000=3" },
		{ "mn", { 3, -1, 5 }, 3, "q@1000=-1" }, /* signed, not bytewise */
		{ "mx", { 1, 5, 2 }, 3, "q@1000=5" },
		{ "mx", { 10, -3 }, 2, "q@1000=10" },
		{ "mx", { -5, -1, -7 }, 3, "q@1000=-1" },
		{ "mn", { INT64_MIN, INT64_MAX }, 2, "q@1000=-9223372036854775808" },
	};

	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		char row[16];
		snprintf(row, sizeof row, "r%zu", i);
		/* One transaction per input, then all inputs in one mutation list: the same result. */
		for (size_t k = 0; k < cases[i].n; k++)
			add1(ts->st, row, cases[i].fam, "q", 1000, cases[i].in[k]);
		expect_ints(ts->st, row, cases[i].fam, cases[i].want);
		snprintf(row, sizeof row, "m%zu", i);
		cs_mutation m[4];
		for (size_t k = 0; k < cases[i].n; k++)
			m[k] = (cs_mutation){ .op = CS_ADD_TO_CELL, .family = cases[i].fam, .qualifier = CS_STR("q"),
					      .ts = 1000, .input = cases[i].in[k] };
		assert_int_equal(add(ts->st, row, m, cases[i].n), 0);
		expect_ints(ts->st, row, cases[i].fam, cases[i].want);
	}
}

static void test_aggregate__timestamps_and_columns_are_separate_cells(void **state)
{
	struct tu_store *ts = *state;
	const cs_mutation m[] = { ADD("s", "a", 1000, 5), ADD("s", "a", 2000, 3), ADD("s", "b", 1000, 1),
				  ADD("s", "a", 1000, 7), ADD("mx", "a", 1000, 9) };
	int64_t before = cs_now_us();
	char *got;
	long long t;

	assert_int_equal(add(ts->st, "r", m, TU_ARRAY_SIZE(m)), 0);
	expect_ints(ts->st, "r", "s", "a@2000=3 a@1000=12 b@1000=1");
	expect_ints(ts->st, "r", "mx", "a@1000=9");
	/* CS_TS_NOW: a cell at the time of the write. */
	add1(ts->st, "now", "s", "n", CS_TS_NOW, 4);
	got = ints(ts->st, "now", "s");
	assert_int_equal(sscanf(got, "n@%lld=4", &t), 1);
	assert_true(t >= before && t <= cs_now_us());
	free(got);
}

static void test_aggregate__plain_writes_refused_in_aggregate_families(void **state)
{
	struct tu_store *ts = *state;
	const cs_mutation set_after_add[] = { ADD("s", "q", 1000, 5), SET("s", "q", 1000, "abc") };
	const cs_mutation add_plain[] = { SET("p", "q", 1000, "v"), ADD("p", "q", 1000, 5) };
	const cs_mutation add_bad_ts[] = { ADD("s", "q", -5, 5) };
	const cs_mutation add_nofam[] = { ADD("nosuch", "q", 1000, 5) };
	cs_txn *txn;

	add1(ts->st, "r", "s", "q", 1000, 1);
	assert_int_equal(add(ts->st, "r", set_after_add, 2), -EINVAL);
	assert_int_equal(add(ts->st, "r", add_plain, 2), -EINVAL);
	assert_int_equal(add(ts->st, "r", add_bad_ts, 1), -EINVAL);
	assert_int_equal(add(ts->st, "r", add_nofam, 1), -ENOENT);
	/* A refused mutation leaves the transaction usable and writes nothing. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR("r"), set_after_add, 2), -EINVAL);
	assert_int_equal(cs_rmw_append(txn, "t", CS_STR("r"), "s", CS_STR("q"), CS_STR("x"), NULL), -EINVAL);
	assert_int_equal(cs_rmw_increment(txn, "t", CS_STR("r"), "mn", CS_STR("q"), 1, NULL), -EINVAL);
	assert_int_equal(tu_set(txn, "t", CS_STR("r"), "p", CS_STR("ok"), 5, CS_STR("v")), 0);
	tu_commit(txn);
	expect_ints(ts->st, "r", "s", "q@1000=1");
	expect_ints(ts->st, "r", "mn", "");
	char *d = tu_dump_st(ts->st, "t", NULL);
	assert_string_equal(d, "r p:ok@5=v s:q@1000=\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01\n");
	free(d);
}

static void test_aggregate__gc_policy_applies(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;

	add1(ts->st, "r", "s1", "q", 2000, 10);
	add1(ts->st, "r", "s1", "q", 1000, 5); /* an older version: collected at once */
	add1(ts->st, "r", "s1", "q", 2000, 1);
	expect_ints(ts->st, "r", "s1", "q@2000=11");
	add1(ts->st, "r", "s1", "q", 3000, 4);
	expect_ints(ts->st, "r", "s1", "q@3000=4");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_gc(txn, "t", NULL), 0);
	tu_commit(txn);
	expect_ints(ts->st, "r", "s1", "q@3000=4");
}

/* A dropped cell, or one of a deleted family, is not there for a read, nor for a merge. */
static void test_aggregate__hidden_cells_do_not_contribute(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;

	add1(ts->st, "ab", "s", "q", 1000, 5);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a")), 0);
	tu_commit(txn);
	expect_ints(ts->st, "ab", "s", "");
	add1(ts->st, "ab", "s", "q", 1000, 2);
	expect_ints(ts->st, "ab", "s", "q@1000=2");

	add1(ts->st, "r", "mx", "q", 1000, 50);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_delete(txn, "t", "mx"), 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "mx", NULL, CS_TYPE_INTMAX), 0);
	tu_commit(txn);
	add1(ts->st, "r", "mx", "q", 1000, 3);
	expect_ints(ts->st, "r", "mx", "q@1000=3");
}

static void test_aggregate__value_type_is_part_of_the_schema(void **state)
{
	struct tu_store *ts = *state;
	static const char *const want[][2] = { { "mn", "intmin" }, { "mx", "intmax" }, { "p", "" },
					       { "s", "intsum" }, { "s1", "intsum" } };
	cs_table_info *info;
	cs_value_type type;
	cs_txn *txn;

	tu_reopen(ts, 0, 0);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_int_equal(info->nfamilies, TU_ARRAY_SIZE(want));
	for (size_t i = 0; i < info->nfamilies; i++) {
		assert_string_equal(info->families[i].name, want[i][0]);
		assert_string_equal(cs_value_type_name(info->families[i].type), want[i][1]);
	}
	assert_string_equal(info->families[4].gc, "maxversions=1");
	cs_table_info_free(info);
	cs_txn_abort(txn);

	assert_string_equal(cs_value_type_cbt(CS_TYPE_BYTES), "{}");
	assert_string_equal(cs_value_type_cbt(CS_TYPE_INTSUM),
			    "{\"aggregateType\":{\"inputType\":{\"int64Type\":{\"encoding\":{\"bigEndianBytes\":{}}}}, \"sum\":{}}}");
	assert_int_equal(cs_value_type_parse("intmax", &type), 0);
	assert_int_equal(type, CS_TYPE_INTMAX);
	assert_int_equal(cs_value_type_parse("", &type), 0);
	assert_int_equal(type, CS_TYPE_BYTES);
	assert_int_equal(cs_value_type_parse("inthll", &type), -EOPNOTSUPP);
	/* Any case, as cbt reads it (Go's strings.ToLower, which also lowers U+0130 to 'i'). */
	static const struct {
		const char *name;
		int rc;
		cs_value_type type;
	} cases[] = {
		{ "IntSum", 0, CS_TYPE_INTSUM }, { "INTMIN", 0, CS_TYPE_INTMIN }, { "iNtMaX", 0, CS_TYPE_INTMAX },
		{ "\xc4\xb0ntsum", 0, CS_TYPE_INTSUM }, { "INTHLL", -EOPNOTSUPP, 0 },
		{ "StringUtf8Bytes", -EOPNOTSUPP, 0 }, { "intsu", -EINVAL, 0 }, { "intsumm", -EINVAL, 0 },
		{ "\xc4\xb1ntsum", -EINVAL, 0 }, { "int sum", -EINVAL, 0 }, { "\xe2\x84\xaantsum", -EINVAL, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		type = (cs_value_type)99;
		assert_int_equal(cs_value_type_parse(cases[i].name, &type), cases[i].rc);
		if (!cases[i].rc)
			assert_int_equal(type, cases[i].type);
	}
	assert_string_equal(cs_value_type_name((cs_value_type)99), "");

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "x", NULL, (cs_value_type)99), -EINVAL);
	assert_int_equal(cs_family_create_typed(txn, "t", "s", NULL, CS_TYPE_INTSUM), -EEXIST);
	/* Other schema changes keep the types. */
	assert_int_equal(cs_family_set_gc(txn, "t", "s", "maxversions=3"), 0);
	assert_int_equal(cs_table_rename(txn, "t", "t2"), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t2", &info), 0);
	assert_int_equal(info->families[3].type, CS_TYPE_INTSUM);
	assert_int_equal(info->families[2].type, CS_TYPE_BYTES);
	cs_table_info_free(info);
	cs_txn_abort(txn);
}

/* A table without aggregate families keeps the older record format (readable by older versions). */
static void test_aggregate__plain_tables_keep_record_version_2(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;
	const void *v;
	size_t vn;

	tu_table(ts->st, "plain", "a", NULL, NULL);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(kv_get(lm_txn_of(txn)->kv, "Tplain", 6, &v, &vn), 0);
	assert_int_equal(((const uint8_t *)v)[0], 2);
	assert_int_equal(kv_get(lm_txn_of(txn)->kv, "Tt", 2, &v, &vn), 0);
	assert_int_equal(((const uint8_t *)v)[0], 3);
	cs_txn_abort(txn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_aggregate__merges_inputs_at_one_timestamp, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_aggregate__timestamps_and_columns_are_separate_cells, setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_aggregate__plain_writes_refused_in_aggregate_families, setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_aggregate__gc_policy_applies, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_aggregate__hidden_cells_do_not_contribute, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_aggregate__value_type_is_part_of_the_schema, setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_aggregate__plain_tables_keep_record_version_2, setup,
						tu_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
