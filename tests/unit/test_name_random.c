/* test_name_random.c — randomised round trips of fs/name (fixed seeds) in both directions: bytes ->
 * name -> bytes at every length up to the store's largest keys and qualifiers, and random names ->
 * canonical or ENOENT. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "name.h"
#include "nameutil.h"

/* splitmix64: a fixed-seed generator, so every run tests the same strings. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static size_t put_utf8(unsigned char *p, uint32_t cp)
{
	if (cp < 0x80) {
		p[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		p[0] = (unsigned char)(0xC0 | cp >> 6);
		p[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		p[0] = (unsigned char)(0xE0 | cp >> 12);
		p[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		p[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	p[0] = (unsigned char)(0xF0 | cp >> 18);
	p[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
	p[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
	p[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

/* N random bytes in one of several flavours: uniform; awkward bytes only; valid multibyte UTF-8 with
 * some damage (surrogates, overlongs, cut sequences, stray continuation bytes); mostly-ASCII text. */
static void random_bytes(uint64_t *s, unsigned char *b, size_t n)
{
	static const unsigned char awkward[] = { 0x00, 0xFF, '/', '%', '@', '.', '~', 0x80, 0xC3, 0xA9, 0xE2,
						 0xF0, 0xED, 0xF4, 0x7F, 0x1F, 'A', '#' };
	unsigned flavour = (unsigned)(rnd(s) % 4);
	size_t i = 0;

	while (i < n) {
		uint64_t r = rnd(s);
		unsigned char tmp[4];
		size_t k;

		switch (flavour) {
		case 0:
			b[i++] = (unsigned char)r;
			break;
		case 1:
			b[i++] = awkward[r % sizeof(awkward)];
			break;
		case 2:
			if (r % 10 == 0) { /* damage */
				static const char *const bad[] = { "\xed\xa0\x80", "\xc0\x80", "\xe0\x80\x80",
								   "\xf4\x90\x80\x80", "\xe2\x82", "\x80", "\xf0\x9f",
								   "\xc3" };
				const char *d = bad[(r >> 8) % NU_ARRAY_SIZE(bad)];
				k = strlen(d);
				memcpy(tmp, d, k);
			} else {
				static const uint32_t top[] = { 0x80, 0x800, 0x10000, 0x110000 };
				uint32_t cp = (uint32_t)((r >> 8) % top[(r >> 40) % 4]);
				if (cp >= 0xD800 && cp <= 0xDFFF)
					cp = 0xFFFD;
				k = put_utf8(tmp, cp);
			}
			k = k < n - i ? k : n - i; /* the last one may be cut */
			memcpy(b + i, tmp, k);
			i += k;
			break;
		default:
			b[i++] = r % 20 == 0 ? awkward[(r >> 8) % sizeof(awkward)] : (unsigned char)(0x20 + (r >> 8) % 95);
			break;
		}
	}
}

static size_t random_len(uint64_t *s)
{
	uint64_t r = rnd(s);

	switch (r % 4) {
	case 0:
		return (r >> 8) % 4;
	case 1:
		return (r >> 8) % 300;
	default:
		return (r >> 8) % 20001;
	}
}

static int64_t random_ts(uint64_t *s)
{
	uint64_t r = rnd(s);

	switch (r % 4) {
	case 0:
		return (int64_t)((r >> 8) % 1000);
	case 1:
		return (int64_t)((r >> 8) % INT64_C(10000000000000000)); /* 16 digits */
	case 2:
		return INT64_MAX - (int64_t)((r >> 8) % 1000);
	default:
		return (int64_t)(rnd(s) >> 1);
	}
}

static void test_name__random_round_trips(void **state)
{
	enum { ROUNDS = 3000 };
	static unsigned char b[20001];
	uint64_t seed = 20240611;
	size_t partials = 0;

	for (int round = 0; round < ROUNDS; round++) {
		size_t n = random_len(&seed);
		char out[NAME_BUFSZ];
		name_result res;

		random_bytes(&seed, b, n);
		if (round % 50 == 0) { /* now and then, exactly a family name */
			const char *f = nu_families[rnd(&seed) % 5];
			n = strlen(f);
			memcpy(b, f, n);
		}
		partials += nu_round_trip(NAME_QUALIFIER, &nu_ctx, b, n, out);
		partials += nu_round_trip_version(b, n, random_ts(&seed), out);
		for (size_t i = 0; i < n; i++)
			if (b[i] == '#')
				b[i] = '+';
		if (nu_round_trip(NAME_SEGMENT, &nu_ctx, b, n, out)) {
			partials++;
			assert_int_equal(name_decode(NAME_SEGMENT, out, &nu_ctx, &res), 0);
			/* one byte changed past the prefix: FNV-1a differs for equal lengths, always */
			size_t at = res.len + (size_t)(rnd(&seed) % (n - res.len));
			unsigned char old = b[at];
			do
				b[at] = (unsigned char)rnd(&seed);
			while (b[at] == old || b[at] == '#');
			assert_false(name_match(&res, &nu_ctx, b, n));
			assert_false(name_match(&res, &nu_ctx, b, n - 1));
			assert_false(name_match(&res, &nu_ctx, b, res.len));
		}
	}
	/* the mix really exercised short forms */
	assert_true(partials > ROUNDS);
}

