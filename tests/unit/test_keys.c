/* test_keys.c — the logical key layout: enc() round-trips any bytes, preserves bytewise order and is
 * prefix-free; cell keys sort by row, family, qualifier, then newest first; malformed keys are -EIO. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"

static int bytes_cmp(const void *a, size_t an, const void *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int r = n ? memcmp(a, b, n) : 0;
	return r ? r : (an > bn) - (an < bn);
}

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

static void test_keys__enc_roundtrip(void **state)
{
	static const struct {
		const char *s;
		size_t n;
	} cases[] = {
		{ "", 0 }, { "\0", 1 }, { "\0\0", 2 }, { "\xff", 1 }, { "\0\xff", 2 }, { "\xff\0", 2 },
		{ "\x01", 1 }, { "\0\x01", 2 }, { "#", 1 }, { "a#b#c", 5 }, { "row\0key", 7 },
	};
	uint8_t *out = malloc(2 * CS_MAX_QUALIFIER + 3), *dec = malloc(2 * CS_MAX_QUALIFIER + 2);
	uint64_t seed = 1;

	assert_non_null(out);
	assert_non_null(dec);
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases) + 40; i++) {
		const uint8_t *p;
		uint8_t *rnd = NULL;
		size_t n, dn = 99, en;

		if (i < TU_ARRAY_SIZE(cases)) {
			p = (const uint8_t *)cases[i].s;
			n = cases[i].n;
		} else { /* random, up to the qualifier limit; all-NUL and all-0xFF at the limit */
			n = i == TU_ARRAY_SIZE(cases) ? CS_MAX_QUALIFIER : tu_rand(&seed) % 600;
			p = rnd = tu_filled(n, i & 1 ? 0xFF : 0x00);
			if (i > TU_ARRAY_SIZE(cases) + 1)
				tu_rand_bytes(&seed, rnd, n, 1);
		}
		en = key_enc(out, p, n);
		assert_true(en >= n + 2 && en <= 2 * n + 2);
		assert_int_equal(key_dec(out, en, dec, &dn), (int)en);
		assert_int_equal(dn, n);
		if (n)
			assert_memory_equal(dec, p, n);
		/* Decoding stops at the terminator: what follows is not its business. */
		out[en] = 0x42;
		assert_int_equal(key_dec(out, en + 1, NULL, &dn), (int)en);
		assert_int_equal(dn, n);
		/* key_esc is enc without the terminator. */
		assert_int_equal(key_esc(dec, p, n), en - 2);
		assert_memory_equal(dec, out, en - 2);
		free(rnd);
	}
	free(out);
	free(dec);
}

/* Every string of up to 3 bytes over the bytes that matter, and random longer ones: enc() must order
 * exactly as the raw bytes do, never be a prefix of another enc(), and esc(p) must be a prefix of enc(k)
 * exactly when p is a prefix of k. */
static void test_keys__enc_preserves_order(void **state)
{
	static const uint8_t alpha[] = { 0x00, 0x01, 0x02, 0xFE, 0xFF };
	enum { NA = sizeof(alpha), MAXN = 3 };
	struct s {
		uint8_t b[64];
		size_t n;
		uint8_t e[130];
		size_t en;
	} *v;
	size_t nv = 0, cap = 1 + NA + NA * NA + NA * NA * NA + 300;
	uint64_t seed = 42;

	v = calloc(cap, sizeof(*v));
	assert_non_null(v);
	for (size_t len = 0; len <= MAXN; len++) {
		size_t count = 1;
		for (size_t i = 0; i < len; i++)
			count *= NA;
		for (size_t c = 0; c < count; c++) {
			size_t x = c;
			for (size_t i = 0; i < len; i++, x /= NA)
				v[nv].b[i] = alpha[x % NA];
			v[nv++].n = len;
		}
	}
	while (nv < cap) {
		v[nv].n = tu_rand(&seed) % 64;
		tu_rand_bytes(&seed, v[nv].b, v[nv].n, 1);
		nv++;
	}
	for (size_t i = 0; i < nv; i++)
		v[i].en = key_enc(v[i].e, v[i].b, v[i].n);
	for (size_t i = 0; i < nv; i++) {
		for (size_t j = 0; j < nv; j++) {
			uint8_t esc[130];
			size_t escn;
			bool is_prefix;
			if (sign(bytes_cmp(v[i].b, v[i].n, v[j].b, v[j].n)) != sign(bytes_cmp(v[i].e, v[i].en, v[j].e, v[j].en)))
				fail_msg("pair %zu/%zu: enc() changes the order", i, j);
			if (i != j && v[i].en < v[j].en && !memcmp(v[i].e, v[j].e, v[i].en) &&
			    bytes_cmp(v[i].b, v[i].n, v[j].b, v[j].n))
				fail_msg("pair %zu/%zu: enc() is a prefix of another", i, j);
			escn = key_esc(esc, v[i].b, v[i].n);
			is_prefix = v[i].n <= v[j].n && !memcmp(v[i].b, v[j].b, v[i].n);
			if (is_prefix != (escn <= v[j].en && !memcmp(esc, v[j].e, escn)))
				fail_msg("pair %zu/%zu: esc() prefix test disagrees", i, j);
		}
	}
	free(v);
}

