/* test_keyviz.c — cellctl keyviz's analysis without a store: the segment classifiers (kzclass.h), table
 * driven, and the accumulator (keyviz.h) fed rows built in memory: distinct values estimated past the
 * exact cap, equal timestamps never read as a hotspot, numbers out of numeric order found in neighbours.
 * The rules on real tables are tests/cli/keyviz.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "keyviz.h"
#include "kzclass.h"

#define B(s) s, sizeof(s) - 1

static void test_kzclass__kinds(void **state)
{
	static const struct {
		const char *s;
		size_t n;
		enum kzc_kind kind;
		const char *unit;
	} cases[] = {
		{ B(""), KZC_EMPTY, "" },
		{ B("1426535612"), KZC_TIMESTAMP, "epoch s" },
		{ B("1426535612156"), KZC_TIMESTAMP, "epoch ms" },
		{ B("1426535612156000"), KZC_TIMESTAMP, "epoch us" },
		{ B("1426535612156000000"), KZC_TIMESTAMP, "epoch ns" },
		{ B("20150301"), KZC_TIMESTAMP, "yyyymmdd" },
		{ B("20150301124501001"), KZC_TIMESTAMP, "yyyymmddhh..." },
		{ B("2015-03-01"), KZC_TIMESTAMP, "iso-8601" },
		{ B("2015-03-01T12:45:01Z"), KZC_TIMESTAMP, "iso-8601" },
		{ B("9223370610319163651"), KZC_REVTS, "epoch ms" },  /* Long.MAX - 1426535612156 */
		{ B("9221945501242619807"), KZC_REVTS, "epoch us" },  /* Long.MAX - 1426535612156000 */
		{ B("20151301"), KZC_NUMBER, "" },    /* month 13: not a date */
		{ B("20150230"), KZC_NUMBER, "" },    /* February 30th */
		{ B("2015-02-29"), KZC_TEXT, "" },    /* 2015 is not a leap year */
		{ B("0"), KZC_NUMBER, "" },
		{ B("42"), KZC_NUMBER, "" },
		{ B("0000987654"), KZC_PADDED, "" },
		{ B("123456789012345678901234"), KZC_NUMBER, "" }, /* beyond 19 digits: still a number */
		{ B("4c410523"), KZC_HEX, "" },
		{ B("d41d8cd98f00b204e9800998ecf8427e"), KZC_HEX, "" },
		{ B("D41D8CD98F00B204"), KZC_HEX, "" },
		{ B("d41D8cd9"), KZC_TEXT, "" },      /* mixed case: not hex */
		{ B("beef"), KZC_TEXT, "" },          /* too short */
		{ B("maps.google.com"), KZC_DOMAIN, "" },
		{ B("server1.bbb.com"), KZC_DOMAIN, "" },
		{ B("com.google.maps"), KZC_RDOMAIN, "" },
		{ B("10.0.0.1"), KZC_TEXT, "" },
		{ B("1B2M2Y8AsgTpgAmY7PhCfg=="), KZC_BASE64, "" },
		{ B("NASDAQ"), KZC_TEXT, "" },
		{ B("caf\xc3\xa9"), KZC_TEXT, "" },
		{ B("a\x00" "b"), KZC_BINARY, "" },
		{ B("\xff\xfe"), KZC_BINARY, "" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *unit = NULL;
		enum kzc_kind k = kzc_classify(cases[i].s, cases[i].n, &unit);
		if (k != cases[i].kind || strcmp(unit, cases[i].unit))
			fail_msg("case %zu (%s): kind %s unit \"%s\", want %s \"%s\"", i, cases[i].s, kzc_kind_name(k),
				 unit, kzc_kind_name(cases[i].kind), cases[i].unit);
	}
}

static void test_kzclass__timestamps_decode_to_microseconds(void **state)
{
	int64_t us = 0;
	(void)state;
	assert_true(kzc_timestamp(B("1426535612156"), &us, NULL));
	assert_int_equal(us, 1426535612156000);
	assert_true(kzc_timestamp(B("20150316"), &us, NULL));
	assert_int_equal(us, 1426464000000000); /* 2015-03-16T00:00:00Z */
	assert_true(kzc_timestamp(B("2015-03-16T20:33:32Z"), &us, NULL));
	assert_int_equal(us, 1426538012000000);
	assert_true(kzc_reversed_ts(B("9223370610319163651"), &us, NULL));
	assert_int_equal(us, 1426535612156000);
	assert_false(kzc_timestamp(B("946684799"), NULL, NULL)); /* 1999-12-31T23:59:59Z */
	assert_false(kzc_reversed_ts(B("9223372036854775807"), NULL, NULL)); /* ts 0 */
	assert_false(kzc_reversed_ts(B("7797836424436999807"), NULL, NULL)); /* Long.MAX - ns: not near it */
}

/* One row, one cell of TS holding LEN bytes, fed to Z. */
static void feed(struct kz *z, const char *key, int64_t ts, uint64_t len)
{
	cs_cell c = { .family = "cf", .qualifier = CS_BYTES("q", 1), .ts = ts, .value_len = len };
	cs_row r = { .key = CS_STR(key), .ncells = 1, .cells = &c };
	assert_int_equal(kz_add_row(z, &r), 0);
}

