/* test_cbtfmt.c — cellctl's cbt output formats: Go's %q, rune counts, time layout and zone choice, rows
 * and tabwriter tables. Expected strings are what cbt 1.23.2 printed for the same bytes (the oracle
 * suite checks the same against the live tool).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cbtfmt.h"

/* Capture what FN writes into a string. */
struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	return c->f;
}

static char *cap_close(struct capture *c)
{
	assert_int_equal(fclose(c->f), 0);
	return c->buf;
}

static void use_tz(const char *tz)
{
	if (tz)
		setenv("TZ", tz, 1);
	else
		unsetenv("TZ");
	cbtfmt_tz_init();
}

static void test_cbtfmt__quote_matches_go(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *want;
	} cases[] = {
#define C(in, want) { in, sizeof(in) - 1, want }
		C("", "\"\""),
		C("abc xyz", "\"abc xyz\""),
		C("\"\\", "\"\\\"\\\\\""),
		C("'#@=:", "\"'#@=:\""),
		C("\a\b\f\n\r\t\v", "\"\\a\\b\\f\\n\\r\\t\\v\""),
		C("\x00\x01\x1b\x1f\x7f", "\"\\x00\\x01\\x1b\\x1f\\x7f\""),
		C("\xff\xfe", "\"\\xff\\xfe\""),
		C("\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\""),       /* été */
		C("\xc3", "\"\\xc3\""),                                 /* truncated */
		C("\xc3(", "\"\\xc3(\""),
		C("\xc0\x80", "\"\\xc0\\x80\""),                        /* overlong NUL */
		C("\xe0\x80\xaf", "\"\\xe0\\x80\\xaf\""),               /* overlong '/' */
		C("\xed\xa0\x80", "\"\\xed\\xa0\\x80\""),               /* a surrogate */
		C("\xf4\x90\x80\x80", "\"\\xf4\\x90\\x80\\x80\""),      /* above U+10FFFF */
		C("\xc2\x80", "\"\\u0080\""),                           /* C1 control */
		C("\xc2\xa0", "\"\\u00a0\""),                           /* no-break space */
		C("\xc2\xa1", "\"\xc2\xa1\""),                          /* ¡ */
		C("\xc2\xad", "\"\\u00ad\""),                           /* soft hyphen */
		C("\xc3\xbf", "\"\xc3\xbf\""),                          /* ÿ */
		C("\xe2\x80\x8b", "\"\\u200b\""),                       /* zero-width space */
		C("\xe2\x80\xa8", "\"\\u2028\""),                       /* line separator */
		C("\xe3\x80\x80", "\"\\u3000\""),                       /* ideographic space */
		C("\xef\xbb\xbf", "\"\\ufeff\""),                       /* BOM */
		C("\xee\x80\x80", "\"\\ue000\""),                       /* private use */
		C("\xef\xbf\xbd", "\"\xef\xbf\xbd\""),                  /* U+FFFD itself is printable */
		C("\xe6\x97\xa5\xe6\x9c\xac", "\"\xe6\x97\xa5\xe6\x9c\xac\""), /* 日本 */
		C("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""),          /* U+1F600 */
		C("\xf0\xb1\x8d\x90", "\"\xf0\xb1\x8d\x90\""),          /* U+31350, new in Unicode 15 */
		C("\xf3\xa0\x80\x81", "\"\\U000e0001\""),               /* language tag */
		C("\xf4\x8f\xbf\xbf", "\"\\U0010ffff\""),
		C("a\xffz\xe2\x82", "\"a\\xffz\\xe2\\x82\""),
#undef C
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = cbtfmt_quote_dup(cases[i].in, cases[i].len);

		assert_non_null(got);
		assert_string_equal(got, cases[i].want);
		free(got);
	}
}

static void test_cbtfmt__is_print_edges(void **state)
{
	(void)state;
	assert_false(gofmt_is_print(0x1F));
	assert_true(gofmt_is_print(' '));
	assert_true(gofmt_is_print('~'));
	assert_false(gofmt_is_print(0x7F));
	assert_false(gofmt_is_print(0x9F));
	assert_false(gofmt_is_print(0xA0));
	assert_true(gofmt_is_print(0xA1));
	assert_false(gofmt_is_print(0xAD));
	assert_true(gofmt_is_print(0xFF));
	assert_true(gofmt_is_print(0x4E00));
	assert_false(gofmt_is_print(0xFFFE));
	assert_false(gofmt_is_print(0x10FFFF));
	/* The generated table is sorted and disjoint: binary search depends on it. */
	for (size_t i = 0; i < gofmt_print_nranges; i++) {
		assert_true(gofmt_print_ranges[i][0] <= gofmt_print_ranges[i][1]);
		if (i > 0)
			assert_true(gofmt_print_ranges[i - 1][1] + 1 < gofmt_print_ranges[i][0]);
	}
}

