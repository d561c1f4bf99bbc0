/* test_asof.c — as-of stores (CS_OPEN_ASOF, asof.c): cs_time_parse() (and cs_duration_parse()) against tables of texts, and a store
 * opened as of several times: scans see only cells at or before the time (each column's newest then, rows
 * and families with only newer cells absent), within the caller's own timestamp range; GC policies judged
 * now; writes refused; table creation times, stats and compaction kept to the time. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *text;
	int64_t us;
} good[] = {
	{ "0", 0 },
	{ "1", 1 },
	{ "000042", 42 },
	{ "1426535612156000", 1426535612156000 },
	{ "9223372036854775807", INT64_MAX },
	{ "1970-01-01T00:00:00Z", 0 },
	{ "1970-01-01T00:00:00.000001Z", 1 },
	{ "1970-01-01t00:00:01z", 1000000 },
	{ "1970-01-01 00:00:01.5Z", 1500000 },
	{ "2015-03-16T19:53:32.156Z", 1426535612156000 },
	{ "2015-03-16T20:53:32.156+01:00", 1426535612156000 },
	{ "2015-03-16T14:23:32.156-05:30", 1426535612156000 },
	{ "2015-03-16T19:53:32.156000999Z", 1426535612156000 },   /* finer than a µs: truncated */
	{ "2015-03-16T19:53:32.1560009999999Z", 1426535612156000 },
	{ "2000-02-29T00:00:00Z", 951782400000000 },              /* a leap day (div. by 400) */
	{ "2024-02-29T23:59:59.999999Z", 1709251199999999 },
	{ "2026-11-26T05:34:38Z", 1795671278000000 },
	{ "1970-01-01T01:00:00+01:00", 0 },
	{ "9999-12-31T23:59:59.999999Z", 253402300799999999 },
};

static const struct {
	const char *text, *why;
} bad[] = {
	{ "", "empty" },
	{ "-1", "before the epoch" },
	{ "1969-12-31T23:59:59.999999Z", "before the epoch" },
	{ "1970-01-01T00:30:00+01:00", "before the epoch" },
	{ "9223372036854775808", "microseconds out of range" },
	{ "99999999999999999999", "microseconds out of range" },
	{ "12x", "not RFC 3339" },
	{ "+5", "not RFC 3339" },
	{ "now", "not RFC 3339" },
	{ "2026-11-26", "a date alone" },
	{ "2026-11-26T05:34:38", "no time zone" },
	{ "2026-11-26T05:34Z", "not RFC 3339" },
	{ "2026-11-26T05:34:38.Z", "not RFC 3339" },
	{ "2026-11-26T05:34:38+0100", "not RFC 3339" },
	{ "2026-11-26T05:34:38+01", "not RFC 3339" },
	{ "2026-11-26T05:34:38ZZ", "not RFC 3339" },
	{ "2026-11-26T05:34:38Z ", "not RFC 3339" },
	{ "2026-11-26X05:34:38Z", "not RFC 3339" },
	{ "26-11-26T05:34:38Z", "not RFC 3339" },
	{ "2026-13-01T00:00:00Z", "month out of range" },
	{ "2026-00-01T00:00:00Z", "month out of range" },
	{ "2026-02-29T00:00:00Z", "day out of range" },
	{ "1900-02-29T00:00:00Z", "day out of range" },
	{ "2026-04-31T00:00:00Z", "day out of range" },
	{ "2026-01-00T00:00:00Z", "day out of range" },
	{ "2026-01-01T24:00:00Z", "hour out of range" },
	{ "2026-01-01T00:60:00Z", "minute out of range" },
	{ "2016-12-31T23:59:60Z", "leap second" },
	{ "2026-01-01T00:00:61Z", "second out of range" },
	{ "2026-01-01T00:00:00+24:00", "offset out of range" },
	{ "2026-01-01T00:00:00+01:60", "offset out of range" },
};

