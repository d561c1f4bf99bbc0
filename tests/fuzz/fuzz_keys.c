/* fuzz_keys.c — the store's key encoding (store/lmdb/keys.h): order, prefixes, parsing.
 *
 * Input: two cells A and B (table id, row, family, qualifier, timestamp; B may share A's fields, as
 * a flags byte says), then arbitrary bytes. Properties:
 *   - memcmp of the two encoded cell keys orders them as keys.h documents: table id, row bytewise,
 *     family name bytewise, qualifier bytewise, then newest timestamp first (equal keys: equal cells);
 *   - key_parse_cell() gives back every part, key_dec() the row and qualifier;
 *   - key_row, key_family and key_column are prefixes of the cell key; key_esc() of a prefix of a row
 *     is a prefix of key_enc() of the row;
 *   - the arbitrary bytes, parsed as a cell key or decoded as one enc() field, either fail with -EIO or
 *     re-encode to exactly themselves (one encoding per key), reading nothing past their end.
 */
#include <errno.h>

#include "fuzz.h"
#include "keys.h"

struct cell {
	uint32_t tid;
	const uint8_t *row, *q;
	size_t rown, qn;
	char fam[CS_MAX_FAMILY + 1];
	int64_t ts;
};

static void take_cell(struct fuzz_in *in, struct cell *c, const struct cell *like, uint8_t share)
{
	size_t fn;
	const uint8_t *f;

	c->tid = share & 1 ? like->tid : fuzz_u8(in) & 3;
	if (share & 2) {
		c->row = like->row;
		c->rown = like->rown;
	} else {
		c->row = fuzz_take(in, fuzz_u8(in), &c->rown);
	}
	if (share & 4) {
		memcpy(c->fam, like->fam, sizeof(c->fam));
	} else {
		f = fuzz_take(in, fuzz_u8(in) % CS_MAX_FAMILY + 1, &fn);
		for (size_t i = 0; i < fn; i++) /* a family name holds no NUL (the store allows less still) */
			c->fam[i] = f[i] ? (char)f[i] : 'A';
		if (!fn)
			c->fam[fn++] = 'f';
		c->fam[fn] = '\0';
	}
	if (share & 8) {
		c->q = like->q;
		c->qn = like->qn;
	} else {
		c->q = fuzz_take(in, fuzz_u8(in), &c->qn);
	}
	c->ts = share & 16 ? like->ts : (int64_t)(fuzz_u64(in) & INT64_MAX);
	if (!c->rown) { /* row keys are 1..CS_MAX_ROW_KEY bytes */
		c->row = (const uint8_t *)"r";
		c->rown = 1;
	}
}

static size_t key_room(const struct cell *c)
{
	return 1 + 4 + 2 * c->rown + 2 + strlen(c->fam) + 1 + 2 * c->qn + 2 + 8;
}

static int sign(long v)
{
	return (v > 0) - (v < 0);
}

static int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	return c ? sign(c) : sign((long)an - (long)bn);
}

/* The documented order of cells. */
static int cmp_cells(const struct cell *a, const struct cell *b)
{
	int c;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if ((c = cmp_bytes(a->row, a->rown, b->row, b->rown)))
		return c;
	if ((c = cmp_bytes((const uint8_t *)a->fam, strlen(a->fam), (const uint8_t *)b->fam, strlen(b->fam))))
		return c;
	if ((c = cmp_bytes(a->q, a->qn, b->q, b->qn)))
		return c;
	return a->ts == b->ts ? 0 : a->ts > b->ts ? -1 : 1;
}

