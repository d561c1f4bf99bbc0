/* test_codec.c — cell records: values round-trip raw or zstd-compressed at every size that matters, the
 * length is known from the header alone, and malformed records are -EIO, never a crash. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

enum fill { ZEROS, TEXT, RANDOM };

static uint8_t *make_value(size_t n, enum fill fill, uint64_t seed)
{
	static const char words[] = "the quick brown fox jumps over the lazy dog #row#key ";
	uint8_t *v = tu_filled(n, 0);
	if (fill == TEXT)
		for (size_t i = 0; i < n; i++)
			v[i] = (uint8_t)words[i % (sizeof(words) - 1)];
	else if (fill == RANDOM)
		tu_rand_bytes(&seed, v, n, 0);
	return v;
}

/* Encode, check the header, decode, compare; returns the record's kind. */
static int roundtrip(const uint8_t *v, size_t n, uint64_t seq, void **scratch, size_t *cap)
{
	const void *rec, *out;
	size_t recn, outn;
	void *owned;
	codec_hdr h;

	assert_int_equal(codec_encode(v, n, seq, scratch, cap, &rec, &recn), 0);
	assert_true(rec != (const void *)v);
	assert_int_equal(codec_header(rec, recn, &h), 0);
	assert_true(h.rawlen == n); /* the length, without decompressing */
	assert_true(h.seq == seq);
	assert_true(h.hdrlen < recn || (h.kind == CODEC_RAW && n == 0));
	assert_int_equal(codec_decode(rec, recn, &out, &outn, &owned), 0);
	assert_int_equal(outn, n);
	if (n)
		assert_memory_equal(out, v, n);
	if (h.kind == CODEC_RAW) {
		assert_null(owned); /* raw values are read in place */
		assert_true((const uint8_t *)out == (const uint8_t *)rec + h.hdrlen);
		assert_int_equal(recn, h.hdrlen + n);
	} else {
		assert_true(out == owned);
		assert_true(recn < n);
	}
	free(owned);
	return h.kind;
}

static void test_codec__roundtrip_sizes(void **state)
{
	static const struct {
		size_t n;
		enum fill fill;
		int kind; /* what the record must be */
	} cases[] = {
		{ 0, ZEROS, CODEC_RAW },
		{ 1, ZEROS, CODEC_RAW },
		{ 1, RANDOM, CODEC_RAW },
		{ 2, TEXT, CODEC_RAW },
		{ 127, ZEROS, CODEC_RAW }, /* tiny values stay raw however well they compress */
		{ 127, TEXT, CODEC_RAW },
		{ 128, ZEROS, CODEC_ZSTD },
		{ 128, TEXT, CODEC_ZSTD },
		{ 128, RANDOM, CODEC_RAW }, /* incompressible: raw */
		{ 129, ZEROS, CODEC_ZSTD },
		{ 4096, TEXT, CODEC_ZSTD },
		{ 4096, RANDOM, CODEC_RAW },
		{ 1 << 20, RANDOM, CODEC_RAW },
		{ 1 << 20, TEXT, CODEC_ZSTD },
		{ 10 << 20, ZEROS, CODEC_ZSTD },
		{ 10 << 20, TEXT, CODEC_ZSTD },
	};
	void *scratch = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		uint8_t *v = make_value(cases[i].n, cases[i].fill, i);
		int kind = roundtrip(v, cases[i].n, 1000 + i, &scratch, &cap);
		if (kind != cases[i].kind)
			fail_msg("case %zu (%zu bytes): kind %d, want %d", i, cases[i].n, kind, cases[i].kind);
		free(v);
	}
	free(scratch);
}

/* 10 MiB that compress well make a small record whose header alone says 10 MiB. */
static void test_codec__value_len_known_without_decoding(void **state)
{
	const size_t n = 10 << 20;
	uint8_t *v = make_value(n, TEXT, 0);
	void *scratch = NULL;
	size_t cap = 0, recn;
	const void *rec;
	codec_hdr h;

	assert_int_equal(codec_encode(v, n, 5, &scratch, &cap, &rec, &recn), 0);
	assert_true(recn < n / 100);
	assert_int_equal(codec_header(rec, recn, &h), 0);
	assert_int_equal(h.kind, CODEC_ZSTD);
	assert_int_equal(h.rawlen, n);
	free(scratch);
	free(v);
}