/* The store's largest keys and qualifiers, arbitrary bytes, through the short form. */
static void test_name__largest_segments_and_qualifiers_round_trip(void **state)
{
	static unsigned char b[16384];
	uint64_t seed = 4096;

	for (int round = 0; round < 50; round++) {
		char out[NAME_BUFSZ];
		name_result res;

		random_bytes(&seed, b, sizeof(b));
		assert_true(nu_round_trip(NAME_QUALIFIER, &nu_ctx, b, 16384, out));
		assert_true(nu_round_trip_version(b, 16384, random_ts(&seed), out));
		assert_int_equal(name_decode_version(out, &res, &(int64_t){ 0 }), 0);
		assert_true(res.partial);
		b[16383] ^= 1;
		assert_false(name_match(&res, NULL, b, 16384));
		for (size_t i = 0; i < 4096; i++)
			if (b[i] == '#')
				b[i] = '$';
		assert_true(nu_round_trip(NAME_SEGMENT, &nu_ctx, b, 4096, out));
		assert_int_equal(name_decode(NAME_SEGMENT, out, &nu_ctx, &res), 0);
		b[4095] ^= 2;
		if (b[4095] == '#')
			b[4095] ^= 4;
		assert_false(name_match(&res, &nu_ctx, b, 4096));
	}
}

/* Random names made of the pieces names are made of: each one decodes to bytes whose name it is
 * exactly, or is -ENOENT. Never anything else, never accepted while naming something else. */
static void test_name__random_names_are_canonical_or_enoent(void **state)
{
	static const char *const pieces[] = { "%", "%2E", "%25", "%41", "%4D", "%4d", "%FF", "%C3", "%A9", "\xc3",
					      "\xa9", "\xff", ".", "..", "@", "/", "a", "M", "D", "~", "%~", "#",
					      "%23", "%40", "%00", "\x01", "0", "00000000", "\xe2\x82\xac", "F" };
	uint64_t seed = 255;
	size_t accepted = 0, tried = 0;

	for (int round = 0; round < 200000; round++) {
		char name[NAME_MAX + 1], out[NAME_BUFSZ];
		size_t len = 0, npieces = 1 + rnd(&seed) % 8;
		name_result res;
		int64_t ts;

		for (size_t p = 0; p < npieces; p++) {
			const char *piece = pieces[rnd(&seed) % NU_ARRAY_SIZE(pieces)];
			memcpy(name + len, piece, strlen(piece));
			len += strlen(piece);
		}
		if (rnd(&seed) % 3 == 0) {
			snprintf(name + len, sizeof(name) - len, "@%016" PRIu64, rnd(&seed) % 100000);
			len = strlen(name);
		}
		name[len] = '\0';
		for (int k = NAME_TABLE; k <= NAME_QUALIFIER; k++) {
			int rc = name_decode((enum name_kind)k, name, &nu_ctx, &res);
			tried++;
			if (rc == -ENOENT)
				continue;
			assert_int_equal(rc, 0);
			assert_false(res.partial);
			assert_true(name_encode((enum name_kind)k, res.bytes, res.len, &nu_ctx, out, sizeof(out)) > 0);
			if (strcmp(out, name) != 0)
				fail_msg("%s \"%s\" accepted, but its bytes are named \"%s\"", nu_kind_str(k), name, out);
			accepted++;
		}
		int rc = name_decode_version(name, &res, &ts);
		if (rc == 0) {
			assert_int_equal(name_encode_version(res.bytes, res.len, ts, out, sizeof(out)) > 0, 1);
			if (strcmp(out, name) != 0)
				fail_msg("version \"%s\" accepted, but its cell is named \"%s\"", name, out);
			accepted++;
		} else {
			assert_int_equal(rc, -ENOENT);
		}
	}
	/* enough of both outcomes to mean something */
	assert_true(accepted > tried / 20 && accepted < tried / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name__random_round_trips),
		cmocka_unit_test(test_name__largest_segments_and_qualifiers_round_trip),
		cmocka_unit_test(test_name__random_names_are_canonical_or_enoent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