static void test_asof__parse_good_times(void **state)
{
	(void)state;
	for (size_t i = 0; i < TU_ARRAY_SIZE(good); i++) {
		int64_t us = -7;
		const char *why = NULL;
		int rc = cs_time_parse(good[i].text, &us, &why);
		if (rc || us != good[i].us)
			fail_msg("%s: rc %d, %lld µs (want %lld), why %s", good[i].text, rc, (long long)us,
				 (long long)good[i].us, why ? why : "-");
	}
}

static void test_asof__parse_refuses_bad_times_saying_why(void **state)
{
	(void)state;
	for (size_t i = 0; i < TU_ARRAY_SIZE(bad); i++) {
		int64_t us = -7;
		const char *why = NULL;
		int rc = cs_time_parse(bad[i].text, &us, &why);
		if (rc != -EINVAL || us != -7 || !why || !strstr(why, bad[i].why))
			fail_msg("\"%s\": rc %d, %lld µs, why \"%s\" (want -EINVAL, \"%s\")", bad[i].text, rc,
				 (long long)us, why ? why : "(null)", bad[i].why);
		assert_int_equal(cs_time_parse(bad[i].text, &us, NULL), -EINVAL); /* WHY may be NULL */
	}
}

/* Table "t": family a (never), v1 (maxversions=1, whose older cell is collected now) and m (maxage=1d, which
 * has collected r4's cell of 1970 by now: at no time is it there). */
static int setup(void **state)
{
	struct tu_store *ts;

	tu_store_setup(state);
	ts = *state;
	tu_table(ts->st, "t", "a", NULL, "v1", "maxversions=1", "m", "maxage=1d", NULL);
	tu_put(ts->st, "t", "r1", "a", "q", 10, "x10");
	tu_put(ts->st, "t", "r1", "a", "q", 20, "x20");
	tu_put(ts->st, "t", "r1", "a", "q", 30, "x30");
	tu_put(ts->st, "t", "r1", "a", "p", 25, "p25");
	tu_put(ts->st, "t", "r1#c", "a", "q", 15, "c15");
	tu_put(ts->st, "t", "r2", "a", "q", 40, "r2");
	tu_put(ts->st, "t", "r3", "v1", "q", 5, "old");
	tu_put(ts->st, "t", "r3", "v1", "q", 50, "new");
	tu_put(ts->st, "t", "r3", "a", "z", 45, "z45");
	tu_put(ts->st, "t", "r4", "m", "q", 15, "aged");
	return 0;
}

/* Reopen TS's store as of AT. */
static void reopen_asof(struct tu_store *ts, int64_t at)
{
	cs_open_opts o = { .flags = CS_OPEN_ASOF, .asof = at };
	cs_store_close(ts->st);
	ts->st = NULL;
	assert_int_equal(cs_store_open(ts->dir, &o, &ts->st), 0);
}

static void test_asof__scans_see_cells_up_to_the_time(void **state)
{
	static const struct {
		int64_t at;
		const char *all, *newest;
	} cases[] = {
		{ 0, "", "" },
		{ 9, "", "" },
		{ 10, "r1 a:q@10=x10\n", "r1 a:q@10=x10\n" },
		{ 20, "r1 a:q@20=x20 a:q@10=x10\nr1#c a:q@15=c15\n", "r1 a:q@20=x20\nr1#c a:q@15=c15\n" },
		{ 24, "r1 a:q@20=x20 a:q@10=x10\nr1#c a:q@15=c15\n", "r1 a:q@20=x20\nr1#c a:q@15=c15\n" },
		{ 25, "r1 a:p@25=p25 a:q@20=x20 a:q@10=x10\nr1#c a:q@15=c15\n",
		  "r1 a:p@25=p25 a:q@20=x20\nr1#c a:q@15=c15\n" },
		/* r3's v1:q@5 is collected (maxversions=1, the newest being @50): gone at every time */
		{ 49, "r1 a:p@25=p25 a:q@30=x30 a:q@20=x20 a:q@10=x10\nr1#c a:q@15=c15\nr2 a:q@40=r2\nr3 a:z@45=z45\n",
		  "r1 a:p@25=p25 a:q@30=x30\nr1#c a:q@15=c15\nr2 a:q@40=r2\nr3 a:z@45=z45\n" },
		{ INT64_MAX,
		  "r1 a:p@25=p25 a:q@30=x30 a:q@20=x20 a:q@10=x10\nr1#c a:q@15=c15\nr2 a:q@40=r2\nr3 a:z@45=z45 v1:q@50=new\n",
		  "r1 a:p@25=p25 a:q@30=x30\nr1#c a:q@15=c15\nr2 a:q@40=r2\nr3 a:z@45=z45 v1:q@50=new\n" },
	};
	struct tu_store *ts = *state;
	cs_read_opts newest = { .cells_per_column = 1 };

	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		char *got;
		reopen_asof(ts, cases[i].at);
		got = tu_dump_st(ts->st, "t", NULL);
		if (strcmp(got, cases[i].all))
			fail_msg("asof %lld: got\n%s want\n%s", (long long)cases[i].at, got, cases[i].all);
		free(got);
		got = tu_dump_st(ts->st, "t", &newest);
		if (strcmp(got, cases[i].newest))
			fail_msg("asof %lld, newest: got\n%s want\n%s", (long long)cases[i].at, got, cases[i].newest);
		free(got);
	}
}