static void test_codec__sequences_roundtrip(void **state)
{
	static const uint64_t seqs[] = { 0, 1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)1 << 63, UINT64_MAX };
	uint8_t *big = make_value(300, TEXT, 0);
	void *scratch = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < TU_ARRAY_SIZE(seqs); i++) {
		assert_int_equal(roundtrip((const uint8_t *)"v", 1, seqs[i], &scratch, &cap), CODEC_RAW);
		assert_int_equal(roundtrip(big, 300, seqs[i], &scratch, &cap), CODEC_ZSTD);
	}
	free(scratch);
	free(big);
}

/* The scratch buffer is reused and grows as needed; a record never points into the caller's value. */
static void test_codec__scratch_reused_and_grown(void **state)
{
	uint8_t *big = make_value(100000, RANDOM, 3);
	void *scratch = NULL;
	size_t cap = 0, recn;
	const void *rec;

	assert_int_equal(codec_encode("ab", 2, 1, &scratch, &cap, &rec, &recn), 0);
	assert_non_null(scratch);
	assert_true(cap >= recn);
	assert_int_equal(codec_encode(big, 100000, 1, &scratch, &cap, &rec, &recn), 0);
	assert_true(cap >= 100000);
	assert_true(rec >= scratch && (const uint8_t *)rec + recn <= (uint8_t *)scratch + cap);
	void *before = scratch;
	size_t before_cap = cap;
	assert_int_equal(codec_encode("ab", 2, 1, &scratch, &cap, &rec, &recn), 0);
	assert_true(scratch == before && cap == before_cap);
	free(scratch);
	free(big);
}

static void test_codec__varint_roundtrip(void **state)
{
	static const struct {
		uint64_t v;
		size_t len;
	} cases[] = {
		{ 0, 1 }, { 1, 1 }, { 127, 1 }, { 128, 2 }, { 16383, 2 }, { 16384, 3 },
		{ UINT32_MAX, 5 }, { (uint64_t)1 << 63, 10 }, { UINT64_MAX, 10 },
	};
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		uint8_t buf[10];
		uint64_t v;
		size_t n = codec_put_varint(buf, cases[i].v);
		assert_int_equal(n, cases[i].len);
		assert_int_equal(codec_get_varint(buf, n, &v), (int)n);
		assert_true(v == cases[i].v);
		if (n > 1)
			assert_int_equal(codec_get_varint(buf, n - 1, &v), -EIO); /* truncated */
	}
	uint8_t endless[12];
	uint64_t v;
	memset(endless, 0x80, sizeof(endless));
	assert_int_equal(codec_get_varint(endless, sizeof(endless), &v), -EIO);
	assert_int_equal(codec_get_varint(endless, 0, &v), -EIO);
}

static void test_codec__header_rejects_malformed(void **state)
{
	static const struct {
		const char *name;
		const char *rec;
		size_t n;
	} cases[] = {
		{ "empty", "", 0 },
		{ "two bytes", "\x00\x01", 2 },
		{ "unknown kind", "\x02\x01\x00", 3 },
		{ "kind 0xff", "\xff\x01\x00", 3 },
		{ "raw, value shorter than said", "\x00\x01\x05" "abcd", 7 },
		{ "raw, value longer than said", "\x00\x01\x03" "abcd", 7 },
		{ "sequence never ends", "\x00\x80\x80\x80", 4 },
		{ "length never ends", "\x00\x01\x80\x80", 4 },
		{ "zstd without payload", "\x01\x01\x05", 3 },
		{ "zstd claiming 2 TiB", "\x01\x01\x80\x80\x80\x80\x80\x40zz", 10 },
		/* A zstd frame header agreeing with the record's claim: the length is bounded (zstd's densest
		 * ratio) before anything is allocated, so -EIO, never a 512 GiB malloc (fuzz_codec's corpus). */
		{ "zstd claiming 512 GiB from 17 bytes",
		  "\x01\x01\x80\x80\x80\x80\x80\x10" "\x28\xb5\x2f\xfd\xe0\x00\x00\x00\x00\x80\x00\x00\x00\x0b\x00\x02x", 25 },
	};
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		codec_hdr h;
		const void *val;
		size_t vn;
		void *owned = (void *)1;
		if (codec_header(cases[i].rec, cases[i].n, &h) != -EIO)
			fail_msg("%s: header accepted", cases[i].name);
		if (codec_decode(cases[i].rec, cases[i].n, &val, &vn, &owned) != -EIO || owned)
			fail_msg("%s: decoded", cases[i].name);
	}
}