static void test_cbtfmt__rune_count_counts_bad_bytes_once(void **state)
{
	(void)state;
	assert_int_equal(gofmt_rune_count("", 0), 0);
	assert_int_equal(gofmt_rune_count("abc", 3), 3);
	assert_int_equal(gofmt_rune_count("\xc3\xa9t\xc3\xa9", 5), 3);
	assert_int_equal(gofmt_rune_count("\xf0\x9f\x98\x80", 4), 1);
	assert_int_equal(gofmt_rune_count("\xff\xfe", 2), 2);
	assert_int_equal(gofmt_rune_count("\xe2\x82", 2), 2);
	assert_int_equal(gofmt_rune_count("\xed\xa0\x80", 3), 3);
}

static void test_cbtfmt__time_layout_and_zones(void **state)
{
	char buf[CBTFMT_TIME_MAX];

	(void)state;
	use_tz("UTC");
	assert_string_equal(cbtfmt_time(buf, 0), "1970/01/01-00:00:00.000000");
	assert_string_equal(cbtfmt_time(buf, 1500000000123456), "2017/07/14-02:40:00.123456");
	assert_string_equal(cbtfmt_time(buf, 1000), "1970/01/01-00:00:00.001000");
	assert_string_equal(cbtfmt_time(buf, INT64_MAX), "294247/01/10-04:00:54.775807");
	use_tz("Asia/Kolkata");
	assert_string_equal(cbtfmt_time(buf, 0), "1970/01/01-05:30:00.000000");
	assert_string_equal(cbtfmt_time(buf, 9223372036854775000), "294247/01/10-09:30:54.775000");
	use_tz(":America/New_York");
	assert_string_equal(cbtfmt_time(buf, 2000), "1969/12/31-19:00:00.002000");
	assert_string_equal(cbtfmt_time(buf, 1500000000123456), "2017/07/13-22:40:00.123456");
	/* Where Go finds no zone file it uses UTC; glibc would parse these as POSIX rules. */
	use_tz("IST-5:30");
	assert_string_equal(cbtfmt_time(buf, 0), "1970/01/01-00:00:00.000000");
	use_tz("Nowhere/Bogus");
	assert_string_equal(cbtfmt_time(buf, 0), "1970/01/01-00:00:00.000000");
	use_tz("");
	assert_string_equal(cbtfmt_time(buf, 0), "1970/01/01-00:00:00.000000");
	use_tz("UTC");
}

static void test_cbtfmt__row_as_printrow(void **state)
{
	static const cs_cell cells[] = {
		{ .family = "cf1", .qualifier = { "a", 1 }, .ts = 1500000000123000, .value = { "hello", 5 } },
		{ .family = "cf1", .qualifier = { "a", 1 }, .ts = 0, .value = { "x\"y", 3 } },
		{ .family = "cf1", .qualifier = { "\xc3\xa9t\xc3\xa9", 5 }, .ts = 0, .value = { "", 0 } },
		{ .family = "cf2", .qualifier = { "", 0 }, .ts = 1000, .value = { "\xff", 1 } },
		{ .family = "cf2",
		  .qualifier = { "a-qualifier-well-over-forty-runes-long-for-sure", 47 },
		  .ts = 0,
		  .value = { "v", 1 } },
	};
	const cs_row row = { .key = { "r#1", 3 }, .ncells = 5, .cells = cells };
	const unsigned mult[] = { 2, 1, 0, 1, 1 };
	struct capture c;

	(void)state;
	use_tz("UTC");
	cbtfmt_row(cap_open(&c), &row, NULL);
	assert_string_equal(cap_close(&c),
		"----------------------------------------\n"
		"r#1\n"
		"  cf1:a                                    @ 2017/07/14-02:40:00.123000\n"
		"    \"hello\"\n"
		"  cf1:a                                    @ 1970/01/01-00:00:00.000000\n"
		"    \"x\\\"y\"\n"
		"  cf1:\xc3\xa9t\xc3\xa9                                  @ 1970/01/01-00:00:00.000000\n"
		"    \"\"\n"
		"  cf2:                                     @ 1970/01/01-00:00:00.001000\n"
		"    \"\\xff\"\n"
		"  cf2:a-qualifier-well-over-forty-runes-long-for-sure @ 1970/01/01-00:00:00.000000\n"
		"    \"v\"\n"
		"\n");
	free(c.buf);

	cbtfmt_row(cap_open(&c), &(cs_row){ .key = { "k", 1 }, .ncells = 2, .cells = cells }, mult);
	assert_string_equal(cap_close(&c),
		"----------------------------------------\n"
		"k\n"
		"  cf1:a                                    @ 2017/07/14-02:40:00.123000\n"
		"    \"hello\"\n"
		"  cf1:a                                    @ 2017/07/14-02:40:00.123000\n"
		"    \"hello\"\n"
		"  cf1:a                                    @ 1970/01/01-00:00:00.000000\n"
		"    \"x\\\"y\"\n"
		"\n");
	free(c.buf);

	cbtfmt_empty_row(cap_open(&c));
	assert_string_equal(cap_close(&c), "----------------------------------------\n\n\n");
	free(c.buf);
}

