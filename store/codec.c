/* codec.c — cell records: header + raw or zstd payload. Values below COMPRESS_MIN stay raw, and a
 * compressed form is kept only when it saves at least 1/16 of the value. zstd contexts are reused per
 * thread. This is the only file that includes zstd.h. */
#include "codec.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "cellstore.h"
#include "fault.h"
#include "mem.h"

#define COMPRESS_MIN 128
#define COMPRESS_LEVEL 1
#define HDR_MAX (1 + 10 + 10)
#define ZSTD_MAX_RATIO 32768 /* (128 KiB of output) / (4 bytes of block) */

struct zctx {
	ZSTD_CCtx *c;
	ZSTD_DCtx *d;
};

static pthread_key_t zkey;
static pthread_once_t zonce = PTHREAD_ONCE_INIT;

static void zctx_free(void *p)
{
	struct zctx *z = p;
	if (!z)
		return;
	ZSTD_freeCCtx(z->c);
	ZSTD_freeDCtx(z->d);
	free(z);
}

static void zkey_init(void)
{
	(void)pthread_key_create(&zkey, zctx_free);
}

static struct zctx *zctx_get(void)
{
	struct zctx *z;

	pthread_once(&zonce, zkey_init);
	z = pthread_getspecific(zkey);
	if (z)
		return z;
	z = mem_calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	if (pthread_setspecific(zkey, z)) {
		free(z);
		return NULL;
	}
	return z;
}

