/* fuzz_codec.c — stored cell records (store/codec.h): header, raw and zstd values, varints.
 *
 * Input: 8 bytes of write sequence, then data used three ways. Properties:
 *   - as a value: codec_encode() then codec_header()/codec_decode() give back the value, its length and
 *     the sequence; codec_reseq() changes the sequence and nothing else;
 *   - as a stored record: codec_decode() either fails cleanly (-EIO, never -ENOMEM: a length is
 *     checked before it is trusted with an allocation) or returns exactly the header's raw length,
 *     every byte readable; codec_reseq() keeps what the record decodes to;
 *   - as a zstd frame: codec_zunpack() fails cleanly or fills exactly the length asked for;
 *   - varints: what codec_put_varint() writes codec_get_varint() reads back.
 */
#include <errno.h>

#include "codec.h"
#include "fuzz.h"

static uint64_t sum(const uint8_t *p, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++) /* touches every byte: ASan checks them all */
		s = s * 31 + p[i];
	return s;
}

static void check_value(const uint8_t *v, size_t n, uint64_t seq)
{
	void *scratch = NULL, *scratch2 = NULL, *owned = NULL;
	size_t cap = 0, cap2 = 0, recn, rn2, vn;
	const void *rec, *rec2, *val;
	uint8_t *copy;
	codec_hdr h;

	FUZZ_CHECK(codec_encode(v, n, seq, &scratch, &cap, &rec, &recn) == 0);
	FUZZ_CHECK(rec != (const void *)v);
	copy = fuzz_dup(rec, recn);
	FUZZ_CHECK(codec_header(copy, recn, &h) == 0);
	FUZZ_CHECK(h.seq == seq && h.rawlen == n && h.hdrlen <= recn);
	FUZZ_CHECK(codec_decode(copy, recn, &val, &vn, &owned) == 0);
	FUZZ_CHECK(vn == n && (!n || !memcmp(val, v, n)));
	FUZZ_CHECK((owned != NULL) == (h.kind == CODEC_ZSTD));
	free(owned);
	FUZZ_CHECK(codec_reseq(copy, recn, seq ^ 0x5a5a, &scratch2, &cap2, &rec2, &rn2) == 0);
	FUZZ_CHECK(codec_header(rec2, rn2, &h) == 0 && h.seq == (seq ^ 0x5a5a) && h.rawlen == n);
	FUZZ_CHECK(codec_decode(rec2, rn2, &val, &vn, &owned) == 0);
	FUZZ_CHECK(vn == n && (!n || !memcmp(val, v, n)));
	free(owned);
	free(copy);
	free(scratch);
	free(scratch2);
}

static void check_record(const uint8_t *p, size_t n, uint64_t seq)
{
	uint8_t *rec = fuzz_dup(p, n);
	void *owned = NULL, *scratch = NULL, *owned2 = NULL;
	size_t vn = 0, cap = 0, rn2, vn2;
	const void *val = NULL, *rec2, *val2;
	codec_hdr h;
	int hr = codec_header(rec, n, &h), r = codec_decode(rec, n, &val, &vn, &owned);

	FUZZ_CHECK(hr == 0 || hr == -EIO);
	FUZZ_CHECK(r == 0 || r == -EIO);
	if (hr)
		FUZZ_CHECK(r == hr);
	if (r == 0) {
		FUZZ_CHECK(hr == 0 && vn == h.rawlen);
		(void)sum(val, vn);
		FUZZ_CHECK(codec_reseq(rec, n, seq, &scratch, &cap, &rec2, &rn2) == 0);
		FUZZ_CHECK(codec_decode(rec2, rn2, &val2, &vn2, &owned2) == 0);
		FUZZ_CHECK(vn2 == vn && (!vn || !memcmp(val, val2, vn)));
		free(owned2);
	} else {
		FUZZ_CHECK(owned == NULL);
	}
	free(owned);
	free(scratch);
	free(rec);
}

static void check_zunpack(const uint8_t *p, size_t n, size_t rawn)
{
	uint8_t *src = fuzz_dup(p, n), *dst = malloc(rawn ? rawn : 1);
	int r;

	if (!dst)
		abort();
	r = codec_zunpack(src, n, dst, rawn);
	FUZZ_CHECK(r == 0 || r == -EBADMSG); /* (a damaged frame is EBADMSG, as codec.h says) */
	if (r == 0)
		(void)sum(dst, rawn);
	free(dst);
	free(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint64_t seq = fuzz_u64(&in), v;
	uint8_t buf[10];
	size_t n;

	check_value(in.p, in.n, seq);
	check_record(in.p, in.n, seq);
	check_zunpack(in.p, in.n, (size_t)(seq & 0xffff));
	n = codec_put_varint(buf, seq);
	FUZZ_CHECK(n >= 1 && n <= 10);
	FUZZ_CHECK(codec_get_varint(buf, n, &v) == (int)n && v == seq);
	FUZZ_CHECK(n == 1 || codec_get_varint(buf, n - 1, &v) == -EIO);
	if (codec_get_varint(in.p, in.n, &v) > 0) {
		n = codec_put_varint(buf, v);
		(void)n;
	}
	return 0;
}