static void test_asof__within_the_callers_timestamp_range(void **state)
{
	struct tu_store *ts = *state;
	cs_bytes r1 = CS_STR("r1");
	cs_read_opts from15 = { .ts_start = 15, .ts_end = CS_TS_MAX };
	cs_read_opts below22 = { .ts_end = 22 };
	cs_read_opts at30 = { .row = &r1, .ts_start = 30, .ts_end = 31 };
	cs_read_opts row = { .row = &r1, .cells_per_row = 1 };
	char *got;

	reopen_asof(ts, 25);
	got = tu_dump_st(ts->st, "t", &from15);
	assert_string_equal(got, "r1 a:p@25=p25 a:q@20=x20\nr1#c a:q@15=c15\n");
	free(got);
	got = tu_dump_st(ts->st, "t", &below22);
	assert_string_equal(got, "r1 a:q@20=x20 a:q@10=x10\nr1#c a:q@15=c15\n");
	free(got);
	got = tu_dump_st(ts->st, "t", &at30); /* a version newer than the time, asked for by name: none */
	assert_string_equal(got, "");
	free(got);
	got = tu_dump_st(ts->st, "t", &row);
	assert_string_equal(got, "r1 a:p@25=p25\n");
	free(got);
	reopen_asof(ts, 12);
	got = tu_dump_st(ts->st, "t", &from15); /* [15, ...) and at or before 12: an empty range */
	assert_string_equal(got, "");
	free(got);
}

static void test_asof__refuses_writes(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = NULL;

	reopen_asof(ts, 1000);
	assert_int_equal(cs_txn_begin(ts->st, 0, &txn), -EROFS);
	assert_null(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_create(txn, "u", 0), -EROFS);
	tu_commit(txn);
}

static void test_asof__bad_open_options(void **state)
{
	struct tu_store *ts = *state;
	cs_open_opts neg = { .flags = CS_OPEN_ASOF, .asof = -1 };
	cs_open_opts create = { .flags = CS_OPEN_ASOF | CS_OPEN_CREATE, .asof = 5 };
	char *dir = tu_mkdtemp(), *sub;
	cs_store *st = NULL;

	cs_store_close(ts->st);
	ts->st = NULL;
	assert_int_equal(cs_store_open(ts->dir, &neg, &st), -EINVAL);
	assert_int_equal(asprintf(&sub, "%s/new", dir) > 0, 1);
	assert_int_equal(cs_store_open(sub, &create, &st), -EINVAL);
	assert_null(st);
	create.flags = CS_OPEN_ASOF; /* no store there: as a read-only open */
	assert_int_equal(cs_store_open(sub, &create, &st), -ENOENT);
	free(sub);
	tu_rmtree(dir);
	free(dir);
	reopen_asof(ts, 0); /* (for the teardown) */
}