size_t codec_put_varint(uint8_t *p, uint64_t v)
{
	size_t i = 0;
	while (v >= 0x80) {
		p[i++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[i++] = (uint8_t)v;
	return i;
}

/* Inlined into codec_header, which every scanned cell goes through. */
static inline int get_varint(const uint8_t *p, size_t n, uint64_t *v)
{
	uint64_t r = 0;
	if (n && p[0] < 0x80) { /* one byte: small values and lengths, the common case */
		*v = p[0];
		return 1;
	}
	for (size_t i = 0; i < n && i < 10; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return (int)i + 1;
		}
	}
	return -EIO;
}

int codec_get_varint(const uint8_t *p, size_t n, uint64_t *v)
{
	return get_varint(p, n, v);
}

static int grow(void **buf, size_t *cap, size_t need)
{
	void *p;
	if (*cap >= need)
		return 0;
	p = mem_realloc(*buf, need);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = need;
	return 0;
}

int codec_encode(const void *value, size_t n, uint64_t seq, void **scratch, size_t *scratch_cap,
		 const void **out, size_t *outlen)
{
	uint8_t hdr[HDR_MAX];
	size_t hl, bound;
	int rc;

	if (n >= COMPRESS_MIN) {
		struct zctx *z = zctx_get();
		bound = ZSTD_compressBound(n);
		rc = grow(scratch, scratch_cap, HDR_MAX + bound);
		if (rc)
			return rc;
		if (z && !z->c && !mem_fault())
			z->c = ZSTD_createCCtx();
		if (z && z->c && !fault_hit(CS_FAULT_ZSTD)) {
			uint8_t *dst = (uint8_t *)*scratch + HDR_MAX;
			size_t cs = ZSTD_compressCCtx(z->c, dst, bound, value, n, COMPRESS_LEVEL);
			if (!ZSTD_isError(cs) && cs < n - n / 16) {
				hdr[0] = CODEC_ZSTD;
				hl = 1 + codec_put_varint(hdr + 1, seq);
				hl += codec_put_varint(hdr + hl, n);
				memcpy(dst - hl, hdr, hl);
				*out = dst - hl;
				*outlen = hl + cs;
				return 0;
			}
		}
		/* Incompressible, or zstd failed: a raw record is always a correct result. */
	}
	hdr[0] = CODEC_RAW;
	hl = 1 + codec_put_varint(hdr + 1, seq);
	hl += codec_put_varint(hdr + hl, n);
	rc = grow(scratch, scratch_cap, hl + n);
	if (rc)
		return rc;
	memcpy(*scratch, hdr, hl);
	if (n)
		memcpy((uint8_t *)*scratch + hl, value, n);
	*out = *scratch;
	*outlen = hl + n;
	return 0;
}

int codec_reseq(const void *rec, size_t n, uint64_t seq, void **scratch, size_t *scratch_cap,
		const void **out, size_t *outlen)
{
	codec_hdr h;
	uint8_t *p;
	size_t hl, pn;
	int rc = codec_header(rec, n, &h);

	if (rc)
		return rc;
	pn = n - h.hdrlen;
	if ((rc = grow(scratch, scratch_cap, HDR_MAX + pn)))
		return rc;
	p = *scratch;
	p[0] = h.kind;
	hl = 1 + codec_put_varint(p + 1, seq);
	hl += codec_put_varint(p + hl, h.rawlen);
	if (pn)
		memcpy(p + hl, (const uint8_t *)rec + h.hdrlen, pn);
	*out = p;
	*outlen = hl + pn;
	return 0;
}

int codec_header(const void *rec, size_t n, codec_hdr *h)
{
	const uint8_t *p = rec;
	int a, b;

	if (n < 3 || p[0] > CODEC_ZSTD)
		return -EIO;
	h->kind = p[0];
	a = get_varint(p + 1, n - 1, &h->seq);
	if (a < 0)
		return a;
	b = get_varint(p + 1 + a, n - 1 - (size_t)a, &h->rawlen);
	if (b < 0)
		return b;
	h->hdrlen = 1 + (size_t)a + (size_t)b;
	if (h->kind == CODEC_RAW && n - h->hdrlen != h->rawlen)
		return -EIO;
	/* Before the length is trusted with an allocation: zstd's densest block (at most 128 KiB) takes 4
	 * bytes (3 of header, 1 of RLE), so no frame decompresses to more than ZSTD_MAX_RATIO times its
	 * size. A damaged length is -EIO here, not a huge malloc and -ENOMEM later. */
	if (h->kind == CODEC_ZSTD && (n == h->hdrlen || h->rawlen > ((uint64_t)1 << 40) ||
				      h->rawlen / ZSTD_MAX_RATIO > n - h->hdrlen))
		return -EIO;
	return 0;
}

int codec_decode(const void *rec, size_t n, const void **val, size_t *vlen, void **owned)
{
	codec_hdr h;
	int rc = codec_header(rec, n, &h);

	*owned = NULL;
	return rc ? rc : codec_value(rec, n, &h, val, vlen, owned);
}

int codec_inflate(const void *rec, size_t n, const codec_hdr *h, const void **val, size_t *vlen, void **owned)
{
	struct zctx *z;
	unsigned long long fsize;
	void *buf;
	size_t r;

	*owned = NULL;
	/* The frame must say the same length as the header before we trust it with an allocation. */
	fsize = ZSTD_getFrameContentSize((const uint8_t *)rec + h->hdrlen, n - h->hdrlen);
	if (fsize != h->rawlen)
		return -EIO;
	z = zctx_get();
	if (!z)
		return -ENOMEM;
	if (!z->d && (mem_fault() || !(z->d = ZSTD_createDCtx())))
		return -ENOMEM;
	buf = mem_malloc(h->rawlen ? h->rawlen : 1);
	if (!buf)
		return -ENOMEM;
	if (fault_hit(CS_FAULT_ZSTD)) {
		free(buf);
		return -EIO;
	}
	r = ZSTD_decompressDCtx(z->d, buf, h->rawlen, (const uint8_t *)rec + h->hdrlen, n - h->hdrlen);
	if (ZSTD_isError(r) || r != h->rawlen) {
		free(buf);
		return -EIO;
	}
	*val = buf;
	*vlen = h->rawlen;
	*owned = buf;
	return 0;
}

long codec_zpack(const void *src, size_t n, void **buf, size_t *cap, size_t off)
{
	struct zctx *z = zctx_get();
	size_t bound = ZSTD_compressBound(n), cs;
	int rc;

	if (!z)
		return -ENOMEM;
	if (!z->c && (mem_fault() || !(z->c = ZSTD_createCCtx())))
		return -ENOMEM;
	if ((rc = grow(buf, cap, off + bound)))
		return rc;
	if (fault_hit(CS_FAULT_ZSTD))
		return 0;
	cs = ZSTD_compressCCtx(z->c, (uint8_t *)*buf + off, bound, src, n, COMPRESS_LEVEL);
	if (ZSTD_isError(cs) || cs >= n)
		return 0;
	return (long)cs;
}

int codec_zunpack(const void *src, size_t n, void *dst, size_t rawn)
{
	struct zctx *z = zctx_get();
	size_t r;

	if (!z)
		return -ENOMEM;
	if (!z->d && (mem_fault() || !(z->d = ZSTD_createDCtx())))
		return -ENOMEM;
	if (ZSTD_getFrameContentSize(src, n) != rawn)
		return -EBADMSG;
	if (fault_hit(CS_FAULT_ZSTD))
		return -EIO;
	r = ZSTD_decompressDCtx(z->d, dst, rawn, src, n);
	if (ZSTD_isError(r))
		return ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? -ENOMEM : -EBADMSG;
	return r != rawn ? -EBADMSG : 0;
}