/* `cbt read t include-stats=full` through the emulator: the block after the rows, byte for byte. */
static void test_cbtfmt__read_stats_as_cbt(void **state)
{
	struct capture c;

	(void)state;
	cbtfmt_read_stats(cap_open(&c), &(struct cbtfmt_read_stats){ 2, 1, 3, 1, 0 });
	assert_string_equal(cap_close(&c),
		"Summary Stats\n"
		"====================\n"
		"rows_seen_count: 2\n"
		"rows_returned_count: 1\n"
		"cells_seen_count: 3\n"
		"cells_returned_count: 1\n"
		"frontend_server_latency: 0ms\n"
		"\n");
	free(c.buf);
	cbtfmt_read_stats(cap_open(&c), &(struct cbtfmt_read_stats){ 0, 0, 0, 0, 1234 });
	assert_non_null(strstr(cap_close(&c), "\ncells_returned_count: 0\nfrontend_server_latency: 1234ms\n\n"));
	free(c.buf);
}

/* `cbt ls t2` through the emulator, byte for byte. */
static void test_cbtfmt__tabwriter_as_cbt_ls(void **state)
{
	static const char *const cells[] = {
		"Family Name", "GC Policy", "Value Type",
		"-----------", "---------", "----------",
		"a", "age() > 1d", "{}",
		"b", "(versions() > 3 || age() > 2h)", "{}",
		"c", "((age() > 10d && versions() > 1) || versions() > 5)", "{}",
		"d", "", "{}",
	};
	static const char *const small[] = {
		"Family Name", "GC Policy", "Value Type",
		"-----------", "---------", "----------",
		"x", "age() > 1d", "{}",
		"y", "", "{}",
	};
	struct capture c;

	(void)state;
	cbtfmt_tabwrite(cap_open(&c), cells, 6, 3);
	assert_string_equal(cap_close(&c),
		"Family Name\tGC Policy\t\t\t\t\t\tValue Type\n"
		"-----------\t---------\t\t\t\t\t\t----------\n"
		"a\t\tage() > 1d\t\t\t\t\t\t{}\n"
		"b\t\t(versions() > 3 || age() > 2h)\t\t\t\t{}\n"
		"c\t\t((age() > 10d && versions() > 1) || versions() > 5)\t{}\n"
		"d\t\t\t\t\t\t\t\t\t{}\n");
	free(c.buf);
	cbtfmt_tabwrite(cap_open(&c), small, 4, 3);
	assert_string_equal(cap_close(&c),
		"Family Name\tGC Policy\tValue Type\n"
		"-----------\t---------\t----------\n"
		"x\t\tage() > 1d\t{}\n"
		"y\t\t\t\t{}\n");
	free(c.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cbtfmt__quote_matches_go),
		cmocka_unit_test(test_cbtfmt__is_print_edges),
		cmocka_unit_test(test_cbtfmt__rune_count_counts_bad_bytes_once),
		cmocka_unit_test(test_cbtfmt__time_layout_and_zones),
		cmocka_unit_test(test_cbtfmt__row_as_printrow),
		cmocka_unit_test(test_cbtfmt__read_stats_as_cbt),
		cmocka_unit_test(test_cbtfmt__tabwriter_as_cbt_ls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