/* Encode C into a buffer of its exact size; check parsing and prefixes. Caller frees *KEY. */
static size_t encode_cell(const struct cell *c, uint8_t **key)
{
	size_t room = key_room(c), kn, n, dn;
	uint8_t *k = malloc(room), *pfx = malloc(room), *dec;
	cs_bytes row = CS_BYTES(c->row, c->rown), q = CS_BYTES(c->q, c->qn);
	key_parts kp;

	if (!k || !pfx)
		abort();
	kn = key_cell(k, c->tid, row, c->fam, q, c->ts);
	FUZZ_CHECK(kn <= room);
	dec = fuzz_dup(k, kn); /* an exact-size copy: ASan sees any read past the key's end */
	free(k);
	k = dec;
	if (!(dec = malloc(c->rown + c->qn + 1)))
		abort();
	FUZZ_CHECK(key_parse_cell(k, kn, &kp) == 0);
	FUZZ_CHECK(kp.tid == c->tid && kp.ts == c->ts && kp.qn == c->qn);
	FUZZ_CHECK(kp.fam_len == strlen(c->fam) && !memcmp(k + kp.fam_off, c->fam, kp.fam_len));
	FUZZ_CHECK(key_dec(k + kp.row_off, kp.row_len, dec, &dn) == (int)kp.row_len);
	FUZZ_CHECK(dn == c->rown && !memcmp(dec, c->row, dn));
	FUZZ_CHECK(key_dec(k + kp.q_off, kp.q_len, dec, &dn) == (int)kp.q_len);
	FUZZ_CHECK(dn == c->qn && (!dn || !memcmp(dec, c->q, dn)));
	n = key_row(pfx, c->tid, row);
	FUZZ_CHECK(n < kn && !memcmp(pfx, k, n));
	n = key_family(pfx, c->tid, row, c->fam);
	FUZZ_CHECK(n < kn && !memcmp(pfx, k, n));
	n = key_column(pfx, c->tid, row, c->fam, q);
	FUZZ_CHECK(n + 8 == kn && !memcmp(pfx, k, n));
	for (size_t cut = 0; cut <= c->rown; cut += 1 + cut / 2) {
		n = key_esc(pfx, c->row, cut);
		FUZZ_CHECK(n <= kp.row_len && !memcmp(pfx, k + kp.row_off, n));
	}
	free(pfx);
	free(dec);
	*key = k;
	return kn;
}

/* Arbitrary bytes as a cell key and as one enc() field. */
static void check_raw(const uint8_t *p, size_t n)
{
	uint8_t *k = fuzz_dup(p, n), *dec = malloc(n + 1), *re = malloc(2 * n + 16);
	key_parts kp;
	size_t dn;
	int r;

	if (!dec || !re)
		abort();
	r = key_dec(k, n, dec, &dn);
	FUZZ_CHECK(r == -EIO || (r >= 2 && (size_t)r <= n));
	if (r > 0) {
		FUZZ_CHECK(key_enc(re, dec, dn) == (size_t)r && !memcmp(re, k, (size_t)r));
		FUZZ_CHECK(key_dec(k, n, NULL, &dn) == r);
	}
	r = key_parse_cell(k, n, &kp);
	FUZZ_CHECK(r == 0 || r == -EIO);
	if (r == 0) {
		uint8_t *row = malloc(kp.row_len + 1), *q = malloc(kp.q_len + 1), *again;
		char fam[CS_MAX_FAMILY + 1];
		size_t rn, qn;

		if (!row || !q)
			abort();
		FUZZ_CHECK(kp.row_off == 5 && kp.fam_len > 0);
		FUZZ_CHECK(key_dec(k + kp.row_off, kp.row_len, row, &rn) == (int)kp.row_len && rn > 0);
		FUZZ_CHECK(key_dec(k + kp.q_off, kp.q_len, q, &qn) == (int)kp.q_len && qn == kp.qn);
		FUZZ_CHECK(kp.ts >= 0);
		if (kp.fam_len <= CS_MAX_FAMILY) {
			memcpy(fam, k + kp.fam_off, kp.fam_len);
			fam[kp.fam_len] = '\0';
			again = malloc(n);
			if (!again)
				abort();
			FUZZ_CHECK(key_cell(again, kp.tid, CS_BYTES(row, rn), fam, CS_BYTES(q, qn), kp.ts) == n);
			FUZZ_CHECK(!memcmp(again, k, n));
			free(again);
		}
		free(row);
		free(q);
	}
	free(k);
	free(dec);
	free(re);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct cell a, b;
	uint8_t share = fuzz_u8(&in), *ka, *kb;
	size_t an, bn;
	int c;

	take_cell(&in, &a, NULL, 0);
	take_cell(&in, &b, &a, share);
	an = encode_cell(&a, &ka);
	bn = encode_cell(&b, &kb);
	c = cmp_bytes(ka, an, kb, bn);
	FUZZ_CHECK(c == cmp_cells(&a, &b));
	/* No cell key is a proper prefix of another. */
	FUZZ_CHECK(c == 0 || an == bn || memcmp(ka, kb, an < bn ? an : bn));
	free(ka);
	free(kb);
	check_raw(in.p, in.n);
	return 0;
}
