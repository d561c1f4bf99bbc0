/* test_bt_samples.c — the row-key sample list (store/bigtable/bt_samples.h) on lists made by hand: the
 * bound of a key range under both servers' conventions (real Bigtable's end marker, the emulator's last
 * row), ranges before, between, on and after samples, open ends, empty tables, what a server may send
 * out of order or twice, and a simulated table whose every range's bound is at least its bytes.
 * Links bt_samples.c alone (BT_SAMPLES_LIST_ONLY): no gRPC, no emulator (suite unit). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bt_samples.h"

struct in {
	const char *key; /* "" the end marker */
	int64_t offset;
};

static struct bt_samples *make(const struct in *v, size_t n)
{
	struct bt_sample *s = calloc(n ? n : 1, sizeof(*s));
	struct bt_samples *out = NULL;
	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		s[i] = (struct bt_sample){ v[i].key, strlen(v[i].key), v[i].offset };
	assert_int_equal(bt_samples_new(s, n, 1234, &out), 0);
	free(s);
	assert_non_null(out);
	return out;
}

/* The bound of [LO, HI): NULL for an open end. */
static uint64_t bound(const struct bt_samples *s, const char *lo, const char *hi)
{
	uint64_t b = 12345;
	assert_int_equal(bt_samples_bound(s, lo, lo ? strlen(lo) : 0, hi, hi ? strlen(hi) : 0, &b), 0);
	return b;
}

struct range_case {
	const char *lo, *hi;
	uint64_t want;
};

