/* dumpfmt.h — the dump format's constants and little-endian helpers, shared by dump.c (writer) and
 * restore.c (reader). The format itself is specified in store/dump-format.md.
 *
 *   header  "CELLDUMP" u32le version u32le flags(0)                         16 bytes
 *   frame   u8 kind, u8 enc, u16le 0, u32le stored_len, u32le raw_len,      12 bytes
 *           payload (stored_len bytes; enc 1: a zstd frame of raw_len bytes)
 *           u64le hash = XXH64(kind..payload, seed = the previous frame's hash, or XXH64(header, 0))
 *   kinds   'S' a table's schema, 'C' cells of the last 'S' table, 'E' the trailer (last)
 */
#ifndef CELLFS_DUMPFMT_H
#define CELLFS_DUMPFMT_H

#include <stdint.h>
#include <string.h>

#define DF_MAGIC "CELLDUMP"
#define DF_VERSION 1
#define DF_HDR 16
#define DF_FRAME_HDR 12
#define DF_FRAME_SUM 8
#define DF_BLOCK (1u << 20) /* a cells frame is flushed once its payload reaches this */

enum { DF_SCHEMA = 'S', DF_CELLS = 'C', DF_END = 'E' };
enum { DF_RAW = 0, DF_ZSTD = 1 };

static inline void df_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t df_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void df_put64(uint8_t *p, uint64_t v)
{
	df_put32(p, (uint32_t)v);
	df_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t df_get64(const uint8_t *p)
{
	return (uint64_t)df_get32(p) | (uint64_t)df_get32(p + 4) << 32;
}

#endif
