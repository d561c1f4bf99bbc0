/* keys.h — the store's logical keys, all ordered bytewise (kv makes any length storable):
 *   'M' name                                            store metadata
 *   'T' table-name                                      a table's record (schema)
 *   'X' tid enc(start) seq                              a dropped row range (tid: u32, seq: u64, big-endian)
 *   'd' tid enc(row) family 0x00 enc(qualifier) ~ts     a cell
 * enc(b) writes 0x00 as 00 FF and ends with 00 01: it preserves order and no encoding is a prefix of
 * another, so cells sort by row key (bytewise), family name, qualifier, then newest first (~ts is
 * INT64_MAX - ts, big-endian). Cells sort after every other kind: a bulk load in key order then appends
 * at the end of the B-tree, where LMDB fills pages whole; behind other keys it would split them half
 * full (and the store would take twice the space). */
#ifndef CELLFS_KEYS_H
#define CELLFS_KEYS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cellstore.h"

#define KEY_DATA 'd'
#define KEY_TABLE 'T'
#define KEY_META 'M'
#define KEY_DROP 'X'
/* Room for the longest key of any kind. */
/* A tables keys of one kind start with the kind and its table id (key_table_data()): this many bytes. */
#define KEY_TABLE_PREFIX (1 + 4)
#define KEY_MAX (1 + 4 + 2 * CS_MAX_ROW_KEY + 2 + CS_MAX_FAMILY + 1 + 2 * CS_MAX_QUALIFIER + 2 + 8)

/* Escape P[0..N) into OUT (room for 2N+2) with the terminator (key_enc) or without (key_esc, for
 * prefix seeks). Return the bytes written. */
size_t key_enc(uint8_t *out, const void *p, size_t n);
size_t key_esc(uint8_t *out, const void *p, size_t n);

/* Decode one enc() field at IN (N bytes available) into OUT (may be NULL to only measure). Returns the
 * bytes consumed and sets *OUTN, or -EIO if malformed. */
int key_dec(const uint8_t *in, size_t n, uint8_t *out, size_t *outn);

/* Big-endian integers in keys. Inline: a scan reads a few in every key. */
static inline void key_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t key_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void key_put_u64(uint8_t *p, uint64_t v)
{
	key_put_u32(p, (uint32_t)(v >> 32));
	key_put_u32(p + 4, (uint32_t)v);
}

static inline uint64_t key_get_u64(const uint8_t *p)
{
	return (uint64_t)key_get_u32(p) << 32 | key_get_u32(p + 4);
}

/* 'd' tid: the start of a table's cells. Returns 5. */
size_t key_table_data(uint8_t *out, uint32_t tid);
/* 'd' tid enc(row): the start of a row's cells. */
size_t key_row(uint8_t *out, uint32_t tid, cs_bytes row);
/* 'd' tid enc(row) family 0x00: the start of a row's cells in FAMILY. */
size_t key_family(uint8_t *out, uint32_t tid, cs_bytes row, const char *family);
/* 'd' tid enc(row) family 0x00 enc(qualifier): the start of a column. */
size_t key_column(uint8_t *out, uint32_t tid, cs_bytes row, const char *family, cs_bytes q);
/* A whole cell key: key_column followed by ~ts. */
size_t key_cell(uint8_t *out, uint32_t tid, cs_bytes row, const char *family, cs_bytes q, int64_t ts);

/* The parts of a cell key: offsets into the key. Qualifier and row are still encoded. */
typedef struct key_parts {
	uint32_t tid;
	size_t row_off, row_len;   /* enc(row), terminator included */
	size_t fam_off, fam_len;   /* family name, without its 0x00 */
	size_t q_off, q_len;       /* enc(qualifier), terminator included */
	size_t qn;                 /* the qualifier's decoded length */
	int64_t ts;
} key_parts;

/* Split cell key K (N bytes). Returns 0 or -EIO (not a well-formed cell key). */
int key_parse_cell(const uint8_t *k, size_t n, key_parts *kp);

/* ---- Inline, because a scan parses every cell's key with them ---- */

/* The first NUL in P[0..N), or NULL. A scan runs this several times for every cell, on fields mostly a
 * few bytes long: eight bytes at a time it is cheaper than a call into memchr. PAD: whether 7 bytes past
 * P[N) may be read too (a cell key's fields are followed by its timestamp), so words cover the tail. */
static inline const uint8_t *key_find_nul(const uint8_t *p, size_t n, bool pad)
{
	size_t i = 0;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; pad ? i < n : i + 8 <= n; i += 8) {
		uint64_t w, z;
		memcpy(&w, p + i, 8);
		/* The lowest bit set marks the first zero byte (higher ones may be false). */
		z = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
		if (z) {
			i += (size_t)__builtin_ctzll(z) >> 3;
			return i < n ? p + i : NULL; /* a NUL in the padding is none */
		}
	}
#endif
	for (; i < n; i++)
		if (!p[i])
			return p + i;
	return NULL;
}

/* key_dec(), inline; PAD as for key_find_nul(). */
static inline int key_dec_inline(const uint8_t *in, size_t n, uint8_t *out, size_t *outn, bool pad)
{
	size_t i = 0, o = 0;
	/* Copy runs between NULs whole: most fields have no NUL but their terminator. */
	for (;;) {
		const uint8_t *z = key_find_nul(in + i, n - i, pad);
		size_t run;
		if (!z || z + 1 == in + n)
			return -EIO;
		run = (size_t)(z - (in + i));
		if (out && run)
			memcpy(out + o, in + i, run);
		o += run;
		i += run;
		if (in[i + 1] == 0x01) {
			*outn = o;
			return (int)(i + 2);
		}
		if (in[i + 1] != 0xFF)
			return -EIO;
		if (out)
			out[o] = 0;
		o++;
		i += 2;
	}
}

/* key_parse_cell for a key whose 'd' tid enc(row) part, ending at offset ROW_END, is already known to be
 * well formed (a scan has checked it once for the row's first cell). */
static inline int key_parse_tail(const uint8_t *k, size_t n, size_t row_end, key_parts *kp)
{
	size_t o = row_end;
	const uint8_t *z;
	int r;

	if (n < o + 1 + 1 + 2 + 8)
		return -EIO;
	kp->tid = key_get_u32(k + 1);
	kp->row_off = 5;
	kp->row_len = row_end - 5;
	z = key_find_nul(k + o, n - 8 - o, true); /* the timestamp follows */
	if (!z || z == k + o)
		return -EIO;
	kp->fam_off = o;
	kp->fam_len = (size_t)(z - (k + o));
	o += kp->fam_len + 1;
	if ((r = key_dec_inline(k + o, n - 8 - o, NULL, &kp->qn, true)) < 0 || o + (size_t)r != n - 8)
		return -EIO;
	kp->q_off = o;
	kp->q_len = (size_t)r;
	if (key_get_u64(k + n - 8) > (uint64_t)INT64_MAX)
		return -EIO;
	kp->ts = INT64_MAX - (int64_t)key_get_u64(k + n - 8);
	return 0;
}

#endif