static void test_keys__dec_rejects_malformed(void **state)
{
	static const struct {
		const char *s;
		size_t n;
	} bad[] = {
		{ "", 0 },            /* nothing */
		{ "abc", 3 },         /* no terminator */
		{ "abc\0", 4 },       /* NUL at the end */
		{ "\0", 1 },
		{ "a\0\x02", 3 },     /* NUL followed by neither 0x01 nor 0xFF */
		{ "a\0\0\x01", 4 },
		{ "a\0\xff", 3 },     /* escaped NUL, then nothing */
		{ "\0\xff\0", 3 },
	};
	for (size_t i = 0; i < TU_ARRAY_SIZE(bad); i++) {
		uint8_t out[8];
		size_t n;
		if (key_dec((const uint8_t *)bad[i].s, bad[i].n, out, &n) != -EIO)
			fail_msg("case %zu decoded", i);
		if (key_dec((const uint8_t *)bad[i].s, bad[i].n, NULL, &n) != -EIO)
			fail_msg("case %zu measured", i);
	}
}

static void test_keys__integers_big_endian(void **state)
{
	uint8_t b[8];
	key_put_u32(b, 0x01020304u);
	assert_memory_equal(b, "\x01\x02\x03\x04", 4);
	assert_int_equal(key_get_u32(b), 0x01020304u);
	key_put_u64(b, 0x0102030405060708ull);
	assert_memory_equal(b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	assert_true(key_get_u64(b) == 0x0102030405060708ull);
	key_put_u64(b, UINT64_MAX);
	assert_true(key_get_u64(b) == UINT64_MAX);
}

struct cell {
	uint8_t *row, *q;
	size_t rn, qn;
	const char *fam;
	int64_t ts;
	uint8_t *k;
	size_t kn;
};

static int cell_model_cmp(const void *x, const void *y)
{
	const struct cell *a = x, *b = y;
	int r = bytes_cmp(a->row, a->rn, b->row, b->rn);
	if (!r)
		r = strcmp(a->fam, b->fam);
	if (!r)
		r = bytes_cmp(a->q, a->qn, b->q, b->qn);
	if (!r)
		r = (a->ts < b->ts) - (a->ts > b->ts); /* newest first */
	return r;
}

static int cell_key_cmp(const void *x, const void *y)
{
	const struct cell *a = x, *b = y;
	return bytes_cmp(a->k, a->kn, b->k, b->kn);
}

/* Sorting the keys bytewise gives the model's order: row, family name, qualifier, newest first. */
static void test_keys__cell_keys_sort_as_the_model(void **state)
{
	static const char *fams[] = { "a", "ab", "a-", "a.", "b", "Z", "_", "a0" };
	static const int64_t tss[] = { 0, 1, 255, 256, 1700000000000000, INT64_MAX - 1, INT64_MAX };
	enum { N = 3000 };
	struct cell *c = calloc(N, sizeof(*c)), *d = calloc(N, sizeof(*d));
	uint64_t seed = 77;

	assert_non_null(c);
	assert_non_null(d);
	for (size_t i = 0; i < N; i++) {
		/* Few distinct short rows and qualifiers, so families and timestamps get compared too. */
		c[i].rn = 1 + tu_rand(&seed) % 3;
		c[i].qn = tu_rand(&seed) % 3;
		c[i].row = malloc(c[i].rn);
		c[i].q = malloc(c[i].qn + 1);
		tu_rand_bytes(&seed, c[i].row, c[i].rn, 2);
		for (size_t j = 0; j < c[i].rn; j++)
			c[i].row[j] &= 0x81; /* 00 01 80 81 */
		tu_rand_bytes(&seed, c[i].q, c[i].qn, 1);
		for (size_t j = 0; j < c[i].qn; j++)
			c[i].q[j] = c[i].q[j] == '#' ? 0x00 : c[i].q[j];
		c[i].fam = fams[tu_rand(&seed) % TU_ARRAY_SIZE(fams)];
		c[i].ts = tss[tu_rand(&seed) % TU_ARRAY_SIZE(tss)];
		c[i].k = malloc(KEY_MAX);
		c[i].kn = key_cell(c[i].k, 7, CS_BYTES(c[i].row, c[i].rn), c[i].fam, CS_BYTES(c[i].q, c[i].qn), c[i].ts);
	}
	memcpy(d, c, N * sizeof(*c));
	qsort(c, N, sizeof(*c), cell_model_cmp);
	qsort(d, N, sizeof(*d), cell_key_cmp);
	for (size_t i = 0; i < N; i++)
		if (cell_model_cmp(&c[i], &d[i]))
			fail_msg("position %zu: key order differs from the model", i);
	for (size_t i = 0; i < N; i++) {
		free(c[i].row);
		free(c[i].q);
		free(c[i].k);
	}
	free(c);
	free(d);
}

/* The prefixes a mutation deletes by: a row's, a family's, a column's. None may reach a neighbour. */
static void test_keys__prefixes_do_not_reach_neighbours(void **state)
{
	static const struct {
		const char *row, *fam, *q;
		size_t rn, qn;
	} near[] = {
		{ "r", "f", "q", 1, 1 },      /* the cell itself */
		{ "r\0", "f", "q", 2, 1 },    /* rows that extend it */
		{ "r\x01", "f", "q", 2, 1 },
		{ "r#", "f", "q", 2, 1 },
		{ "r", "fa", "q", 1, 1 },     /* a family that extends it */
		{ "r", "f", "q\0", 1, 2 },    /* qualifiers that extend it */
		{ "r", "f", "qq", 1, 2 },
		{ "r", "f", "", 1, 0 },
	};
	uint8_t pr[64], pf[64], pc[64], k[64];
	size_t prn = key_row(pr, 1, CS_BYTES("r", 1));
	size_t pfn = key_family(pf, 1, CS_BYTES("r", 1), "f");
	size_t pcn = key_column(pc, 1, CS_BYTES("r", 1), "f", CS_BYTES("q", 1));

	assert_int_equal(key_table_data(k, 1), 5);
	assert_memory_equal(pr, k, 5);
	for (size_t i = 0; i < TU_ARRAY_SIZE(near); i++) {
		size_t kn = key_cell(k, 1, CS_BYTES(near[i].row, near[i].rn), near[i].fam, CS_BYTES(near[i].q, near[i].qn), 5);
		bool same_row = near[i].rn == 1;
		bool same_fam = same_row && !strcmp(near[i].fam, "f");
		bool same_col = same_fam && near[i].qn == 1;
		assert_int_equal(kn >= prn && !memcmp(k, pr, prn), same_row);
		assert_int_equal(kn >= pfn && !memcmp(k, pf, pfn), same_fam);
		assert_int_equal(kn >= pcn && !memcmp(k, pc, pcn), same_col);
	}
	/* Another table's cells never share the table's prefix. */
	size_t kn = key_cell(k, 2, CS_BYTES("r", 1), "f", CS_BYTES("q", 1), 5);
	assert_false(kn >= prn && !memcmp(k, pr, 5));
}

static void test_keys__parse_cell_at_the_limits(void **state)
{
	static const struct {
		size_t rn, qn;
		uint8_t fill;
		size_t famn;
		int64_t ts;
	} cases[] = {
		{ 1, 0, 'r', 1, 0 },
		{ 1, 0, 0x00, 1, INT64_MAX },
		{ CS_MAX_ROW_KEY, CS_MAX_QUALIFIER, 0x00, CS_MAX_FAMILY, 0 },
		{ CS_MAX_ROW_KEY, CS_MAX_QUALIFIER, 0xFF, CS_MAX_FAMILY, INT64_MAX },
		{ CS_MAX_ROW_KEY, CS_MAX_QUALIFIER, '#', 3, 1700000000000000 },
	};
	uint8_t *k = malloc(KEY_MAX), *row = malloc(CS_MAX_ROW_KEY), *q = malloc(CS_MAX_QUALIFIER);
	uint8_t *dec = malloc(CS_MAX_QUALIFIER);

	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		char fam[CS_MAX_FAMILY + 1];
		size_t kn, n;
		key_parts kp;

		memset(row, cases[i].fill, cases[i].rn);
		memset(q, cases[i].fill ^ 0xFF, cases[i].qn);
		memset(fam, 'f', cases[i].famn);
		fam[cases[i].famn] = 0;
		kn = key_cell(k, 0xDEADBEEF, CS_BYTES(row, cases[i].rn), fam, CS_BYTES(q, cases[i].qn), cases[i].ts);
		assert_true(kn <= KEY_MAX);
		assert_int_equal(key_parse_cell(k, kn, &kp), 0);
		assert_int_equal(kp.tid, 0xDEADBEEF);
		assert_true(kp.ts == cases[i].ts);
		assert_int_equal(kp.fam_len, cases[i].famn);
		assert_memory_equal(k + kp.fam_off, fam, kp.fam_len);
		assert_int_equal(key_dec(k + kp.row_off, kp.row_len, dec, &n), (int)kp.row_len);
		assert_int_equal(n, cases[i].rn);
		assert_memory_equal(dec, row, n);
		assert_int_equal(key_dec(k + kp.q_off, kp.q_len, dec, &n), (int)kp.q_len);
		assert_int_equal(n, cases[i].qn);
		if (n)
			assert_memory_equal(dec, q, n);
		/* The row part is what key_row() builds, and key_parse_tail agrees when told where it ends. */
		assert_int_equal(key_row(dec, 0xDEADBEEF, CS_BYTES(row, cases[i].rn)), kp.row_off + kp.row_len);
		key_parts kp2;
		assert_int_equal(key_parse_tail(k, kn, kp.row_off + kp.row_len, &kp2), 0);
		assert_int_equal(kp2.q_off, kp.q_off);
		assert_true(kp2.ts == kp.ts);
	}
	free(k);
	free(row);
	free(q);
	free(dec);
}