static void test_asof__creation_times_stats_and_compaction(void **state)
{
	struct tu_store *ts = *state;
	cs_table_info *info;
	cs_table_stats *s;
	int64_t created;
	char *dir, *dest;
	cs_txn *txn = tu_begin(ts->st, CS_TXN_RDONLY);

	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	created = info->created;
	cs_table_info_free(info);
	tu_commit(txn);
	assert_true(created > 1000000);

	reopen_asof(ts, 20);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_int_equal(info->created, 20); /* nothing newer than the time, the table's creation neither */
	assert_int_equal(info->nfamilies, 3);
	cs_table_info_free(info);
	assert_int_equal(cs_table_stats_get(txn, "t", &s), 0);
	assert_int_equal(s->rows, 2);     /* r1, r1#c */
	assert_int_equal(s->cells, 3);    /* a:q@10, a:q@20, r1#c's a:q@15 */
	assert_int_equal(s->raw_bytes, 9);
	assert_int_equal(s->garbage_cells, 2); /* r3's v1:q@5 and r4's m:q@15, collected */
	cs_table_stats_free(s);
	tu_commit(txn);

	reopen_asof(ts, created + 1);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_int_equal(info->created, created);
	cs_table_info_free(info);
	tu_commit(txn);

	dir = tu_mkdtemp();
	assert_int_equal(asprintf(&dest, "%s/copy", dir) > 0, 1);
	assert_int_equal(cs_store_compact(ts->st, dest, NULL), -EOPNOTSUPP);
	free(dest);
	tu_rmtree(dir);
	free(dir);
}

/* cs_duration_parse(): Go's duration syntax (cbt's -timeout), rounded up to whole ms, > 0, <= 24 h. */
static void test_asof__parse_durations(void **state)
{
	static const struct {
		const char *text;
		unsigned ms;
	} dgood[] = {
		{ "30s", 30000 }, { "500ms", 500 }, { "1m30s", 90000 }, { "1.5h", 5400000 }, { "+2s", 2000 },
		{ "1us", 1 }, { "1ns", 1 }, { "1500us", 2 }, { "1\xc2\xb5s", 1 }, { ".5s", 500 }, { "2.s", 2000 },
		{ "24h", 86400000 }, { "1h59m60s", 7200000 }, { "0.0001s", 1 },
	};
	static const struct {
		const char *text;
		const char *why; /* a word of the reason */
	} dbad[] = {
		{ "", "empty" }, { "0", "zero" }, { "0s", "zero" }, { "-1s", "negative" }, { "5", "needs a unit" },
		{ "1.5x", "unknown unit" }, { "s", "not a duration" }, { "25h", "over 24h" }, { "24h1ns", "over 24h" },
		{ "99999999999999999999h", "over 24h" }, { "1s 2s", "not a duration" }, { ".s", "not a duration" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(dgood) / sizeof(dgood[0]); i++) {
		unsigned ms = 0;
		const char *why = NULL;
		if (cs_duration_parse(dgood[i].text, &ms, &why) || ms != dgood[i].ms)
			fail_msg("%s: %u ms, want %u (%s)", dgood[i].text, ms, dgood[i].ms, why ? why : "");
	}
	for (size_t i = 0; i < sizeof(dbad) / sizeof(dbad[0]); i++) {
		unsigned ms = 7;
		const char *why = NULL;
		if (cs_duration_parse(dbad[i].text, &ms, &why) != -EINVAL || !why || !strstr(why, dbad[i].why) || ms != 7)
			fail_msg("%s: not refused as \"%s\" (%s)", dbad[i].text, dbad[i].why, why ? why : "no reason");
		assert_int_equal(cs_duration_parse(dbad[i].text, &ms, NULL), -EINVAL); /* WHY may be NULL */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_asof__parse_good_times),
		cmocka_unit_test(test_asof__parse_refuses_bad_times_saying_why),
		cmocka_unit_test(test_asof__parse_durations),
		cmocka_unit_test_setup_teardown(test_asof__scans_see_cells_up_to_the_time, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_asof__within_the_callers_timestamp_range, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_asof__refuses_writes, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_asof__bad_open_options, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_asof__creation_times_stats_and_compaction, setup,
						tu_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