/* A compressed record whose header and frame disagree, or whose frame is cut short, is -EIO. */
static void test_codec__decode_rejects_corrupt_zstd(void **state)
{
	uint8_t *v = make_value(5000, TEXT, 0), *bad;
	void *scratch = NULL, *owned;
	size_t cap = 0, recn, vn;
	const void *rec, *val;
	codec_hdr h;

	assert_int_equal(codec_encode(v, 5000, 1, &scratch, &cap, &rec, &recn), 0);
	assert_int_equal(codec_header(rec, recn, &h), 0);
	assert_int_equal(h.kind, CODEC_ZSTD);
	bad = malloc(recn + 16);
	assert_non_null(bad);

	/* The header says 4999 bytes (one varint byte shorter is impossible; rewrite it in place). */
	memcpy(bad, rec, recn);
	assert_int_equal(h.hdrlen, 1 + 1 + 2);
	bad[2] = (uint8_t)(4999 | 0x80);
	bad[3] = (uint8_t)(4999 >> 7);
	assert_int_equal(codec_decode(bad, recn, &val, &vn, &owned), -EIO);
	assert_null(owned);

	/* The frame is cut short. */
	for (size_t cut = 1; cut < recn - h.hdrlen; cut += (cut < 16 ? 1 : 7)) {
		memcpy(bad, rec, recn);
		assert_int_equal(codec_decode(bad, recn - cut, &val, &vn, &owned), -EIO);
		assert_null(owned);
	}

	/* Trailing garbage after the frame. */
	memcpy(bad, rec, recn);
	memset(bad + recn, 0xAA, 16);
	assert_int_equal(codec_decode(bad, recn + 16, &val, &vn, &owned), -EIO);

	/* Not a zstd frame at all. */
	memcpy(bad, rec, recn);
	memset(bad + h.hdrlen, 0x5A, recn - h.hdrlen);
	assert_int_equal(codec_decode(bad, recn, &val, &vn, &owned), -EIO);

	free(bad);
	free(scratch);
	free(v);
}

/* zstd failing: encoding falls back to a correct raw record; decoding is a clean -EIO. */
static void test_codec__zstd_failure(void **state)
{
	uint8_t *v = make_value(4096, TEXT, 0);
	void *scratch = NULL, *owned;
	size_t cap = 0, recn, vn;
	const void *rec, *val;
	codec_hdr h;

	cs_fault_arm(CS_FAULT_ZSTD, 1);
	assert_int_equal(codec_encode(v, 4096, 9, &scratch, &cap, &rec, &recn), 0);
	assert_true(cs_fault_fired());
	assert_int_equal(codec_header(rec, recn, &h), 0);
	assert_int_equal(h.kind, CODEC_RAW);
	assert_int_equal(codec_decode(rec, recn, &val, &vn, &owned), 0);
	assert_memory_equal(val, v, 4096);

	cs_fault_arm(0, 0);
	assert_int_equal(codec_encode(v, 4096, 9, &scratch, &cap, &rec, &recn), 0);
	assert_int_equal(codec_header(rec, recn, &h), 0);
	assert_int_equal(h.kind, CODEC_ZSTD);
	cs_fault_arm(CS_FAULT_ZSTD, 1);
	assert_int_equal(codec_decode(rec, recn, &val, &vn, &owned), -EIO);
	assert_true(cs_fault_fired());
	assert_null(owned);
	cs_fault_arm(0, 0);
	assert_int_equal(codec_decode(rec, recn, &val, &vn, &owned), 0); /* and fine again */
	assert_memory_equal(val, v, 4096);
	free(owned);
	free(scratch);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec__roundtrip_sizes),
		cmocka_unit_test(test_codec__value_len_known_without_decoding),
		cmocka_unit_test(test_codec__sequences_roundtrip),
		cmocka_unit_test(test_codec__scratch_reused_and_grown),
		cmocka_unit_test(test_codec__varint_roundtrip),
		cmocka_unit_test(test_codec__header_rejects_malformed),
		cmocka_unit_test(test_codec__decode_rejects_corrupt_zstd),
		cmocka_unit_test(test_codec__zstd_failure),
	};
	return cmocka_run_group_tests_name("codec", tests, NULL, NULL);
}