static void test_keys__parse_cell_rejects_malformed(void **state)
{
	uint8_t good[64], bad[80];
	size_t gn = key_cell(good, 1, CS_BYTES("row", 3), "fam", CS_BYTES("q", 1), 5);
	key_parts kp;

	assert_int_equal(key_parse_cell(good, gn, &kp), 0);
	for (size_t n = 0; n < gn; n++) /* every truncation */
		assert_int_equal(key_parse_cell(good, n, &kp), -EIO);

	memcpy(bad, good, gn);
	bad[0] = KEY_TABLE; /* not a cell */
	assert_int_equal(key_parse_cell(bad, gn, &kp), -EIO);

	memcpy(bad, good, gn); /* trailing junk between the qualifier and the timestamp */
	memmove(bad + gn - 7, bad + gn - 8, 8);
	bad[gn - 8] = 'x';
	assert_int_equal(key_parse_cell(bad, gn + 1, &kp), -EIO);

	memcpy(bad, good, gn); /* a negative timestamp */
	bad[gn - 8] |= 0x80;
	assert_int_equal(key_parse_cell(bad, gn, &kp), -EIO);

	uint8_t k[64];
	size_t kn = key_cell(k, 1, CS_BYTES("", 0), "fam", CS_BYTES("q", 1), 5); /* empty row */
	assert_int_equal(key_parse_cell(k, kn, &kp), -EIO);
	kn = key_cell(k, 1, CS_BYTES("row", 3), "", CS_BYTES("q", 1), 5); /* empty family */
	assert_int_equal(key_parse_cell(k, kn, &kp), -EIO);
	kn = key_row(k, 1, CS_BYTES("row", 3)); /* no family terminator */
	memcpy(k + kn, "fam", 3);
	memset(k + kn + 3, 0x7F, 8);
	assert_int_equal(key_parse_cell(k, kn + 11, &kp), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys__enc_roundtrip),
		cmocka_unit_test(test_keys__enc_preserves_order),
		cmocka_unit_test(test_keys__dec_rejects_malformed),
		cmocka_unit_test(test_keys__integers_big_endian),
		cmocka_unit_test(test_keys__cell_keys_sort_as_the_model),
		cmocka_unit_test(test_keys__prefixes_do_not_reach_neighbours),
		cmocka_unit_test(test_keys__parse_cell_at_the_limits),
		cmocka_unit_test(test_keys__parse_cell_rejects_malformed),
	};
	return cmocka_run_group_tests_name("keys", tests, NULL, NULL);
}
