/* keys.h — the store's logical keys, all ordered bytewise (kv makes any length storable):
 *   'M' name                                            store metadata
 *   'T' table-name                                      a table's record (schema)
 *   'X' tid enc(start) seq                              a dropped row range (tid: u32, seq: u64, big-endian)
 *   'D' tid enc(row) family 0x00 enc(qualifier) ~ts     a cell
 * enc(b) writes 0x00 as 00 FF and ends with 00 01: it preserves order and no encoding is a prefix of
 * another, so cells sort by row key (bytewise), family name, qualifier, then newest first (~ts is
 * INT64_MAX - ts, big-endian). */
#ifndef CELLFS_KEYS_H
#define CELLFS_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "cellstore.h"

#define KEY_DATA 'D'
#define KEY_TABLE 'T'
#define KEY_META 'M'
#define KEY_DROP 'X'
/* Room for the longest key of any kind. */
#define KEY_MAX (1 + 4 + 2 * CS_MAX_ROW_KEY + 2 + CS_MAX_FAMILY + 1 + 2 * CS_MAX_QUALIFIER + 2 + 8)

/* Escape P[0..N) into OUT (room for 2N+2) with the terminator (key_enc) or without (key_esc, for
 * prefix seeks). Return the bytes written. */
size_t key_enc(uint8_t *out, const void *p, size_t n);
size_t key_esc(uint8_t *out, const void *p, size_t n);

/* Decode one enc() field at IN (N bytes available) into OUT (may be NULL to only measure). Returns the
 * bytes consumed and sets *OUTN, or -EIO if malformed. */
int key_dec(const uint8_t *in, size_t n, uint8_t *out, size_t *outn);

void key_put_u32(uint8_t *p, uint32_t v);
uint32_t key_get_u32(const uint8_t *p);
void key_put_u64(uint8_t *p, uint64_t v);
uint64_t key_get_u64(const uint8_t *p);

/* 'D' tid: the start of a table's cells. Returns 5. */
size_t key_table_data(uint8_t *out, uint32_t tid);
/* 'D' tid enc(row): the start of a row's cells. */
size_t key_row(uint8_t *out, uint32_t tid, cs_bytes row);
/* 'D' tid enc(row) family 0x00: the start of a row's cells in FAMILY. */
size_t key_family(uint8_t *out, uint32_t tid, cs_bytes row, const char *family);
/* 'D' tid enc(row) family 0x00 enc(qualifier): the start of a column. */
size_t key_column(uint8_t *out, uint32_t tid, cs_bytes row, const char *family, cs_bytes q);
/* A whole cell key: key_column followed by ~ts. */
size_t key_cell(uint8_t *out, uint32_t tid, cs_bytes row, const char *family, cs_bytes q, int64_t ts);

/* The parts of a cell key: offsets into the key. Qualifier and row are still encoded. */
typedef struct key_parts {
	uint32_t tid;
	size_t row_off, row_len;   /* enc(row), terminator included */
	size_t fam_off, fam_len;   /* family name, without its 0x00 */
	size_t q_off, q_len;       /* enc(qualifier), terminator included */
	int64_t ts;
} key_parts;

/* Split cell key K (N bytes). Returns 0 or -EIO (not a well-formed cell key). */
int key_parse_cell(const uint8_t *k, size_t n, key_parts *kp);

#endif