static void check_cases(const struct bt_samples *s, const struct range_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t got = bound(s, c[i].lo, c[i].hi);
		if (got != c[i].want)
			fail_msg("[%s, %s): bound %llu, want %llu", c[i].lo ? c[i].lo : "(start)",
				 c[i].hi ? c[i].hi : "(end)", (unsigned long long)got, (unsigned long long)c[i].want);
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_bt_samples__empty_table_is_zero(void **state)
{
	(void)state;
	struct bt_samples *s = make(NULL, 0);
	static const struct range_case c[] = {
		{ NULL, NULL, 0 }, { "a", NULL, 0 }, { NULL, "z", 0 }, { "a", "z", 0 },
	};
	check_cases(s, c, N(c));
	assert_int_equal(bt_samples_count(s), 0);
	assert_false(bt_samples_has_end(s));
	bt_samples_put(s);
	/* real Bigtable's empty table: the end marker alone, at 0 */
	static const struct in end0[] = { { "", 0 } };
	s = make(end0, 1);
	check_cases(s, c, N(c));
	assert_true(bt_samples_has_end(s));
	assert_int_equal(bt_samples_count(s), 0);
	bt_samples_put(s);
}

/* Real Bigtable: samples split the table, the last is "" at the table's size. */
static void test_bt_samples__end_marker_convention(void **state)
{
	(void)state;
	static const struct in v[] = { { "b", 100 }, { "d", 300 }, { "f", 600 }, { "", 1000 } };
	struct bt_samples *s = make(v, N(v));
	static const struct range_case c[] = {
		{ NULL, NULL, 1000 },  /* the whole table */
		{ "a", NULL, 1000 },   /* lo before every sample */
		{ "b", NULL, 900 },    /* lo on a sample */
		{ "c", NULL, 900 },    /* lo between: from the sample before */
		{ "f", NULL, 400 },    /* lo on the last */
		{ "g", NULL, 400 },    /* lo after every sample: to the end marker */
		{ NULL, "a", 100 },    /* hi before every sample: to the first */
		{ NULL, "b", 100 },    /* hi on a sample */
		{ NULL, "c", 300 },    /* hi between: to the sample after */
		{ "b", "d", 200 },     /* on, on */
		{ "c", "e", 500 },     /* between, between */
		{ "bb", "c", 200 },    /* both in one gap */
		{ "a", "b", 100 },     /* before the first */
		{ "g", "h", 400 },     /* after the last */
		{ "f", "", 400 },      /* an empty end key is no end */
		{ "d", "d", 0 },       /* empty ranges */
		{ "e", "c", 0 },
		{ "b", "ba", 200 },    /* a short range from a sample: that sample's gap */
	};
	check_cases(s, c, N(c));
	assert_true(bt_samples_has_end(s));
	assert_int_equal(bt_samples_size(s), 1000);
	assert_int_equal(bt_samples_count(s), 3); /* (the marker is not a split point) */
	bt_samples_put(s);
}

/* The emulator: rows at random and the last row, each at the bytes before it; no end marker. Beyond the
 * last sample the bound adds the largest gap (the first from 0), at least BT_SAMPLES_TAIL_MIN. */
static void test_bt_samples__last_row_convention(void **state)
{
	(void)state;
	static const struct in v[] = { { "r010", 1000000 }, { "r050", 5000000 }, { "r099", 9900000 } };
	struct bt_samples *s = make(v, N(v));
	const uint64_t tail = 4900000; /* r050 -> r099 */
	const struct range_case c[] = {
		{ NULL, NULL, 9900000 + tail },
		{ "r050", NULL, 4900000 + tail },
		{ "r099", NULL, tail },          /* lo on the last row: that row only */
		{ "r100", NULL, tail },          /* lo after every sample */
		{ "r050", "r099", 4900000 },     /* hi on the last row: excludes it */
		{ "r050", "r0990", 4900000 + tail }, /* hi after the last row: includes it */
		{ NULL, "r005", 1000000 },
		{ "r020", "r060", 8900000 },
	};
	check_cases(s, c, N(c));
	assert_false(bt_samples_has_end(s));
	assert_int_equal(bt_samples_size(s), 0);
	bt_samples_put(s);

	/* small gaps: the allowance is BT_SAMPLES_TAIL_MIN; a table of one row (its only sample at 0) */
	static const struct in w[] = { { "a", 100 }, { "b", 200 } };
	s = make(w, N(w));
	assert_int_equal(bound(s, NULL, NULL), 200 + BT_SAMPLES_TAIL_MIN);
	assert_int_equal(bound(s, "a", "b"), 100);
	bt_samples_put(s);
	static const struct in one[] = { { "only", 0 } };
	s = make(one, 1);
	assert_int_equal(bound(s, NULL, NULL), BT_SAMPLES_TAIL_MIN);
	assert_int_equal(bound(s, NULL, "only"), 0);
	assert_int_equal(bound(s, "only", NULL), BT_SAMPLES_TAIL_MIN);
	bt_samples_put(s);
}

/* What a server might send: out of order, a key twice, offsets going down or negative, two end markers,
 * keys with NUL and 0xff bytes. The list is sorted, each key once, offsets never go down. */
static void test_bt_samples__sorted_and_sane_whatever_is_sent(void **state)
{
	(void)state;
	static const struct in v[] = {
		{ "", 900 }, { "m", 500 }, { "c", -5 }, { "m", 400 }, { "x", 450 }, { "", 1000 }, { "e", 200 },
	};
	struct bt_samples *s = make(v, N(v));
	assert_int_equal(bt_samples_count(s), 4);
	static const char *const keys[] = { "c", "e", "m", "x" };
	static const uint64_t offs[] = { 0, 200, 400, 450 };
	for (size_t i = 0; i < 4; i++) {
		size_t n;
		const uint8_t *k = bt_samples_key(s, i, &n);
		assert_int_equal(n, strlen(keys[i]));
		assert_memory_equal(k, keys[i], n);
		assert_int_equal(bt_samples_offset(s, i), offs[i]);
	}
	assert_int_equal(bt_samples_size(s), 1000);
	assert_int_equal(bound(s, NULL, NULL), 1000);
	bt_samples_put(s);

	/* bytes, not strings: "a\0b" sorts after "a" and before "a\1"; 0xff after everything */
	struct bt_sample raw[] = {
		{ "\xff", 1, 300 }, { "a\0b", 3, 100 }, { "a", 1, 50 }, { "a\1", 2, 200 },
	};
	s = NULL;
	assert_int_equal(bt_samples_new(raw, 4, 0, &s), 0);
	size_t n;
	const uint8_t *k = bt_samples_key(s, 1, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(k, "a\0b", 3);
	uint64_t b;
	assert_int_equal(bt_samples_bound(s, "a\0", 2, "a\1", 2, &b), 0);
	assert_int_equal(b, 200 - 50);
	bt_samples_put(s);
	bt_samples_put(NULL);

	/* protobuf-c gives an empty bytes field as NULL, 0: the end marker */
	struct bt_sample marker[] = { { "m", 1, 10 }, { NULL, 0, 70 } };
	s = NULL;
	assert_int_equal(bt_samples_new(marker, 2, 0, &s), 0);
	assert_true(bt_samples_has_end(s));
	assert_int_equal(bt_samples_count(s), 1);
	assert_int_equal(bt_samples_bound(s, "m", 1, NULL, 0, &b), 0);
	assert_int_equal(b, 60);
	bt_samples_put(s);
}

/* The keys are copies: the caller's buffers may go; references count. */
static void test_bt_samples__keys_are_copies_and_refs_count(void **state)
{
	(void)state;
	char buf[8] = "key";
	struct bt_sample one = { buf, 3, 10 };
	struct bt_samples *s = NULL;
	assert_int_equal(bt_samples_new(&one, 1, 77, &s), 0);
	memset(buf, 'z', sizeof(buf));
	size_t n;
	assert_memory_equal(bt_samples_key(s, 0, &n), "key", 3);
	assert_int_equal(bt_samples_fetched_ms(s), 77);
	assert_ptr_equal(bt_samples_ref(s), s);
	bt_samples_put(s);
	assert_memory_equal(bt_samples_key(s, 0, &n), "key", 3); /* still held */
	bt_samples_put(s);
}

/* A simulated table: rows of random sizes (under BT_SAMPLES_TAIL_MIN, as a row past the last sample must
 * be for the emulator's convention), sampled both ways; the bound of many ranges, their ends on rows,
 * between them, before and after all, is never below the bytes of the rows inside. */
#define SIM_ROWS 3000

static uint64_t rng_state = 42;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_bt_samples__bound_covers_a_simulated_table(void **state)
{
	(void)state;
	static char keys[SIM_ROWS][8];
	static uint64_t size[SIM_ROWS], before[SIM_ROWS + 1];
	static struct bt_sample emu[SIM_ROWS], real[SIM_ROWS + 1];
	size_t ne = 0, nr = 0;
	uint64_t since = 0;

	for (int i = 0; i < SIM_ROWS; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%05d", i * 2); /* odd numbers fall between rows */
		size[i] = 1 + rnd() % (rnd() % 8 ? 2000 : 60000);
		before[i + 1] = before[i] + size[i];
	}
	for (int i = 0; i < SIM_ROWS; i++) {
		if (i == SIM_ROWS - 1 || rnd() % 100 == 0)
			emu[ne++] = (struct bt_sample){ keys[i], 6, (int64_t)before[i] };
		if (since >= 200000) { /* about every 200 KB, as tablets split */
			real[nr++] = (struct bt_sample){ keys[i], 6, (int64_t)before[i] };
			since = 0;
		}
		since += size[i];
	}
	real[nr++] = (struct bt_sample){ "", 0, (int64_t)before[SIM_ROWS] };

	struct bt_samples *se = NULL, *sr = NULL;
	assert_int_equal(bt_samples_new(emu, ne, 0, &se), 0);
	assert_int_equal(bt_samples_new(real, nr, 0, &sr), 0);
	for (int t = 0; t < 20000; t++) {
		int a = (int)(rnd() % (2 * SIM_ROWS + 3)) - 1, b = a + (int)(rnd() % (2 * SIM_ROWS + 3));
		char lo[8], hi[8];
		snprintf(lo, sizeof(lo), "k%05d", a < 0 ? 0 : a);
		snprintf(hi, sizeof(hi), "k%05d", b);
		bool open_lo = a < 0, open_hi = b >= 2 * SIM_ROWS + 1;
		uint64_t want = 0;
		for (int i = 0; i < SIM_ROWS; i++)
			if ((open_lo || strcmp(keys[i], lo) >= 0) && (open_hi || strcmp(keys[i], hi) < 0))
				want += size[i];
		struct bt_samples *ss[] = { se, sr };
		for (int k = 0; k < 2; k++) {
			uint64_t got;
			assert_int_equal(bt_samples_bound(ss[k], open_lo ? NULL : lo, open_lo ? 0 : 6, open_hi ? NULL : hi,
							  open_hi ? 0 : 6, &got), 0);
			if (got < want)
				fail_msg("%s convention, [%s, %s): bound %llu below the %llu bytes there",
					 k ? "end marker" : "last row", open_lo ? "(start)" : lo, open_hi ? "(end)" : hi,
					 (unsigned long long)got, (unsigned long long)want);
		}
	}
	uint64_t whole;
	assert_int_equal(bt_samples_bound(sr, NULL, 0, NULL, 0, &whole), 0);
	assert_int_equal(whole, before[SIM_ROWS]);
	bt_samples_put(se);
	bt_samples_put(sr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bt_samples__empty_table_is_zero),
		cmocka_unit_test(test_bt_samples__end_marker_convention),
		cmocka_unit_test(test_bt_samples__last_row_convention),
		cmocka_unit_test(test_bt_samples__sorted_and_sane_whatever_is_sent),
		cmocka_unit_test(test_bt_samples__keys_are_copies_and_refs_count),
		cmocka_unit_test(test_bt_samples__bound_covers_a_simulated_table),
	};
	return cmocka_run_group_tests_name("bt_samples", tests, NULL, NULL);
}
