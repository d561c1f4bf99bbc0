/* codec.h — stored cell records: a small header (kind, write sequence, raw length) and the value, raw or
 * zstd-compressed. The only module that calls zstd. Stored bytes are untrusted: every decode checks. */
#ifndef CELLFS_CODEC_H
#define CELLFS_CODEC_H

#include <stddef.h>
#include <stdint.h>

typedef struct codec_hdr {
	uint8_t kind;     /* CODEC_RAW or CODEC_ZSTD */
	uint64_t seq;     /* the write sequence of the transaction that wrote the cell */
	uint64_t rawlen;  /* the value's length */
	size_t hdrlen;    /* bytes of header before the payload */
} codec_hdr;

enum { CODEC_RAW = 0, CODEC_ZSTD = 1 };

/* Encode VALUE (N bytes) written at sequence SEQ. On success *OUT points at *OUTLEN bytes, either into
 * *SCRATCH (a buffer the codec may grow with realloc; caller frees) or, never, at VALUE itself: the
 * record is always a fresh buffer. Compression failures fall back to a raw record.
 * Errors: -ENOMEM. */
int codec_encode(const void *value, size_t n, uint64_t seq, void **scratch, size_t *scratch_cap,
		 const void **out, size_t *outlen);

/* The record REC (N bytes) with its write sequence replaced by SEQ: the same kind, length and payload
 * (a compressed value is copied as it is, never recompressed). *OUT points into *SCRATCH as for
 * codec_encode(). Errors: -EIO (REC malformed), -ENOMEM. */
int codec_reseq(const void *rec, size_t n, uint64_t seq, void **scratch, size_t *scratch_cap,
		const void **out, size_t *outlen);

/* Parse the header of the record REC (N bytes). Errors: -EIO (malformed). */
int codec_header(const void *rec, size_t n, codec_hdr *h);

/* The value of record REC. For a raw record *VAL points into REC and *OWNED is NULL; for a compressed one
 * *VAL is a new buffer, also stored in *OWNED for the caller to free. Errors: -EIO (corrupt), -ENOMEM. */
int codec_decode(const void *rec, size_t n, const void **val, size_t *vlen, void **owned);

/* codec_decode for a record whose header H codec_header() has already parsed (scans need both). For a raw
 * record, the common case, it is two assignments; codec_inflate() does compressed ones. */
int codec_inflate(const void *rec, size_t n, const codec_hdr *h, const void **val, size_t *vlen, void **owned);

static inline int codec_value(const void *rec, size_t n, const codec_hdr *h, const void **val, size_t *vlen,
			      void **owned)
{
	if (h->kind != CODEC_RAW)
		return codec_inflate(rec, n, h, val, vlen, owned);
	*owned = NULL;
	*val = (const uint8_t *)rec + h->hdrlen;
	*vlen = h->rawlen;
	return 0;
}

/* Whole blocks (dump frames): compress SRC (N bytes) at zstd level 1 to *BUF + OFF (grown with realloc;
 * caller frees). Returns the compressed length, or 0 if that would not be smaller than N (or zstd failed:
 * the caller keeps the block raw). Errors: -ENOMEM. */
long codec_zpack(const void *src, size_t n, void **buf, size_t *cap, size_t off);

/* Decompress the zstd frame SRC (N bytes) into DST, which must come out exactly RAWN bytes.
 * Errors: -EBADMSG (a corrupt frame, or not exactly RAWN bytes), -EIO (zstd failed otherwise), -ENOMEM. */
int codec_zunpack(const void *src, size_t n, void *dst, size_t rawn);

/* Decoded length of an unsigned LEB128 varint at P (N bytes available); -EIO if malformed. */
int codec_get_varint(const uint8_t *p, size_t n, uint64_t *v);
size_t codec_put_varint(uint8_t *p, uint64_t v); /* writes at most 10 bytes */

#endif