static struct kz *new_kz(void)
{
	struct kz_opts o = { .delim = '#', .row_size = KZ_DEFAULT_ROW_SIZE, .row_limit = KZ_DEFAULT_ROW_LIMIT,
			     .cell_size = KZ_DEFAULT_CELL_SIZE, .max_families = KZ_DEFAULT_MAX_FAMILIES };
	struct kz *z;
	assert_int_equal(kz_new(&o, &z), 0);
	return z;
}

static void test_keyviz__distinct_values_estimated_past_the_cap(void **state)
{
	const uint64_t n = 3 * KZ_EXACT_CAP;
	const struct kz_report *r;
	struct kz *z = new_kz();
	char key[64];
	(void)state;
	for (uint64_t i = 0; i < n; i++) {
		snprintf(key, sizeof key, "k%08llu#x", (unsigned long long)i);
		feed(z, key, 1, 1);
	}
	assert_int_equal(kz_finish(z, &r), 0);
	assert_int_equal(r->rows, n);
	assert_false(r->depths[0].distinct_exact);
	assert_true(r->depths[0].distinct > n * 95 / 100 && r->depths[0].distinct < n * 105 / 100);
	assert_true(r->depths[1].distinct_exact);
	assert_int_equal(r->depths[1].distinct, 1);
	kz_free(z);
}

/* Equal timestamps say nothing about the order of writes: ties are broken by a hash, not by key. */
static void test_keyviz__equal_timestamps_are_no_hotspot(void **state)
{
	const struct kz_report *r;
	struct kz *z = new_kz();
	char key[64];
	(void)state;
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof key, "%lld#s", 1426535612156LL + i);
		feed(z, key, 7, 1);
	}
	assert_int_equal(kz_finish(z, &r), 0);
	assert_int_equal(r->writes.window, 50);
	assert_int_equal(r->writes.region, 50);
	assert_true(r->writes.in_last < 10);
	/* the keys still start with a timestamp: the finding stands, with its numbers */
	assert_int_equal(r->nfindings, 1);
	assert_int_equal(r->findings[0].rule, KZ_TIMESTAMP_FIRST);
	kz_free(z);
}

/* "10" before "9" is found between neighbours sharing the segments before it, not across parents. */
static void test_keyviz__unpadded_numbers_need_a_common_parent(void **state)
{
	static const char *const keys[] = { "a#10", "b#9", "c#100", "c#99" };
	const struct kz_report *r;
	struct kz *z = new_kz();
	(void)state;
	for (size_t i = 0; i < 4; i++)
		feed(z, keys[i], 1, 1);
	assert_int_equal(kz_finish(z, &r), 0);
	assert_int_equal(r->nfindings, 1);
	assert_int_equal(r->findings[0].rule, KZ_UNPADDED_NUMBERS);
	assert_int_equal(r->findings[0].numbers[2].value, 1); /* out_of_order */
	assert_int_equal(r->findings[0].nexamples, 2);
	assert_memory_equal(r->findings[0].examples[0].row.data, "c#100", 5);
	assert_memory_equal(r->findings[0].examples[1].row.data, "c#99", 4);
	kz_free(z);
}

static void test_keyviz__sizes_against_thresholds(void **state)
{
	struct kz_opts o = { .delim = '#', .row_size = 100, .row_limit = 1000, .cell_size = 100, .max_families = 1 };
	const struct kz_report *r;
	struct kz *z;
	(void)state;
	assert_int_equal(kz_new(&o, &z), 0);
	feed(z, "small", 1, 10);
	feed(z, "big", 1, 101);    /* over row-size, and a cell over cell-size */
	feed(z, "near", 1, 800);   /* 80% of row-limit */
	feed(z, "edge", 1, 100);   /* exactly row-size and cell-size: not over */
	assert_int_equal(kz_finish(z, &r), 0);
	assert_int_equal(r->nfindings, 3);
	assert_int_equal(r->findings[0].rule, KZ_ROW_SIZE);
	assert_int_equal(r->findings[0].numbers[0].value, 2);
	assert_int_equal(r->findings[1].rule, KZ_ROW_LIMIT);
	assert_int_equal(r->findings[1].numbers[0].value, 1);
	assert_int_equal(r->findings[2].rule, KZ_CELL_SIZE);
	assert_int_equal(r->findings[2].numbers[0].value, 2);
	assert_string_equal(r->findings[2].examples[0].column, "cf:q");
	kz_free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kzclass__kinds),
		cmocka_unit_test(test_kzclass__timestamps_decode_to_microseconds),
		cmocka_unit_test(test_keyviz__distinct_values_estimated_past_the_cap),
		cmocka_unit_test(test_keyviz__equal_timestamps_are_no_hotspot),
		cmocka_unit_test(test_keyviz__unpadded_numbers_need_a_common_parent),
		cmocka_unit_test(test_keyviz__sizes_against_thresholds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
